"""The results page states what fake responses could do and shows the checks, in a real headless Chromium.

A GRR question over 8 places in daily rounds, posted by a relay: 2,000
honest devices in round 0, then 2,000 honest and 400 fake devices whose
reports all say "h" (the change test flags it: 13 standard errors against
its 3.8, a miss below 1e-18; tests/server/test_manipulation_results.py).
At 1,280 and 390 px wide the page must show the flood defences, each
question's bound per fake response and its check, the round flagged, and
the posts the defences refused (one batch without a token in round 0, two
malformed responses in round 1), in all and per round, with no page error.
Screenshots go to the test's temporary folder.

Uses the Python ``playwright`` package with the system Chromium; skips when
either is missing, unless DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import deniable as dn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")
httpx = pytest.importorskip("httpx")

DAY = 86_400
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
PLACES = list("abcdefgh")
SURVEY: dict[str, Any] = {
    "id": "pushed", "title": "Where were you?", "budget": 1, "rate_limit": {"responses": 50, "seconds": 60},
    "max_responses": 100_000,
    "rounds": {"every": "1d", "lifetime_epsilon": 10, "start": "2026-12-01T00:00:00Z"},
    "questions": [{"id": "where", "text": "Where were you today?", "type": "categorical", "categories": PLACES,
                   "mechanism": "grr", "epsilon": 1.0}],
}
TOKEN = "manipulation-browser-admin-token"
WIDTHS = {1280: 900, 390: 844}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def shown(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from deniable.client import new_key, privatize_answers

    playwright = sync_playwright_api()
    tmp = tmp_path_factory.mktemp("manipulation")
    rng = np.random.default_rng(20261127)
    clock = Clock(START + 3600)
    out: dict[str, Any] = {"errors": [], "tmp": tmp}
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=TOKEN,
                                 clock=clock) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http:
        survey = http.get("/surveys/pushed").json()

        def post(reports: list[dict[str, Any]]) -> None:
            bodies = [{"idempotency_key": new_key(), "device": secrets.token_urlsafe(16), "reports": r}
                      for r in reports]
            for start in range(0, len(bodies), 1000):
                r = http.post("/surveys/pushed/responses/batch", json={"responses": bodies[start:start + 1000]})
                assert r.status_code == 201, r.text

        def honest() -> list[dict[str, Any]]:
            return [privatize_answers(survey, {"where": str(p)}, rng=rng) for p in rng.choice(PLACES[:6], 2000)]

        post(honest())
        assert httpx.post(f"{server.url}/surveys/pushed/responses/batch", json={"responses": []}).status_code == 401
        clock.now += DAY
        post(honest() + [{"where": "h"}] * 400)
        for _ in range(2):
            assert http.post("/surveys/pushed/responses", json={"reports": {}}).status_code == 422
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
            for width, height in WIDTHS.items():
                page = browser.new_page(viewport={"width": width, "height": height})
                page.on("pageerror", lambda e: out["errors"].append(str(e)))
                page.goto(f"{server.url}/s/pushed/results")
                page.wait_for_selector("p.manipulation")
                page.screenshot(path=str(tmp / f"results-{width}.png"), full_page=True)
                out[width] = {
                    "defences": " ".join(page.inner_text("#defences").split()),
                    "notes": [" ".join(t.split()) for t in page.locator("p.manipulation").all_inner_texts()],
                    "flagged": page.locator("p.manipulation.flagged").count(),
                    "refusals": " ".join(page.inner_text("p.refusals").split()),
                    "page": page.evaluate("() => document.documentElement.scrollWidth"),
                }
                page.close()
            browser.close()
    return out


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_page_shows_the_defences_the_bound_and_the_flagged_round(shown: dict[str, Any], width: int) -> None:
    seen = shown[width]
    assert shown["errors"] == []
    assert seen["defences"] == ("Flood defences: open to everyone · at most 50 responses per 60 s per address · "
                                "a cap of 100,000 responses (4,400 stored). Refused so far: 1 without a valid "
                                "token or invite, or over a device’s budget · 2 malformed. The checks for fake "
                                "responses below run at a 0.1% false-alarm rate.")
    assert seen["refusals"] == ("Posts refused by the flood defences, per round: round 0: 1 without a valid token "
                                "or invite, or over a device’s budget; round 1: 2 malformed.")
    round_note = next(t for t in seen["notes"] if t.startswith("Change check"))
    assert "round 1: h" in round_note and seen["flagged"] >= 1
    pooled = next(t for t in seen["notes"] if t.startswith("Fake responses"))
    p, q = (float(x[0]) for x in dn.GRR(PLACES, epsilon=1.0).support_rates())
    assert pooled.startswith(f"Fake responses: each could move a share by at most {100 / (4400 * (p - q)):.2f}% "
                             f"(a chosen report raises a share by up to {(1 - q) / (p - q):.3g}/n, an honest "
                             "answer by 1/n).")
    assert seen["page"] <= width  # nothing wider than the screen
    assert (shown["tmp"] / f"results-{width}.png").stat().st_size > 20_000
