"""Joint questions in a survey (``type: joint``): the definition checked naming the field, the stored
form reloaded exactly, devices' answers (a list, one answer per part) randomized by the Python client,
and the results: each part's shares as the joint estimate's marginals, and each pair's independence test
and Cramér's V. Real server on loopback, real SQLite.

Statistical assertion: the platform share of a 6,000-device survey lies within z = 5.33 standard errors
(two-sided normal tail 1e-7 per share, 3 shares) of the truth; and the (platform, crashed) pair, dependent
with Cramér's V = 0.2, is rejected as independent at 1e-6 (asymptotic power above 1 - 1e-9 at n = 6,000)."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest

import deniable as dn
from deniable.client import Client
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey

ADMIN = "joint-questions-admin"
JOINT: dict[str, Any] = {
    "id": "device", "text": "About your device", "type": "joint", "epsilon": 3, "mechanism": "grr",
    "questions": [{"id": "platform", "text": "Platform?", "categories": ["android", "ios", "web"]},
                  {"id": "crashed", "text": "Did it crash?", "type": "yes-no"},
                  {"id": "plan", "text": "Plan?", "categories": ["free", "pro"]}],
}
SURVEY: dict[str, Any] = {"id": "telemetry", "title": "Telemetry", "budget": 3, "rate_limit": "off",
                          "questions": [JOINT]}
N = 6000
SHARES = np.array([0.5, 0.3, 0.2])


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    rng = np.random.default_rng(9)
    platform = rng.choice(["android", "ios", "web"], N, p=SHARES)
    crashed = rng.random(N) < np.select([platform == "android", platform == "ios"], [0.3, 0.1], 0.02)
    answers = [{"device": [str(p), bool(c), str(rng.choice(["free", "pro"]))]}
               for p, c in zip(platform, crashed, strict=True)]
    db = tmp_path_factory.mktemp("joint") / "db.sqlite"
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        public = httpx.get(f"{server.url}/surveys/telemetry").json()
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("telemetry", answers)
        out = httpx.get(f"{server.url}/surveys/telemetry/results", timeout=60).json()
        out["public"] = public
        out["aggregate"] = server.storage.aggregates("telemetry")["device"]
    return out


def test_devices_see_the_parts_and_the_exact_configuration(results: dict[str, Any]) -> None:
    q = results["public"]["questions"][0]
    assert q["type"] == "joint" and [p["id"] for p in q["questions"]] == ["platform", "crashed", "plan"]
    assert q["questions"][1]["categories"] == [False, True] and q["mechanism"]["mechanism"] == "joint"
    assert dn.from_config(q["mechanism"]) == load_survey(SURVEY).questions[0].randomizer


def test_results_are_the_joint_estimates_marginals(results: dict[str, Any]) -> None:
    q = results["questions"][0]
    assert q["kind"] == "joint" and q["n"] == N
    joint = load_survey(SURVEY).questions[0].randomizer
    est = joint.estimate_from(results["aggregate"])
    for i, part in enumerate(q["questions"]):
        expected = est.marginal(i).to_dict()
        for key in ("estimate", "std_error", "ci_low", "ci_high"):
            assert part[key] == pytest.approx(expected[key], abs=1e-12)
    platform = q["questions"][0]
    assert np.all(np.abs(np.array(platform["estimate"]) - SHARES) <= 5.33 * np.array(platform["std_error"]))
    pairs = {(p["first"], p["second"]): p for p in q["pairs"]}
    assert set(pairs) == {("platform", "crashed"), ("platform", "plan"), ("crashed", "plan")}
    assert pairs[("platform", "crashed")]["p_value"] < 1e-6 and pairs[("platform", "crashed")]["df"] == 2


def test_stored_form_reloads_the_same_joint() -> None:
    survey = load_survey(SURVEY)
    again = load_survey(survey.to_json())
    assert again.questions[0].randomizer == survey.questions[0].randomizer
    assert again.questions[0].parts == survey.questions[0].parts == (
        ("platform", "Platform?"), ("crashed", "Did it crash?"), ("plan", "Plan?"))


@pytest.mark.parametrize(("change", "field"), [
    ({"questions": [JOINT["questions"][0]]}, "questions[0].questions"),
    ({"questions": [JOINT["questions"][0], {"id": "x", "text": "X?", "categories": ["a"]}]},
     "questions[0].questions[1].categories"),
    ({"questions": [JOINT["questions"][0], {"id": "platform", "text": "Again?", "type": "yes-no"}]},
     "questions[0].questions"),
    ({"questions": [JOINT["questions"][0], {"id": "x", "text": "X?", "type": "number"}]},
     "questions[0].questions[1].type"),
    ({"mechanism": "olh"}, "questions[0].mechanism"),
    ({"epsilon": "3"}, "questions[0].epsilon"),
    ({"units": "s"}, "questions[0].units"),
    ({"questions": [{"id": "a", "text": "A?", "categories": list(range(70))},
                    {"id": "b", "text": "B?", "categories": list(range(70))}]}, "questions[0].questions"),
])
def test_bad_definitions_name_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(SurveyError) as caught:
        load_survey({**SURVEY, "questions": [{**JOINT, **change}]})
    assert caught.value.field == field, str(caught.value)


def test_exports_hold_the_reports(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Both exports carry each response's joint report; the Parquet one decodes through the joint (its survey
    metadata) to the same aggregate as the server's."""
    import io

    import pyarrow.parquet as pq

    rng = np.random.default_rng(10)
    answers = [{"device": [str(rng.choice(["android", "ios", "web"])), bool(rng.random() < 0.3), "free"]}
               for _ in range(200)]
    db = tmp_path_factory.mktemp("joint-export") / "db.sqlite"
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("telemetry", answers)
        csv_text = httpx.get(f"{server.url}/admin/surveys/telemetry/export", headers=auth, timeout=60).text
        table = pq.read_table(io.BytesIO(httpx.get(f"{server.url}/admin/surveys/telemetry/export?format=parquet",
                                                   headers=auth, timeout=60).content))
        stored = server.storage.aggregates("telemetry")["device"]
    assert len(csv_text.strip().splitlines()) == 201
    joint = load_survey(SURVEY).questions[0].randomizer
    import json

    reports = joint.reports_from_json([json.loads(v) for v in table.column("device").to_pylist()])
    assert joint.aggregate(reports) == stored
    # the command line: the export's cells by tuple of answers, and the database's parts and pairs
    from typer.testing import CliRunner

    from deniable.cli import app

    folder = db.parent
    pq.write_table(table, folder / "export.parquet")
    runner = CliRunner()
    cells = runner.invoke(app, ["estimate", str(folder / "export.parquet"), "--column", "device", "--json"])
    assert cells.exit_code == 0, cells.output
    rows = json.loads(cells.stdout)["categories"]
    assert [tuple(r["category"]) for r in rows] == list(joint.domain)
    assert [r["estimate"] for r in rows] == pytest.approx(joint.estimate_from(stored).cells.frequencies.tolist())
    lines = runner.invoke(app, ["estimate", "--db", f"sqlite:///{db}", "--survey", "telemetry"])
    assert lines.exit_code == 0, lines.output
    text = " ".join(lines.stdout.split())
    assert "device: 3 questions answered jointly (GRR), n = 200" in text and "platform x crashed: Cramer's V" in text
