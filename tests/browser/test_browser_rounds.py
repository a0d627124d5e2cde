"""The results page of a survey in rounds, in a real headless Chromium.

1,000 devices answer six daily rounds (about 80% of them each round; the
server's clock is moved a day at a time), posted by a trusted relay. The
results page must draw, under its Content-Security-Policy and without a
console error, the devices' budget card and per question a trend chart (one
line and one confidence band per answer, a dot per round) and a table of
every round, matching the results JSON. Screenshots are written for
inspection.

Skips when node, playwright-core or Chromium are missing, unless
DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import secrets
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, playwright_core, run_node  # noqa: E402
from page_text import estimate_text  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

httpx = pytest.importorskip("httpx")
runner = pytest.importorskip("deniable.server._runner")

DRIVER = Path(__file__).with_name("drive.mjs")
START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
DEVICES, ROUNDS = 1000, 6
PLACES = ["home", "office", "travelling", "elsewhere"]
SURVEY = {
    "id": "daily-health", "title": "Daily health check", "budget": 1.5, "rate_limit": "off",
    "rounds": {"every": "1d", "lifetime_epsilon": 6.5, "start": "2026-12-01T00:00:00Z"},
    "questions": [
        {"id": "sick", "text": "Did you feel sick today?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.5},
        {"id": "where", "text": "Where did you work today?", "type": "categorical", "categories": PLACES,
         "mechanism": "l-grr", "epsilon_perm": 1.0, "epsilon_1": 0.5},
        {"id": "late", "text": "Did you stay up past midnight?", "type": "yes-no",
         "design": {"model": "Warner", "p": 0.6}},
    ],
}
TOKEN = "rounds-browser-admin-token"


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from deniable.client import new_key, privatize_answers

    playwright_core()
    tmp = tmp_path_factory.mktemp("browser-rounds")
    rng = np.random.default_rng(20261201)
    keys = [secrets.token_urlsafe(16) for _ in range(DEVICES)]
    places = rng.choice(len(PLACES), DEVICES, p=[0.4, 0.35, 0.15, 0.1])  # a device's place stays put
    clock = Clock(START + 3600)
    posted, seen = [], set()
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'rounds.db'}", admin_token=TOKEN,
                                 clock=clock) as server, \
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http:
        survey = http.get("/surveys/daily-health").json()
        for day in range(ROUNDS):
            sick_rate = 0.1 + 0.05 * day  # an outbreak growing day by day
            present = np.flatnonzero(rng.random(DEVICES) < 0.8)
            answers = [{"sick": bool(rng.random() < sick_rate), "where": PLACES[places[i]],
                        "late": bool(rng.random() < 0.3)} for i in present]
            bodies = [{"idempotency_key": new_key(), "device": keys[i], "reports": privatize_answers(survey, a)}
                      for i, a in zip(present, answers, strict=True)]
            r = http.post("/surveys/daily-health/responses/batch", json={"responses": bodies})
            assert r.status_code == 201, r.text
            posted.append(len(bodies))
            seen.update(present.tolist())
            clock.now += 86_400
        clock.now -= 86_400  # still in the last round
        plan = {"chromium": chromium(), "base_url": server.url, "visits": [],
                "results_path": "/s/daily-health/results", "screenshot_dir": str(tmp)}
        out = run_node(DRIVER, plan, timeout=240)
        results = http.get("/surveys/daily-health/results").json()
    return {"out": out, "results": results, "posted": posted, "seen": len(seen)}


def test_the_results_page_draws_each_rounds_trend_and_the_budgets(run: dict[str, Any]) -> None:
    out, results, posted = run["out"], run["results"], run["posted"]
    assert out["problems"] == []  # no console error, no CSP violation
    rounds = results["rounds"]
    assert [r["n_responses"] for r in rounds["rounds"]] == posted
    assert rounds["devices"]["devices"] == run["seen"]
    shown = {r["id"]: r for r in out["rounds"]}
    assert list(shown) == ["sick", "where", "late"]
    for qid, series in {"sick": 2, "where": len(PLACES), "late": 1}.items():
        assert shown[qid]["lines"] == series and shown[qid]["bands"] == series, shown[qid]
        assert shown[qid]["dots"] == series * ROUNDS
        assert len(shown[qid]["rows"]) == ROUNDS
        assert shown[qid]["rows"][0].startswith(f"02026-12-01 00:00{posted[0]}")  # round 0, its start, its n
    sick = results["rounds"]["rounds"]
    for k, r in enumerate(sick):  # each round's "Yes": estimate and interval with the decimals of its s.e.
        q = r["questions"][0]
        est, interval = estimate_text(q["estimate"][1], q["ci_low"][1], q["ci_high"][1], q["std_error"][1])
        assert f"round {k}: Yes {est} (95% interval {interval})" in shown["sick"]["svg_desc"]
        assert f"{est} ({interval}; s.e. " in shown["sick"]["rows"][k]
    # the chart's axis stays within 0..100% and says it cuts the bands there; the table does not cut
    assert "the chart cuts it at 0% and 100%, the table does not" in shown["sick"]["meta"]
    legend = " ".join(out["results_legend"].split())
    assert legend.startswith("Bars: estimated share per answer") and "Number questions" not in legend
    assert "printed with the same decimals, set by the standard error" in legend
    budgets = " ".join(out["budgets"].split())
    devices = rounds["devices"]["devices"]
    assert f"{devices:,} devices seen" in budgets and "ε = 6.50 over all rounds" in budgets
    full = next(s for s in rounds["devices"]["at_least"] if s["share"] == 0.75)
    assert f"at least 75%{full['devices']}{full['devices_fresh']}" in budgets  # the table's row, cells joined
    assert "rounds of 1 day from 2026-12-01 00:00 UTC (now in round 5)" in out["rounds_intro"]
    assert Path(out["screenshots"]["results"]).stat().st_size > 20_000
    assert Path(out["screenshots"]["results_phone"]).stat().st_size > 20_000
    print(f"screenshots: {out['screenshots']}")
