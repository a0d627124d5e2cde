"""Flooding an open survey: the per-address rate limit and max_responses hold over real HTTP.

A real server (uvicorn on loopback, SQLite file or PostgreSQL) takes a flood
from one client: hundreds of quick single responses, from several threads at
once. Only the survey's rate limit gets through (429 with ``Retry-After`` for
the rest), and exactly the acknowledged responses are stored. A survey with
``max_responses`` never stores more, whatever mix of concurrent single
responses and batches arrives. ``X-Forwarded-For`` names the client only when
the peer is a configured trusted proxy.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from deniable.client import Client, ClientError, new_key
from deniable.server._policy import RateLimit
from deniable.server._runner import BackgroundServer
from deniable.server._security import RateLimiter, client_address, parse_networks

ADMIN = "admin-token-flood-tests"
AUTH = {"Authorization": f"Bearer {ADMIN}"}
LIMIT = {"responses": 20, "seconds": 60}
FLOOD = 400
THREADS = 8


def _survey(sid: str, **settings: Any) -> dict[str, Any]:
    return {"id": sid, "title": "Flood target", "budget": 1.1, **settings, "questions": [
        {"id": "violated", "text": "Have you broken the honor code?", "type": "yes-no",
         "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5}]}


def _body(yes: bool = True) -> dict[str, Any]:
    """A made-up report, as a flooder sends it (no randomization: always 'yes')."""
    return {"idempotency_key": new_key(), "reports": {"violated": yes}}


def _post_all(url: str, paths_and_bodies: list[tuple[str, dict[str, Any], dict[str, str]]]) -> list[httpx.Response]:
    """Post every (path, body, headers) from THREADS threads, each with its own keep-alive connection."""
    chunks = [paths_and_bodies[i::THREADS] for i in range(THREADS)]

    def run(chunk: list[tuple[str, dict[str, Any], dict[str, str]]]) -> list[httpx.Response]:
        with httpx.Client(base_url=url, timeout=120) as http:
            return [http.post(path, json=body, headers=headers) for path, body, headers in chunk]

    with ThreadPoolExecutor(THREADS) as pool:
        return [r for answers in pool.map(run, chunks) for r in answers]


def _stored(server: BackgroundServer, sid: str) -> tuple[int, int]:
    """(stored rows, n of the stored aggregate)."""
    return server.storage.count_responses(sid), server.storage.aggregates(sid)["violated"].n


def test_one_client_flood_gets_only_the_rate_limit(db_url: str) -> None:
    """400 quick single responses from one address (8 threads): at most the bucket
    (20 at once, then 20 per minute) is stored, the rest get 429 with Retry-After."""
    with BackgroundServer([_survey("flood", rate_limit=LIMIT)], db_url=db_url) as server:
        started = time.monotonic()
        answers = _post_all(server.url, [("/surveys/flood/responses", _body(), {}) for _ in range(FLOOD)])
        elapsed = time.monotonic() - started
        stored = _stored(server, "flood")
        refusals = httpx.get(f"{server.url}/surveys/flood/results").json()["defences"]["refusals"]
    codes = Counter(r.status_code for r in answers)
    assert refusals == {"rate_limited": codes[429], "conflict": 0, "forbidden": 0, "invalid": 0}
    assert set(codes) == {201, 429}, codes
    refused = [r for r in answers if r.status_code == 429]
    for r in refused:
        assert r.json()["detail"]["field"] == "rate_limit"
        assert int(r.headers["retry-after"]) >= 1
    assert "20 per 60 seconds" in refused[0].json()["detail"]["message"]
    # the bucket: 20 at once, refilled at 20 per 60 s while the flood lasted
    bound = LIMIT["responses"] + int(elapsed * LIMIT["responses"] / LIMIT["seconds"])
    assert LIMIT["responses"] <= codes[201] <= bound
    assert stored == (codes[201], codes[201])
    print(f"flood of {FLOOD} from one address in {elapsed:.2f} s ({db_url.split(':')[0]}): "
          f"{codes[201]} accepted, {codes[429]} refused (429), {stored[0]} stored")


def test_refusals_and_retries_cost_no_token_and_retry_after_is_enough(sqlite_url: str) -> None:
    """Invalid requests and retries of a stored response do not use the limit; after
    Retry-After seconds the next response is accepted."""
    with BackgroundServer([_survey("slow", rate_limit={"responses": 2, "seconds": 2})], db_url=sqlite_url) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        for _ in range(5):  # invalid: 422, free
            assert http.post("/surveys/slow/responses", json={"idempotency_key": "short"}).status_code == 422
            assert http.post("/surveys/slow/responses", content=b"{not JSON",
                             headers={"content-type": "application/json"}).status_code == 422
        first = _body()
        for _ in range(5):  # the same response again and again: stored once, one token
            assert http.post("/surveys/slow/responses", json=first).status_code == 201
        assert http.post("/surveys/slow/responses", json=_body()).status_code == 201
        refused = http.post("/surveys/slow/responses", json=_body())
        assert refused.status_code == 429
        # the limit is checked before the body is read: a body that is not even JSON gets 429 too
        garbage = http.post("/surveys/slow/responses", content=b"\xff" * 100_000,
                            headers={"content-type": "application/json"})
        assert garbage.status_code == 429 and garbage.json()["detail"]["field"] == "rate_limit"
        assert int(garbage.headers["retry-after"]) >= 1
        time.sleep(int(refused.headers["retry-after"]))
        assert http.post("/surveys/slow/responses", json=_body()).status_code == 201
        assert _stored(server, "slow") == (3, 3)


def test_rate_limit_can_be_turned_off_and_spares_invite_only_surveys(sqlite_url: str) -> None:
    surveys = [_survey("unlimited", rate_limit="off"),
               _survey("invited", rate_limit={"responses": 1, "seconds": 600}, invite_only=True)]
    with BackgroundServer(surveys, db_url=sqlite_url, admin_token=ADMIN) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        assert all(http.post("/surveys/unlimited/responses", json=_body()).status_code == 201 for _ in range(50))
        tokens = http.post("/admin/surveys/invited/invites", json={"count": 5}, headers=AUTH).json()["tokens"]
        for token in tokens:  # the invites are the limit here
            r = http.post("/surveys/invited/responses", json={**_body(), "invite_token": token})
            assert r.status_code == 201, r.text


def test_max_responses_is_never_exceeded(db_url: str) -> None:
    """A cap of 60: a batch that would cross it is refused whole; then 200 concurrent single
    responses and batches (8 threads) fill it exactly; every later request gets 409."""
    cap = 60
    with BackgroundServer([_survey("capped", max_responses=cap, rate_limit="off")], db_url=db_url,
                          admin_token=ADMIN) as server, httpx.Client(base_url=server.url, timeout=120) as http:
        batch = http.post("/surveys/capped/responses/batch", headers=AUTH,
                          json={"responses": [_body() for _ in range(45)]})
        assert batch.status_code == 201 and batch.json()["accepted"] == 45
        over = http.post("/surveys/capped/responses/batch", headers=AUTH,
                         json={"responses": [_body() for _ in range(16)]})
        assert over.status_code == 409, over.text
        assert over.json()["detail"]["message"] == (
            "survey 'capped' accepts at most 60 responses (max_responses) and has 45; this request's "
            "16 new responses would exceed it by 1")
        assert _stored(server, "capped") == (45, 45)
        requests = [("/surveys/capped/responses", _body(), {}) for _ in range(180)] + [
            ("/surveys/capped/responses/batch", {"responses": [_body(), _body()]}, AUTH) for _ in range(20)]
        answers = _post_all(server.url, requests)
        stored = _stored(server, "capped")
        full = http.post("/surveys/capped/responses", json=_body())
    codes = Counter(r.status_code for r in answers)
    assert set(codes) <= {201, 409}, codes
    accepted = sum(r.json().get("accepted", 1) for r in answers if r.status_code == 201)
    assert stored == (cap, cap) and 45 + accepted == cap
    assert full.status_code == 409
    assert full.json()["detail"] == {"field": "id", "message": "survey 'capped' accepts at most 60 responses "
                                     "(max_responses) and has 60; it accepts no new responses"}


def test_batches_to_open_surveys_need_the_admin_or_a_relay_token(sqlite_url: str) -> None:
    relay = "relay-token-flood-tests"
    with BackgroundServer([_survey("open"), _survey("invited", invite_only=True)], db_url=sqlite_url,
                          admin_token=ADMIN, relay_token=relay) as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        url = "/surveys/open/responses/batch"
        for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Basic {relay}"}):
            r = http.post(url, json={"responses": [_body()]}, headers=headers)
            assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", r.text
            assert r.json()["detail"]["field"] == "Authorization"
            assert "trusted relays" in r.json()["detail"]["message"]
        assert _stored(server, "open") == (0, 0)
        for token in (ADMIN, relay):
            r = http.post(url, json={"responses": [_body()]}, headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 201, r.text
        assert _stored(server, "open") == (2, 2)
        # the relay token opens nothing else
        assert http.get("/admin/surveys/open/export", headers={"Authorization": f"Bearer {relay}"}).status_code == 401
        # invite-only: no token needed, but every response brings its own unused invite
        invites = http.post("/admin/surveys/invited/invites", json={"count": 2}, headers=AUTH).json()["tokens"]
        url = "/surveys/invited/responses/batch"
        r = http.post(url, json={"responses": [{**_body(), "invite_token": invites[0]}, _body()]})
        assert r.status_code == 403 and r.json()["detail"]["field"] == "responses[1].invite_token"
        r = http.post(url, headers=AUTH, json={"responses": [{**_body(), "invite_token": invites[0]}, _body()]})
        assert r.status_code == 403, "the admin token does not replace the invites"
        ok = http.post(url, json={"responses": [{**_body(), "invite_token": t} for t in invites]})
        assert ok.status_code == 201 and ok.json()["accepted"] == 2
    # the Python client: a relay posts batches with its token; without one it hears why not
    with BackgroundServer([_survey("open")], db_url=sqlite_url, relay_token=relay) as server:
        with Client(server.url) as device, pytest.raises(ClientError) as refused:
            device.respond_many("open", [{"violated": True}])
        assert refused.value.status == 401 and refused.value.field == "Authorization"
        with Client(server.url, token=relay) as relayed:
            assert relayed.respond_many("open", [{"violated": True}] * 3) == {"accepted": 3, "duplicates": 0}


def test_the_client_reports_retry_after(sqlite_url: str) -> None:
    tight = _survey("tight", rate_limit={"responses": 1, "seconds": 600})
    with BackgroundServer([tight], db_url=sqlite_url) as server, Client(server.url) as device:
        device.respond("tight", {"violated": False})
        with pytest.raises(ClientError) as refused:
            device.respond("tight", {"violated": True})
    assert refused.value.status == 429 and refused.value.retry_after == 600


def test_x_forwarded_for_counts_only_behind_a_trusted_proxy(sqlite_url: str) -> None:
    """Without trusted proxies a made-up X-Forwarded-For changes nothing; behind a trusted
    proxy (here the loopback peer) each forwarded client has its own bucket, and the
    right-most untrusted hop is the client (entries left of it are the client's own words)."""
    limit = {"responses": 3, "seconds": 600}

    def flood(server: BackgroundServer, forwarded: list[str]) -> Counter[int]:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            return Counter(http.post("/surveys/xff/responses", json=_body(),
                                     headers={"X-Forwarded-For": f}).status_code for f in forwarded)

    spoofed = [f"198.51.100.{i}" for i in range(30)]
    with BackgroundServer([_survey("xff", rate_limit=limit)], db_url=sqlite_url) as server:
        assert flood(server, spoofed) == {201: 3, 429: 27}
    with BackgroundServer([_survey("xff", rate_limit=limit)], db_url=sqlite_url,
                          trusted_proxies=["127.0.0.1", "10.0.0.0/8"]) as server:
        assert flood(server, spoofed) == {201: 30}  # 30 clients, one response each
        # one client behind two trusted proxies, making up a different left-most hop each time
        chain = [f"203.0.113.{i}, 192.0.2.7, 10.1.2.3" for i in range(10)]
        assert flood(server, chain) == {201: 3, 429: 7}


def test_client_address_rules() -> None:
    proxies = parse_networks(["127.0.0.1", "10.0.0.0/8", "2001:db8:ff::/48"])
    assert client_address("192.0.2.1", ["198.51.100.9"], proxies) == "192.0.2.1"  # untrusted peer
    assert client_address("192.0.2.1", ["198.51.100.9"], ()) == "192.0.2.1"
    assert client_address("127.0.0.1", [], proxies) == "127.0.0.1"
    assert client_address("127.0.0.1", ["198.51.100.9"], proxies) == "198.51.100.9"
    assert client_address("127.0.0.1", ["1.2.3.4, 198.51.100.9", "10.0.0.5"], proxies) == "198.51.100.9"
    assert client_address("127.0.0.1", ["10.0.0.9, 10.0.0.5"], proxies) == "10.0.0.9"  # all trusted
    # IPv6 clients count by /64; IPv4-mapped addresses as IPv4
    assert client_address("2001:db8:1:2:aaaa::1", [], ()) == "2001:db8:1:2::/64"
    assert client_address("2001:db8:1:2:bbbb::9", [], ()) == "2001:db8:1:2::/64"
    assert client_address("::ffff:192.0.2.1", [], ()) == "192.0.2.1"
    assert client_address("2001:db8:ff:1::1", ["[2001:db8:5::7]"], proxies) == "2001:db8:5::/64"
    with pytest.raises(ValueError, match="'proxy.example' is not an IP address or network"):
        parse_networks(["proxy.example"])


def test_token_bucket_arithmetic() -> None:
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0], max_buckets=3)
    limit = RateLimit(responses=2, seconds=10.0)
    assert [limiter.take("s", "a", limit) for _ in range(3)] == [0.0, 0.0, pytest.approx(5.0)]
    now[0] = 5.0
    assert limiter.take("s", "a", limit) == 0.0  # one token back after 5 s
    assert limiter.take("s", "a", limit) == pytest.approx(5.0)
    limiter.give_back("s", "a", limit)
    assert limiter.take("s", "a", limit) == 0.0
    assert limiter.take("t", "a", limit) == 0.0  # per survey
    for key in ("b", "c", "d"):
        limiter.take("s", key, limit)
    assert len(limiter) == 3  # the least recently used buckets were forgotten
