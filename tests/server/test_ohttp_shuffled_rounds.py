"""A survey with rounds collected through a shuffler: each round states the shuffled guarantee of its own batches.

The gateway records the round a shuffled batch was served in (its clock read
before and after serving it); a batch served across the end of a round is
recorded without one, since its responses cannot be told apart by round. The
results give each round the batches of that round (``rounds.rounds[].shuffler``),
and the statement holds for a round only where these hold all its responses.
The batches are posted as the shuffler posts them (encapsulated, with the relay
token, to ``/.well-known/ohttp-gateway/batch``); the server's clock is the test's.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")

from deniable._ohttp._bhttp import BinaryRequest, encode_request  # noqa: E402
from deniable._ohttp._keys import KeyRing  # noqa: E402
from deniable._ohttp._messages import GATEWAY_PATH, decode_key_configs, encapsulate_request  # noqa: E402
from deniable._ohttp._shuffler import BATCH_TYPE, encode_batch  # noqa: E402
from deniable.client import new_key  # noqa: E402
from deniable.server._routes.gateway import _batch_round  # noqa: E402
from deniable.server._runner import BackgroundServer  # noqa: E402
from deniable.server._surveys import load_survey  # noqa: E402

pytestmark = pytest.mark.integration

TOKEN = "relay-token-rounds"
DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
SURVEY: dict[str, Any] = {
    "id": "daily", "title": "Sick today?", "budget": 1, "rate_limit": "off",
    "rounds": {"every": "1d", "lifetime_epsilon": 10, "start": "2026-12-01T00:00:00Z"},
    "transport": {"kind": "ohttp", "relay": "https://relay.example.org/", "shuffler": True},
    "questions": [{"id": "sick", "text": "Sick today?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.5}],
}


class Clock:
    """The server's clock: ``now``, then ``step`` seconds later at each reading."""

    def __init__(self, now: float, step: float = 0.0) -> None:
        self.now, self.step = now, step

    def __call__(self) -> float:
        now = self.now
        self.now += self.step
        return now


def post_batch(url: str, n: int) -> dict[str, int]:
    """A shuffler's batch of ``n`` responses, each from a new device, posted to the gateway."""
    (config,) = decode_key_configs(httpx.get(url + GATEWAY_PATH).content)
    authority = url.split("://", 1)[1]
    items = []
    for i in range(n):
        body = {"idempotency_key": new_key(), "device": secrets.token_urlsafe(16), "reports": {"sick": i % 2 == 0}}
        request = BinaryRequest("POST", "/surveys/daily/responses", "http", authority,
                                ((b"content-type", b"application/json"),), json.dumps(body).encode())
        items.append(encapsulate_request(config, encode_request(request))[0])
    answer = httpx.post(url + GATEWAY_PATH + "/batch", content=encode_batch(items),
                        headers={"Content-Type": BATCH_TYPE, "Authorization": f"Bearer {TOKEN}"})
    answer.raise_for_status()
    return dict(answer.json())


@contextmanager
def collected(clock: Clock, db_url: str | None = None) -> Iterator[BackgroundServer]:
    """The server after round 0's batch of 3, a batch of 2 served across the end of round 0, and round 1's
    batch of 4 (its clock then in round 1); ``db_url``: its database (default: a SQLite file of its own)."""
    with BackgroundServer([SURVEY], db_url, relay_token=TOKEN, ohttp_keys=KeyRing(), clock=clock) as server:
        assert post_batch(server.url, 3)["served"] == 3
        clock.now, clock.step = START + DAY - 0.001, 0.0004  # every reading 0.4 ms later: the end passes
        assert post_batch(server.url, 2)["served"] == 2
        clock.now, clock.step = START + DAY + 3600, 0.0
        assert post_batch(server.url, 4)["served"] == 4
        yield server


def test_each_round_states_only_its_own_batches() -> None:
    with collected(Clock(START + 60)) as server:
        rounds = httpx.get(server.url + "/surveys/daily/results").json()["rounds"]["rounds"]
        by_round, every = server.storage.round_batches("daily", 0, 10), server.storage.shuffled_batches("daily")
    assert by_round == {0: [3], 1: [4]} and every == [3, 2, 4]  # the batch across the end: in no round
    assert [r["round"] for r in rounds] == [0, 1]
    assert sum(r["n_responses"] for r in rounds) == 9
    assert [r["shuffler"]["responses"] for r in rounds] == [3, 4]
    assert [(r["shuffler"]["smallest"], r["shuffler"]["largest"], r["shuffler"]["batches"]) for r in rounds] == [
        (3, 3, 1), (4, 4, 1)]
    # the 2 responses of the batch across the end count in their rounds but in no round's batches
    assert sum(r["n_responses"] - r["shuffler"]["responses"] for r in rounds) == 2
    for r in rounds:  # the bound of the round's smallest batch, as shuffled_json states it for that many
        smallest = r["shuffler"]["smallest"]
        assert r["shuffler"]["epsilon"] is not None and r["shuffler"]["delta"] == min(1e-6, smallest**-1.1)


def test_a_round_without_a_shuffler_has_no_batches() -> None:
    plain = {**SURVEY, "id": "plain", "transport": "direct"}
    with BackgroundServer([plain], clock=Clock(START + 60)) as server:
        with httpx.Client(base_url=server.url) as http:
            posted = http.post("/surveys/plain/responses", json={
                "idempotency_key": new_key(), "device": secrets.token_urlsafe(16), "reports": {"sick": True}})
            assert posted.status_code == 201, posted.text
            rounds = http.get("/surveys/plain/results").json()["rounds"]["rounds"]
    assert [r["shuffler"] for r in rounds] == [None] and rounds[0]["shuffled"] is not None


def test_the_round_of_a_batch() -> None:
    daily = load_survey(SURVEY)
    assert _batch_round(daily, START + 10, START + 20) == 0
    assert _batch_round(daily, START + DAY + 1, START + 2 * DAY - 1) == 1
    assert _batch_round(daily, START + DAY - 1, START + DAY + 1) is None  # across the end of round 0
    assert _batch_round(daily, START - 10, START - 5) is None  # before round 0
    assert _batch_round(load_survey({**SURVEY, "rounds": None}), START, START + 3 * DAY) is None
