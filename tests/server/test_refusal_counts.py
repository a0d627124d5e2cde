"""Refused responses counted per survey, round and kind: kept in the database, stated in the results.

The storage contract (both databases): counts added from several threads are
written exactly, a write adds to what is stored, closing the storage writes
what is left, a new process reads them back, a failed write keeps the counts,
and the table holds nothing but the survey, round, kind and count. Over HTTP
(SQLite): every kind of refusal is caused and read back from the results,
per round and in all; a 404 is not counted.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import Connection, inspect

from deniable.client import new_key, privatize_answers
from deniable.server._refusal_counts import KINDS, NO_ROUND, RefusalCounts, kind_of
from deniable.server._runner import BackgroundServer
from deniable.server._storage import Storage

DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
ZERO = dict.fromkeys(KINDS, 0)
SURVEY: dict[str, Any] = {
    "id": "counted",
    "title": "Counted",
    "budget": 1,
    "rate_limit": {"responses": 3, "seconds": 3600},
    "rounds": {"every": "1d", "lifetime_epsilon": 10, "start": "2026-12-01T00:00:00Z"},
    "questions": [
        {
            "id": "where",
            "text": "Where?",
            "type": "categorical",
            "categories": ["a", "b", "c"],
            "mechanism": "grr",
            "epsilon": 1.0,
        }
    ],
}


def test_kinds_of_status() -> None:
    assert [kind_of(s) for s in (429, 409, 401, 403, 400, 413, 415, 422)] == [
        "rate_limited",
        "conflict",
        "forbidden",
        "forbidden",
        "invalid",
        "invalid",
        "invalid",
        "invalid",
    ]
    assert [kind_of(s) for s in (200, 201, 404, 500)] == [None] * 4


def test_counts_are_written_exactly_added_to_and_read_back_by_another_process(db_url: str) -> None:
    storage = Storage(db_url)
    counts = storage.refusals
    threads = [
        threading.Thread(target=lambda: [counts.add("s", 2, "rate_limited") for _ in range(500)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    counts.add("s", None, "invalid", 3)
    counts.add("other", 0, "conflict")
    for t in threads:
        t.join()
    assert counts.counts("s") == {NO_ROUND: {**ZERO, "invalid": 3}, 2: {**ZERO, "rate_limited": 2000}}
    counts.flush()  # written; now more on top, read as stored + pending
    counts.add("s", 2, "rate_limited", 5)
    counts.add("s", 2, "forbidden")
    assert counts.counts("s")[2] == {**ZERO, "rate_limited": 2005, "forbidden": 1}
    storage.close()  # writes what is left
    again = Storage(db_url)
    try:
        assert again.refusals.counts("s") == {
            NO_ROUND: {**ZERO, "invalid": 3},
            2: {**ZERO, "rate_limited": 2005, "forbidden": 1},
        }
        assert again.refusals.counts("other") == {0: {**ZERO, "conflict": 1}}
        assert again.refusals.counts("none") == {}
        columns = {c["name"] for c in inspect(again.engine).get_columns("deniable_refusals")}
        assert columns == {"survey_id", "round", "kind", "count"}  # no address, no time, no body
    finally:
        again.close()


def test_the_timer_writes_the_counts(db_url: str) -> None:
    storage = Storage(db_url)
    try:
        storage.refusals = RefusalCounts(storage._write, storage._read, storage.dialect, interval=0.01)
        storage.refusals.add("s", 1, "conflict")
        timer = storage.refusals._timer
        assert timer is not None
        timer.join(10)
        assert storage.refusals._pending == {}
        assert storage.refusals.counts("s") == {1: {**ZERO, "conflict": 1}}
    finally:
        storage.close()


def test_a_failed_write_keeps_the_counts(db_url: str) -> None:
    storage = Storage(db_url)
    try:

        @contextmanager
        def broken() -> Iterator[Connection]:
            raise OSError("disk full")
            yield  # pragma: no cover

        counts = RefusalCounts(broken, storage._read, storage.dialect, interval=3600)
        counts.add("s", None, "invalid", 2)
        with pytest.raises(OSError, match="disk full"):
            counts.flush()
        assert counts.counts("s") == {NO_ROUND: {**ZERO, "invalid": 2}}
        with pytest.raises(ValueError, match="kind must be one of"):
            counts.add("s", None, "teapot")
        counts._closed = True
        counts._write = storage._write  # type: ignore[method-assign]
        counts.flush()
        assert storage.refusals.counts("s") == {NO_ROUND: {**ZERO, "invalid": 2}}
    finally:
        storage.close()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _response(survey: dict[str, Any], rng: np.random.Generator, device: str | None = None) -> dict[str, Any]:
    return {
        "idempotency_key": new_key(),
        "device": device or secrets.token_urlsafe(16),
        "reports": privatize_answers(survey, {"where": "a"}, rng=rng),
    }


def test_each_kind_of_refusal_is_counted_per_round(sqlite_url: str, rng: np.random.Generator) -> None:
    clock = Clock(START + 3600)
    admin = {"Authorization": "Bearer refusals-admin"}
    with (
        BackgroundServer([SURVEY], db_url=sqlite_url, clock=clock, admin_token="refusals-admin") as server,
        httpx.Client(base_url=server.url, timeout=60) as http,
    ):
        survey = http.get("/surveys/counted").json()

        def single(body: Any, status: int, **kwargs: Any) -> None:
            r = http.post("/surveys/counted/responses", json=body, **kwargs)
            assert r.status_code == status, r.text

        # round 0
        first = _response(survey, rng)
        single(first, 201)
        single({**first, "reports": {"where": "b" if first["reports"]["where"] != "b" else "c"}}, 409)
        r = http.post(
            "/surveys/counted/responses",
            content=json.dumps(_response(survey, rng)),
            headers={"Content-Type": "text/plain"},
        )
        assert r.status_code == 415
        single({**_response(survey, rng), "reports": {"where": "nowhere"}}, 422)
        assert (
            http.post("/surveys/counted/responses/batch", json={"responses": [_response(survey, rng)]}).status_code
            == 401
        )
        single(_response(survey, rng), 403, headers={"Sec-Fetch-Site": "cross-site", "Origin": "https://x.test"})
        single(_response(survey, rng), 201)
        single(_response(survey, rng), 201)
        single(_response(survey, rng), 429)
        single(_response(survey, rng), 429)
        assert http.post("/surveys/nosuch/responses", json=_response(survey, rng)).status_code == 404
        # round 1: one more over the rate limit, and a device's second response in the round
        clock.now += DAY
        single(_response(survey, rng), 429)
        again = _response(survey, rng)
        for status in (201, 409):
            r = http.post(
                "/surveys/counted/responses/batch",
                headers=admin,
                json={"responses": [{**again, "idempotency_key": new_key()}]},
            )
            assert r.status_code == status, r.text
        results = http.get("/surveys/counted/results").json()
    assert results["defences"]["refusals"] == {"rate_limited": 3, "conflict": 2, "forbidden": 2, "invalid": 2}
    first_round, second_round = results["rounds"]["rounds"]
    assert first_round["refusals"] == {"rate_limited": 2, "conflict": 1, "forbidden": 2, "invalid": 2}
    assert second_round["refusals"] == {"rate_limited": 1, "conflict": 1, "forbidden": 0, "invalid": 0}
    # written to the database when the server stopped
    storage = Storage(sqlite_url)
    try:
        assert sum(sum(k.values()) for k in storage.refusals.counts("counted").values()) == 9
        assert storage.refusals.counts("nosuch") == {}
    finally:
        storage.close()
