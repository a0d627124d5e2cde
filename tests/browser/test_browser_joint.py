"""A joint question (``type: joint``) on the survey page and the results page, in headless Chromium.

The survey page shows one set of choices per part and sends one report for the tuple of answers: at
epsilon = 30 GRR keeps the truth with probability 1 - 11 e^-30 (a report elsewhere: below 1e-11 per
visit), so each posted report is the cell of the chosen answers, row-major (the mapping the Python
``Joint.cell`` uses). 3,000 simulated devices are then posted, and the results page draws each part's
shares and the table of pairs, at 1280 and 390 px, with no script error and no horizontal scroll on a
phone. Screenshots go to the test's directory.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402

import deniable as dn  # noqa: E402
from deniable.client import Client  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

ADMIN = "joint-browser-admin"
PARTS = [{"id": "platform", "text": "Which platform?", "categories": ["android", "ios", "web"]},
         {"id": "crashed", "text": "Did the app crash this week?", "type": "yes-no"},
         {"id": "plan", "text": "Which plan?", "categories": ["free", "pro"]}]
SURVEY: dict[str, Any] = {
    "id": "device", "title": "Your device", "budget": 30, "rate_limit": "off",
    "questions": [{"id": "device", "text": "About your device", "type": "joint", "epsilon": 30,
                   "mechanism": "grr", "questions": PARTS}],
}
# (platform, crashed, plan) chosen on the page: option ids are q0p<part>-o<answer index>
VISITS = [(1, 1, 0), (2, 0, 1), (0, 1, 1)]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    executable = chromium()
    tmp = tmp_path_factory.mktemp("joint")
    out: dict[str, Any] = {"errors": [], "dir": tmp, "posted": [], "states": []}
    rng = np.random.default_rng(6)
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=ADMIN) as server, \
            sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        for k, chosen in enumerate(VISITS):
            page = browser.new_page(viewport={"width": 900, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.on("request", lambda r: out["posted"].append(r.post_data) if r.method == "POST" else None)
            page.goto(f"{server.url}/s/device")
            page.wait_for_selector("body[data-state=ready]", timeout=30_000)
            for part, answer in enumerate(chosen):
                page.check(f"#q0p{part}-o{answer}")
            if k == 0:
                page.screenshot(path=str(tmp / "survey.png"), full_page=True)
            page.click("#submit")
            page.wait_for_selector("body[data-state=submitted], .status.error", timeout=30_000)
            out["states"].append(page.evaluate("document.body.dataset.state"))
            page.close()
        answers = [{"device": [str(rng.choice(["android", "ios", "web"])), bool(rng.random() < 0.2),
                               str(rng.choice(["free", "pro"]))]} for _ in range(3000)]
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("device", answers)
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.goto(f"{server.url}/s/device/results")
            page.wait_for_selector("body[data-state=loaded]", timeout=30_000)
            page.screenshot(path=str(tmp / f"results-{width}.png"), full_page=True)
            section = "section[data-kind=joint]"
            out[width] = {
                "headings": page.locator(f"{section} h3").all_inner_texts(),
                "charts": page.locator(f"{section} svg.chart").count(),
                "pairs": page.locator(f"{section} tbody tr").count(),
                "scroll": page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
            }
        browser.close()
    return out


def test_the_page_sends_the_cell_of_the_chosen_answers(pages: dict[str, Any]) -> None:
    assert pages["errors"] == [] and pages["states"] == ["submitted"] * len(VISITS)
    joint = dn.Joint(["android", "ios", "web"], [False, True], ["free", "pro"], epsilon=30, mechanism="grr")
    sent = [json.loads(body)["reports"]["device"] for body in pages["posted"] if body and "reports" in body]
    assert sent == [int(np.ravel_multi_index(chosen, joint.shape)) for chosen in VISITS]


def test_the_results_page_draws_each_part_and_the_pairs(pages: dict[str, Any]) -> None:
    for width in (1280, 390):
        seen = pages[width]
        assert seen["headings"] == [p["text"] for p in PARTS] + ["How the answers go together"]
        assert seen["charts"] == 3 and seen["pairs"] == 3
        assert seen["scroll"] <= 0, width
