"""Idempotency keys, invite tokens and closing: retries are answered identically, never stored twice."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from deniable.client import Client
from deniable.server._runner import BackgroundServer
from deniable.server._storage import invites_table

ADMIN = "admin-token-idempotency"
AUTH = {"Authorization": f"Bearer {ADMIN}"}


@pytest.fixture
def server(db_url: str, examples: Path) -> Iterator[BackgroundServer]:
    invite_only = {
        "id": "closed-group", "title": "Invite only", "budget": 1.1, "invite_only": True,
        "questions": [{"id": "q", "text": "?", "type": "yes-no", "mechanism": "forced-response",
                       "p_truth": 0.5, "p_yes": 0.5}],
    }
    with BackgroundServer(
        [examples / "honor-code.yaml", invite_only], db_url=db_url, admin_token=ADMIN
    ) as running:
        yield running


def _n(server: BackgroundServer, survey: str = "honor-code") -> tuple[int, int]:
    """(stored rows, aggregate n): both must move together."""
    (stat,) = server.storage.aggregates(survey).values()
    return server.storage.count_responses(survey), stat.n


def test_same_key_twice_is_stored_once(server: BackgroundServer) -> None:
    body = {"idempotency_key": "retry-key-0001", "reports": {"violated": True}}
    first = httpx.post(f"{server.url}/surveys/honor-code/responses", json=body)
    second = httpx.post(f"{server.url}/surveys/honor-code/responses", json=body)
    assert first.status_code == second.status_code == 201
    assert first.content == second.content
    assert first.json()["idempotency_key"] == "retry-key-0001"
    assert _n(server) == (1, 1)
    other = httpx.post(f"{server.url}/surveys/honor-code/responses",
                       json={**body, "reports": {"violated": False}})
    assert other.status_code == 409 and other.json()["detail"]["field"] == "idempotency_key"
    assert _n(server) == (1, 1)
    assert server.storage.aggregates("honor-code")["violated"].counts.tolist() == [0, 1]


def test_batches_count_duplicates(server: BackgroundServer) -> None:
    url = f"{server.url}/surveys/honor-code/responses/batch"
    bodies = [{"idempotency_key": f"batch-key-{i:04d}", "reports": {"violated": i % 3 == 0}}
              for i in range(20)]
    assert httpx.post(url, headers=AUTH, json={"responses": bodies}).json() == {"accepted": 20, "duplicates": 0}
    repeat = httpx.post(url, headers=AUTH, json={"responses": bodies[5:] + bodies[:2] + [bodies[0]]})
    assert repeat.status_code == 201 and repeat.json() == {"accepted": 0, "duplicates": 18}
    fresh = {"idempotency_key": "batch-key-new1", "reports": {"violated": True}}
    assert httpx.post(url, headers=AUTH, json={"responses": [fresh, fresh, bodies[1]]}).json() == {
        "accepted": 1, "duplicates": 2}
    assert _n(server) == (21, 21)
    # the same key twice in one batch with different bodies, or a stored key with another body
    clash = {**fresh, "idempotency_key": "batch-key-new2"}
    r = httpx.post(url, headers=AUTH, json={"responses": [clash, {**clash, "reports": {"violated": False}}]})
    assert r.status_code == 409 and r.json()["detail"]["field"] == "responses[1].idempotency_key"
    changed = {**bodies[4], "reports": {"violated": not bodies[4]["reports"]["violated"]}}
    r = httpx.post(url, headers=AUTH, json={"responses": [fresh | {"idempotency_key": "batch-key-new3"}, changed]})
    assert r.status_code == 409 and r.json()["detail"]["field"] == "responses[1].idempotency_key"
    assert _n(server) == (21, 21)
    # a single-response retry of a key stored by a batch is answered, not stored
    single = httpx.post(f"{server.url}/surveys/honor-code/responses", json=bodies[7])
    assert single.status_code == 201 and single.json()["response_id"]
    assert _n(server) == (21, 21)


def test_concurrent_retries_store_one_response(server: BackgroundServer) -> None:
    body = {"idempotency_key": "raced-key-0001", "reports": {"violated": True}}
    answers: list[httpx.Response] = []

    def post() -> None:
        answers.append(httpx.post(f"{server.url}/surveys/honor-code/responses", json=body,
                                  timeout=60))

    threads = [threading.Thread(target=post) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {(r.status_code, r.content) for r in answers} == {(201, answers[0].content)}
    assert _n(server) == (1, 1)


class LoseFirstAnswer(httpx.HTTPTransport):
    """Delivers each request to the real server, but drops the first answer (a lost reply)."""

    def __init__(self) -> None:
        super().__init__()
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(request.read())
        response = super().handle_request(request)
        if len(self.bodies) == 1:
            response.read()
            raise httpx.ReadError("connection reset after the server answered", request=request)
        return response


class FailFirstWith503(httpx.HTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.calls == 1:
            return httpx.Response(503, json={"detail": "busy"})
        return super().handle_request(request)


def test_client_retries_with_the_same_key(server: BackgroundServer) -> None:
    transport = LoseFirstAnswer()
    client = Client(server.url, transport=transport, backoff=0.0)
    client.survey("honor-code")  # first request: GET, answer dropped, retried
    answer = client.respond("honor-code", {"violated": True})
    assert _n(server) == (1, 1)
    posts = [json.loads(b) for b in transport.bodies if b]
    assert answer["idempotency_key"] == posts[0]["idempotency_key"]

    lossy = LoseFirstAnswer()
    client = Client(server.url, transport=lossy, backoff=0.0)
    client._surveys["honor-code"] = server.storage.public("honor-code")  # skip the GET
    answer = client.respond("honor-code", {"violated": False})
    first, retry = (json.loads(b) for b in lossy.bodies)
    assert first == retry and first["idempotency_key"] == answer["idempotency_key"]
    assert _n(server) == (2, 2)  # the first attempt was stored, the retry was answered

    busy = FailFirstWith503()
    client = Client(server.url, transport=busy, backoff=0.0, token=ADMIN)
    assert client.respond_many("honor-code", [{"violated": True}] * 3) == {
        "accepted": 3, "duplicates": 0}
    assert busy.calls == 3  # GET (503, retried) + batch
    assert _n(server) == (5, 5)


def test_client_gives_up_after_its_retries(server: BackgroundServer) -> None:
    class AlwaysDown(httpx.BaseTransport):
        calls = 0

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            AlwaysDown.calls += 1
            raise httpx.ConnectError("down", request=request)

    client = Client(server.url, retries=2, transport=AlwaysDown(), backoff=0.0)
    with pytest.raises(httpx.ConnectError):
        client.survey("honor-code")
    assert AlwaysDown.calls == 3


def _invites(server: BackgroundServer, count: int) -> list[str]:
    r = httpx.post(f"{server.url}/admin/surveys/closed-group/invites", json={"count": count},
                   headers=AUTH)
    assert r.status_code == 200, r.text
    return list(r.json()["tokens"])


def test_invite_tokens_are_single_use(server: BackgroundServer) -> None:
    url = f"{server.url}/surveys/closed-group/responses"
    assert httpx.get(f"{server.url}/surveys/closed-group").json()["invite_only"] is True
    t1, t2, t3 = _invites(server, 3)
    assert len({t1, t2, t3}) == 3

    def post(key: str, token: str | None) -> httpx.Response:
        body: dict[str, Any] = {"idempotency_key": key, "reports": {"q": True}}
        if token is not None:
            body["invite_token"] = token
        return httpx.post(url, json=body)

    for token in (None, "not-an-invite"):
        r = post("invite-key-0000", token)
        assert r.status_code == 403 and r.json()["detail"]["field"] == "invite_token"
    first = post("invite-key-0001", t1)
    assert first.status_code == 201
    again = post("invite-key-0001", t1)  # a retry: identical answer
    assert again.status_code == 201 and again.content == first.content
    reuse = post("invite-key-0002", t1)
    assert reuse.status_code == 403 and "already used" in reuse.json()["detail"]["message"]
    assert _n(server, "closed-group") == (1, 1)

    batch_url = f"{url}/batch"
    same = {"responses": [{"idempotency_key": f"invite-key-1{i}", "invite_token": t2,
                           "reports": {"q": False}} for i in range(2)]}
    r = httpx.post(batch_url, json=same)
    assert r.status_code == 403 and r.json()["detail"]["field"] == "responses[1].invite_token"
    mixed = {"responses": [{"idempotency_key": "invite-key-20", "invite_token": t2,
                            "reports": {"q": False}},
                           {"idempotency_key": "invite-key-21", "invite_token": t1,
                            "reports": {"q": False}}]}
    r = httpx.post(batch_url, json=mixed)
    assert r.status_code == 403 and r.json()["detail"]["field"] == "responses[1].invite_token"
    assert _n(server, "closed-group") == (1, 1)  # t2 was not consumed by the refused batch
    assert post("invite-key-0003", t2).status_code == 201
    assert _n(server, "closed-group") == (2, 2)

    # only hashes are stored
    with server.storage.engine.connect() as conn:
        stored = [row[0] for row in conn.execute(select(invites_table.c.token_hash))]
    assert len(stored) == 3 and not {t1, t2, t3} & set(stored)
    assert t3 not in " ".join(stored)


def test_invites_only_for_invite_only_surveys(server: BackgroundServer) -> None:
    r = httpx.post(f"{server.url}/admin/surveys/honor-code/invites", json={"count": 2},
                   headers=AUTH)
    assert r.status_code == 409 and r.json()["detail"]["field"] == "id"
    for count in (0, 10_001, "3", 2.5):
        r = httpx.post(f"{server.url}/admin/surveys/closed-group/invites", json={"count": count},
                       headers=AUTH)
        assert r.status_code == 422 and r.json()["detail"]["field"] == "count", r.text


def test_closed_survey_refuses_new_responses(server: BackgroundServer) -> None:
    url = f"{server.url}/surveys/honor-code/responses"
    body = {"idempotency_key": "before-closing", "reports": {"violated": True}}
    first = httpx.post(url, json=body)
    r = httpx.post(f"{server.url}/admin/surveys/honor-code/close", headers=AUTH)
    assert r.status_code == 200 and r.json() == {"id": "honor-code", "status": "closed"}
    assert httpx.get(f"{server.url}/surveys/honor-code").json()["status"] == "closed"
    late = httpx.post(url, json={**body, "idempotency_key": "after-closing"})
    assert late.status_code == 409 and late.json()["detail"]["field"] == "id"
    retry = httpx.post(url, json=body)
    assert retry.status_code == 201 and retry.content == first.content
    assert _n(server) == (1, 1)
