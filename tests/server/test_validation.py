"""Every kind of bad request gets a 4xx JSON answer naming the field, and stores nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from deniable.server._runner import BackgroundServer

ADMIN = "admin-token-for-tests-7f3a"
AUTH = {"Authorization": f"Bearer {ADMIN}"}  # batches to an open survey come from relays
CATS = [f"c{i}" for i in range(10)]
KINDS = {
    "id": "kinds",
    "title": "One question per report format",
    "budget": 10,
    "questions": [
        {"id": "yn", "text": "?", "type": "yes-no", "mechanism": "forced-response",
         "p_truth": 0.5, "p_yes": 0.5},
        {"id": "grr", "text": "?", "type": "categorical", "categories": ["a", "b", "c"],
         "mechanism": "grr", "epsilon": 1},
        {"id": "oue", "text": "?", "type": "categorical", "categories": CATS,
         "mechanism": "oue", "epsilon": 1},
        {"id": "olh", "text": "?", "type": "categorical", "categories": CATS,
         "mechanism": "olh", "epsilon": 1},
        {"id": "had", "text": "?", "type": "categorical", "categories": CATS,
         "mechanism": "hadamard", "epsilon": 1},
        {"id": "sub", "text": "?", "type": "categorical", "categories": CATS,
         "mechanism": "subset", "epsilon": 1, "omega": 3},
    ],
}
VALID = {"yn": True, "grr": "a", "oue": "0900", "olh": {"seed": 5, "value": 1}, "had": 3,
         "sub": [0, 4, 7]}


@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[BackgroundServer]:
    with BackgroundServer([KINDS], db_url=module_db_url, admin_token=ADMIN) as running:
        yield running


@pytest.fixture(scope="module")
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _stored(server: BackgroundServer) -> tuple[int, list[int]]:
    rows = server.storage.count_responses("kinds")
    return rows, [a.n for a in server.storage.aggregates("kinds").values()]


def _body(key: str = "valid-key-0001", **reports: Any) -> dict[str, Any]:
    merged = {**VALID, **reports}
    return {"idempotency_key": key, "reports": {k: v for k, v in merged.items() if v is not _DROP}}


_DROP = object()

REPORT_CASES = [
    ("yn", 1), ("yn", "yes"), ("yn", None), ("yn", [True]),
    ("grr", "d"), ("grr", 0), ("grr", ["a"]), ("grr", None), ("grr", True),
    ("oue", "abc"), ("oue", "abcdef"), ("oue", "zzzz"), ("oue", "ffff"), ("oue", 1234),
    ("oue", ""), ("oue", ["09", "00"]),
    ("olh", {"seed": -1, "value": 0}), ("olh", {"seed": 2**64, "value": 0}),
    ("olh", {"seed": 2**7, "value": 0}), ("olh", {"seed": "5", "value": 0}),
    ("olh", {"seed": 5, "value": 4}), ("olh", {"seed": 5}), ("olh", {"seed": 5, "value": 1, "x": 0}),
    ("olh", [5, 1]), ("olh", {"seed": True, "value": 0}), ("olh", {"seed": 1.5, "value": 0}),
    ("had", -1), ("had", 16), ("had", "3"), ("had", 3.0), ("had", True), ("had", 2**70),
    ("sub", [4, 0, 7]), ("sub", [0, 0, 7]), ("sub", [0, 4]), ("sub", [0, 4, 10]),
    ("sub", [0, 4, -1]), ("sub", [True, 4, 7]), ("sub", "0,4,7"), ("sub", [0.0, 4, 7]),
]


@pytest.mark.parametrize("qid, report", REPORT_CASES, ids=lambda v: repr(v)[:30])
def test_out_of_domain_reports_are_refused(
    server: BackgroundServer, http: httpx.Client, qid: str, report: Any
) -> None:
    before = _stored(server)
    r = http.post("/surveys/kinds/responses", json=_body(**{qid: report}))
    assert r.status_code == 422, r.text
    assert r.json()["detail"]["field"] == f"reports.{qid}"
    assert r.json()["detail"]["message"]
    assert _stored(server) == before


def _raw(content: bytes) -> dict[str, Any]:
    return {"content": content, "headers": {"content-type": "application/json"}}


BODY_CASES: list[tuple[str, dict[str, Any], int, str]] = [
    ("malformed JSON", _raw(b'{"idempotency_key": "abcdefgh", '), 422, "body"),
    ("not an object", {"json": [1, 2]}, 422, "body"),
    ("empty body", _raw(b""), 422, "body"),
    ("missing key", {"json": {"reports": VALID}}, 422, "idempotency_key"),
    ("short key", {"json": _body(key="short")}, 422, "idempotency_key"),
    ("key with bad characters", {"json": _body(key="bad key with spaces")}, 422, "idempotency_key"),
    ("key too long", {"json": _body(key="k" * 129)}, 422, "idempotency_key"),
    ("key of wrong type", {"json": {"idempotency_key": 12345678, "reports": VALID}}, 422,
     "idempotency_key"),
    ("reports not an object", {"json": {"idempotency_key": "abcdefgh", "reports": [1]}}, 422,
     "reports"),
    ("reports missing", {"json": {"idempotency_key": "abcdefgh"}}, 422, "reports"),
    ("extra top-level field", {"json": {**_body(), "answers": {}}}, 422, "answers"),
    ("invite token of wrong type", {"json": {**_body(), "invite_token": 5}}, 422, "invite_token"),
    ("missing question", {"json": _body(oue=_DROP)}, 422, "reports.oue"),
    ("extra question", {"json": {"idempotency_key": "abcdefgh", "reports": {**VALID, "zzz": 1}}},
     422, "reports.zzz"),
]


@pytest.mark.parametrize("name, request_kwargs, status, field", BODY_CASES,
                         ids=[c[0] for c in BODY_CASES])
def test_bad_bodies_name_the_field(
    server: BackgroundServer, http: httpx.Client, name: str, request_kwargs: dict[str, Any],
    status: int, field: str,
) -> None:
    before = _stored(server)
    r = http.post("/surveys/kinds/responses", **request_kwargs)
    assert r.status_code == status, r.text
    assert r.json()["detail"]["field"] == field, r.json()
    assert _stored(server) == before


def test_unknown_survey(server: BackgroundServer, http: httpx.Client) -> None:
    for r in (http.post("/surveys/nope/responses", json=_body()), http.get("/surveys/nope"),
              http.get("/surveys/nope/results"),
              http.post("/surveys/nope/responses/batch", json={"responses": [_body()]})):
        assert r.status_code == 404 and r.json()["detail"]["field"] == "id", r.text


def test_batch_is_all_or_nothing(server: BackgroundServer, http: httpx.Client) -> None:
    before = _stored(server)
    responses = [_body(key=f"batch-key-{i:04d}") for i in range(5)]
    responses[3] = _body(key="batch-key-0003", grr="z")
    r = http.post("/surveys/kinds/responses/batch", json={"responses": responses}, headers=AUTH)
    assert r.status_code == 422
    assert r.json()["detail"]["field"] == "responses[3].reports.grr"
    responses[3] = {"idempotency_key": "x", "reports": VALID}
    r = http.post("/surveys/kinds/responses/batch", json={"responses": responses}, headers=AUTH)
    assert r.json()["detail"]["field"] == "responses[3].idempotency_key"
    assert _stored(server) == before


def test_batch_size_limit(server: BackgroundServer, http: httpx.Client) -> None:
    before = _stored(server)
    responses = [_body(key=f"many-keys-{i:06d}") for i in range(10_001)]
    r = http.post("/surveys/kinds/responses/batch", json={"responses": responses}, headers=AUTH)
    assert r.status_code == 422 and r.json()["detail"]["field"] == "responses"
    assert _stored(server) == before


def test_oversized_body_gets_413(server: BackgroundServer, http: httpx.Client) -> None:
    before = _stored(server)
    big = b'{"idempotency_key": "abcdefghij", "reports": {"pad": "' + b"x" * (17 << 20) + b'"}}'
    r = http.post("/surveys/kinds/responses", **_raw(big))
    assert r.status_code == 413 and r.json()["detail"]["field"] == "body"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit applies while streaming
        for start in range(0, len(big), 1 << 20):
            yield big[start : start + (1 << 20)]

    r = http.post("/surveys/kinds/responses", content=chunks(),
                  headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["detail"]["field"] == "body"
    assert _stored(server) == before


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {ADMIN}"},
     {"Authorization": ADMIN}, {"Authorization": f"Bearer {ADMIN}x"}],
    ids=["none", "wrong", "basic", "no scheme", "longer"],
)
def test_admin_needs_the_token(http: httpx.Client, headers: dict[str, str]) -> None:
    calls = [
        ("POST", "/admin/surveys", {"json": {**KINDS, "id": "new-one"}}),
        ("POST", "/admin/surveys/kinds/close", {}),
        ("POST", "/admin/surveys/kinds/invites", {"json": {"count": 1}}),
        ("GET", "/admin/surveys/kinds/export", {}),
    ]
    for method, path, kwargs in calls:
        r = http.request(method, path, headers=headers, **kwargs)
        assert r.status_code == 401, (path, r.text)
        assert r.json()["detail"]["field"] == "Authorization"
        assert r.headers["www-authenticate"] == "Bearer"
    assert http.get("/surveys/new-one").status_code == 404
    assert http.get("/surveys/kinds").json()["status"] == "open"


def test_admin_disabled_without_a_token(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DENIABLE_ADMIN_TOKEN", raising=False)
    with BackgroundServer([KINDS], db_url=sqlite_url) as server:
        r = httpx.post(f"{server.url}/admin/surveys/kinds/close", headers={"Authorization": "Bearer anything"})
        assert r.status_code == 401 and "disabled" in r.json()["detail"]["message"]


def test_admin_token_from_environment(sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DENIABLE_ADMIN_TOKEN", "from-the-environment")
    with BackgroundServer([KINDS], db_url=sqlite_url) as server:
        auth = {"Authorization": "Bearer from-the-environment"}
        r = httpx.post(f"{server.url}/admin/surveys/kinds/close", headers=auth)
        assert r.status_code == 200 and r.json() == {"id": "kinds", "status": "closed"}


def test_admin_survey_definitions_are_checked(http: httpx.Client) -> None:
    auth = {"Authorization": f"Bearer {ADMIN}"}
    over = {**KINDS, "id": "over-budget", "budget": 2.0}
    r = http.post("/admin/surveys", json=over, headers=auth)
    assert r.status_code == 422 and r.json()["detail"]["field"] == "budget"
    assert "above the budget 2" in r.json()["detail"]["message"]
    bad = {**KINDS, "id": "bad-question", "questions": [{**KINDS["questions"][1], "epsilon": "x"}]}
    r = http.post("/admin/surveys", json=bad, headers=auth)
    assert r.status_code == 422 and r.json()["detail"]["field"] == "questions[0].epsilon"
    changed = {**KINDS, "title": "A different survey under the same id"}
    r = http.post("/admin/surveys", json=changed, headers=auth)
    assert r.status_code == 409 and r.json()["detail"]["field"] == "id"
    for sid in ("over-budget", "bad-question"):
        assert http.get(f"/surveys/{sid}").status_code == 404
    r = http.post("/admin/surveys", json={**KINDS, "id": "fine"}, headers=auth)
    assert r.status_code == 201 and r.json()["epsilon_total"] <= KINDS["budget"]
    assert http.get("/surveys/fine").json()["questions"] == r.json()["questions"]


def test_valid_reports_are_stored(server: BackgroundServer, http: httpx.Client) -> None:
    """The control: the same path accepts a valid body, so the refusals above are real."""
    rows, ns = _stored(server)
    r = http.post("/surveys/kinds/responses", json=_body(key="control-response-1"))
    assert r.status_code == 201, r.text
    assert _stored(server) == (rows + 1, [n + 1 for n in ns])
    assert json.loads(r.text)["status"] == "accepted"


def test_reports_are_checked_once_per_request(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Storage checks each question's reports in ``reports_from_json`` only; the stored
    text and the aggregates take the checked reports as they are (new keys, and a mix
    of new and duplicate keys, whose new rows are selected)."""
    from deniable.mechanisms._contract import Mechanism
    from deniable.server._storage import Storage

    storage = Storage(sqlite_url)
    survey = storage.add_survey(KINDS)
    outside: list[str] = []
    inside = [False]
    from_json = Mechanism.reports_from_json

    def counted_from_json(self: Mechanism, items: Any) -> Any:
        inside[0] = True
        try:
            return from_json(self, items)
        finally:
            inside[0] = False

    for q in survey.questions:
        cls = type(q.mechanism)
        original = cls._validate

        def counted(self: Any, reports: Any, original: Any = original) -> Any:
            if not inside[0]:
                outside.append(type(self).__name__)
            return original(self, reports)

        monkeypatch.setattr(cls, "_validate", counted)
    monkeypatch.setattr(Mechanism, "reports_from_json", counted_from_json)
    try:
        first = storage.submit(survey.id, [_body(key=f"once-key-{i}") for i in range(3)])
        again = storage.submit(survey.id, [_body(key=f"once-key-{i}") for i in range(1, 5)])
        assert (first.accepted, again.accepted, again.duplicates) == (3, 2, 2)
        assert outside == []
    finally:
        storage.close()
