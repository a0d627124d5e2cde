"""The results page by slice (``/s/{id}/results?by=arm``), in headless Chromium, at 1280 and 390 px.

A survey with a plain ``arm`` question, a frequency question and a number
question gets 600 simulated devices (none in the arm ``unused``); the page
draws one chart per slice of the frequency question with its respondent
count, marks the empty slice, and tables the number question's means per arm,
with no script error and no horizontal scroll on a phone. Screenshots go to
the test's directory.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402

from deniable import GRR  # noqa: E402
from deniable._slices import small_slice_threshold  # noqa: E402
from deniable.client import Client  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

ADMIN = "sliced-browser-admin"
SURVEY: dict[str, Any] = {
    "id": "ab", "title": "A/B test", "budget": 6, "rate_limit": "off",
    "questions": [
        {"id": "arm", "text": "Arm", "type": "categorical", "randomized": False,
         "categories": ["control", "treatment", "unused"]},
        {"id": "app", "text": "Which screen did you open first?", "type": "categorical",
         "categories": ["home", "search", "settings"], "mechanism": "grr", "epsilon": 2},
        {"id": "hours", "text": "Hours of use?", "type": "number", "mechanism": "one-bit-mean", "low": 0,
         "high": 10, "epsilon": 1},
    ],
}


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    executable = chromium()
    tmp = tmp_path_factory.mktemp("sliced")
    rng = np.random.default_rng(3)
    answers = [{"arm": arm, "app": str(rng.choice(["home", "search", "settings"],
                                                  p=[0.6, 0.3, 0.1] if arm == "treatment" else [0.4, 0.4, 0.2])),
                "hours": float(rng.uniform(0, 10))} for arm in ["control", "treatment"] * 300]
    out: dict[str, Any] = {"errors": [], "dir": tmp}
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=ADMIN) as server, \
            sync_api.sync_playwright() as p:
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("ab", answers)
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.goto(f"{server.url}/s/ab/results?by=arm")
            page.wait_for_selector("body[data-state=loaded]", timeout=30_000)
            page.screenshot(path=str(tmp / f"sliced-{width}.png"), full_page=True)
            out[f"png-{width}"] = tmp / f"sliced-{width}.png"
            out[width] = {
                "headings": page.locator(".sliced h3.slice").all_inner_texts(),
                "charts": page.locator(".sliced section[data-kind=sliced-shares] svg.chart").count(),
                "means": page.locator(".sliced section[data-kind=sliced-mean] tbody tr").all_inner_texts(),
                "scroll": page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
            }
        browser.close()
    return out


def test_slices_are_drawn_with_their_counts(shots: dict[str, Any]) -> None:
    assert shots["errors"] == []
    for width in (1280, 390):
        seen = shots[width]
        assert [" ".join(h.split()) for h in seen["headings"]] == [
            "Arm control · 300 respondents", "Arm treatment · 300 respondents",
            f"Arm unused · 0 respondents too few reports (under {small_slice_threshold(GRR(3, epsilon=2))})"]
        assert seen["charts"] == 2
        assert len(seen["means"]) == 3 and "300" in seen["means"][0]
        assert seen["scroll"] <= 0, width
