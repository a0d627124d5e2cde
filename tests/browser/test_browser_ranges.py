"""Range and choose-several questions on the survey page and the results page, in headless Chromium.

The survey page (a number question under ``hierarchical`` with OUE levels, one under ``haar``, and a
``multiple`` question under GRR, each at epsilon = 20) randomizes the typed numbers and the ticked boxes
with deniable.js and posts one report each; at that epsilon each report is the truth's but for a chance
below 2e-7 per visit (6e-7 for the three): OUE sets no bit but the true node's (each other bit with
probability ``1 / (e^20 + 1)``, at most 64 bits), HaarHRR keeps the true sign with probability
``1 - 1 / (e^20 + 1)``, and GRR reports the drawn entry of the padded set (the chosen options' positions or
its padding's dummies) but with probability ``5 / (2 e^20 + 4)`` (its oracle runs at the amplified
``ln(2 (e^20 - 1) + 1)``, so that the whole report is 20-LDP, as the page states).
At two choices the other boxes of a two-choice question are disabled. Then 3,000 simulated devices answer a
second survey at epsilon = 1, and its results page draws the CDF with its band, the quartiles with their
intervals and the table of quantiles, and the options' shares, at 1280 and 390 px, with no script error
and no horizontal scroll on a phone. Screenshots go to the test's directory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from node_env import chromium, sync_playwright_api  # noqa: E402
from range_outputs import output_index  # noqa: E402

from deniable.client import Client  # noqa: E402
from deniable.server._surveys import load_survey  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

ADMIN = "ranges-browser-admin"
OPTIONS = ["mail", "maps", "chat", "games"]


def _survey(sid: str, epsilon: float) -> dict[str, Any]:
    return {"id": sid, "title": "How you use the app", "budget": 3 * epsilon, "rate_limit": "off", "questions": [
        {"id": "latency", "text": "How long did the last page take to load?", "type": "number", "low": 0,
         "high": 2000, "units": "ms", "mechanism": "hierarchical", "epsilon": epsilon, "bins": 64, "branching": 4},
        {"id": "age", "text": "How old are you?", "type": "number", "low": 0, "high": 100, "units": "years",
         "mechanism": "haar", "epsilon": epsilon, "bins": 128},
        {"id": "apps", "text": "Which of these did you use this week?", "type": "multiple", "options": OPTIONS,
         "max_choices": 2, "epsilon": epsilon, "oracle": "grr"},
    ]}


PAGE, RESULTS = _survey("usage", 20.0), _survey("usage-results", 1.0)
VISITS = [(120.0, 34.0, [0, 2]), (1999.0, 71.5, [3]), (0.0, 5.0, [])]  # latency, age, ticked options


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    executable = chromium()
    tmp = tmp_path_factory.mktemp("ranges")
    out: dict[str, Any] = {"errors": [], "dir": tmp, "posted": [], "states": [], "disabled": []}
    rng = np.random.default_rng(29)
    with runner.BackgroundServer([PAGE, RESULTS], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=ADMIN) as server, \
            sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        for k, (latency, age, ticked) in enumerate(VISITS):
            width = 390 if k == 1 else 1280
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.on("request", lambda r: out["posted"].append(r.post_data) if r.method == "POST" else None)
            page.goto(f"{server.url}/s/usage")
            page.wait_for_selector("body[data-state=ready]", timeout=30_000)
            page.fill("#q0-value", str(latency))
            page.fill("#q1-value", str(age))
            for i in ticked:
                page.check(f"#q2-o{i}")
            out["disabled"].append([page.is_disabled(f"#q2-o{i}") for i in range(len(OPTIONS))])
            out.setdefault("apps_meta", []).append(page.inner_text("fieldset[data-question=apps] .meta"))
            if k < 2:
                page.screenshot(path=str(tmp / f"survey-{width}.png"), full_page=True)
                out.setdefault("survey_scroll", []).append(
                    page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
            page.click("#submit")
            page.wait_for_selector("body[data-state=submitted], .status.error", timeout=30_000)
            out["states"].append(page.evaluate("document.body.dataset.state"))
            page.close()
        answers = [{"latency": float(min(rng.gamma(2.0, 150.0), 2000.0)), "age": float(rng.uniform(18, 75)),
                    "apps": [o for o, share in zip(OPTIONS, (0.7, 0.4, 0.5, 0.1), strict=True)
                             if rng.random() < share][:2]} for _ in range(3000)]
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("usage-results", answers, rng=rng)
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.goto(f"{server.url}/s/usage-results/results")
            page.wait_for_selector("body[data-state=loaded]", timeout=30_000)
            page.click("section[data-kind=range] summary >> nth=0")  # the first question's quantiles, shown
            page.screenshot(path=str(tmp / f"results-{width}.png"), full_page=True)
            ranges = "section[data-kind=range]"
            out[width] = {
                "range_sections": page.locator(ranges).count(),
                "bands": page.locator(f"{ranges} svg.chart.cdf polygon.band").count(),
                "dots": page.locator(f"{ranges} svg.chart.cdf circle.dot").count(),
                "headline": page.locator(f"{ranges} .mean-headline").all_inner_texts(),
                "quantile_rows": page.locator(f"{ranges} tbody tr").count(),
                "items_rows": page.locator("section[data-kind=items] svg.chart g.row").count(),
                "scroll": page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
            }
        browser.close()
    return out


def test_the_page_sends_each_answers_report(pages: dict[str, Any]) -> None:
    assert pages["errors"] == [] and pages["states"] == ["submitted"] * len(VISITS)
    assert max(pages["survey_scroll"]) <= 0  # no horizontal scroll, on a phone too
    survey = load_survey(PAGE)
    latency, age, apps = (q.randomizer for q in survey.questions)
    sent = [json.loads(body)["reports"] for body in pages["posted"] if body and "reports" in body]
    assert len(sent) == len(VISITS)
    for (lat, years, ticked), reports in zip(VISITS, sent, strict=True):
        checked = latency.reports_from_json([reports["latency"]], wire_version=2)
        node = int(latency.bin_of([lat])[0]) // 4 ** (latency.height - int(checked["level"][0]))
        bits = np.unpackbits(checked["bits"][0], count=4 ** int(checked["level"][0]))
        assert set(np.flatnonzero(bits).tolist()) <= {node}
        haar = age.reports_from_json([reports["age"]], wire_version=2)
        outputs, law = age.transition_matrix()
        column = output_index(age, haar)[0]
        level = outputs[column][0]
        kept = law[int(age.bin_of([years])[0]), column] * age.height * 2 ** (level - 1)
        assert kept > 0.99  # the true sign's bit (probability 1 - 1/(e^20 + 1)), not its flip
        blanks = range(len(OPTIONS), len(OPTIONS) + max(len(ticked), apps.ell) - len(ticked))  # the padding
        entries = set(ticked) | set(blanks)
        assert reports["apps"] in entries


def test_the_multiple_question_shows_the_whole_reports_epsilon(pages: dict[str, Any]) -> None:
    """GRR runs at ln(2 (e^20 - 1) + 1) = 20.69; the page states the report's exact epsilon, 20."""
    apps = load_survey(PAGE).questions[2].randomizer
    assert apps.oracle_epsilon > 20.6 and apps.epsilon <= 20.0
    assert all("ε = 20" in text and "20.6" not in text for text in pages["apps_meta"]), pages["apps_meta"]


def test_a_two_choice_question_disables_the_other_boxes_at_two(pages: dict[str, Any]) -> None:
    assert pages["disabled"] == [[False, True, False, True], [False] * 4, [False] * 4]


def test_the_results_page_draws_the_cdf_quantiles_and_shares(pages: dict[str, Any]) -> None:
    for width in (1280, 390):
        seen = pages[width]
        assert seen["range_sections"] == 2 and seen["bands"] == 2 and seen["dots"] == 8
        assert all(text.startswith("Median ") for text in seen["headline"])
        assert seen["quantile_rows"] == 14 and seen["items_rows"] == 4
        assert seen["scroll"] <= 0, width
    assert pages["errors"] == []
