"""Range and choose-several questions in a survey (``type: number`` with ``mechanism: hierarchical | haar``,
``type: multiple``): the definitions checked naming the field, the stored forms reloaded exactly, devices'
answers randomized by the Python client, and the results: a range question's CDF with its band and its
quantiles with intervals, a multiple question's share per option. Real server on loopback, real SQLite.

Statistical assertions (4,000 devices; each a z = 5.33 band, two-sided normal tail 1e-7, 7 checks, so a
correct implementation fails less than once in a million runs): the estimated CDF at three edges lies within
5.33 standard errors of the true share of answers below them; each option's share within 5.33 of its
truth. Power: a share left undebiased (the raw support rate, ``q* + (p* - q*) f / ell``) misses its truth
by more than 1.5 times that band for the two options held by half the respondents or more.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import numpy as np
import pytest

import deniable as dn
from deniable.client import Client
from deniable.server._runner import BackgroundServer
from deniable.server._surveys import SurveyError, load_survey

ADMIN = "range-questions-admin"
LATENCY: dict[str, Any] = {"id": "latency", "text": "How long did it take?", "type": "number", "low": 0,
                           "high": 640, "units": "ms", "mechanism": "hierarchical", "epsilon": 1.0, "bins": 64,
                           "branching": 4}
HAAR: dict[str, Any] = {"id": "age", "text": "Your age?", "type": "number", "low": 0, "high": 100,
                        "mechanism": "haar", "epsilon": 1.0, "bins": 512}
APPS: dict[str, Any] = {"id": "apps", "text": "Which apps did you use?", "type": "multiple",
                        "options": ["mail", "maps", "chat", "games"], "max_choices": 3, "epsilon": 2.0}
SURVEY: dict[str, Any] = {"id": "usage", "title": "Usage", "budget": 4, "rate_limit": "off",
                          "questions": [LATENCY, HAAR, APPS]}
N = 4000
HOLDS = np.array([0.6, 0.3, 0.5, 0.1])  # each option's chance of being chosen
Z = 5.33


def _answers(rng: np.random.Generator, n: int) -> list[dict[str, Any]]:
    latency = np.minimum(rng.exponential(120, n), 640.0)
    age = rng.uniform(18, 80, n)
    chosen = rng.random((n, 4)) < HOLDS
    chosen[chosen.sum(axis=1) > 3, 3] = False  # at most max_choices = 3
    return [{"latency": float(lat), "age": float(a), "apps": [APPS["options"][j] for j in np.flatnonzero(c)]}
            for lat, a, c in zip(latency, age, chosen, strict=True)]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    answers = _answers(np.random.default_rng(29), N)
    db = tmp_path_factory.mktemp("ranges") / "db.sqlite"
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        public = httpx.get(f"{server.url}/surveys/usage").json()
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("usage", answers, rng=np.random.default_rng(2929))
            results = client.results("usage")
        aggregates = server.storage.aggregates("usage")
    return {"answers": answers, "public": public, "results": results, "aggregates": aggregates, "db": db}


def test_devices_see_the_exact_configurations(run: dict[str, Any]) -> None:
    survey = load_survey(SURVEY)
    latency, age, apps = run["public"]["questions"]
    assert latency["mechanism"]["mechanism"] == "hierarchical-histogram" and latency["units"] == "ms"
    assert (latency["low"], latency["high"]) == (0, 640) and age["mechanism"]["mechanism"] == "haar-hrr"
    assert apps["type"] == "multiple" and apps["options"] == APPS["options"] and apps["max_choices"] == 3
    for q, loaded in zip(run["public"]["questions"], survey.questions, strict=True):
        assert dn.from_config(q["mechanism"]) == loaded.randomizer
    assert [q["epsilon"] for q in run["public"]["questions"]] == pytest.approx([1.0, 1.0, 2.0])
    assert survey.epsilon_total == pytest.approx(4.0)


def test_range_results_are_the_range_estimate(run: dict[str, Any]) -> None:
    m = load_survey(SURVEY).questions[0].randomizer
    q = run["results"]["questions"][0]
    assert (q["kind"], q["n"], q["bins"], q["units"]) == ("range", N, 64, "ms")
    est = m.estimate_from(run["aggregates"]["latency"])
    edges, cdf, se = est.cdf_band()
    assert q["cdf"]["x"] == pytest.approx(edges.tolist()) and q["cdf"]["estimate"] == pytest.approx(cdf.tolist())
    assert q["cdf"]["std_error"] == pytest.approx(se.tolist())
    assert q["cdf"]["ci_low"][0] == 0 and q["cdf"]["ci_high"][-1] == 1
    for row in q["quantiles"]:
        found = est.quantile(row["q"])
        assert row["estimate"] == pytest.approx(found.value)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(found.confidence_interval(0.95)))
        assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    assert [r["q"] for r in q["quantiles"]] == [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95]
    # the truth: the share of (binned) answers below the edges at 160, 320 and 480 ms
    values = np.array([a["latency"] for a in run["answers"]])
    for i in (16, 32, 48):
        truth = float(np.mean(m.bin_of(values) < i))
        assert abs(q["cdf"]["estimate"][i] - truth) <= Z * q["cdf"]["std_error"][i]


def test_haar_results_thin_a_long_cdf_and_give_intervals(run: dict[str, Any]) -> None:
    q = run["results"]["questions"][1]
    assert q["kind"] == "range" and q["mechanism"] == "HaarHRR" and q["bins"] == 512
    edges = np.linspace(0, 100, 513)
    assert len(q["cdf"]["x"]) == 257 and q["cdf"]["x"] == pytest.approx(edges[::2].tolist())
    median = q["quantiles"][3]
    assert median["q"] == 0.5 and 0 <= median["ci_low"] <= median["estimate"] <= median["ci_high"] <= 100


def test_multiple_results_estimate_each_options_share(run: dict[str, Any]) -> None:
    q = run["results"]["questions"][2]
    m = load_survey(SURVEY).questions[2].randomizer
    assert (q["kind"], q["type"], q["n"], q["ell"], q["max_choices"]) == ("items", "multiple", N, 3, 3)
    est = m.estimate_from(run["aggregates"]["apps"])
    assert q["estimate"] == pytest.approx(est.frequencies.tolist())
    assert q["std_error"] == pytest.approx(est.std_errors.tolist())
    truth = np.array([np.mean([o in a["apps"] for a in run["answers"]]) for o in APPS["options"]])
    shares, se = np.array(q["estimate"]), np.array(q["std_error"])
    assert np.all(np.abs(shares - truth) <= Z * se)
    p, q_star = (float(r[0]) for r in m.mechanism.support_rates())
    raw = q_star + (p - q_star) * truth / m.ell  # what an undebiased share would be near
    assert np.all(np.abs(raw - truth)[[0, 2]] > 1.5 * Z * se[[0, 2]])  # mail and chat


def test_no_reports_give_null_estimates(tmp_path_factory: pytest.TempPathFactory) -> None:
    db = tmp_path_factory.mktemp("ranges-empty") / "db.sqlite"
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        out = httpx.get(f"{server.url}/surveys/usage/results").json()
    latency, _, apps = out["questions"]
    assert latency["n"] == 0 and latency["cdf"] is None and latency["quantiles"] is None
    assert apps["n"] == 0 and apps["estimate"] is None


def test_stored_forms_reload_the_same_mechanisms() -> None:
    survey = load_survey(SURVEY)
    again = load_survey(survey.to_json())
    assert again.canonical() == survey.canonical()
    assert [q.randomizer for q in again.questions] == [q.randomizer for q in survey.questions]


@pytest.mark.parametrize(("question", "change", "field"), [
    (LATENCY, {"bins": 60}, "questions[0].bins"),
    (LATENCY, {"branching": 1}, "questions[0].branching"),
    (LATENCY, {"oracle": "oue"}, "questions[0].oracle"),
    (LATENCY, {"high": -1}, "questions[0].high"),
    (HAAR, {"branching": 2}, "questions[0].branching"),
    (HAAR, {"bins": 24}, "questions[0].bins"),
    (APPS, {"options": ["mail"]}, "questions[0].options"),
    (APPS, {"options": ["mail", "mail", "maps"]}, "questions[0].options"),
    (APPS, {"options": ["mail", True]}, "questions[0].options[1]"),
    (APPS, {"max_choices": 5}, "questions[0].max_choices"),
    (APPS, {"max_choices": 0}, "questions[0].max_choices"),
    (APPS, {"ell": 4}, "questions[0].ell"),
    (APPS, {"oracle": "rappor"}, "questions[0].oracle"),
    (APPS, {"epsilon": "1"}, "questions[0].epsilon"),
    (APPS, {"epsilon": -1}, "questions[0].epsilon"),
    (APPS, {"categories": ["a", "b"]}, "questions[0].categories"),
    (APPS, {"randomized": False}, "questions[0].randomized"),
])
def test_bad_definitions_name_the_field(question: dict[str, Any], change: dict[str, Any], field: str) -> None:
    with pytest.raises(SurveyError) as caught:
        load_survey({**SURVEY, "questions": [{**question, **change}]})
    assert caught.value.field == field, str(caught.value)


def test_a_stored_multiple_question_must_match_its_options() -> None:
    stored = load_survey(SURVEY).to_json()
    stored["questions"][2]["options"] = ["mail", "maps", "chat", "films"]
    with pytest.raises(SurveyError) as caught:
        load_survey(stored)
    assert caught.value.field == "questions[2].mechanism"


def test_a_multiple_question_states_the_whole_reports_epsilon(run: dict[str, Any]) -> None:
    """Its oracle runs at the amplified budget; the public form, the results and the survey's budget show
    the report's exact epsilon. A survey stored before (GRR at epsilon, claiming it) still loads, charged
    its true, amplified epsilon."""
    m = load_survey(SURVEY).questions[2].randomizer
    assert m.mechanism.name == "GRR" and m.oracle_epsilon > 2.5 and 2.0 - 1e-8 < m.epsilon <= 2.0
    assert run["public"]["questions"][2]["mechanism"]["epsilon"] == m.epsilon
    assert run["results"]["questions"][2]["epsilon"] == m.epsilon
    stored = load_survey(SURVEY).to_json()
    oracle = dn.GRR(len(APPS["options"]) + 3, epsilon=2.0)
    config = stored["questions"][2]["mechanism"]
    stored["questions"][2]["mechanism"] = {**config, "epsilon": oracle.epsilon,
                                           "params": {**config["params"], "oracle": oracle.to_config()}}
    old = load_survey(stored)
    amplified = float(np.log1p(np.expm1(oracle.epsilon) / 3))
    assert old.questions[2].epsilon == pytest.approx(amplified, abs=1e-9)
    assert old.epsilon_total == pytest.approx(2.0 + amplified)


def test_bad_answers_are_refused_naming_the_answer(run: dict[str, Any]) -> None:
    public = run["public"]
    good = {"latency": 10.0, "age": 30.0, "apps": ["mail"]}
    from deniable.client import privatize_answers

    assert set(privatize_answers(public, good)) == {"latency", "age", "apps"}
    with pytest.raises(ValueError, match="outside the domain"):
        privatize_answers(public, {**good, "latency": 700.0})
    with pytest.raises(ValueError, match="max_items=3"):
        privatize_answers(public, {**good, "apps": ["mail", "maps", "chat", "games"]})
    with pytest.raises(ValueError, match="films"):
        privatize_answers(public, {**good, "apps": ["films"]})


def test_exports_and_the_command_line_read_them(run: dict[str, Any]) -> None:
    from typer.testing import CliRunner

    from deniable.cli import app

    db = run["db"]
    lines = CliRunner().invoke(app, ["estimate", "--db", f"sqlite:///{db}", "--survey", "usage"])
    assert lines.exit_code == 0, lines.output
    text = " ".join(lines.stdout.split())
    assert "latency: answers in [0, 640] ms, 64 bins (HierarchicalHistogram), n = 4,000" in text
    assert "50% quantile" in text and "apps: choose up to 3 of 4" in text
    assert re.search(r"mail: 0\.\d{4} \(0\.\d{4} \.\. 0\.\d{4}\)", text)


def test_parquet_export_decodes_to_the_stored_aggregates(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The export's columns decode through the survey's mechanisms to the server's aggregates, and
    ``deniable estimate FILE --column`` reads them: the quantiles of a range column, each option's share of a
    multiple column."""
    import io

    import pyarrow.parquet as pq

    answers = _answers(np.random.default_rng(30), 100)
    db = tmp_path_factory.mktemp("ranges-export") / "db.sqlite"
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with BackgroundServer([SURVEY], db_url=f"sqlite:///{db}", admin_token=ADMIN) as server:
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("usage", answers)
        table = pq.read_table(io.BytesIO(httpx.get(f"{server.url}/admin/surveys/usage/export?format=parquet",
                                                   headers=auth, timeout=60).content))
        stored = server.storage.aggregates("usage")
    survey = load_survey(SURVEY)
    for q in survey.questions:
        column = table.column(q.id).to_pylist()
        values = [json.loads(v) if isinstance(v, str) else v for v in column]
        assert q.randomizer.aggregate(q.randomizer.reports_from_json(values)) == stored[q.id]
    from typer.testing import CliRunner

    from deniable.cli import app

    path = db.parent / "export.parquet"
    pq.write_table(table, path)
    items = CliRunner().invoke(app, ["estimate", str(path), "--column", "apps", "--json"])
    assert items.exit_code == 0, items.output
    shares = json.loads(items.stdout)
    est = survey.questions[2].randomizer.estimate_from(stored["apps"])
    assert [r["item"] for r in shares["items"]] == APPS["options"] and shares["ell"] == 3
    assert [r["estimate"] for r in shares["items"]] == pytest.approx(est.frequencies.tolist())
    quantiles = CliRunner().invoke(app, ["estimate", str(path), "--column", "latency", "--json"])
    assert quantiles.exit_code == 0, quantiles.output
    median = survey.questions[0].randomizer.estimate_from(stored["latency"]).quantile(0.5).value
    assert json.loads(quantiles.stdout)["quantiles"][2]["value"] == pytest.approx(median)
    table_text = CliRunner().invoke(app, ["estimate", str(path), "--column", "apps"])
    assert table_text.exit_code == 0 and "share holding each item" in table_text.stdout


def test_a_level_without_reports_gives_no_intervals_yet() -> None:
    """One report reaches one level: estimates, but no standard errors or intervals (None in the JSON)."""
    from types import SimpleNamespace

    from deniable.server._question_answers import RangeResult
    from deniable.server._range_results import range_json

    for q in load_survey(SURVEY).questions[:2]:
        m = q.randomizer
        out = range_json(q, m.aggregate(m.privatize_many([10.0], rng=np.random.default_rng(1))),
                         SimpleNamespace(level=0.95))
        RangeResult.model_validate(out)
        assert out["n"] == 1 and all(r["ci_low"] is None and r["std_error"] is None for r in out["quantiles"])
        assert out["cdf"]["estimate"][0] == 0 and None in out["cdf"]["std_error"]
