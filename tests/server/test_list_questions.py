"""List experiments in a survey (``type: list-experiment``): the definition checked naming the field,
devices' answers assigned to a list by the Python client (a fair bit from the OS CSPRNG), the reports
checked against the list each is in, the results equal to ``deniable.survey.list_difference`` on the
same answers, and the exports typed. Real server on loopback, real SQLite.

Statistical assertions: with 4,000 respondents split by fair bits, each list holds at least 1,650 (a
binomial tail below 1e-25), and the estimated share (truth 0.3) lies within 5.33 of its standard errors
of the truth (two-sided normal tail 1e-7)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import httpx
import numpy as np
import pytest

from deniable.client import Client, privatize_answers
from deniable.server._list_questions import MAX_ITEMS
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey
from deniable.survey import ListExperiment, list_difference

ADMIN = "list-questions-admin"
ITEMS = ["the tax on gasoline going up", "athletes' million-dollar contracts", "corporations polluting"]
LIST_Q: dict[str, Any] = {
    "id": "anger", "text": "How many of these make you angry?", "type": "list-experiment",
    "items": ITEMS, "sensitive": "a black family moving next door", "allow_infinite_epsilon": True,
}
SURVEY: dict[str, Any] = {
    "id": "south", "title": "Attitudes", "budget": 1, "rate_limit": "off",
    "questions": [LIST_Q, {"id": "smoker", "text": "Do you smoke?", "type": "yes-no", "mechanism": "grr",
                           "epsilon": 1}],
}
N = 4000


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rng = np.random.default_rng(31)
    control = rng.binomial(3, 0.4, N)
    sensitive = rng.random(N) < 0.3
    answers = [{"anger": {"control": int(c), "sensitive": bool(z)}, "smoker": bool(rng.random() < 0.2)}
               for c, z in zip(control, sensitive, strict=True)]
    db = tmp_path_factory.mktemp("list") / "db.sqlite"
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        public = httpx.get(f"{server.url}/surveys/south").json()
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("south", answers)
        auth = {"Authorization": f"Bearer {ADMIN}"}
        out = httpx.get(f"{server.url}/surveys/south/results", timeout=60).json()
        csv = httpx.get(f"{server.url}/admin/surveys/south/export?format=csv", headers=auth, timeout=60)
        parquet = httpx.get(f"{server.url}/admin/surveys/south/export?format=parquet", headers=auth, timeout=60)
        bad = [httpx.post(f"{server.url}/surveys/south/responses",
                          json={"idempotency_key": f"bad-{i}-0123456789abcdef", "reports": {"anger": r, "smoker": 1}})
               for i, r in enumerate(({"treat": 0, "count": 4}, {"treat": 2, "count": 0}, {"count": 1}, 3))]
    return {"public": public, "results": out, "csv": csv, "parquet": parquet, "bad": bad, "answers": answers}


def test_devices_see_the_lists_and_the_infinite_epsilon(collected: dict[str, Any]) -> None:
    q = collected["public"]["questions"][0]
    assert q["type"] == "list-experiment" and q["items"] == ITEMS and q["sensitive"] == LIST_Q["sensitive"]
    assert q["randomized"] is False and q["epsilon"] is None and q["reveals_truth"] is True
    assert load_survey(load_survey(SURVEY).to_json()) == load_survey(SURVEY)


def test_the_results_are_the_difference_in_means_of_the_stored_reports(collected: dict[str, Any]) -> None:
    q = collected["results"]["questions"][0]
    header, *cells = csv.reader(io.StringIO(collected["csv"].text))
    rows = [json.loads(row[header.index("anger")]) for row in cells]
    treat = np.array([r["treat"] for r in rows])
    count = np.array([r["count"] for r in rows])
    expected = list_difference(count, treat, J=3)
    assert q["kind"] == "list-experiment" and q["n"] == N and q["n_treatment"] == int(treat.sum())
    assert q["estimate"] == pytest.approx(expected.estimate, abs=1e-12)
    assert q["std_error"] == pytest.approx(expected.std_error, abs=1e-12)
    low, high = expected.confidence_interval(0.95)
    assert (q["ci_low"], q["ci_high"]) == pytest.approx((low, high), abs=1e-12)
    assert q["floor"] == int(((treat == 1) & (count == 0)).sum()) and q["ceiling"] == int((count == 4).sum())
    assert sum(q["counts"]["control"]) + sum(q["counts"]["treatment"]) == N
    assert min(q["n_treatment"], q["n_control"]) >= 1650  # fair bits: binomial tail < 1e-25
    assert abs(q["estimate"] - 0.3) < 5.33 * q["std_error"]


def test_each_report_is_the_count_of_its_list(collected: dict[str, Any]) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(io.BytesIO(collected["parquet"].content))
    reports = table.column("anger").to_pylist()
    assert {r["treat"] for r in reports} == {0, 1} and all(0 <= r["count"] <= 3 + r["treat"] for r in reports)
    assert len(reports) == N


def test_a_report_outside_its_list_is_refused_naming_the_field(collected: dict[str, Any]) -> None:
    four, two, partial, number = collected["bad"]
    assert four.status_code == 422 and four.json()["detail"]["field"] == "reports.anger"
    assert "count must be an integer from 0 to 3" in four.json()["detail"]["message"]
    assert two.status_code == 422 and "treat must be 0" in two.json()["detail"]["message"]
    assert partial.status_code == 422 and number.status_code == 422
    assert collected["results"]["n_responses"] == N


def test_the_client_assigns_each_list_by_a_fair_coin_and_never_sends_the_sensitive_answer() -> None:
    survey = {"id": "s", "questions": [{**LIST_Q, "randomized": False}]}
    reports = [privatize_answers(survey, {"anger": {"control": 2, "sensitive": True}},
                                 rng=np.random.default_rng(i))["anger"] for i in range(200)]
    assert {(r["treat"], r["count"]) for r in reports} == {(0, 2), (1, 3)}
    experiment = ListExperiment(3)
    with pytest.raises(ValueError, match=r"answers\[0\]\.control must be .* 0\.\.3; got 4"):
        experiment.reports([{"control": 4, "sensitive": False}])
    with pytest.raises(ValueError, match=r"answers\[0\]\.sensitive must be true or false"):
        experiment.reports([{"control": 1, "sensitive": "yes"}])


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"allow_infinite_epsilon": False}, "allow_infinite_epsilon", "must be true: a list experiment's epsilon"),
    ({"items": []}, "items", f"1 to {MAX_ITEMS} control items"),
    ({"items": ["a", "a"]}, "items", "repeats an item"),
    ({"sensitive": ""}, "sensitive", "the text of the sensitive item"),
    ({"sensitive": ITEMS[0]}, "sensitive", "is also one of the control items"),
    ({"randomized": True}, "randomized", "answered as given"),
    ({"mechanism": "grr"}, "mechanism", "is not a field of a list experiment"),
], ids=["infinite", "no-items", "repeated", "no-sensitive", "sensitive-in-items", "randomized", "mechanism"])
def test_a_bad_definition_names_the_field(change: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(SurveyError, match=message) as info:
        load_survey({**SURVEY, "questions": [{**LIST_Q, **change}]})
    assert info.value.field == f"questions[0].{field}"
