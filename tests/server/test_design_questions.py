"""Survey-design questions and plain questions in the collection service.

Definitions (RRreg's model names and p, plain questions marked
``randomized: false``) are checked when loaded; devices get each group's
exact channel config; reports are checked naming the field (``reports.q``,
``reports.q.group``); results are the survey package's prevalence on the
stored answers, by category of each plain categorical question, with a
likelihood-ratio test of equal prevalence. SQLite and PostgreSQL.

Statistical assertions (the likelihood-ratio test on simulated respondents):
alpha 1e-6 for the false rejection of equal prevalence (the test's own
chi-square level), and a power check in which the prevalence differs between
categories and the same test must reject at 1e-6.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest

from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey
from deniable.survey import design, prevalence_from_counts

ADMIN = "admin-token-for-design-tests"
YEARS = ["first", "second", "third"]
SURVEY = {
    "id": "designs",
    "title": "Designs and plain questions",
    "budget": 1.7,
    "questions": [
        {"id": "drug", "text": "Drug?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
        {"id": "copied", "text": "Copied?", "type": "yes-no", "design": {"model": "SLD", "p": [0.3, 0.7]},
         "allow_infinite_epsilon": True},
        {"id": "age", "text": "Age?", "type": "integer", "randomized": False, "min": 16, "max": 99},
        {"id": "year", "text": "Year?", "type": "categorical", "randomized": False, "categories": YEARS},
    ],
}
VALID = {"drug": True, "copied": {"group": 1, "answer": False}, "age": 20, "year": "second"}


def _question(**fields: Any) -> dict[str, Any]:
    return {"id": "q", "text": "?", "type": "yes-no", **fields}


def _survey(*questions: dict[str, Any], budget: float = 5) -> dict[str, Any]:
    return {"id": "s", "title": "S", "budget": budget, "questions": list(questions)}


# ---------------------------------------------------------------- definitions
def test_the_example_survey_loads(examples: Any) -> None:
    survey = load_survey(examples / "study-habits.yaml")
    drug, copied, age, year = survey.questions
    assert drug.design == design("FR", ["1/6", "1/6"]) and drug.epsilon == pytest.approx(math.log(5))
    assert math.isinf(copied.epsilon) and copied.allow_infinite_epsilon and copied.unrelated_question
    assert (age.type, age.min, age.max, age.randomized) == ("integer", 16, 99, False)
    assert year.categories == ("first", "second", "third", "fourth or later")
    # the stored form rebuilds the same survey
    assert load_survey(survey.to_json()).canonical() == survey.canonical()


def test_devices_get_each_groups_exact_channel() -> None:
    survey = load_survey(SURVEY)
    drug, copied = (q.public_json() for q in survey.questions[:2])
    assert drug["channels"] == [design("FR", ["1/6", "1/6"]).channel(1).to_config()]
    sld = design("SLD", [0.3, 0.7])
    assert copied["groups"] == 2 and copied["reveals_truth"] and copied["epsilon"] is None
    assert copied["channels"] == [{**sld.channel(g).to_config(), "epsilon": None} for g in (1, 2)]
    assert drug["design"] == {"model": "FR", "p": ["1/6", "1/6"]}
    # plain questions add nothing to the budget; the allowed infinite epsilon makes the total infinite
    assert math.isinf(survey.epsilon_total)
    finite = load_survey({**SURVEY, "questions": [SURVEY["questions"][0], *SURVEY["questions"][2:]]})
    assert finite.epsilon_total == pytest.approx(math.log(5))


@pytest.mark.parametrize(
    ("question", "field", "words"),
    [
        (_question(design={"model": "Warner", "p": 1.5}), "questions[0].design.p", "[0, 1]"),
        (_question(design={"model": "FR", "p": ["1/6"]}), "questions[0].design.p", "at least 2"),
        (_question(design={"model": "UQTknown", "p": [0.7]}), "questions[0].design.p", "2 values"),
        (_question(design={"model": "FR", "p": [0.6, 0.6]}), "questions[0].design.p", "less than 1"),
        (_question(design={"model": "FR", "p": [0.1, 0.1, 0.1]}), "questions[0].design.p", "yes/no"),
        (_question(design={"model": "Nope", "p": 0.5}), "questions[0].design.model", "Warner"),
        (_question(design={"model": "Warner"}), "questions[0].design.p", "required"),
        (_question(design={"model": "Warner", "p": True}), "questions[0].design.p[0]", "fraction"),
        (_question(design={"model": "Mangat", "p": 0.7}), "budget", "'q' (questions[0])"),
        (_question(design={"model": "Mangat", "p": 0.7}, allow_infinite_epsilon="yes"),
         "questions[0].allow_infinite_epsilon", "true or false"),
        (_question(design={"model": "UQTunknown", "p": [0.7, 0.3]}, allow_infinite_epsilon=True),
         "questions[0].unrelated_question", "required"),
        (_question(design={"model": "Warner", "p": 0.7}, unrelated_question="Born in spring?"),
         "questions[0].unrelated_question", "UQTunknown only"),
        (_question(design={"model": "Warner", "p": 0.7}, mechanism="binary-rr"), "questions[0].mechanism", "not both"),
        (_question(type="categorical", design={"model": "Warner", "p": 0.7}), "questions[0].type", "yes-no"),
        (_question(type="integer", randomized=False, min=1), "questions[0].max", "integer max"),
        (_question(type="integer", randomized=False, min=5, max=1), "questions[0].max", "at least min"),
        (_question(type="categorical", randomized=False, categories=["a"]), "questions[0].categories", "at least 2"),
        (_question(type="yes-no", randomized=False), "questions[0].type", "integer"),
        (_question(type="integer", randomized="no", min=1, max=2), "questions[0].randomized", "true or false"),
        (_question(type="integer", randomized=False, min=1, max=2, epsilon=1), "questions[0].epsilon", "plain"),
    ],
)
def test_bad_definitions_name_the_field(question: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(SurveyError) as info:
        load_survey(_survey(question))
    assert info.value.field == field, info.value
    assert words in info.value.message, info.value.message


def test_the_budget_counts_design_epsilons_only() -> None:
    fr = _question(design={"model": "FR", "p": ["1/6", "1/6"]})
    age = {"id": "age", "text": "?", "type": "integer", "randomized": False, "min": 0, "max": 9}
    with pytest.raises(SurveyError, match=r"1\.60944 \(q\) = 1\.60944, above the budget 1\.5"):
        load_survey(_survey(fr, age, budget=1.5))
    assert load_survey(_survey(fr, age, budget=1.7)).epsilon_total == pytest.approx(math.log(5))


# ---------------------------------------------------------------- the service
@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[BackgroundServer]:
    with BackgroundServer([SURVEY], db_url=module_db_url, admin_token=ADMIN) as running:
        yield running


@pytest.fixture(scope="module")
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _post(http: httpx.Client, key: str, **reports: Any) -> httpx.Response:
    return http.post("/surveys/designs/responses", json={"idempotency_key": key, "reports": {**VALID, **reports}})


def test_the_survey_as_devices_get_it(http: httpx.Client) -> None:
    public = http.get("/surveys/designs").json()
    assert public["epsilon_total"] is None  # infinite: an allowed design reveals the truth
    by_id = {q["id"]: q for q in public["questions"]}
    assert by_id["drug"]["channels"][0]["params"] == {"denominator": 6, "yes_numerators": [1, 5]}
    assert by_id["copied"]["groups"] == 2 and by_id["copied"]["reveals_truth"] is True
    assert by_id["age"] == {"id": "age", "text": "Age?", "type": "integer", "randomized": False,
                            "min": 16, "max": 99, "categories": None, "mechanism": None, "design": None,
                            "groups": None, "channels": None, "epsilon": None, "reveals_truth": None,
                            "allow_infinite_epsilon": None, "unrelated_question": None,
                            "discovery": None, "max_length": None, "kind": None, "method": None, "alphabet": None,
                            "low": None, "high": None, "units": None, "questions": None, "options": None,
                            "max_choices": None, "keys": None, "max_pairs": None, "items": None,
                            "sensitive": None}
    assert by_id["year"]["categories"] == YEARS and by_id["year"]["randomized"] is False


@pytest.mark.parametrize(
    ("reports", "field", "words"),
    [
        ({"drug": "maybe"}, "reports.drug", "true or false"),
        ({"drug": 1}, "reports.drug", "true or false"),
        ({"copied": {"answer": True}}, "reports.copied.group", "two-group design"),
        ({"copied": {"group": 3, "answer": True}}, "reports.copied.group", "1 or 2"),
        ({"copied": {"group": True, "answer": True}}, "reports.copied.group", "1 or 2"),
        ({"copied": {"group": 1, "answer": "yes"}}, "reports.copied.answer", "true or false"),
        ({"copied": {"group": 1, "answer": True, "truth": True}}, "reports.copied.truth", "not a field"),
        ({"copied": True}, "reports.copied", "two groups"),
        ({"age": "20"}, "reports.age", "integer from 16 to 99"),
        ({"age": 20.0}, "reports.age", "integer from 16 to 99"),
        ({"age": 100}, "reports.age", "integer from 16 to 99"),
        ({"year": "fifth"}, "reports.year", "one of ['first', 'second', 'third']"),
    ],
)
def test_bad_reports_are_refused_naming_the_field(
    http: httpx.Client, server: BackgroundServer, reports: dict[str, Any], field: str, words: str
) -> None:
    before = server.storage.count_responses("designs")
    answer = _post(http, "bad-report-key", **reports)
    assert answer.status_code == 422, answer.text
    detail = answer.json()["detail"]
    assert detail["field"] == field and words in detail["message"], detail
    assert server.storage.count_responses("designs") == before


def test_bad_definitions_are_refused_by_the_admin_api(http: httpx.Client) -> None:
    bad = _survey(_question(design={"model": "FR", "p": [0.5, 0.6]}))
    answer = http.post("/admin/surveys", json=bad, headers={"Authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 422
    assert answer.json()["detail"]["field"] == "questions[0].design.p"


def _simulate(rng: np.random.Generator, n: int, prevalence: list[float]) -> list[dict[str, Any]]:
    """Respondents with year c (uniform) and the drug and copying prevalence ``prevalence[c]``."""
    year = rng.integers(0, len(YEARS), n)
    pi = np.asarray(prevalence)[year]
    drug = design("FR", ["1/6", "1/6"]).privatize_many(rng.random(n) < pi, rng=rng)
    group = rng.integers(1, 3, n)
    copied = design("SLD", [0.3, 0.7]).privatize_many(rng.random(n) < pi, group=group, rng=rng)
    age = rng.integers(16, 100, n)
    return [
        {"drug": bool(drug[i]), "copied": {"group": int(group[i]), "answer": bool(copied[i])},
         "age": int(age[i]), "year": YEARS[year[i]]}
        for i in range(n)
    ]


def _counts(subset: list[dict[str, Any]], qid: str, d: Any) -> np.ndarray:
    """Answer counts per group of design question ``qid`` among exported rows."""
    out = np.zeros((d.groups, 2), dtype=np.int64)
    for r in subset:
        g, a = (1, r[qid]) if d.groups == 1 else (r[qid]["group"], r[qid]["answer"])
        out[g - 1, int(a)] += 1
    return out


def test_results_are_the_survey_packages_prevalence_by_year(
    http: httpx.Client, server: BackgroundServer, rng: np.random.Generator
) -> None:
    """Equal prevalence (0.2) in every year: not rejected at alpha 1e-6; the same test, on
    prevalence 0.1 / 0.3 / 0.6 by year, rejects at 1e-6 (power)."""
    for survey_id, prevalence in (("designs", [0.2, 0.2, 0.2]), ("designs-differ", [0.1, 0.3, 0.6])):
        if survey_id != "designs":
            created = http.post("/admin/surveys", json={**SURVEY, "id": survey_id},
                                headers={"Authorization": f"Bearer {ADMIN}"})
            assert created.status_code == 201, created.text
        reports = _simulate(rng, 3000, prevalence)
        batch = {"responses": [{"idempotency_key": f"{survey_id}-{i:06d}", "reports": r}
                               for i, r in enumerate(reports)]}
        stored = http.post(f"/surveys/{survey_id}/responses/batch", json=batch,
                           headers={"Authorization": f"Bearer {ADMIN}"})
        assert stored.status_code == 201, stored.text
        results = {q["id"]: q for q in http.get(f"/surveys/{survey_id}/results").json()["questions"]}
        export = http.get(f"/admin/surveys/{survey_id}/export", headers={"Authorization": f"Bearer {ADMIN}"})
        rows = [{k: json.loads(v) for k, v in row.items() if k != "row"}
                for row in csv.DictReader(io.StringIO(export.text))]
        assert len(rows) == 3000
        for qid, d in (("drug", design("FR", ["1/6", "1/6"])), ("copied", design("SLD", [0.3, 0.7]))):
            counts = functools.partial(_counts, qid=qid, d=d)
            result = results[qid]
            fit = prevalence_from_counts(counts(rows), d)
            pi = result["parameters"][0]
            assert result["n"] == len(rows) and pi["name"] == "pi"
            assert pi["estimate"] == pytest.approx(fit.params["pi"], abs=1e-12)
            assert pi["std_error"] == pytest.approx(fit.bse["pi"], abs=1e-12)
            assert (pi["ci_low"], pi["ci_high"]) == pytest.approx(fit.ci(0.95)["pi"], abs=1e-9)
            assert [p["name"] for p in result["parameters"]] == list(d.param_names)
            (by,) = result["by"]
            assert by["question"] == "year" and [r["category"] for r in by["rows"]] == YEARS
            for row, year in zip(by["rows"], YEARS, strict=True):
                sub = prevalence_from_counts(counts([r for r in rows if r["year"] == year]), d)
                assert row["estimate"] == pytest.approx(sub.params["pi"], abs=1e-12)
            test = by["test"]
            assert test["method"] == "likelihood ratio" and test["df"] == 2  # three years, one prevalence each
            if survey_id == "designs":
                assert test["p_value"] > 1e-6, (qid, test)
            else:
                assert test["p_value"] < 1e-6, (qid, test)
        assert results["year"]["counts"] == [sum(r["year"] == y for r in rows) for y in YEARS]
        ages = [r["age"] for r in rows]
        assert results["age"]["mean"] == pytest.approx(np.mean(ages)) and results["age"]["n"] == len(rows)


def test_a_valid_response_is_stored_as_given(http: httpx.Client, server: BackgroundServer) -> None:
    answer = _post(http, "valid-design-key")
    assert answer.status_code == 201, answer.text
    export = http.get("/admin/surveys/designs/export", headers={"Authorization": f"Bearer {ADMIN}"}).text
    assert '"{""group"":1,""answer"":false}",20,"""second"""' in export  # JSON text per cell


@pytest.mark.stat
def test_the_python_client_randomizes_two_group_designs(server: BackgroundServer, rng: np.random.Generator) -> None:
    """UQTunknown through deniable.client (the OS CSPRNG): the unrelated answer stays on the device,
    the group is drawn uniformly. Alpha 5e-7 each: |pi_hat - pi| < z SE, and the groups' sizes
    within an exact binomial band; power: the raw share of "yes" answers (no debiasing, about
    0.325 against 0.2) misses the same band."""
    from deniable.client import Client
    from deniable.testing import estimate_check, proportion_check

    survey = {"id": "uqt", "title": "UQT", "budget": 1, "questions": [
        {"id": "copied", "text": "Copied?", "type": "yes-no", "design": {"model": "UQTunknown", "p": [0.9, 0.6]},
         "unrelated_question": "Born in spring?", "allow_infinite_epsilon": True},
    ]}
    headers = {"Authorization": f"Bearer {ADMIN}"}
    assert httpx.post(f"{server.url}/admin/surveys", json=survey, headers=headers).status_code == 201
    n = 20_000
    truth = rng.random(n) < 0.2
    unrelated = rng.random(n) < 0.7
    answers = [{"copied": {"answer": bool(t), "unrelated": bool(u)}} for t, u in zip(truth, unrelated, strict=True)]
    with Client(server.url, timeout=120, token=ADMIN) as client:
        assert client.respond_many("uqt", answers, batch_size=10_000)["accepted"] == n
    export = httpx.get(f"{server.url}/admin/surveys/uqt/export", headers=headers).text
    reports = [json.loads(row["copied"]) for row in csv.DictReader(io.StringIO(export))]
    assert all(set(r) == {"group", "answer"} for r in reports)  # the unrelated answer is not sent
    ones = sum(r["group"] == 1 for r in reports)
    assert (res := proportion_check(ones, n, 0.5, 5e-7, label="group 1")), res.message
    result = httpx.get(f"{server.url}/surveys/uqt/results").json()["questions"][0]
    pi = result["parameters"][0]
    assert (res := estimate_check(pi["estimate"], truth.mean(), pi["std_error"], 5e-7)), res.message
    raw = np.mean([r["answer"] for r in reports])
    assert not estimate_check(raw, truth.mean(), pi["std_error"], 5e-7)
