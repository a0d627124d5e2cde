"""End to end in a real headless Chromium: a free-text question (heavy-hitter discovery).

The survey (``examples/editors.yaml``): a free-text question
(``max_length: 12``, epsilon 6) and a yes-no question. ``drive.mjs`` answers
it 6 times, typing a script payload, a word, accented text and an answer
longer than ``max_length``; a trusted relay adds
3,000 reports made by the Python library with the same configuration, so that
there is something to discover. Checks:

* every submission succeeds; each POST carries for the free-text question
  only ``{"level", "sketch"}`` (a count-mean sketch report), never the typed
  text; the reports pass ``HeavyHitters.reports_from_json``;
* the page shows the text box with the byte limit and says what is sent;
* the results endpoint lists the discovered values (the payload, cut at 12
  bytes and marked so, and "vim") with counts and intervals, and the results
  page shows the payload as text in its table (were it inserted as HTML, the
  row's text would not contain ``<script>``), with no console error or
  Content-Security-Policy violation; screenshots are written for inspection.

A second survey asks the same question with ``alphabet`` (lowercase letters):
the page names the allowed characters; an answer with a capital letter is
flagged as it is typed and refused on submit with a message naming the
character (nothing is sent, the answer box keeps the focus); corrected, it
is sent; the results page lists "vim" (found from the relayed reports and
the browsers') and names the alphabet. Screenshots of the refusal at desktop
and phone width are written too.

Skips when node, playwright-core or Chromium are missing, unless
DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, playwright_core, run_node  # noqa: E402

from deniable.heavy import HeavyHitters  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

httpx = pytest.importorskip("httpx")
yaml = pytest.importorskip("yaml")
runner = pytest.importorskip("deniable.server._runner")

DRIVER = Path(__file__).with_name("drive.mjs")
PAYLOAD = "<script>alert(1)</script>"
RELAY = "relay-token-for-free-text"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "editors.yaml"
# many respondents answer from one browser (one address): no per-address rate limit here
SURVEY = {**yaml.safe_load(EXAMPLE.read_text()), "rate_limit": "off"}
TYPED = [PAYLOAD, "vim", "  café  ", "a much longer answer than twelve bytes", "vim", "日本語エディタ"]
LETTERS = "abcdefghijklmnopqrstuvwxyz"
LETTERED = {
    **SURVEY, "id": "lettered", "title": "Which text editor? (letters)",
    "questions": [{**SURVEY["questions"][0], "max_length": 8, "alphabet": LETTERS}, SURVEY["questions"][1]],
}
LETTERED_TYPED = ["vim", "emacs", "  vim ", "nano"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    playwright_core()
    tmp = tmp_path_factory.mktemp("browser-free-text")
    visits: list[dict[str, Any]] = [
        {"path": "/s/editors", "answers": [{"value": TYPED[0]}, 1], "screenshot": "survey"}
    ] + [{"path": "/s/editors?kiosk=1", "answers": [{"value": t}, i % 2], "fast": True}
         for i, t in enumerate(TYPED[1:])]
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'responses.db'}",
                                 relay_token=RELAY) as server:
        public = httpx.get(f"{server.url}/surveys/editors").json()
        h = HeavyHitters.from_config(public["questions"][0]["discovery"])
        rng = np.random.default_rng(20261124)
        values = [PAYLOAD] * 1500 + ["vim"] * 1000 + [f"u{i:03d}" for i in range(500)]
        reports = h.reports_to_json(h.privatize_many(values, rng=rng))
        bodies = [{"idempotency_key": f"relay-{i:06d}", "reports": {"editor": r, "daily": bool(i % 2)}}
                  for i, r in enumerate(reports)]
        relayed = httpx.post(f"{server.url}/surveys/editors/responses/batch", json={"responses": bodies},
                             headers={"Authorization": f"Bearer {RELAY}"}, timeout=120)
        assert relayed.status_code == 201, relayed.text
        plan = {"chromium": chromium(), "base_url": server.url, "visits": visits,
                "results_path": "/s/editors/results", "screenshot_dir": str(tmp)}
        out = run_node(DRIVER, plan, timeout=240)
        results = httpx.get(f"{server.url}/surveys/editors/results").json()
    posts = [json.loads(r["body"]) for r in out["requests"]
             if r["method"] == "POST" and r["url"].endswith("/responses") and r.get("body")]
    return {"out": out, "posts": posts, "results": results, "hitters": h, "relayed": len(values)}


def test_every_submission_succeeds_and_sends_no_typed_text(run: dict[str, Any]) -> None:
    out = run["out"]
    assert out["problems"] == []
    assert [v["state"] for v in out["visits"]] == ["submitted"] * len(TYPED)
    assert len(run["posts"]) == len(TYPED)
    sent = [p["reports"]["editor"] for p in run["posts"]]
    for report in sent:
        assert set(report) == {"level", "sketch"} and set(report["sketch"]) == {"row", "bits"}
    run["hitters"].reports_from_json(sent)  # the exact wire form
    everything = json.dumps(run["posts"], ensure_ascii=False)
    for typed in TYPED:
        for piece in (typed.strip(), "script", "café", "日本"):
            assert piece not in everything


def test_the_page_shows_the_box_the_limit_and_what_is_sent(run: dict[str, Any]) -> None:
    first = run["out"]["visits"][0]
    meta = first["metas"][0]
    assert "Free text, randomized on this device by prefix extending" in meta and "ε = 6.00" in meta
    assert "ε = 7.00" in first["privacy"]
    assert Path(run["out"]["screenshots"]["survey"]).stat().st_size > 10_000


def test_results_list_the_discovered_values_and_the_page_shows_them_as_text(run: dict[str, Any]) -> None:
    q = run["results"]["questions"][0]
    assert q["kind"] == "discovery" and q["n"] == run["relayed"] + len(TYPED)
    found = {v["value"]: v for v in q["values"]}
    cut = PAYLOAD.encode()[:12].decode()
    assert set(found) >= {cut, "vim"}, list(found)
    assert found[cut]["truncated"] is True and found["vim"]["truncated"] is False
    for v in q["values"]:
        assert v["ci_low"] <= v["count"] <= v["ci_high"]
    section = next(r for r in run["out"]["results"] if r["id"] == "editor")
    assert section["kind"] == "discovery"
    assert section["head"][:2] == ["Answer", "Respondents (estimate)"]
    rows = section["rows"]
    assert any(row.startswith(f"{cut}… (begins with)") for row in rows), rows
    assert any(row.startswith("vim") for row in rows), rows
    assert Path(run["out"]["screenshots"]["results"]).stat().st_size > 10_000


def test_the_legend_describes_the_free_text_and_the_yes_no_question(run: dict[str, Any]) -> None:
    legend = " ".join(run["out"]["results_legend"].split())
    assert "Bars: estimated share per answer" in legend  # the yes-no question
    assert "Free-text questions: the answers respondents typed that were found, most frequent first" in legend
    assert "Number questions" not in legend
    assert Path(run["out"]["screenshots"]["results_phone"]).stat().st_size > 10_000


@pytest.fixture(scope="module")
def lettered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    playwright_core()
    tmp = tmp_path_factory.mktemp("browser-free-text-alphabet")
    visits: list[dict[str, Any]] = [
        {"path": "/s/lettered", "answers": [{"value": LETTERED_TYPED[0]}, 1], "screenshot": "lettered-survey",
         "refused_first": {"value": "Vim", "screenshot": "lettered-refused"}}
    ] + [{"path": "/s/lettered?kiosk=1", "answers": [{"value": t}, i % 2], "fast": True}
         for i, t in enumerate(LETTERED_TYPED[1:])]
    with runner.BackgroundServer([LETTERED], db_url=f"sqlite:///{tmp / 'responses.db'}",
                                 relay_token=RELAY) as server:
        public = httpx.get(f"{server.url}/surveys/lettered").json()
        h = HeavyHitters.from_config(public["questions"][0]["discovery"])
        rng = np.random.default_rng(20261125)
        values = ["vim"] * 1500 + ["emacs"] * 1000 + ["".join(rng.choice(list(LETTERS), 6)) for _ in range(500)]
        reports = h.reports_to_json(h.privatize_many(values, rng=rng))
        bodies = [{"idempotency_key": f"relay-{i:06d}", "reports": {"editor": r, "daily": bool(i % 2)}}
                  for i, r in enumerate(reports)]
        relayed = httpx.post(f"{server.url}/surveys/lettered/responses/batch", json={"responses": bodies},
                             headers={"Authorization": f"Bearer {RELAY}"}, timeout=120)
        assert relayed.status_code == 201, relayed.text
        plan = {"chromium": chromium(), "base_url": server.url, "visits": visits,
                "results_path": "/s/lettered/results", "screenshot_dir": str(tmp)}
        out = run_node(DRIVER, plan, timeout=240)
        results = httpx.get(f"{server.url}/surveys/lettered/results").json()
    posts = [json.loads(r["body"]) for r in out["requests"]
             if r["method"] == "POST" and r["url"].endswith("/responses") and r.get("body")]
    return {"out": out, "posts": posts, "results": results, "hitters": h, "public": public, "relayed": len(values)}


def test_an_alphabet_question_names_its_characters_and_refuses_another(lettered: dict[str, Any]) -> None:
    out = lettered["out"]
    assert out["problems"] == []
    assert lettered["public"]["questions"][0]["discovery"]["alphabet"] == LETTERS
    first = out["visits"][0]
    # typed "Vim": flagged at once, refused on submit naming the character, nothing sent
    assert "has the character “V”, not in the alphabet (type “v”)" in first["refused_hint"]
    assert "only these characters are allowed: a–z" in first["refused_hint"]
    status = first["refused_status"]
    assert status.startswith("Your answer to “Which text editor do you use most?” has the character “V”"), status
    assert status.endswith("Nothing was sent."), status
    assert (first["refused_flagged"], first["refused_focus"], first["refused_invalid"]) == (1, "q0-value", "true")
    assert first["refused_state"] == "ready" and first["refused_requests"] == 0
    for name in ("lettered-refused", "lettered-refused_phone"):
        assert Path(out["screenshots"][name]).stat().st_size > 10_000
    # corrected, every answer is sent (as a report only) and the hint names the allowed characters
    assert [v["state"] for v in out["visits"]] == ["submitted"] * len(LETTERED_TYPED)
    assert "3 of 8 characters; only these are allowed: a–z." in first["hints"][0]
    sent = [p["reports"]["editor"] for p in lettered["posts"]]
    assert len(sent) == len(LETTERED_TYPED)
    lettered["hitters"].reports_from_json(sent)
    everything = json.dumps(lettered["posts"])
    assert not any(word in everything for word in ("vim", "emacs", "nano", "Vim"))


def test_the_results_of_an_alphabet_question_list_the_values(lettered: dict[str, Any]) -> None:
    q = lettered["results"]["questions"][0]
    assert q["alphabet"] == LETTERS and q["n"] == lettered["relayed"] + len(LETTERED_TYPED)
    found = [v["value"] for v in q["values"]]
    assert found[:2] == ["vim", "emacs"], found
    section = next(r for r in lettered["out"]["results"] if r["id"] == "editor")
    assert section["kind"] == "discovery" and "up to 8 bytes kept, characters a–z only)" in section["meta"]
    assert section["rows"][0].startswith("vim") and section["rows"][1].startswith("emacs"), section["rows"]
    for name in ("results", "results_phone"):
        assert Path(lettered["out"]["screenshots"][name]).stat().st_size > 10_000
