"""The survey page answers a list experiment and the results page shows its estimate, in headless Chromium.

A survey with a list experiment (``type: list-experiment``, 3 control items
and a sensitive one) and a yes-no question is answered on its page 8 times
(each visit a fresh page, so a fresh draw of the list): each visit shows 3
items (the control list) or 4 (the treatment list, the sensitive item
among them), and the POST carries for the list question only ``{"treat",
"count"}``, with ``treat`` 1 exactly when the sensitive item was shown and
the typed count; a count above the list's length is not sent. 600
simulated respondents are then posted in a batch, and the results page
shows the estimated share with its interval, as the results endpoint gives
it, and the floor and ceiling answers. Screenshots of both pages at 1280
and 390 px are written to the test's directory.

Statistical assertion: the 8 visits show both lists with probability
1 - 2^-7 (a fair bit per visit); the test then needs both, so it is written
to retry up to 4 rounds of 8 visits: a correct page fails with probability
2^-28 < 1e-8 (and one that never shows one of the lists always fails).

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

from deniable.survey import ListExperiment  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

ADMIN = "list-browser-admin"
ITEMS = ["the tax on gasoline going up", "athletes' million-dollar contracts", "large corporations polluting"]
SENSITIVE = "a black family moving next door"
SURVEY = {
    "id": "south", "title": "What makes you angry?", "budget": 1, "rate_limit": "off",
    "questions": [
        {"id": "anger", "text": "How many of these things make you angry?", "type": "list-experiment",
         "items": ITEMS, "sensitive": SENSITIVE, "allow_infinite_epsilon": True},
        {"id": "voted", "text": "Did you vote last year?", "type": "yes-no", "mechanism": "grr", "epsilon": 1},
    ],
}


def _visit(page: Any, url: str, count: str) -> dict[str, Any]:
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    page.goto(url)
    page.wait_for_selector("body[data-state=ready]", timeout=30_000)
    shown = page.locator("fieldset ul.list-items li").all_inner_texts()
    page.fill("#q0-count", count)
    page.check("#q1-o1")
    page.click("#submit")
    page.wait_for_selector("body[data-state=submitted], #status.error, .status.error", timeout=30_000)
    return {"shown": shown, "posted": [json.loads(p) for p in posted], "status": page.inner_text("#status"),
            "meta": page.inner_text("fieldset.list-experiment .meta"),
            "privacy": page.inner_text("#privacy-epsilon")}


@pytest.fixture(scope="module")
def visits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    executable = chromium()
    tmp = tmp_path_factory.mktemp("list")
    out: dict[str, Any] = {"errors": [], "dir": tmp, "visits": []}
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=ADMIN) as server, \
            sync_api.sync_playwright() as p:
        url = f"{server.url}/s/south"
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: out["errors"].append(str(e)))
        out["too_many"] = _visit(page, url, "5")  # more than either list has: nothing sent
        for _ in range(4):  # rounds of 8 visits until both lists were shown (see the module docstring)
            out["visits"] += [_visit(page, url, "1") for _ in range(8)]
            if len({len(v["shown"]) for v in out["visits"]}) == 2:
                break
        page.goto(url)
        page.wait_for_selector("body[data-state=ready]", timeout=30_000)
        page.screenshot(path=str(tmp / "survey.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=str(tmp / "survey-phone.png"), full_page=True)
        rng = np.random.default_rng(12)
        answers = [{"control": int(c), "sensitive": bool(z)}
                   for c, z in zip(rng.binomial(3, 0.4, 600), rng.random(600) < 0.25, strict=True)]
        reports = ListExperiment(3).reports(answers, rng=rng)
        bodies = [{"idempotency_key": f"sim-respondent-{i:04d}", "reports": {"anger": r, "voted": bool(i % 2)}}
                  for i, r in enumerate(reports)]
        r = httpx.post(f"{server.url}/surveys/south/responses/batch", json={"responses": bodies},
                       headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
        assert r.status_code == 201, r.text
        page.set_viewport_size({"width": 1280, "height": 900})
        page.goto(f"{url}/results")
        page.wait_for_selector("body[data-state=loaded]", timeout=30_000)
        out["section"] = page.inner_text("section[data-kind=list-experiment]")
        page.click("section[data-kind=list-experiment] summary")
        out["table"] = page.inner_text("section[data-kind=list-experiment] table")
        page.screenshot(path=str(tmp / "results.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(300)
        page.screenshot(path=str(tmp / "results-phone.png"), full_page=True)
        out["overflow"] = page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        out["results"] = httpx.get(f"{server.url}/surveys/south/results").json()
        browser.close()
    return out


def test_each_visit_shows_one_list_and_sends_only_its_count(visits: dict[str, Any]) -> None:
    assert visits["errors"] == []
    assert visits["too_many"]["posted"] == []
    shown_lists = set()
    for v in visits["visits"]:
        assert v["status"].startswith("Thank you"), v["status"]
        report = v["posted"][-1]["reports"]["anger"]
        treated = len(v["shown"]) == 4
        shown_lists.add(treated)
        assert report == {"treat": int(treated), "count": 1}
        assert (SENSITIVE in v["shown"]) == treated and set(ITEMS) <= set(v["shown"])
    assert shown_lists == {False, True}
    first = visits["visits"][0]
    assert "say how many of the items apply to you, not which" in first["meta"]
    assert "How many of these things make you angry?" in first["privacy"] and "reveal the truth" in first["privacy"]


def test_the_results_page_shows_the_share_with_its_interval(visits: dict[str, Any]) -> None:
    q = visits["results"]["questions"][0]
    n = 600 + len(visits["visits"])
    assert q["kind"] == "list-experiment" and q["n"] == n and q["ci_low"] < q["estimate"] < q["ci_high"]
    est, interval = estimate_text(q["estimate"], q["ci_low"], q["ci_high"], q["std_error"])
    section = visits["section"]
    assert f"{n} respondents" in section and "ε = ∞" in section
    assert f"{est} hold “{SENSITIVE}” (95% confidence interval {interval})" in section
    assert f"{q['floor']} and {q['ceiling']}" in visits["table"]
    assert not visits["overflow"]
    for name in ("survey", "survey-phone", "results", "results-phone"):
        assert (visits["dir"] / f"{name}.png").stat().st_size > 10_000
