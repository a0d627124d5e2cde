"""Number questions (``type: number``) in the collection service: a mean collected with 1BitMean.

Definitions are checked when loaded (422 naming the field); devices get the
exact mechanism config; reports are checked through the mechanism's
``reports_from_json`` naming the field, nothing of a refused request stored;
aggregates (``MeanStat``) are stored and merged like every question's; the
results give the mean with its standard error and interval, per round too,
and the per-device accounting caps a memoizing 1BitMean at its lifetime
bound. SQLite and PostgreSQL, real HTTP on loopback.

Statistical assertions (fixed seeds). Coverage: the server's mean of 30,000
simulated devices' reports lies within z = 5.33 standard errors of the
respondents' true mean, for both inference targets (two-sided normal tail
1e-7 each; n = 30,000 bits make the normal approximation exact to far below
that). Power: the same aggregate decoded by a 1BitMean that ignores the
output perturbation (gamma) is about 9 standard errors off, and fails the
same check. Memoization: 60 devices with their own states all sending the
same bit has probability below 1e-11.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

import deniable as dn
from deniable._aggregates import MeanStat
from deniable.client import Client, SurveyState, privatize_answers
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey

ADMIN = "admin-token-for-number-tests"
AUTH = {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"}
Z = 5.33  # two-sided normal tail 1e-7
QUESTION: dict[str, Any] = {
    "id": "minutes", "text": "How many minutes did you spend on the app today?", "type": "number",
    "low": 0, "high": 600, "units": "minutes", "mechanism": "one-bit-mean", "epsilon": 1, "gamma": 0.1,
}
SURVEY: dict[str, Any] = {
    "id": "app-use", "title": "App use", "budget": 2, "rate_limit": "off",
    "questions": [QUESTION, {"id": "daily", "text": "Daily?", "type": "yes-no", "mechanism": "binary-rr",
                             "epsilon": 1}],
}
COUNTER: dict[str, Any] = {
    "id": "counter", "title": "Counter", "budget": 1, "rate_limit": "off",
    "questions": [{"id": "m", "text": "Minutes?", "type": "number", "low": 0, "high": 600,
                   "mechanism": "one-bit-mean", "epsilon": 1, "points": 4}],
}


def _survey(*questions: dict[str, Any], budget: float = 10, **fields: Any) -> dict[str, Any]:
    return {"id": "s", "title": "S", "budget": budget, "questions": list(questions), **fields}


def _q(**fields: Any) -> dict[str, Any]:
    return {**QUESTION, "id": "q", **fields}


def _without(*keys: str) -> dict[str, Any]:
    return {k: v for k, v in _q().items() if k not in keys}


# ---------------------------------------------------------------- definitions
def test_the_example_survey_loads(examples: Path) -> None:
    survey = load_survey(examples / "screen-time.yaml")
    minutes, night = survey.questions
    assert (minutes.type, minutes.units, minutes.mechanism.low, minutes.mechanism.high) == ("number", "minutes", 0, 600)
    assert night.type == "yes-no" and survey.epsilon_total <= survey.budget
    assert survey.epsilon_total == pytest.approx(minutes.epsilon + 1, rel=1e-9)


def test_a_definition_loads_and_its_stored_form_is_the_same_survey() -> None:
    survey = load_survey(SURVEY)
    q = survey.questions[0]
    m = q.mechanism
    assert isinstance(m, dn.OneBitMean) and (m.low, m.high, m.points) == (0, 600, 2)
    assert float(m.gamma) == pytest.approx(0.1, abs=1e-9) and q.units == "minutes"
    # the budget counts one report's epsilon; accounting caps the memoized reports at epsilon_perm
    assert q.epsilon == m.epsilon < 1 and survey.epsilon_total == pytest.approx(m.epsilon + 1, rel=1e-9)
    cost = survey.costs["minutes"]
    assert cost.per_report == m.epsilon and cost.lifetime == pytest.approx(m.epsilon_perm) == pytest.approx(1)
    assert cost.after(5) == pytest.approx(1) and cost.fresh(5) == pytest.approx(5 * m.epsilon)
    stored = survey.to_json()
    assert stored["questions"][0]["mechanism"] == m.to_config()
    assert load_survey(stored).canonical() == survey.canonical()
    counter = load_survey(COUNTER).questions[0]
    assert counter.mechanism.points == 4 and counter.units is None and counter.mechanism.gamma == 0


@pytest.mark.parametrize(
    ("question", "field", "words"),
    [
        (_without("low"), "questions[0].low", "required"),
        (_without("high"), "questions[0].high", "required"),
        (_q(low="0"), "questions[0].low", "finite number"),
        (_q(high=math.inf), "questions[0].high", "finite number"),
        (_q(low=5, high=5), "questions[0].high", "above low"),
        (_without("mechanism"), "questions[0].mechanism", "one-bit-mean"),
        (_q(mechanism="duchi"), "questions[0].mechanism", "one-bit-mean"),  # not in the browser client
        (_q(mechanism="grr"), "questions[0].mechanism", "one-bit-mean"),
        (_without("epsilon"), "questions[0].epsilon", "required by mechanism one-bit-mean"),
        (_q(epsilon=-1), "questions[0].epsilon", "epsilon"),
        (_q(epsilon="1"), "questions[0].epsilon", "must be a number"),
        (_q(gamma=0.7), "questions[0].gamma", "gamma"),
        (_q(points=1), "questions[0].points", "points"),
        (_q(categories=[1, 2]), "questions[0].categories", "not a field of a number question"),
        (_q(units=""), "questions[0].units", "1 to 40"),
        (_q(units=["min"]), "questions[0].units", "text"),
        (_q(randomized=False), "questions[0].randomized", "always randomized"),
        ({"id": "q", "text": "?", "type": "number", "mechanism": {"format": "deniable.mechanism"}},
         "questions[0].mechanism", "version"),
        ({"id": "q", "text": "?", "type": "number", "mechanism": dn.GRR(["a", "b"], epsilon=1).to_config()},
         "questions[0].mechanism.mechanism", "one-bit-mean"),
        ({**_q(), "mechanism": dn.OneBitMean(0, 1, epsilon=1).to_config()}, "questions[0].epsilon",
         "not a field of a number question with a mechanism config"),
    ],
)
def test_bad_definitions_name_the_field(question: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(SurveyError) as err:
        load_survey(_survey(question))
    assert err.value.field == field and words in err.value.message, (err.value.field, err.value.message)


def test_the_budget_counts_the_number_epsilon_and_sampling_refuses_it() -> None:
    with pytest.raises(SurveyError) as err:
        load_survey(_survey(_q(), budget=0.5))
    assert err.value.field == "budget" and "(q)" in err.value.message
    with pytest.raises(SurveyError) as err:
        load_survey(_survey(_q(), allocation="sample"))
    assert err.value.field == "questions[0]" and "a number question" in err.value.message


# -------------------------------------------------------------------- service
@pytest.fixture(scope="module")
def server(module_db_url: str) -> Iterator[BackgroundServer]:
    with BackgroundServer([SURVEY, COUNTER], db_url=module_db_url, admin_token=ADMIN) as running:
        yield running


@pytest.fixture
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        yield client


def _post_batch(http: httpx.Client, survey_id: str, bodies: list[dict[str, Any]]) -> httpx.Response:
    return http.post(f"/surveys/{survey_id}/responses/batch", content=json.dumps({"responses": bodies}),
                     headers={**AUTH, "content-type": "application/json"})


def test_devices_get_the_exact_mechanism_config(http: httpx.Client) -> None:
    body = http.get("/surveys/app-use").json()
    q = body["questions"][0]
    assert (q["type"], q["low"], q["high"], q["units"], q["randomized"]) == ("number", 0, 600, "minutes", True)
    assert q["mechanism"] == load_survey(SURVEY).questions[0].mechanism.to_config()
    assert q["epsilon"] == pytest.approx(dn.from_config(q["mechanism"]).epsilon)


@pytest.mark.parametrize("report", [0.5, 2.0, -1.0, "1", True, None, [1.0], {"bit": 1}])
def test_bad_reports_are_refused_naming_the_field_and_nothing_is_stored(
    http: httpx.Client, report: Any
) -> None:
    before = http.get("/surveys/app-use/results").json()["n_responses"]
    bodies = [{"idempotency_key": "good-number-response-01", "reports": {"minutes": 1.0, "daily": True}},
              {"idempotency_key": "bad-number-response-01", "reports": {"minutes": report, "daily": True}}]
    r = _post_batch(http, "app-use", bodies)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert detail["field"] == "responses[1].reports.minutes", detail
    r = http.post("/surveys/app-use/responses", json=bodies[1])
    assert r.status_code == 422 and r.json()["detail"]["field"] == "reports.minutes", r.text
    assert http.get("/surveys/app-use/results").json()["n_responses"] == before


def _truth_values(n: int) -> np.ndarray:
    """Fixed respondents' values in [0, 600]: a skewed spread with mean about 90 minutes."""
    rng = np.random.default_rng(20261123)
    return np.minimum(rng.exponential(90.0, n), 600.0)


def test_the_mean_of_many_devices_covers_the_truth_and_the_export_has_the_reports(
    http: httpx.Client, server: BackgroundServer
) -> None:
    survey = http.get("/surveys/app-use").json()
    m = dn.from_config(survey["questions"][0]["mechanism"])
    values = _truth_values(30_000)
    truth = float(values.mean())
    rng = np.random.default_rng(7)
    reports = m.reports_to_json(m.privatize_many(values, rng=rng))
    daily = dn.BinaryRR(epsilon=1).reports_to_json(dn.BinaryRR(epsilon=1).privatize_many(
        np.ones(values.size, dtype=bool), rng=rng))
    already = http.get("/surveys/app-use/results").json()["n_responses"]
    assert already == 0
    for start in range(0, len(reports), 5000):
        bodies = [{"idempotency_key": f"device-{start + i:06d}", "reports": {"minutes": r, "daily": d}}
                  for i, (r, d) in enumerate(zip(reports[start:start + 5000], daily[start:start + 5000],
                                                 strict=True))]
        assert _post_batch(http, "app-use", bodies).status_code == 201
    local = m.aggregate(m.reports_from_json(reports))
    for target in ("population", "respondents"):
        results = http.get(f"/surveys/app-use/results?target={target}").json()
        q = results["questions"][0]
        assert (q["kind"], q["n"], q["target"], q["units"], q["low"], q["high"]) == (
            "mean", 30_000, target, "minutes", 0, 600)
        assert q["epsilon"] == pytest.approx(m.epsilon) and q["aggregate"]["n"] == 30_000
        # exactly the mechanism's estimate of the very reports (merged over six batches)
        expected = m.estimate_from(local, target=target)
        assert q["estimate"] == pytest.approx(expected.mean, rel=1e-12)
        assert q["std_error"] == pytest.approx(expected.std_error, rel=1e-12)
        assert (q["ci_low"], q["ci_high"]) == pytest.approx(expected.ci(0.95), rel=1e-12)
        assert q["ci_low"] < q["estimate"] < q["ci_high"]
        # coverage, calibrated: within Z standard errors of the respondents' true mean
        assert abs(q["estimate"] - truth) <= Z * q["std_error"], (q["estimate"], truth, q["std_error"])
        # the standard error is the mechanism's: about its variance formula for these values
        assert q["std_error"] == pytest.approx(math.sqrt(m.variance(30_000, truth)), rel=0.1)
    # power: decoding the same bits without the output perturbation is far off
    plain = dn.OneBitMean(0, 600, epsilon=1)
    wrong = plain.estimate_from(MeanStat(plain.fingerprint, local.n, local.total, local.total_sq))
    assert abs(wrong.mean - truth) > Z * q["std_error"], (wrong.mean, truth)
    # the export carries each response's report, as stored
    r = http.get("/admin/surveys/app-use/export", headers={"Authorization": f"Bearer {ADMIN}"})
    assert r.status_code == 200
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert len(rows) == 30_000 and sorted(rows[0]) == ["daily", "minutes", "row"]
    assert sum(json.loads(row["minutes"]) for row in rows) == pytest.approx(sum(reports))


def test_the_python_client_answers_a_number_question_with_its_kept_state(
    http: httpx.Client, server: BackgroundServer, tmp_path: Path
) -> None:
    """Client(state=...) answers through 1BitMean's memoized client: the same answer, the same report."""
    path = tmp_path / "device.state"
    for _ in range(2):  # two clients (two runs of a program) sharing one state file
        with Client(server.url, state=path) as client:
            assert client.respond("counter", {"m": 123.4})["status"] == "accepted"
    r = http.get("/admin/surveys/counter/export", headers={"Authorization": f"Bearer {ADMIN}"})
    sent = [json.loads(row["m"]) for row in csv.DictReader(io.StringIO(r.text))]
    pq = pytest.importorskip("pyarrow.parquet")
    r = http.get("/admin/surveys/counter/export?format=parquet", headers={"Authorization": f"Bearer {ADMIN}"})
    table = pq.read_table(io.BytesIO(r.content))
    assert table.column("m").to_pylist() == sent  # a number question's column holds floats
    stored = json.loads(table.schema.metadata[b"deniable.survey"])
    assert load_survey(stored).questions[0].mechanism.to_config() == dn.from_config(
        http.get("/surveys/counter").json()["questions"][0]["mechanism"]).to_config()
    survey = http.get("/surveys/counter").json()
    kept = SurveyState(path, survey)
    m = dn.from_config(survey["questions"][0]["mechanism"])
    assert sent == [float(kept.client("m", m).privatize(123.4))] * 2
    # other devices (their own states) draw their own bits
    bits = {privatize_answers(survey, {"m": 123.4}, state=SurveyState(tmp_path / f"d{i}.state", survey))["m"]
            for i in range(60)}
    assert bits == {0.0, 1.0}
    results = http.get("/surveys/counter/results").json()["questions"][0]
    assert results["n"] == 2 and results["kind"] == "mean" and results["estimate"] is not None
    # a survey of number questions only is estimated for the target asked for
    respondents = http.get("/surveys/counter/results?target=respondents").json()
    assert respondents["target"] == respondents["questions"][0]["target"] == "respondents"
    with pytest.raises(ValueError, match="real numbers"):
        privatize_answers(survey, {"m": "lots"})


def test_a_question_without_reports_has_no_estimate_yet(sqlite_url: str) -> None:
    with BackgroundServer([COUNTER], db_url=sqlite_url) as server, httpx.Client(base_url=server.url) as http:
        q = http.get("/surveys/counter/results").json()["questions"][0]
        assert (q["n"], q["estimate"], q["std_error"], q["ci_low"], q["ci_high"]) == (0, None, None, None, None)
        http.post("/surveys/counter/responses", json={"idempotency_key": "only-one-report-0001",
                                                       "reports": {"m": 1.0}})
        q = http.get("/surveys/counter/results").json()["questions"][0]
        assert q["n"] == 1 and q["estimate"] is None  # a mean needs two reports


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_rounds_estimate_each_round_and_cap_the_memoized_reports(db_url: str) -> None:
    """Per round: the mean of that round's reports. Each device reports 3 rounds: 3 x 0.78 fresh,
    but its memoized 1BitMean bits cap it at epsilon_perm = 1, within lifetime_epsilon 1.2."""
    start = 1_796_083_200.0  # 2026-12-01T00:00:00Z
    weekly = {**_survey(_q(), budget=1), "id": "weekly", "rate_limit": "off",
              "rounds": {"every": "1d", "lifetime_epsilon": 1.2, "start": "2026-12-01T00:00:00Z"}}
    survey_def = load_survey(weekly)
    m = survey_def.questions[0].mechanism
    clock = Clock(start)
    values = _truth_values(400)
    with BackgroundServer([weekly], db_url=db_url, admin_token=ADMIN, clock=clock) as server, \
            httpx.Client(base_url=server.url, timeout=120) as http:
        survey = http.get("/surveys/weekly").json()
        states = [SurveyState(dn.MemoryStore(), survey) for _ in values]
        for r in range(3):
            bodies = [{"idempotency_key": f"r{r}-device-{i:04d}", "device": s.device,
                       "reports": privatize_answers(survey, {"q": float(v)}, state=s)}
                      for i, (s, v) in enumerate(zip(states, values, strict=True))]
            assert _post_batch(http, "weekly", bodies).status_code == 201
            clock.now += 86_400
        body = http.get("/surveys/weekly/results").json()
    rounds = body["rounds"]
    assert [r["round"] for r in rounds["rounds"]] == [0, 1, 2]
    for r in rounds["rounds"]:
        q = r["questions"][0]
        assert q["kind"] == "mean" and q["n"] == 400 and q["ci_low"] < q["estimate"] < q["ci_high"]
        assert abs(q["estimate"] - values.mean()) <= Z * q["std_error"]
    assert body["questions"][0]["n"] == 1200
    devices = rounds["devices"]
    assert devices["devices"] == 400
    assert devices["max_spent"] == pytest.approx(m.epsilon_perm)
    assert devices["max_spent_fresh"] == pytest.approx(3 * m.epsilon)
