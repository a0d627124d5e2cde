"""The survey page answers memoizing questions with kept clients, in a real headless Chromium.

A survey with L-GRR, L-OSUE and dBitFlip questions (and a GRR one, which does
not memoize) is answered on its page three times from one browser profile:
first visit, after a reload, after a browser restart. The page says what each
memoizing question keeps; dBitFlip's report (no fresh part) is the same every
time; the survey's kept state (``surveyState``, under the survey id in IndexedDB)
gives the same permanent responses each time; the server accepted every
response and its reports decode in Python. In kiosk mode (one device, many
respondents) nothing is kept: the dBitFlip reports differ.

Uses the Python ``playwright`` package with the system Chromium; skips when
either is missing, unless DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, missing  # noqa: E402

import deniable as dn  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

BUCKETS = [f"b{i}" for i in range(40)]
SURVEY = {
    "id": "habits", "title": "Habits", "budget": 6,
    "questions": [
        {"id": "app", "text": "Which app?", "type": "categorical", "categories": ["Mail", "Chat", "Maps"],
         "mechanism": "l-grr", "epsilon_perm": 3, "epsilon_1": 1},
        {"id": "mood", "text": "Mood?", "type": "categorical", "categories": ["good", "so-so", "bad"],
         "mechanism": "l-osue", "epsilon_perm": 3, "epsilon_1": 1},
        {"id": "bucket", "text": "Bucket?", "type": "categorical", "categories": BUCKETS,
         "mechanism": "dbitflip", "epsilon": 1, "d": 4},
        {"id": "fresh", "text": "Fresh?", "type": "yes-no", "mechanism": "grr", "epsilon": 1},
    ],
}
CHOICES = ["#q0-o1", "#q1-o2", "#q2-o7", "#q3-o1"]
KEPT_IDS = ["app", "mood", "bucket"]


def _answer(page: Any, url: str) -> dict[str, Any]:
    """Answer the survey once on the page; the body it posted and what it showed."""
    posted: list[str] = []
    page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    page.goto(url)
    page.wait_for_selector("body[data-state=ready]", timeout=30_000)
    memo_texts = page.locator("p.memo").all_inner_texts()
    for selector in CHOICES:
        page.check(selector)
    page.click("#submit")
    page.wait_for_selector("body[data-state=submitted]", timeout=30_000)
    kept = page.evaluate("""async (text) => {
      const d = await import('/static/deniable.js');
      const { surveyState } = await import('/static/client_state.js');
      const survey = d.parseJSON(text);
      const state = await surveyState(survey);
      const out = {};
      for (const q of survey.questions.filter((q) => ['l-grr', 'l-osue', 'dbitflip'].includes(q.mechanism.mechanism))) {
        const client = await state.client(q);
        out[q.id] = client.mechanism === 'dbitflip' ? String(client.permanent(q.categories[7]))
          : String(client.permanent(q.categories[q.id === 'app' ? 1 : 2]));
      }
      return out;
    }""", page.evaluate("fetch('/surveys/habits').then((r) => r.text())"))
    return {"body": json.loads(posted[-1]), "memo": memo_texts, "kept": kept}


@pytest.fixture(scope="module")
def visits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    try:
        from playwright import sync_api
    except ImportError:
        missing("the Python playwright package is not installed")
    executable = chromium()
    tmp = tmp_path_factory.mktemp("survey-memo")
    out: dict[str, Any] = {"errors": []}
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}") as server, \
            sync_api.sync_playwright() as p:
        url = f"{server.url}/s/{SURVEY['id']}"

        def launch(profile: Path) -> Any:
            context = p.chromium.launch_persistent_context(str(profile), executable_path=executable,
                                                           headless=True, args=["--no-sandbox"])
            page = context.pages[0] if context.pages else context.new_page()
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            return context, page

        context, page = launch(tmp / "profile")
        out["first"] = _answer(page, url)
        out["reloaded"] = _answer(page, url)
        context.close()
        context, page = launch(tmp / "profile")
        out["restarted"] = _answer(page, url)
        out["kiosk"] = [_answer(page, url + "?kiosk=1") for _ in range(3)]
        context.close()
        out["stored"] = server.storage.aggregates(SURVEY["id"])
    return out


def test_the_page_keeps_memoizing_questions_across_reloads_and_restarts(visits: dict[str, Any]) -> None:
    assert visits["errors"] == []
    first = visits["first"]
    assert len(first["memo"]) == 3 and all("This device keeps" in t for t in first["memo"])
    for later in ("reloaded", "restarted"):
        assert visits[later]["kept"] == first["kept"], later
        assert visits[later]["body"]["reports"]["bucket"] == first["body"]["reports"]["bucket"], later
    assert set(first["kept"]) == set(KEPT_IDS)
    assert visits["stored"]["bucket"].n == 6


def test_kiosk_mode_keeps_nothing_and_the_reports_decode(visits: dict[str, Any]) -> None:
    kiosk = visits["kiosk"]
    assert all(v["memo"] == [] for v in kiosk)
    # fresh dBitFlip buckets each time: 4 of 40 buckets equal by chance w.p. 1/91390
    assert len({json.dumps(v["body"]["reports"]["bucket"]) for v in kiosk}) > 1
    m = dn.DBitFlip(BUCKETS, d=4, epsilon=1.0)
    bodies = [visits[k]["body"] for k in ("first", "reloaded", "restarted")] + [v["body"] for v in kiosk]
    assert len(m.reports_from_json([b["reports"]["bucket"] for b in bodies])) == 6


def test_a_rounds_survey_page_sends_its_kept_device_key_and_explains_refusals(tmp_path: Path) -> None:
    """Small and marked: needs a server that takes ``rounds`` (skips otherwise). Rounds of five
    seconds and a lifetime budget of one round: answered, refused in the same round (409), refused
    in the next (403); the same device key every time."""
    from deniable.server._surveys import SurveyError, load_survey

    survey = {**SURVEY, "id": "every-second", "budget": 1, "rounds": {"every": 5, "lifetime_epsilon": 1},
              "questions": [{"id": "ok", "text": "OK?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1}]}
    try:
        load_survey(survey)
    except SurveyError as exc:
        pytest.skip(f"this server does not know rounds yet ({exc})")
    try:
        from playwright import sync_api
    except ImportError:
        missing("the Python playwright package is not installed")
    import httpx

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from test_client_memo import wait_for_the_next_round

    seen, keys = [], []
    with runner.BackgroundServer([survey], db_url=f"sqlite:///{tmp_path / 'r.db'}") as server, \
            sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=chromium(),
                                                       headless=True, args=["--no-sandbox"])
        page = context.pages[0] if context.pages else context.new_page()
        page.on("request", lambda r: keys.append(json.loads(r.post_data)["device"]) if r.method == "POST" else None)
        definition = httpx.get(f"{server.url}/surveys/every-second").json()
        for next_round in (True, False, True):  # the first two in one round, the third in the next
            if next_round:
                wait_for_the_next_round(definition)
            page.goto(f"{server.url}/s/every-second")
            page.wait_for_selector("body[data-state=ready]", timeout=30_000)
            notice = page.inner_text("#privacy-rounds")
            page.check("#q0-o1")
            page.click("#submit")
            page.wait_for_selector("body[data-state=submitted], body[data-state=refused]", timeout=30_000)
            seen.append(page.inner_text("#status"))
        context.close()
    assert "This survey collects every 5 seconds" in notice
    assert seen[0].startswith("Thank you")
    assert "You already answered this round; come back after" in seen[1]
    assert "This device has used its privacy budget" in seen[2]
    assert len(keys) == 3 and len(set(keys)) == 1 and len(keys[0]) == 22
