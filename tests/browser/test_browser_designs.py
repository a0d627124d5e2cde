"""End to end in a real headless Chromium: survey designs and plain questions.

The survey (``examples/study-habits.yaml``): a forced-response design
question (RRreg's FR, p = 1/6, 1/6), an unrelated-question design of unknown
prevalence (two groups, the unrelated question asked on the page and never
sent), a plain integer question (age) and a plain categorical question (year
of study). ``drive.mjs`` answers it 40 times with known answers. Checks:

* every submission succeeds; each POST carries only the randomized design
  reports (``true``/``false``; ``{"group", "answer"}`` for the two-group
  design, with nothing else) and the plain answers exactly as given;
* the page says which questions are not randomized and which design's answer
  can reveal the truth;
* both groups are drawn (probability 2^-39 that 40 uniform draws agree:
  below alpha = 1e-6);
* the results endpoint is the survey package's prevalence on the reports the
  browser sent, and the results page shows it (estimate, standard error,
  interval, epsilon), by year of study with the likelihood-ratio test;
  screenshots are written for inspection.

Skips when node, playwright-core or Chromium are missing, unless
DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, playwright_core, run_node  # noqa: E402
from page_text import assert_odds_sentence  # noqa: E402

from deniable.server._surveys import load_survey  # noqa: E402
from deniable.survey import prevalence_from_counts  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

httpx = pytest.importorskip("httpx")
yaml = pytest.importorskip("yaml")
runner = pytest.importorskip("deniable.server._runner")

DRIVER = Path(__file__).with_name("drive.mjs")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "study-habits.yaml"
N = 40
YEARS = ["first", "second", "third", "fourth or later"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    playwright_core()
    tmp = tmp_path_factory.mktemp("browser-designs")
    rng = np.random.default_rng(20261123)
    answers = [
        [int(rng.integers(0, 2)), {"option": int(rng.integers(0, 2)), "unrelated": int(rng.integers(0, 2))},
         {"value": int(rng.integers(16, 100))}, int(rng.integers(0, len(YEARS)))]
        for _ in range(N)
    ]
    visits: list[dict[str, Any]] = [{"path": "/s/study-habits", "answers": answers[0], "screenshot": "survey"}] + [
        {"path": "/s/study-habits?kiosk=1", "answers": a, "fast": True} for a in answers[1:]
    ]
    # N respondents answer from one browser (one address): no per-address rate limit here
    survey = {**yaml.safe_load(EXAMPLE.read_text()), "rate_limit": "off"}
    with runner.BackgroundServer([survey], db_url=f"sqlite:///{tmp / 'responses.db'}") as server:
        plan = {"chromium": chromium(), "base_url": server.url, "visits": visits,
                "results_path": "/s/study-habits/results", "screenshot_dir": str(tmp)}
        out = run_node(DRIVER, plan, timeout=240)
        results = httpx.get(f"{server.url}/surveys/study-habits/results").json()
    posts = [json.loads(r["body"]) for r in out["requests"]
             if r["method"] == "POST" and r["url"].endswith("/responses") and r.get("body")]
    return {"out": out, "answers": answers, "posts": posts, "results": results}


def test_every_submission_succeeds_and_the_page_says_what_is_randomized(run: dict[str, Any]) -> None:
    out = run["out"]
    assert out["problems"] == []
    # every console message was captured: none reports a Content-Security-Policy violation
    assert not [m for m in out["console"] if "Content Security Policy" in m["text"] or "CSP violation" in m["text"]]
    assert [v["state"] for v in out["visits"]] == ["submitted"] * N
    first = out["visits"][0]
    assert "ε = 1.61" in first["privacy"] and "not randomized" in first["privacy"]
    survey_epsilon = load_survey(EXAMPLE).question("study_drug").design.epsilon  # the one bounded question
    assert_odds_sentence(first["privacy"], survey_epsilon)  # FR's ln 5: at most 5 times, 83.3% sure
    assert "reveal the truth" in first["privacy"]
    drug, copied, age, year = first["metas"]
    assert drug.startswith("Randomized on this device with the FR design (p = 1/6, 1/6)") and "ε = 1.61" in drug
    assert "UQTunknown" in copied and "an answer can reveal the truth" in copied
    assert age.startswith("Not randomized") and year.startswith("Not randomized")


def test_posts_carry_randomized_design_reports_and_plain_answers_as_given(run: dict[str, Any]) -> None:
    posts = run["posts"]
    assert len(posts) == N
    groups = set()
    for body, given in zip(posts, run["answers"], strict=True):
        assert set(body) == {"idempotency_key", "wire_version", "reports"} and body["wire_version"] == 2
        reports = body["reports"]
        assert set(reports) == {"study_drug", "copied", "age", "year"}
        assert type(reports["study_drug"]) is bool
        copied = reports["copied"]
        assert set(copied) == {"group", "answer"} and copied["group"] in (1, 2) and type(copied["answer"]) is bool
        groups.add(copied["group"])
        assert reports["age"] == given[2]["value"]
        assert reports["year"] == YEARS[given[3]]
    assert groups == {1, 2}


def test_results_are_the_prevalence_of_what_the_browser_sent(run: dict[str, Any]) -> None:
    survey = load_survey(EXAMPLE)
    results = {q["id"]: q for q in run["results"]["questions"]}
    for qid in ("study_drug", "copied"):
        d = survey.question(qid).design
        counts = np.zeros((d.groups, 2), dtype=np.int64)
        for body in run["posts"]:
            r = body["reports"][qid]
            g, a = (1, r) if d.groups == 1 else (r["group"], r["answer"])
            counts[g - 1, int(a)] += 1
        if counts.sum(axis=1).min() < 2:
            assert results[qid]["parameters"][0]["estimate"] is None
            continue
        fit = prevalence_from_counts(counts, d)
        pi = results[qid]["parameters"][0]
        assert pi["estimate"] == pytest.approx(fit.params["pi"], abs=1e-12)
        assert pi["std_error"] == pytest.approx(fit.bse["pi"], abs=1e-12)
    assert results["age"]["mean"] == pytest.approx(np.mean([a[2]["value"] for a in run["answers"]]))


def test_the_results_page_shows_the_prevalence(run: dict[str, Any]) -> None:
    out = run["out"]
    shown = {r["id"]: r for r in out["results"]}
    drug = shown["study_drug"]
    assert drug["kind"] == "design"
    assert drug["meta"] == f"{N} respondents, ε = 1.61 · FR design, p = 1/6, 1/6"
    assert drug["rows"][0].startswith("Prevalence π")
    assert drug["bars"] >= 1 and drug["svg_role"] == "img" and "95% interval" in drug["svg_desc"]
    assert drug["test"] is None or drug["test"].startswith(("Likelihood-ratio test", "Test of equal"))
    assert "ε infinite: an answer reveals the truth" in shown["copied"]["meta"]
    assert [r[:2] for r in shown["copied"]["rows"][:2]] == ["Pr", "π_"]
    assert shown["age"]["kind"] == "plain" and "not randomized" in shown["age"]["meta"]
    assert len(shown["year"]["rows"]) == len(YEARS)
    for name in ("survey", "results"):
        assert Path(out["screenshots"][name]).stat().st_size > 10_000
    print(f"screenshots: {out['screenshots']}")
