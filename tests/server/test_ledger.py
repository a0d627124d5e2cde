"""The rules of rounds and budgets, without a database (:mod:`deniable.server._ledger`)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("sqlalchemy", reason="the server tests need the 'server' extra")

from deniable.server._errors import Conflict, Forbidden  # noqa: E402
from deniable.server._ledger import Account, Ledger, current_round, questions_answered  # noqa: E402
from deniable.server._surveys import load_survey  # noqa: E402

DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
SURVEY: dict[str, Any] = {
    "id": "daily", "title": "Daily", "budget": 2,
    "rounds": {"every": "1d", "lifetime_epsilon": 3.0, "start": "2026-12-01T00:00:00Z"},
    "questions": [
        {"id": "a", "text": "?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.5},
        {"id": "b", "text": "?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1.0},
    ],
}


def test_a_device_answers_once_per_round_within_its_lifetime_budget() -> None:
    survey = load_survey(SURVEY)
    accounts: dict[str, Account] = {}
    for round_ in (0, 1):
        ledger = Ledger(survey, current_round(survey, START + round_ * DAY + 5), accounts)
        ledger.charge("dev", ["a", "b"], "")
        with pytest.raises(Conflict, match=f"already answered round {round_}") as refused:
            ledger.charge("dev", ["a", "b"], "responses[1].")
        assert refused.value.field == "responses[1].device"
        accounts = ledger.accounts
    dev = accounts["dev"]
    assert (dev.last_round, dev.reports) == (1, '{"a":2,"b":2}')
    assert dev.spent == pytest.approx(3.0) and dev.spent_fresh == pytest.approx(3.0)
    third = Ledger(survey, 2, accounts)
    with pytest.raises(Forbidden, match="lifetime_epsilon is 3 and this device has spent 3;"):
        third.charge("dev", ["a"], "")
    third.charge("other", ["a"], "")  # another device is not refused
    assert third.accounts["dev"] == accounts["dev"] and third.accounts["other"].spent == pytest.approx(0.5)
    with pytest.raises(Conflict, match="already answered round 2"):  # a later round than the request's
        Ledger(survey, 1, third.accounts).charge("other", ["a"], "")


def test_no_response_before_the_first_round() -> None:
    survey = load_survey(SURVEY)
    assert current_round(survey, START) == 0
    with pytest.raises(Conflict, match="runs in rounds from 2026-12-01T00:00:00Z") as refused:
        current_round(survey, START - 1)
    assert refused.value.field == "id"


def test_questions_answered_split_and_sampled() -> None:
    assert questions_answered(["a", "b"], None, [0, 2]) == {0: ["a", "b"], 2: ["a", "b"]}
    assert questions_answered(["a", "b"], {"a": [0, 1], "b": [2]}, [1, 2]) == {1: ["a"], 2: ["b"]}
