"""A survey with rounds states each round's shuffled guarantee through the service's :class:`Ahead`.

``rounds_json(..., ahead=...)`` (what the service's results endpoint passes)
never computes a round's new value while the read waits once the service has
stated one for the survey's epsilon: a round whose count reached a grid point
not computed yet gets the statement for fewer responses (valid, looser), and
its exact value as soon as the background thread has it. The survey's epsilon
is its own (values are kept per process).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import deniable as dn
from deniable._aggregates import SupportCounts
from deniable.server._results import rounds_json
from deniable.server._shuffled import Ahead
from deniable.server._surveys import load_survey

EPSILON = 1.2468
SURVEY = load_survey({
    "id": "daily-ahead", "title": "Daily", "budget": 2,
    "rounds": {"every": "1d", "lifetime_epsilon": 20, "start": "2026-12-01T00:00:00Z"},
    "questions": [{"id": "sick", "text": "Sick today?", "type": "yes-no", "mechanism": "grr", "epsilon": EPSILON}],
})
E0 = SURVEY.epsilon_total  # the per-round randomizer (the mechanism's exact epsilon)
BUDGETS = {"devices": 0, "at_least": [], "max_spent": 0.0, "max_spent_fresh": 0.0}


def _round(n: int) -> dict[str, Any]:
    fingerprint = SURVEY.questions[0].mechanism.fingerprint  # type: ignore[union-attr]
    return {"sick": SupportCounts(fingerprint, np.array([n // 3, n - n // 3], dtype=np.int64), n)}


def _shuffled(ahead: Ahead, per_round: dict[int, dict[str, Any]]) -> list[tuple[float, float]]:
    out = rounds_json(SURVEY, per_round, BUDGETS, 1, ahead=ahead)
    return [(r["shuffled"]["epsilon"], r["shuffled"]["delta"]) for r in out["rounds"]]


def test_a_rounds_new_value_is_computed_in_the_background() -> None:
    ahead = Ahead()
    small = (dn.shuffle_epsilon(E0, 1_200, 1e-6), 1e-6)
    assert _shuffled(ahead, {0: _round(1_234)}) == [small]  # the first statement is exact

    # round 1 has 3.4 million responses: its value (about a second of CPU) is not waited for
    started = time.monotonic()
    stated = _shuffled(ahead, {0: _round(1_234), 1: _round(3_456_789)})
    assert stated == [small, small]  # round 1 states the bound for fewer responses: looser, valid
    assert time.monotonic() - started < 0.5

    exact = (dn.shuffle_epsilon(E0, 3_400_000, 3_400_000 ** -1.1), 3_400_000 ** -1.1)
    assert exact[0] < small[0] and exact[1] < small[1]
    deadline = time.monotonic() + 120
    while _shuffled(ahead, {0: _round(1_234), 1: _round(3_456_789)})[1] != exact:
        assert time.monotonic() < deadline, "the background computation never finished"
        time.sleep(0.05)


def test_without_a_service_each_round_is_exact() -> None:
    out = rounds_json(SURVEY, {0: _round(1_234)}, BUDGETS, 0)
    assert out["rounds"][0]["shuffled"]["epsilon"] == dn.shuffle_epsilon(E0, 1_200, 1e-6)
