"""The survey page speaks wire version 2, in a real headless Chromium.

A survey with a wide configuration integer (GRR at epsilon 40: its
``truth_numerator`` exceeds 2**53) and wide report fields (OLH's ``seed``,
RAPPOR's 64 ``bits``) is answered on its page. The page fetches the survey
with ``?wire_version=2`` and posts ``"wire_version": 2`` with the wide fields
as decimal strings; the server stores the response, its reports decode in
Python, and the page's kept state (RAPPOR memoizes) has Python's
fingerprint of the survey.

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
from deniable.client import survey_fingerprint  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

CATS = [f"c{i}" for i in range(10)]
RAPPOR = dn.RAPPOR(["a", "b", "c"], num_bits=64, num_cohorts=4, epsilon=2)
SURVEY = {
    "id": "wide", "title": "Wide integers", "budget": 100,
    "questions": [
        {"id": "grr", "text": "Which?", "type": "categorical", "categories": ["a", "b", "c"],
         "mechanism": "grr", "epsilon": 40},
        {"id": "olh", "text": "Which?", "type": "categorical", "categories": CATS, "mechanism": "olh", "epsilon": 1},
        {"id": "rappor", "text": "Which?", "type": "categorical", "categories": ["a", "b", "c"],
         "mechanism": RAPPOR.to_config()},
    ],
}
CHOICES = ["#q0-o1", "#q1-o3", "#q2-o2"]


@pytest.fixture(scope="module")
def visit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    try:
        from playwright import sync_api
    except ImportError:
        missing("the Python playwright package is not installed")
    import httpx

    tmp = tmp_path_factory.mktemp("survey-wire")
    out: dict[str, Any] = {"errors": [], "gets": [], "posts": []}
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'r.db'}") as server, \
            sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.on("pageerror", lambda e: out["errors"].append(str(e)))
        page.on("request", lambda r: out["posts"].append(r.post_data) if r.method == "POST"
                else out["gets"].append(r.url) if "/surveys/" in r.url else None)
        page.goto(f"{server.url}/s/{SURVEY['id']}")
        page.wait_for_selector("body[data-state=ready]", timeout=30_000)
        for selector in CHOICES:
            page.check(selector)
        page.click("#submit")
        page.wait_for_selector("body[data-state=submitted]", timeout=30_000)
        out["kept"] = page.evaluate("""async () => {
          const { surveyFingerprint } = await import('/static/client_state.js');
          const d = await import('/static/deniable.js');
          const text = await fetch('/surveys/wide?wire_version=2').then((r) => r.text());
          return surveyFingerprint(d.surveyFromWire(d.parseJSON(text)));
        }""")
        browser.close()
        out["v1"] = httpx.get(f"{server.url}/surveys/{SURVEY['id']}").json()
        out["stored"] = server.storage.count_responses(SURVEY["id"])
    return out


def test_the_page_fetches_and_posts_wire_version_2(visit: dict[str, Any]) -> None:
    assert visit["errors"] == []
    assert any(url.endswith("/surveys/wide?wire_version=2") for url in visit["gets"]), visit["gets"]
    assert len(visit["posts"]) == 1 and visit["stored"] == 1
    body = json.loads(visit["posts"][0])
    assert body["wire_version"] == 2 and set(body) == {"idempotency_key", "wire_version", "reports"}
    reports = body["reports"]
    assert reports["grr"] in ["a", "b", "c"]
    assert type(reports["olh"]["seed"]) is str and type(reports["rappor"]["bits"]) is str
    olh = dn.from_config(visit["v1"]["questions"][1]["mechanism"])
    assert len(olh.reports_from_json([reports["olh"]], wire_version=2)) == 1
    assert len(RAPPOR.reports_from_json([reports["rappor"]], wire_version=2)) == 1


def test_the_pages_kept_state_has_pythons_fingerprint(visit: dict[str, Any]) -> None:
    assert visit["kept"] == survey_fingerprint(visit["v1"])
