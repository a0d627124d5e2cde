"""The Python client randomizes a survey-design question with the design itself, ``from_config``.

Regression: the client read any non-empty string as "yes" (``np.asarray(values,
dtype=bool)``), so ``"no"`` was randomized as a carrier's answer. It must take
only the design's answers, as a mechanism question does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import deniable as dn
from deniable.client import privatize_answers, privatize_answers_many
from deniable.server._surveys import load_survey
from deniable.testing import proportion_check

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _survey() -> dict:
    """The survey as devices fetch it (the questions' public JSON)."""
    survey = load_survey(EXAMPLES / "study-habits.yaml")
    return {"id": survey.id, "questions": [q.public_json() for q in survey.questions]}


def _answers(drug: object, copied: object = None) -> dict:
    return {"study_drug": drug, "copied": copied or {"answer": False, "unrelated": True}, "age": 20,
            "year": "first"}


@pytest.mark.parametrize("word", ["no", "No", "false", "maybe", "", 2, None, 0.5])
def test_a_design_question_takes_only_the_designs_answers(word: object) -> None:
    with pytest.raises(ValueError, match="truth must be booleans"):
        privatize_answers(_survey(), _answers(word))
    with pytest.raises(ValueError, match="truth must be booleans"):
        privatize_answers_many(_survey(), [_answers(True), _answers(word)])


def test_unrelated_answers_must_be_the_design_shape() -> None:
    with pytest.raises(ValueError, match="'answer': bool, 'unrelated': bool"):
        privatize_answers(_survey(), _answers(True, {"answer": True}))
    with pytest.raises(ValueError, match="truth must be booleans"):
        privatize_answers(_survey(), _answers(True, {"answer": "no", "unrelated": False}))


def test_every_randomized_question_carries_its_config() -> None:
    survey = _survey()
    for q in survey["questions"]:
        if q.get("design"):
            d = dn.from_config(q["mechanism"])
            assert d == dn.survey.design(q["design"]["model"], q["design"]["p"])


@pytest.mark.stat
def test_false_is_reported_yes_at_the_designs_rate() -> None:
    """FR (1/6, 1/6): a non-carrier says "yes" with probability exactly 1/6 (a carrier 5/6).

    20,000 answers of ``False``; the two-sided exact binomial band at alpha 1e-7
    is about 0.152..0.181, and the group sizes have their own band at 1e-7, so a correct
    client fails less than twice in 10^7 runs, while the old client's 5/6 for a truthy
    answer is far outside.
    """
    n = 20_000
    reports = privatize_answers_many(_survey(), [_answers(False)] * n, rng=np.random.default_rng(3))
    yes = sum(r["study_drug"] for r in reports)
    assert (res := proportion_check(yes, n, 1 / 6, 1e-7, label="yes")), res.message
    groups = [r["copied"]["group"] for r in reports]
    assert (res := proportion_check(groups.count(1), n, 1 / 2, 1e-7, label="group 1")), res.message


@pytest.mark.parametrize(("model", "p"), [("UQTunknown", ["0", "1/2"]), ("SLD", ["1/2", "0"])])
def test_the_server_refuses_a_design_whose_channel_no_device_builds(model: str, p: list[str]) -> None:
    """A group whose answer never depends on the truth has a channel ``dn.from_config`` (and deniable.js)
    refuse; the server refuses the design, naming the group, instead of storing a survey no page can answer."""
    from deniable.server._design_questions import load_design_question
    from deniable.server._surveys import SurveyError

    data = {"id": "q", "text": "?", "type": "yes-no", "design": {"model": model, "p": p},
            "allow_infinite_epsilon": True, **({"unrelated_question": "Spring?"} if model == "UQTunknown" else {})}
    with pytest.raises(SurveyError, match=r"group \d's device channel .* is refused by every device"):
        load_design_question(data, "q", "?", "questions[0].")
