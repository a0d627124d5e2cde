"""A key-value question on the survey page and the results page, in headless Chromium.

The survey page (a ``keyvalue`` question under PCKV-GRR at epsilon = 20, four keys, ``max_pairs = ell = 2``,
values 0 to 10 s) maps the typed values onto [-1, 1] and randomizes the pairs with deniable.js, posting
only the report. A visit gives ``mail`` the lowest value (sign -1 for sure) and ``video`` the highest (+1);
at that epsilon the report is one of those two pairs, ``2 j + (s == +1)`` in {0, 7}, but with probability
``(d + ell - 1) / (e^eps1 + d + ell - 1)`` below 1e-8 (``e^eps1 = (2 (e^20 - 1) + 2) / 2``, the paper's split;
two visits: 2e-8). Three filled boxes (above ``max_pairs``) and a value outside the range are refused on
the page, nothing sent. Then 3,000 simulated devices answer a second survey at epsilon = 2, and its results
page shows the table of each key's share and mean with their intervals as the results endpoint gives
them, and the shares' bar chart, at 1280 and 390 px, with no script error and no horizontal scroll on a
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
from page_text import estimate_text  # noqa: E402

from deniable.client import Client  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

ADMIN = "keyvalue-browser-admin"
KEYS = ["mail", "maps", "news", "video"]


def _survey(sid: str, epsilon: float, mechanism: str) -> dict[str, Any]:
    return {"id": sid, "title": "How fast were the sites?", "budget": epsilon, "rate_limit": "off", "questions": [
        {"id": "load", "text": "For each site you visited today, how long did its first page take to load?",
         "type": "keyvalue", "keys": KEYS, "low": 0, "high": 10, "units": "s", "max_pairs": 2, "epsilon": epsilon,
         "mechanism": mechanism},
    ]}


PAGE, RESULTS = _survey("sites", 20.0, "grr"), _survey("sites-results", 2.0, "auto")
VISITS = [({"mail": "0", "video": "10"}, "submitted"), ({"mail": "1", "maps": "2", "news": "3"}, "ready"),
          ({"maps": "12"}, "ready"), ({"video": "10", "mail": "0"}, "submitted")]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    executable = chromium()
    tmp = tmp_path_factory.mktemp("keyvalue")
    out: dict[str, Any] = {"errors": [], "dir": tmp, "posted": [], "states": [], "status": []}
    rng = np.random.default_rng(29)
    with runner.BackgroundServer([PAGE, RESULTS], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=ADMIN) as server, \
            sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        for k, (filled, _) in enumerate(VISITS):
            width = 390 if k == 3 else 1280
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.on("request", lambda r: out["posted"].append(r.post_data) if r.method == "POST" else None)
            page.goto(f"{server.url}/s/sites")
            page.wait_for_selector("body[data-state=ready]", timeout=30_000)
            for key, value in filled.items():
                page.fill(f"#q0-k{KEYS.index(key)}", value)
            if k in (0, 3):
                out.setdefault("meta", page.inner_text("fieldset.keyvalue .meta"))
                page.screenshot(path=str(tmp / f"survey-{width}.png"), full_page=True)
                out.setdefault("survey_scroll", []).append(
                    page.evaluate("document.documentElement.scrollWidth - window.innerWidth"))
            page.click("#submit")
            page.wait_for_selector("body[data-state=submitted], .status.error", timeout=30_000)
            out["states"].append(page.evaluate("document.body.dataset.state"))
            out["status"].append(page.inner_text("#status"))
            page.close()
        answers = [{"load": {k: float(np.clip(rng.normal(mean, 1.0), 0, 10))
                             for k, share, mean in zip(KEYS, (0.7, 0.4, 0.3, 0.1), (2.0, 6.5, 4.0, 8.0), strict=True)
                             if rng.random() < share}} for _ in range(3000)]
        answers = [{"load": dict(list(a["load"].items())[:2])} for a in answers]  # at most max_pairs = 2
        with Client(server.url, token=ADMIN) as client:
            client.respond_many("sites-results", answers, rng=rng)
            out["results"] = client.results("sites-results")
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.goto(f"{server.url}/s/sites-results/results")
            page.wait_for_selector("body[data-state=loaded]", timeout=30_000)
            section = "section[data-kind=keyvalue]"
            page.click(f"{section} summary")
            page.screenshot(path=str(tmp / f"results-{width}.png"), full_page=True)
            out[width] = {
                "rows": page.locator(f"{section} table.keyvalue tbody tr").all_inner_texts(),
                "head": page.locator(f"{section} table.keyvalue thead").text_content(),
                "bars": page.locator(f"{section} svg.chart g.row").count(),
                "numbers": page.locator(f"{section} details tbody tr").count(),
                "legend": page.inner_text("#legend"),
                "scroll": page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
            }
        browser.close()
    return out


def test_the_page_sends_only_the_randomized_pairs(pages: dict[str, Any]) -> None:
    assert pages["errors"] == []
    assert pages["states"] == [state for _, state in VISITS]
    assert max(pages["survey_scroll"]) <= 0  # no horizontal scroll, on a phone too
    sent = [json.loads(body)["reports"] for body in pages["posted"] if body and "reports" in body]
    assert len(sent) == 2  # the refused visits sent nothing
    for reports in sent:
        assert set(reports) == {"load"} and reports["load"] in (0, 7)  # <mail, -1> or <video, +1>
    assert "at most 2" in pages["status"][1] and "Nothing was sent" in pages["status"][1]
    assert "“maps” must be a number from 0 to 10 s" in pages["status"][2]
    assert "randomized with PCKV (k-ary randomized response), ε = 20.00" in pages["meta"]


def test_the_results_page_shows_each_keys_share_and_mean(pages: dict[str, Any]) -> None:
    q = pages["results"]["questions"][0]
    assert q["kind"] == "keyvalue" and q["n"] == 3000
    for width in (1280, 390):
        seen = pages[width]
        assert len(seen["rows"]) == 4 and seen["bars"] == 4 and seen["numbers"] == 4
        for i, row in enumerate(seen["rows"]):
            share, _ = estimate_text(q["estimate"][i], q["ci_low"][i], q["ci_high"][i], q["std_error"][i])
            mean, _ = estimate_text(q["mean"][i], q["mean_ci_low"][i], q["mean_ci_high"][i],
                                    q["mean_std_error"][i], share=False)
            assert KEYS[i] in row and share in row and mean in row, row
        assert "Mean value (s)" in seen["head"]
        assert "Key-value questions: the estimated share of respondents holding each key" in seen["legend"]
        assert seen["scroll"] <= 0, width
    for name in ("survey-1280", "survey-390", "results-1280", "results-390"):
        assert (pages["dir"] / f"{name}.png").stat().st_size > 10_000
