"""``allocation: sample`` over real HTTP: one drawn question per response, each question its own n.

9,000 simulated respondents (a fixed set drawn from the seeded ``rng``)
answer ``examples/campus-life.yaml`` through ``Client.respond_many``, which
draws each respondent's question and sends only that report. The results
must give each question its own n (summing to the responses), cover the
respondents' true shares with the sampled standard errors (the
finite-population term included), and state the shuffled guarantee.

Calibration: with the 8 categories checked at once, ``z = Phi^-1(1 - alpha / 16)``
with ``alpha = 1e-6`` (Bonferroni) bounds every ``|estimate - truth| / SE``
for a correct implementation with probability above 1 - 1e-6 (normal
approximation, n_j about 3,000). Power: the share of all the respondents
(not the question's n_j) would leave out the subsample term; the test checks
the standard errors are the sampled ones exactly.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import httpx
import numpy as np
import pytest

import deniable as dn
from deniable._allocation import sampled_estimate
from deniable.client import Client, privatize_answers
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey
from deniable.testing import estimate_check

ALPHA = 1e-6
ADMIN = "sampled-admin-token"
N = 9000
HOUSING = ["on campus", "with family", "shared flat", "alone"]
QUESTIONS = ("cheated", "drugs", "housing")


@pytest.mark.stat
def test_sampled_survey_over_http(db_url: str, examples: Path, rng: np.random.Generator) -> None:
    cheated, drugs = rng.random(N) < 0.2, rng.random(N) < 0.35
    housing = rng.choice(4, N, p=[0.4, 0.3, 0.2, 0.1])
    answers = [
        {"cheated": bool(c), "drugs": bool(d), "housing": HOUSING[h]}
        for c, d, h in zip(cheated, drugs, housing, strict=True)
    ]
    with BackgroundServer([examples / "campus-life.yaml"], db_url=db_url, admin_token=ADMIN) as server:
        client = Client(server.url, token=ADMIN)  # batches to an open survey: a trusted relay
        survey = client.survey("campus-life")
        assert survey["allocation"] == "sample" and survey["epsilon_total"] == pytest.approx(2.0, rel=1e-9)
        assert client.respond_many("campus-life", answers, batch_size=3000, rng=rng) == {
            "accepted": N, "duplicates": 0,
        }
        results = client.results("campus-life", target="respondents")
        stored = server.storage.aggregates("campus-life")
        rows = [json.loads(text) for chunk in server.storage.iter_responses("campus-life") for _, text in chunk]
        # one report per response; a body with two reports, or none, is refused naming the field
        post = f"{server.url}/surveys/campus-life/responses"
        two = httpx.post(post, json={"idempotency_key": "k" * 16, "reports": {"cheated": True, "drugs": False}})
        none = httpx.post(post, json={"idempotency_key": "k" * 16, "reports": {}})
        one = {"idempotency_key": "j" * 16, "reports": privatize_answers(survey, answers[0])}
        first, again = httpx.post(post, json=one), httpx.post(post, json=one)
        after = client.results("campus-life")
        exported = httpx.get(f"{server.url}/admin/surveys/campus-life/export?format=csv",
                             headers={"Authorization": f"Bearer {ADMIN}"}).text

    assert all(len(row) == 1 for row in rows) and len(rows) == N
    for bad in (two, none):
        assert bad.status_code == 422, bad.text
        detail = bad.json()["detail"]
        assert detail["field"] == "reports" and "exactly one report" in detail["message"]
    assert first.status_code == again.status_code == 201 and after["n_responses"] == N + 1
    # the export: one row per response, one filled cell (the drawn question), the others empty;
    # re-estimating each question from its filled cells reproduces the served estimate
    table = list(csv.DictReader(io.StringIO(exported)))
    assert len(table) == N + 1 and all(sum(bool(r[q]) for q in QUESTIONS) == 1 for r in table)
    for q in after["questions"]:
        mechanism = load_survey(examples / "campus-life.yaml").question(q["id"]).mechanism
        reports = mechanism.reports_from_json([json.loads(r[q["id"]]) for r in table if r[q["id"]]])
        assert mechanism.estimate(reports).frequencies.tolist() == pytest.approx(q["estimate"], rel=1e-12)

    assert results["allocation"] == "sample" and results["n_responses"] == N
    ns = {q["id"]: q["n"] for q in results["questions"]}
    assert sum(ns.values()) == N and all(2700 < n < 3300 for n in ns.values()), ns
    truth = {
        "cheated": np.array([1 - cheated.mean(), cheated.mean()]),
        "drugs": np.array([1 - drugs.mean(), drugs.mean()]),
        "housing": np.bincount(housing, minlength=4) / N,
    }
    loaded = load_survey(examples / "campus-life.yaml")
    for q in results["questions"]:
        mechanism = loaded.question(q["id"]).mechanism
        expected = sampled_estimate(mechanism, stored[q["id"]], N, "respondents")
        assert q["std_error"] == pytest.approx(expected.std_errors.tolist(), rel=1e-12)
        assert q["estimate"] == pytest.approx(expected.frequencies.tolist(), rel=1e-12)
    per_question = [(q["estimate"], truth[q["id"]], q["std_error"]) for q in results["questions"]]
    estimates, truths, errors = (np.concatenate(part) for part in zip(*per_question, strict=True))
    assert (res := estimate_check(estimates, truths, errors, ALPHA)), res.message  # 8 categories at once
    # the shuffled guarantee: N = 9,000 responses of an epsilon-2 randomizer, delta = min(1e-6, N^-1.1)
    delta = min(1e-6, N**-1.1)
    assert results["shuffled"] == {
        "n": N, "epsilon_local": loaded.epsilon_total,
        "epsilon": dn.shuffle_epsilon(loaded.epsilon_total, N, delta), "delta": delta,
    }
    assert results["shuffled"]["epsilon"] < 0.5


def _survey(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": "s", "title": "t", "budget": 2, "allocation": "sample",
        "questions": [
            {"id": "a", "text": "A?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 2},
            {"id": "b", "text": "B?", "type": "categorical", "categories": ["x", "y", "z"],
             "mechanism": "grr", "epsilon": 1.5},
        ],
    }
    return {**base, **changes}


def test_sampled_budget_is_the_largest_epsilon() -> None:
    survey = load_survey(_survey())
    assert survey.epsilon_total == pytest.approx(2.0, rel=1e-9)  # not 3.5: one question per respondent
    assert load_survey(json.loads(survey.canonical())).allocation == "sample"
    split = load_survey(_survey(allocation="split", budget=3.5))
    assert split.epsilon_total == pytest.approx(3.5, rel=1e-9)
    assert "allocation" not in split.to_json()  # stored split surveys keep their canonical text


@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"allocation": "random"}, "allocation", "must be 'split' or 'sample'; got 'random'"),
        ({"budget": 1.8}, "budget", "question 'a' has epsilon 2, above the budget 1.8"),
        (
            {"questions": [{"id": "a", "text": "A?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
                           {"id": "b", "text": "B?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1}]},
            "questions[0]", "is a survey design; allocation: sample takes mechanism questions only",
        ),
        (
            {"questions": [{"id": "a", "text": "A?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1},
                           {"id": "age", "text": "Age?", "type": "integer", "randomized": False,
                            "min": 1, "max": 9}]},
            "questions[1]", "is a plain question",
        ),
    ],
)
def test_bad_sampled_surveys_are_refused(changes: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(SurveyError) as info:
        load_survey(_survey(**changes))
    assert info.value.field == field and message in str(info.value)


def test_shuffled_guarantee_rounds_n_down_and_holds() -> None:
    """A smaller n gives a larger epsilon: the rounded-down n's epsilon is valid for all the reports."""
    from deniable.server._results import shuffled_json

    survey = load_survey(_survey())
    shown = shuffled_json(survey, 12_345)
    assert shown is not None and shown["n"] == 12_345
    assert shown["epsilon"] == dn.shuffle_epsilon(survey.epsilon_total, 12_000, 1e-6)
    assert shown["epsilon"] >= dn.shuffle_epsilon(survey.epsilon_total, 12_345, 1e-6)
    assert shown["delta"] == 1e-6 and math.isclose(shown["epsilon_local"], 2.0, rel_tol=1e-9)
    big = shuffled_json(survey, 4_567_890)  # n^-1.1 < 1e-6 from n = 284,804 on
    assert big is not None and big["delta"] == 4_500_000**-1.1
    assert shuffled_json(survey, 0) is None


def test_sampled_batch_with_replays_counts_only_the_new_responses(db_url: str, examples: Path) -> None:
    """A batch mixing stored keys and new ones: each question's aggregate gains exactly its new reports."""
    def body(key: str, qid: str, report: object) -> dict[str, object]:
        return {"idempotency_key": key * 8, "reports": {qid: report}}

    first = [body("a", "cheated", True), body("b", "housing", "alone")]
    second = [*first, body("c", "housing", "alone"), body("d", "drugs", False), body("e", "housing", "shared flat")]
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with BackgroundServer([examples / "campus-life.yaml"], db_url=db_url, admin_token=ADMIN) as server:
        post = f"{server.url}/surveys/campus-life/responses/batch"
        assert httpx.post(post, json={"responses": first}, headers=auth).json() == {"accepted": 2, "duplicates": 0}
        assert httpx.post(post, json={"responses": second}, headers=auth).json() == {"accepted": 3, "duplicates": 2}
        stored = server.storage.aggregates("campus-life")
        bad = httpx.post(post, json={"responses": [body("f", "cheated", True), body("g", "drugs", "maybe")]},
                         headers=auth)
    assert {qid: stat.n for qid, stat in stored.items()} == {"cheated": 1, "drugs": 1, "housing": 3}
    assert stored["housing"].counts.tolist() == [0, 0, 1, 2]  # on campus, with family, shared flat, alone
    assert stored["drugs"].counts.tolist() == [1, 0]
    assert bad.status_code == 422 and bad.json()["detail"]["field"] == "responses[1].reports.drugs"
