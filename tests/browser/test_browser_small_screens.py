"""The pages on a phone (390 px) and a desktop (1280 px), in a real headless Chromium.

Measured, not looked at: every chart's text renders at 10 px or more (a chart
drawn at a fixed 640 px once shrank a design question's labels to about 5 px
at 390 px); no table of numbers is wider than its card (the interval column
was cut off at 390 px); the survey page's privacy card leaves most of a
phone's first screen to the questions (it once filled all of it), and opens
its explanation where there is room. Past the rate limit the survey page
speaks to the respondent, while the API's JSON keeps the details. Screenshots
go to the test's temporary folder.

Uses the Python ``playwright`` package with the system Chromium; skips when
either is missing, unless DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")
httpx = pytest.importorskip("httpx")

EDITORS = ["Vim", "Emacs", "VS Code", "Something else"]
SURVEY = {
    "id": "phone", "title": "Habits at work", "budget": 8, "rate_limit": "off",
    "questions": [
        {"id": "late", "text": "Did you arrive late this week?", "type": "yes-no", "mechanism": "grr", "epsilon": 1.5},
        {"id": "editor", "text": "Which editor do you write code in?", "type": "categorical",
         "categories": EDITORS, "mechanism": "sue", "epsilon": 2.5},
        {"id": "used", "text": "Have you used a drug this month?", "type": "yes-no",
         "design": {"model": "FR", "p": ["1/6", "1/6"]}},
    ],
}
LIMITED = {"id": "limited", "title": "Limited", "budget": 2, "rate_limit": {"responses": 1, "seconds": 600},
           "questions": [{"id": "q", "text": "Yes?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1}]}
HEIGHTS = {390: 844, 1280: 900}
TOKEN = "small-screens-admin-token"

MEASURE = """() => {
  const texts = [...document.querySelectorAll('svg.chart text')].map((t) => t.getBoundingClientRect().height);
  const fonts = [...document.querySelectorAll('svg.chart text')].map((t) => {
    const svg = t.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return parseFloat(getComputedStyle(t).fontSize) * scale;
  });
  const tables = [...document.querySelectorAll('table.numbers')].map((t) => ({
    over: t.getBoundingClientRect().right - t.closest('.card').getBoundingClientRect().right,
    scroll: t.parentElement.scrollWidth - t.parentElement.clientWidth,
  }));
  const card = document.querySelector('.card.privacy');
  const details = document.getElementById('privacy-details');
  return { texts: texts.length, fonts, tables, card: card ? card.getBoundingClientRect().height : null,
           open: details ? details.open : null, page: document.documentElement.scrollWidth };
}"""


def _measure(browser: Any, base: str, tmp: Path, out: dict[str, Any]) -> None:
    """Both pages at each width (screenshots in ``tmp``), then the rate-limited survey answered twice."""
    for width, height in HEIGHTS.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.on("pageerror", lambda e: out["errors"].append(str(e)))
        for name, path in (("survey", f"/s/{SURVEY['id']}"), ("results", f"/s/{SURVEY['id']}/results")):
            page.goto(base + path)
            page.wait_for_selector("svg.chart" if name == "results" else "#survey-form:not([hidden])")
            if name == "results":  # the tables of numbers, shown
                page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
            page.screenshot(path=str(tmp / f"{name}-{width}.png"), full_page=True)
            out[(name, width)] = page.evaluate(MEASURE)
        page.close()
    page = browser.new_page(viewport={"width": 390, "height": 844})
    for _ in range(2):  # the address's second answer is past the limit
        page.goto(f"{base}/s/{LIMITED['id']}")
        page.wait_for_selector("#survey-form:not([hidden])")
        page.check("#q0-o0")
        page.click("#submit")
        page.wait_for_function("() => document.getElementById('status').textContent.trim().length > 20"
                               " && !document.getElementById('status').textContent.includes('Sending')")
    out["limited"] = " ".join(page.inner_text("#status").split())
    out["retry"] = page.is_visible("#retry")
    page.screenshot(path=str(tmp / "limited-390.png"), full_page=True)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from deniable.client import Client

    playwright = sync_playwright_api()
    tmp = tmp_path_factory.mktemp("small-screens")
    out: dict[str, Any] = {"errors": []}
    server = runner.BackgroundServer([SURVEY, LIMITED], db_url=f"sqlite:///{tmp / 'r.db'}", admin_token=TOKEN)
    server.start()
    try:
        with Client(server.url, token=TOKEN) as relay:  # a relay's batch: results to draw
            relay.respond_many(SURVEY["id"], [{"late": i % 3 == 0, "editor": EDITORS[i % 4], "used": i % 4 == 0}
                                              for i in range(300)])
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
            _measure(browser, server.url, tmp, out)
            browser.close()
        out["api"] = httpx.post(f"{server.url}/surveys/{LIMITED['id']}/responses", json={"reports": {"q": 1}}).json()
    finally:
        server.stop()
    return out


@pytest.mark.parametrize("width", sorted(HEIGHTS))
def test_chart_text_keeps_its_size(pages: dict[str, Any], width: int) -> None:
    seen = pages[("results", width)]
    assert seen["texts"] > 20 and min(seen["fonts"]) >= 10, (width, sorted(seen["fonts"])[:5])


@pytest.mark.parametrize("width", sorted(HEIGHTS))
def test_tables_fit_their_cards(pages: dict[str, Any], width: int) -> None:
    seen = pages[("results", width)]
    assert len(seen["tables"]) >= 3
    for table in seen["tables"]:
        assert table["over"] <= 0.5 and table["scroll"] <= 0, (width, table)
    assert seen["page"] <= width


def test_the_privacy_card_leaves_room_for_the_questions_on_a_phone(pages: dict[str, Any]) -> None:
    phone, desktop = pages[("survey", 390)], pages[("survey", 1280)]
    assert phone["card"] < HEIGHTS[390] / 3 and not phone["open"], phone
    assert desktop["open"] and desktop["card"] < HEIGHTS[1280], desktop  # the explanation, open where it fits
    assert phone["page"] <= 390 and not pages["errors"], pages["errors"]


def test_the_rate_limit_speaks_to_the_respondent(pages: dict[str, Any]) -> None:
    """The page: what happened and when to try again, no field names or limits; the API keeps them."""
    text = pages["limited"]
    assert text.startswith("Your answers were not recorded. Many answers to this survey have just come from your "
                           "network"), text
    assert text.endswith("please try again in about 10 minutes with the button below."), text
    assert "rate_limit" not in text and "600" not in text and pages["retry"]
    detail = pages["api"]["detail"]
    assert detail["field"] == "rate_limit" and "at most 1 per 600 seconds from one address" in detail["message"]
