"""The survey page answers a number question (1BitMean) and the results page shows its mean, in headless Chromium.

A survey with a number question (``type: number``, 1BitMean on 0..600
minutes, memoized by the page's kept client) and a yes-no question is
answered on its page twice from one browser profile (first visit, reload):
the page shows the range with its units and what the device keeps, sends a
1BitMean bit that the server accepts, and sends the same bit again (1BitMean
without output perturbation has no fresh part). A value outside the range is
not sent. 400 simulated devices are then posted in a batch, and the results
page shows the mean with its interval, as the results endpoint gives it.
Screenshots of both pages are written to the test's directory.

Uses the Python ``playwright`` package with the system Chromium; skips when
either is missing, unless DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402
from page_text import estimate_text  # noqa: E402

import deniable as dn  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

ADMIN = "number-browser-admin"
SURVEY = {
    "id": "screen-time", "title": "Screen time", "budget": 2, "rate_limit": "off",
    "questions": [
        {"id": "minutes", "text": "How many minutes did you spend on your phone yesterday?", "type": "number",
         "low": 0, "high": 600, "units": "minutes", "mechanism": "one-bit-mean", "epsilon": 1, "points": 4},
        {"id": "night", "text": "Did you use it after midnight?", "type": "yes-no", "mechanism": "grr",
         "epsilon": 1},
    ],
}


def _answer(page: Any, url: str, minutes: str) -> dict[str, Any]:
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    page.goto(url)
    page.wait_for_selector("body[data-state=ready]", timeout=30_000)
    page.fill("#q0-value", minutes)
    page.check("#q1-o1")
    page.click("#submit")
    page.wait_for_selector("body[data-state=submitted], #status.error, .status.error", timeout=30_000)
    return {"posted": [json.loads(p) for p in posted], "status": page.inner_text("#status"),
            "memo": page.locator("p.memo").all_inner_texts(), "hint": page.inner_text("fieldset .hint")}


@pytest.fixture(scope="module")
def visits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    executable = chromium()
    tmp = tmp_path_factory.mktemp("number")
    out: dict[str, Any] = {"errors": [], "dir": tmp}
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=ADMIN) as server, \
            sync_api.sync_playwright() as p:
        url = f"{server.url}/s/{SURVEY['id']}"
        context = p.chromium.launch_persistent_context(str(tmp / "profile"), executable_path=executable,
                                                       headless=True, args=["--no-sandbox"],
                                                       viewport={"width": 900, "height": 900})
        page = context.pages[0] if context.pages else context.new_page()
        page.on("pageerror", lambda e: out["errors"].append(str(e)))
        out["outside"] = _answer(page, url, "700")
        out["first"] = _answer(page, url, "95")
        page.screenshot(path=str(tmp / "survey.png"), full_page=True)
        out["reloaded"] = _answer(page, url, "95")
        # 400 simulated devices through the admin batch endpoint, then the results page
        survey = httpx.get(f"{url.replace('/s/', '/surveys/')}").json()
        m = dn.from_config(survey["questions"][0]["mechanism"])
        values = np.minimum(np.random.default_rng(3).exponential(90.0, 400), 600.0)
        bits = m.reports_to_json(m.privatize_many(values, rng=np.random.default_rng(4)))
        bodies = [{"idempotency_key": f"sim-device-{i:04d}", "reports": {"minutes": b, "night": bool(i % 3)}}
                  for i, b in enumerate(bits)]
        r = httpx.post(f"{server.url}/surveys/screen-time/responses/batch", json={"responses": bodies},
                       headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
        assert r.status_code == 201, r.text
        page.goto(f"{url}/results")
        page.wait_for_selector("body[data-state=loaded]", timeout=30_000)
        out["section"] = page.inner_text("section[data-kind=mean]")
        out["desc"] = page.text_content("section[data-kind=mean] svg desc")
        out["legend"] = page.inner_text("#legend")
        page.click("section[data-kind=mean] summary")
        out["table"] = page.inner_text("section[data-kind=mean] table")
        page.screenshot(path=str(tmp / "results.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(300)
        page.screenshot(path=str(tmp / "results-phone.png"), full_page=True)
        out["results"] = httpx.get(f"{server.url}/surveys/screen-time/results").json()
        context.close()
    return out


def test_the_page_answers_a_number_question_with_its_kept_client(visits: dict[str, Any]) -> None:
    assert visits["errors"] == []
    outside, first, reloaded = visits["outside"], visits["first"], visits["reloaded"]
    assert outside["posted"] == []  # 700 is outside 0..600: nothing sent
    assert "(0 to 600 minutes)" in first["hint"]
    assert len(first["memo"]) == 1 and "random rounding of your number to 4 points" in first["memo"][0]
    assert first["status"].startswith("Thank you") and reloaded["status"].startswith("Thank you")
    sent = [v["posted"][-1]["reports"]["minutes"] for v in (first, reloaded)]
    assert sent[0] in (0.0, 1.0) and sent[0] == sent[1]  # the kept bit of the same answer, again


def test_the_results_page_shows_the_mean_with_its_interval(visits: dict[str, Any]) -> None:
    q = visits["results"]["questions"][0]
    assert q["kind"] == "mean" and q["n"] == 402 and q["ci_low"] < q["estimate"] < q["ci_high"]
    section, desc = visits["section"], visits["desc"]
    assert "402 respondents" in section and "answers from 0 to 600 minutes" in section
    est, interval = estimate_text(q["estimate"], q["ci_low"], q["ci_high"], q["std_error"], share=False)
    assert f"Mean {est} minutes (95% confidence interval {interval} minutes)" in section
    assert f"{est} minutes (95% interval {interval}), on the range 0 to 600" in desc
    se = estimate_text(q["std_error"], 0, 0, q["std_error"], share=False)[0]
    assert f"Standard error\t{se}" in visits["table"] and f"interval\t{interval}" in visits["table"]
    print(f"shown: mean {est} ({interval}), s.e. {se}")
    legend = " ".join(visits["legend"].split())
    assert "Number questions: a dot for the estimated mean of the answers" in legend
    assert "Bars: estimated share per answer" in legend  # the yes-no question
    assert "printed with the same decimals, set by the standard error" in legend
    for name in ("survey", "results", "results-phone"):
        assert (visits["dir"] / f"{name}.png").stat().st_size > 10_000
