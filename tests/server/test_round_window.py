"""The results of a survey in rounds: a window of rounds (``?rounds=``) and closed rounds computed once.

Real HTTP on loopback, SQLite; the server's clock is the test's. A window
lists the rounds it names that have responses, and says how many have them
in all; a closed round's results come from the cache only while its stored
aggregates are those they were computed from (a response committed into a
round just after it closed is seen at once), and the current round is never
kept. Cached or not, each round's results equal what the uncached function
(:func:`deniable.server._results.rounds_json`) computes from the stored
aggregates.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from deniable.client import new_key, privatize_answers
from deniable.server._errors import Invalid
from deniable.server._results import rounds_json
from deniable.server._round_window import MAX_WINDOW, RoundCache, parse_window
from deniable.server._runner import BackgroundServer

HOUR = 3600
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
ROUNDS = 60
EMPTY = 30  # a round without responses
SURVEY = {
    "id": "hourly", "title": "Every hour", "budget": 2, "rate_limit": "off",
    "rounds": {"every": "1h", "lifetime_epsilon": 1e6, "start": "2026-12-01T00:00:00Z"},
    "questions": [
        {"id": "sick", "text": "Sick?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.5},
        {"id": "where", "text": "Where?", "type": "categorical", "categories": ["home", "office", "away"],
         "mechanism": "grr", "epsilon": 1.0},
    ],
}
KEYS = [f"device-{i:02d}-abcdefghijklmnop" for i in range(4)]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _responses(survey: dict[str, Any], n: int) -> list[dict[str, Any]]:
    return [{"idempotency_key": new_key(), "device": KEYS[i],
             "reports": privatize_answers(survey, {"sick": i % 2 == 0, "where": "home"})} for i in range(n)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BackgroundServer, Clock, RoundCache]]:
    clock = Clock(START + 1)
    folder = tmp_path_factory.mktemp("window")
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{folder / 'w.db'}", clock=clock) as running:
        survey = running.storage.public("hourly")
        for index in range(ROUNDS):
            clock.now = START + index * HOUR + 1
            if index != EMPTY:
                running.storage.submit("hourly", _responses(survey, 1 + index % 3))
        yield running, clock, running.server.config.app.state.round_cache


def _get(server: BackgroundServer, query: str = "") -> dict[str, Any]:
    r = httpx.get(f"{server.url}/surveys/hourly/results{query}", timeout=60)
    assert r.status_code == 200, r.text
    return dict(r.json()["rounds"])


def _uncached(server: BackgroundServer, first: int, stop: int) -> list[dict[str, Any]]:
    survey = server.storage.survey("hourly")
    per_round = {i: a for i, a in server.storage.round_aggregates("hourly").items() if first <= i < stop}
    refusals = server.storage.refusals.counts("hourly")
    return list(rounds_json(survey, per_round, {}, None, refusals=refusals)["rounds"])


@pytest.mark.parametrize(("text", "current", "first", "stop"), [
    ("last:52", 59, 8, 60), ("last:52", 10, 0, 11), ("last:1", 0, 0, 1), ("last:5", None, 0, 0),
    ("0:10", 59, 0, 10), ("50:1000", 59, 50, 1000), (f"0:{MAX_WINDOW}", 3, 0, MAX_WINDOW),
])
def test_windows(text: str, current: int | None, first: int, stop: int) -> None:
    window = parse_window(text, current)
    assert (window.first, window.stop, window.asked) == (first, stop, text)


@pytest.mark.parametrize("text", ["", "all", "last:0", f"last:{MAX_WINDOW + 1}", "last:", "5:5", "6:5",
                                  f"0:{MAX_WINDOW + 1}", "-1:3", "1:-3", "0x1:4", "1.5:4", "last:1e3",
                                  "2147483000:2147483649"])
def test_bad_windows_are_refused_naming_the_parameter(text: str, server: Any) -> None:
    with pytest.raises(Invalid) as caught:
        parse_window(text, 59)
    assert caught.value.field == "rounds" and "last:N or A:B" in caught.value.message
    r = httpx.get(f"{server[0].url}/surveys/hourly/results", params={"rounds": text})
    assert r.status_code == 422 and r.json()["detail"]["field"] == "rounds", r.text


def test_the_default_lists_the_latest_52_rounds_with_responses(server: Any) -> None:
    running, clock, _cache = server
    clock.now = START + (ROUNDS - 1) * HOUR + 1
    rounds = _get(running)
    assert [r["round"] for r in rounds["rounds"]] == [i for i in range(8, ROUNDS) if i != EMPTY]
    assert rounds["window"] == {"rounds": "last:52", "first": 8, "stop": ROUNDS, "n_rounds": ROUNDS - 1}
    assert rounds["current_round"] == ROUNDS - 1 and rounds["devices"]["devices"] == 3
    first = _get(running, "?rounds=0:10")
    assert [r["round"] for r in first["rounds"]] == list(range(10)) and first["window"]["n_rounds"] == ROUNDS - 1
    assert [r["round"] for r in _get(running, "?rounds=last:3")["rounds"]] == [57, 58, 59]
    assert _get(running, "?rounds=100:200")["rounds"] == []


def test_closed_rounds_are_computed_once_and_equal_the_uncached_results(server: Any) -> None:
    running, clock, cache = server
    clock.now = START + (ROUNDS - 1) * HOUR + 1
    _get(running, "?rounds=0:60")
    hits = cache.hits
    again = _get(running, "?rounds=0:60")
    assert cache.hits - hits == ROUNDS - 2  # every round with responses but the current one
    expected = _uncached(running, 0, ROUNDS)
    assert again["rounds"] == expected
    for target in ("population", "respondents"):  # kept per target
        r = httpx.get(f"{running.url}/surveys/hourly/results", params={"rounds": "0:5", "target": target})
        assert [q["target"] for q in r.json()["rounds"]["rounds"][0]["questions"] if "target" in q] \
            == [target, target]


def _without_changes(one: dict[str, Any]) -> dict[str, Any]:
    """A round's results without each question's change test against the round before."""
    def strip(q: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in q["manipulation"].items() if k != "change_from_previous_round"}
        return {**q, "manipulation": kept}

    questions = [strip(q) if q.get("manipulation") else q for q in one["questions"]]
    return {**one, "questions": questions}


def test_a_response_committed_into_a_closed_round_is_seen(server: Any) -> None:
    """A transaction that read the clock just before round 3 ended commits into it after: the kept
    results of round 3 are not those of its stored aggregates any more, and are computed afresh."""
    running, clock, _cache = server
    clock.now = START + (ROUNDS - 1) * HOUR + 1
    before = {r["round"]: r for r in _get(running, "?rounds=0:10")["rounds"]}
    clock.now = START + 4 * HOUR - 0.5  # round 3, about to close
    running.storage.submit("hourly", _responses(running.storage.public("hourly"), 4)[3:])  # a fourth device
    clock.now = START + (ROUNDS - 1) * HOUR + 1
    after = {r["round"]: r for r in _get(running, "?rounds=0:10")["rounds"]}
    assert after[3]["n_responses"] == before[3]["n_responses"] + 1
    # the other rounds are as kept, but for round 4's change test, which compares it with round 3
    assert {i: r for i, r in after.items() if i not in (3, 4)} == {i: r for i, r in before.items() if i not in (3, 4)}
    assert _without_changes(after[4]) == _without_changes(before[4])
    assert list(after.values()) == _uncached(running, 0, 10)


def test_the_current_round_is_computed_on_every_request(server: Any) -> None:
    running, clock, _cache = server
    clock.now = START + (ROUNDS - 1) * HOUR + 2
    n = _get(running, "?rounds=last:1")["rounds"][0]["n_responses"]
    running.storage.submit("hourly", _responses(running.storage.public("hourly"), 4)[3:])
    assert _get(running, "?rounds=last:1")["rounds"][0]["n_responses"] == n + 1


def test_the_openapi_document_describes_the_window(server: Any) -> None:
    document = httpx.get(f"{server[0].url}/openapi.json").json()
    (param,) = [p for p in document["paths"]["/surveys/{survey_id}/results"]["get"]["parameters"]
                if p["name"] == "rounds"]
    assert param["schema"]["default"] == "last:52" and "last:52" in param["schema"].get("examples", param.get(
        "examples", []))
    assert "A:B" in param["description"]
    assert "window" in document["components"]["schemas"]["RoundsResult"]["properties"]


def test_the_cache_keeps_at_most_its_bytes_forgetting_the_least_recently_used() -> None:
    cache = RoundCache(max_bytes=100)
    value = {"round": 1, "pad": "x" * 10}  # 33 bytes of JSON
    for index in range(5):
        cache.put(("s", index, "population", 0.95), b"d", value)
    assert len(cache) == 3 and cache.bytes == 99
    assert cache.get(("s", 0, "population", 0.95), b"d") is None  # the oldest went first
    assert cache.get(("s", 4, "population", 0.95), b"d") == value
    assert cache.get(("s", 4, "population", 0.95), b"other digest") is None
    cache.put(("s", 9, "population", 0.95), b"d", {"pad": "x" * 200})  # larger than the whole cache: not kept
    assert len(cache) == 3 and cache.bytes == 99
