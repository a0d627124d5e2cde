"""Key-value questions in a survey (``type: keyvalue``, PCKV): the definitions checked naming the field, the
stored forms reloaded exactly, devices' answers randomized by the Python client, reports of the wrong shape
refused naming the question, and the results: each key's share of respondents and the mean of its values in
the question's range. Real server on loopback, real SQLite.

Statistical assertions (4,000 devices; each a z = 5.33 band, two-sided normal tail 1e-7, 6 checks; and the
UE question's 12 shares at z = 6, 2.4e-8 in all; so a correct implementation fails less than once in a million
runs): each key's share within 5.33 standard errors of its truth, and the mean value of the two most held keys
within 5.33 of theirs. Power: a mean left on PCKV's ``[-1, 1]``, or mapped onto the range upside down, misses
its truth by more than 1.5 times that band for both keys (PCKV's own debiasing is tested in
tests/stat/test_key_value_stat.py).
"""

from __future__ import annotations

import io
import json
from typing import Any

import httpx
import numpy as np
import pytest

import deniable as dn
from deniable.client import Client, privatize_answers
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey

ADMIN = "keyvalue-questions-admin"
KEYS = ["mail", "maps", "news", "video"]
SITES: dict[str, Any] = {"id": "load", "text": "For each site you visited, how long did it take to load?",
                         "type": "keyvalue", "keys": KEYS, "low": 0, "high": 10, "units": "s", "max_pairs": 2,
                         "epsilon": 2.0}
SURVEY: dict[str, Any] = {"id": "sites", "title": "Sites", "budget": 2, "rate_limit": "off", "questions": [SITES]}
N = 4000
HOLDS = np.array([0.7, 0.45, 0.3, 0.1])  # each key's chance of being held (at most 2 are kept)
MEANS = np.array([2.0, 7.5, 5.0, 3.0])  # each key's mean value (uniform within +-1.5)
Z = 5.33


def _answers(rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
    held = rng.random((n, 4)) < HOLDS
    held[held.cumsum(axis=1) > 2] = False  # at most max_pairs = 2: the first two held
    values = MEANS + rng.uniform(-1.5, 1.5, (n, 4))
    return [{"load": {KEYS[j]: float(values[i, j]) for j in np.flatnonzero(held[i])}} for i in range(n)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    answers = _answers(np.random.default_rng(29), N)
    db = tmp_path_factory.mktemp("keyvalue") / "db.sqlite"
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        public = httpx.get(f"{server.url}/surveys/sites").json()
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("sites", answers, rng=np.random.default_rng(2929))
            results = client.results("sites")
        bad = [httpx.post(f"{server.url}/surveys/sites/responses", json={"idempotency_key": f"bad-key-{i}",
                                                                          "reports": {"load": report}})
               for i, report in enumerate(["zz", 17, {"key": "mail"}, 10**6, -1, "0" * 200])]
        parquet = httpx.get(f"{server.url}/admin/surveys/sites/export?format=parquet", headers=auth, timeout=60)
        aggregates = server.storage.aggregates("sites")
    return {"answers": answers, "public": public, "results": results, "aggregates": aggregates, "db": db,
            "bad": bad, "parquet": parquet.content}


def test_devices_see_the_exact_configuration(run: dict[str, Any]) -> None:
    q = run["public"]["questions"][0]
    loaded = load_survey(SURVEY).questions[0]
    assert (q["type"], q["keys"], q["low"], q["high"], q["units"], q["max_pairs"]) == (
        "keyvalue", KEYS, 0, 10, "s", 2)
    assert dn.from_config(q["mechanism"]) == loaded.randomizer
    assert q["mechanism"]["params"]["variant"] == "grr"  # auto: 4 keys, GRR's share variance is the lower
    assert q["epsilon"] == loaded.randomizer.epsilon <= 2.0 and q["epsilon"] == pytest.approx(2.0, rel=1e-2)


def test_results_estimate_each_keys_share_and_mean(run: dict[str, Any]) -> None:
    q = run["results"]["questions"][0]
    m = load_survey(SURVEY).questions[0].randomizer
    assert (q["kind"], q["type"], q["n"], q["ell"], q["max_pairs"], q["mechanism"]) == (
        "keyvalue", "keyvalue", N, 2, 2, "PCKV-GRR")
    est = m.estimate_from(run["aggregates"]["load"])
    assert q["estimate"] == pytest.approx(est.frequencies.tolist())
    assert q["mean"] == pytest.approx((5 * (est.means + 1)).tolist())
    assert q["mean_std_error"] == pytest.approx((5 * est.mean_std_errors).tolist())
    answers = [a["load"] for a in run["answers"]]
    shares = np.array([np.mean([k in a for a in answers]) for k in KEYS])
    means = np.array([np.mean([a[k] for a in answers if k in a]) for k in KEYS])
    assert np.all(np.abs(np.array(q["estimate"]) - shares) <= Z * np.array(q["std_error"]))
    top = [0, 1]
    mean, se = np.array(q["mean"])[top], np.array(q["mean_std_error"])[top]
    assert np.all(np.abs(mean - means[top]) <= Z * se)
    assert np.all((np.array(q["mean_ci_low"]) >= 0) & (np.array(q["mean_ci_high"]) <= 10))
    # power: a mean left on PCKV's [-1, 1], or mapped onto the range upside down, misses its truth
    assert np.all(np.abs(est.means[top] - means[top]) > 1.5 * Z * se)
    assert np.all(np.abs(10 - mean - means[top]) > 1.5 * Z * se)


def test_no_reports_give_null_estimates(tmp_path_factory: pytest.TempPathFactory) -> None:
    db = tmp_path_factory.mktemp("keyvalue-empty") / "db.sqlite"
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        q = httpx.get(f"{server.url}/surveys/sites/results").json()["questions"][0]
    assert q["n"] == 0 and q["estimate"] is None and q["mean"] is None and q["keys"] == KEYS


def test_reports_of_the_wrong_shape_are_refused_naming_the_question(run: dict[str, Any]) -> None:
    for response in run["bad"]:
        assert response.status_code == 422, response.text
        assert response.json()["detail"]["field"] == "reports.load", response.text
    assert "integer in 0..11" in run["bad"][3].json()["detail"]["message"]  # 2 (4 keys + 2 dummies) - 1
    assert run["results"]["n_responses"] == N


def test_the_client_maps_values_onto_the_range_and_refuses_bad_answers(run: dict[str, Any]) -> None:
    public = run["public"]
    assert isinstance(privatize_answers(public, {"load": {"mail": 0, "news": 10}})["load"], int)
    assert isinstance(privatize_answers(public, {"load": {}})["load"], int)  # none is an answer too
    with pytest.raises(ValueError, match=r"key 'mail' must be a number in \[0, 10\]; got 11"):
        privatize_answers(public, {"load": {"mail": 11}})
    with pytest.raises(ValueError, match="max_pairs=2"):
        privatize_answers(public, {"load": {"mail": 1, "maps": 2, "news": 3}})
    with pytest.raises(ValueError, match="films"):
        privatize_answers(public, {"load": {"films": 1}})
    with pytest.raises(ValueError, match="dict"):
        privatize_answers(public, {"load": 3})


def test_the_client_reports_follow_pckv_at_the_mapped_values() -> None:
    """A value x in [low, high] is PCKV's v = 2 (x - low) / (high - low) - 1: the low end always reports the
    sign -1 when the pair is kept, the high end +1 (GRR report 2 j + (s == +1))."""
    public = {"id": "sites", "questions": [load_survey(SURVEY).questions[0].public_json()]}
    m = dn.from_config(public["questions"][0]["mechanism"])
    reports = np.array([r["load"] for r in [privatize_answers(public, {"load": {"maps": x}},
                                                              rng=np.random.default_rng(7 + i))
                                            for i, x in enumerate([0.0] * 300 + [10.0] * 300)]])
    at_maps = reports // 2 == 1
    signs = reports % 2
    low_plus, high_plus = signs[:300][at_maps[:300]].mean(), signs[300:][at_maps[300:]].mean()
    assert at_maps.mean() > m.a * 0.5 - 0.1  # maps is sampled 1 in ell = 2 times, then kept w.p. a
    assert low_plus < 0.35 < 0.65 < high_plus  # 1 - p ~ 0.09 and p ~ 0.91 (plus another key's fair signs)


def test_stored_forms_reload_the_same_mechanism() -> None:
    survey = load_survey(SURVEY)
    again = load_survey(survey.to_json())
    assert again.canonical() == survey.canonical()
    assert again.questions[0].randomizer == survey.questions[0].randomizer
    assert again.questions[0].value_range == (0.0, 10.0) and again.questions[0].units == "s"
    stored = survey.to_json()
    stored["questions"][0]["keys"] = ["mail", "maps", "news", "films"]
    with pytest.raises(SurveyError) as caught:
        load_survey(stored)
    assert caught.value.field == "questions[0].mechanism"


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"keys": ["mail"]}, "keys", "must list 2 to 1000 keys"),
    ({"keys": ["mail", "mail"]}, "keys", "duplicates"),
    ({"keys": ["mail", None]}, "keys[1]", "a string or an integer"),
    ({"low": None}, "low", "must be a finite number"),
    ({"high": -1}, "high", "must be above low"),
    ({"max_pairs": 5}, "max_pairs", "from 1 to 4"),
    ({"max_pairs": 0}, "max_pairs", "from 1 to 4"),
    ({"ell": 3}, "ell", "from 1 to 2"),
    ({"mechanism": "oue"}, "mechanism", "'auto', 'ue', 'grr'"),
    ({"epsilon": "1"}, "epsilon", "a number > 0"),
    ({"epsilon": -1}, "epsilon", "epsilon"),
    ({"options": ["a", "b"]}, "options", "is not a field of a keyvalue question"),
    ({"randomized": False}, "randomized", "always randomized"),
    ({"units": ""}, "units", "1 to 40 characters"),
])
def test_bad_definitions_name_the_field(change: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(SurveyError, match=message) as caught:
        load_survey({**SURVEY, "questions": [{**SITES, **change}]})
    assert caught.value.field == f"questions[0].{field}", str(caught.value)


def test_mechanism_chooses_the_variant() -> None:
    for variant, name in (("ue", "PCKV-UE"), ("grr", "PCKV-GRR")):
        q = load_survey({**SURVEY, "questions": [{**SITES, "mechanism": variant}]}).questions[0]
        assert q.randomizer.name == name
    many = load_survey({**SURVEY, "questions": [{**SITES, "keys": [f"site{i}" for i in range(100)]}]})
    assert many.questions[0].randomizer.variant == "ue"  # auto: 100 keys, UE's share variance is the lower


def test_exports_and_the_command_line_read_them(run: dict[str, Any], tmp_path: Any) -> None:
    """``deniable estimate --db`` prints each key's share and mean; ``deniable estimate FILE --column`` reads
    the Parquet export (its survey in the metadata) and a CSV export with the survey's JSON as --config."""
    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from deniable.cli import app

    runner = CliRunner()
    lines = runner.invoke(app, ["estimate", "--db", f"sqlite:///{run['db']}", "--survey", "sites"])
    assert lines.exit_code == 0, lines.output
    text = " ".join(lines.stdout.split())
    assert "load: values in [0, 10] s for up to 2 of 4 keys (PCKV-GRR, ell = 2), n = 4,000" in text
    assert "mail: share 0." in text and "mean" in text
    table = pq.read_table(io.BytesIO(run["parquet"]))
    m = load_survey(SURVEY).questions[0].randomizer
    column = table.column("load").to_pylist()
    assert m.aggregate(m.reports_from_json(column)) == run["aggregates"]["load"]
    path = tmp_path / "export.parquet"
    pq.write_table(table, path)
    out = runner.invoke(app, ["estimate", str(path), "--column", "load", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    q = run["results"]["questions"][0]
    assert [r["key"] for r in data["keys"]] == KEYS and (data["low"], data["high"], data["units"]) == (0, 10, "s")
    assert [r["estimate"] for r in data["keys"]] == pytest.approx(q["estimate"])
    assert [r["mean"] for r in data["keys"]] == pytest.approx(q["mean"])
    csv_path, survey_path = tmp_path / "export.csv", tmp_path / "survey.json"
    csv_path.write_text("row,load\n" + "".join(f"{i},{r}\n" for i, r in enumerate(column)))
    survey_path.write_text(json.dumps(run["public"]))
    shown = runner.invoke(app, ["estimate", str(csv_path), "--column", "load", "--config", str(survey_path)])
    assert shown.exit_code == 0, shown.output
    assert "share holding each key and its mean value" in shown.stdout and "video" in shown.stdout


def test_a_ue_question_takes_hex_reports_and_refuses_bad_ones(tmp_path: Any) -> None:
    """PCKV-UE on the wire: 2 ceil((d + ell) / 8) bytes as hex; a report of the wrong length, or with both +1
    and -1 at one key, is refused naming the question, the others are counted."""
    keys = [f"site{i}" for i in range(12)]
    question = {**SITES, "keys": keys, "mechanism": "ue"}
    survey = {**SURVEY, "id": "many", "questions": [question]}
    answers = [{"load": {keys[i % 12]: 1.0 + i % 9}} for i in range(300)]
    with BackgroundServer([survey], db_url=f"sqlite:///{tmp_path / 'db.sqlite'}", admin_token=ADMIN) as server:
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("many", answers, rng=np.random.default_rng(3))
        bad = [httpx.post(f"{server.url}/surveys/many/responses", json={"idempotency_key": f"bad-key-{i}",
                                                                         "reports": {"load": report}})
               for i, report in enumerate(["00" * 3, "01" * 4, "ff" * 4, 5])]
        q = httpx.get(f"{server.url}/surveys/many/results").json()["questions"][0]
        public = httpx.get(f"{server.url}/surveys/many").json()["questions"][0]
    m = dn.from_config(public["mechanism"])
    assert m.name == "PCKV-UE" and m.cells == 14 and q["mechanism"] == "PCKV-UE" and q["n"] == 300
    assert len(privatize_answers({"id": "many", "questions": [public]}, {"load": {"site3": 2.5}})["load"]) == 8
    for response in bad:
        assert response.status_code == 422 and response.json()["detail"]["field"] == "reports.load", response.text
    # each key is held by 1/12 of the devices: within 6 standard errors (two-sided 2e-9 each, 12 keys: 2.4e-8)
    assert np.all(np.abs(np.array(q["estimate"]) - 1 / 12) <= 6 * np.array(q["std_error"]))
    assert all(0 <= x <= 10 for x in q["mean"])
