"""The rounds results page of a survey with ``rounds: {anytime: true}`` draws each question's confidence
sequence over the rounds (the estimate from every round so far and its band), in headless Chromium at
1280 and 390 px; a memoizing question (L-GRR) gets no trend card. Screenshots go to the test's directory.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402

from deniable.client import new_key, privatize_answers  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
ADMIN = "anytime-browser-admin"
SURVEY: dict[str, Any] = {
    "id": "daily", "title": "Daily check", "budget": 2, "rate_limit": "off",
    "rounds": {"every": "1d", "lifetime_epsilon": 20, "start": "2026-12-01T00:00:00Z", "anytime": True,
               "planned_n": 2000},
    "questions": [
        {"id": "sick", "text": "Were you sick today?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1},
        {"id": "where", "text": "Where were you?", "type": "categorical", "categories": ["home", "work"],
         "mechanism": "l-grr", "epsilon_perm": 2.0, "epsilon_1": 1.0},
    ],
}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    executable = chromium()
    tmp = tmp_path_factory.mktemp("anytime")
    clock = Clock(START + 60)
    rng = np.random.default_rng(4)
    devices = [secrets.token_urlsafe(16) for _ in range(200)]
    out: dict[str, Any] = {"errors": [], "dir": tmp}
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=ADMIN,
                                 clock=clock) as server, sync_api.sync_playwright() as p:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60) as http:
            survey = http.get("/surveys/daily").json()
            for _ in range(6):
                batch = [{"idempotency_key": new_key(), "device": key, "reports": privatize_answers(
                    survey, {"sick": bool(rng.random() < 0.2), "where": "home"})} for key in devices]
                assert http.post("/surveys/daily/responses/batch", json={"responses": batch}).status_code == 201
                clock.now += DAY
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.goto(f"{server.url}/s/daily/results")
            page.wait_for_selector("body[data-state=loaded]", timeout=30_000)
            page.screenshot(path=str(tmp / f"anytime-{width}.png"), full_page=True)
            out[width] = {
                "cards": page.locator("section.round-trend").evaluate_all("s => s.map(e => e.dataset.question)"),
                "meta": page.locator("section.round-trend[data-question=sick] p.meta").inner_text(),
                "bands": page.locator("section.round-trend[data-question=sick] polygon.band").count(),
                "scroll": page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
            }
        browser.close()
    return out


def test_the_sequence_is_drawn_for_independent_reports_only(shots: dict[str, Any]) -> None:
    assert shots["errors"] == []
    for width in (1280, 390):
        seen = shots[width]
        assert seen["cards"] == ["sick"]
        assert "confidence sequence" in seen["meta"] and "every round at once" in seen["meta"]
        assert seen["bands"] == 2
        assert seen["scroll"] <= 0, width
