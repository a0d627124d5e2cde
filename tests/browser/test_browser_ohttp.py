"""The survey page answers through an Oblivious HTTP relay in a real headless Chromium.

The collector (127.0.0.3, the gateway) serves a survey whose ``transport`` is
``ohttp`` with the relay's URL (127.0.0.1). Chromium opens the survey page,
answers, and submits: the page encapsulates the response for the gateway's
key with @hpke/core (vendored) and posts it to the relay only. Checks: no
response is posted to the collector, every post to the relay is
``message/ohttp-req`` whose bytes hold none of the response's JSON, the
collector stored every response, the page says they were recorded, and the
page says who sees what (the relay the address, the collector the answers), and it runs under its
Content-Security-Policy (which allows the relay's origin
and nothing else) without a violation. A rotated key past its overlap is
fetched again by the page. The embed (``Deniable.submit`` of
deniable-embed.js, on a page of a platform's origin that the survey lists)
posts through the relay the same way, and through a shuffling relay it
returns the relay's queued receipt.
"""

from __future__ import annotations

import copy
import http.server
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")
runner = pytest.importorskip("deniable.server._runner")

from deniable._ohttp._keys import KeyRing  # noqa: E402
from deniable._ohttp._relay import Relay  # noqa: E402
from deniable._ohttp._serve import BackgroundRelay  # noqa: E402
from deniable.cli._server import HONOR_CODE_SURVEY  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

TOKEN = "relay-token-browser"
ANSWERS = 4


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_the_survey_page_posts_through_the_relay() -> None:
    api = sync_playwright_api()
    clock = Clock()
    keys = KeyRing(rotate_every=100, overlap=10, clock=clock)
    with runner.BackgroundServer([], relay_token=TOKEN, ohttp_keys=keys, host="127.0.0.3") as collector, \
            BackgroundRelay(Relay(collector.url, TOKEN)) as relay:
        survey = copy.deepcopy(HONOR_CODE_SURVEY)
        survey["transport"] = {"kind": "ohttp", "relay": relay.url}
        collector.storage.add_survey(survey)
        posts: list[tuple[str, str, bytes]] = []
        problems: list[str] = []
        states = []
        with api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("request", lambda r: posts.append(
                (r.url, r.headers.get("content-type", ""), r.post_data_buffer or b"")) if r.method == "POST" else None)
            for i in range(ANSWERS):
                page.goto(f"{collector.url}/s/honor-code")
                page.wait_for_selector('body[data-state="ready"]')
                privacy = " ".join(page.text_content("#privacy-epsilon").split())
                if i == ANSWERS - 1:  # the page holds the key, then the gateway rotates past the overlap:
                    page.evaluate("relay => import('/static/ohttp.js').then(m => m.relayKey(relay))", relay.url)
                    keys.rotate()
                    clock.now += 10  # its key is refused (the ohttp-key problem), fetched again, sent again
                    relay.relay._keys = None  # the relay's cached copy expires too
                page.check(f"#q0-o{i % 2}")
                page.click("#submit")
                page.wait_for_selector('body[data-state="submitted"], #retry:not([hidden])')
                states.append(page.get_attribute("body", "data-state"))
            csp = page.goto(f"{collector.url}/s/honor-code").headers["content-security-policy"]
            browser.close()
        assert states == ["submitted"] * ANSWERS, problems
        assert "Your answers travel sealed through a relay (127.0.0.1:" in privacy
        assert "They still see when answers arrive" in privacy and "Not protected" not in privacy
        # the one refusal of the rotated key is all Chromium reports; no policy violation, no error
        assert problems == ["Failed to load resource: the server responded with a status of 400 (Bad Request)"]
        assert f"connect-src 'self' {relay.url.rstrip('/')};" in csp
        assert not [url for url, _, _ in posts if url.startswith(collector.url)]  # nothing posted to the collector
        to_relay = [(kind, body) for url, kind, body in posts if url == relay.url]
        assert len(to_relay) == ANSWERS + 1  # one refused for the rotated key, then sent again
        for kind, body in to_relay:
            assert kind == "message/ohttp-req" and b"idempotency_key" not in body and b"reports" not in body
        assert collector.storage.count_responses("honor-code") == ANSWERS


def test_the_survey_page_through_a_shuffling_relay(tmp_path: Path) -> None:
    """Queued (202) by the shuffler, the page says the answers are queued at the relay, not recorded; the batch
    reaches the collector."""
    from deniable._ohttp._shuffler import Buffer, Shuffler

    api = sync_playwright_api()
    shuffler = Shuffler(Buffer(tmp_path / "buffer.sqlite"), threshold=3, max_delay=0.2)
    with runner.BackgroundServer([], relay_token=TOKEN, ohttp_keys=KeyRing(), host="127.0.0.3") as collector, \
            BackgroundRelay(Relay(collector.url, TOKEN, shuffler=shuffler)) as relay:
        survey = copy.deepcopy(HONOR_CODE_SURVEY)
        survey["transport"] = {"kind": "ohttp", "relay": relay.url, "shuffler": True}
        collector.storage.add_survey(survey)
        states, texts = [], []
        with api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page()
            for i in range(3):
                page.goto(f"{collector.url}/s/honor-code")
                page.wait_for_selector('body[data-state="ready"]')
                texts.append(" ".join(page.text_content("#privacy-epsilon").split()))
                page.check(f"#q0-o{i % 2}")
                page.click("#submit")
                page.wait_for_selector('body[data-state="submitted"], #retry:not([hidden])')
                states.append(page.get_attribute("body", "data-state"))
                said = " ".join(page.text_content("#status").split())
            browser.close()
        assert states == ["submitted"] * 3
        assert "mixed them in a random order with at least a batch of others" in texts[0]
        assert "queued at the relay" in said and "with at least 2 others" in said and "recorded." not in said
        deadline = time.monotonic() + 30  # the batch is recorded after its responses are stored: wait for both
        while not collector.storage.shuffled_batches("honor-code") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert collector.storage.count_responses("honor-code") == 3
        assert collector.storage.shuffled_batches("honor-code") == [3]


EMBED_SUBMIT = """async ([server, answers]) => {
  const out = [];
  for (const answer of answers) {
    const r = await Deniable.submit({ server, survey: 'honor-code', answers: { violated: answer } });
    out.push({ ok: r.ok, status: r.status, queued: r.queued, response: r.response, body: r.body });
  }
  return out;
}"""


class _Platform(http.server.BaseHTTPRequestHandler):
    """A survey platform's page (127.0.0.2): blank, no Content-Security-Policy of its own."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b"<!doctype html><title>A survey platform</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def platform() -> Iterator[str]:
    """The platform's origin, which the embedded surveys list in embed.origins."""
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), _Platform)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.2:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _embedded_survey(relay_url: str, platform: str, shuffler: bool = False) -> dict[str, Any]:
    survey = copy.deepcopy(HONOR_CODE_SURVEY)
    survey["transport"] = {"kind": "ohttp", "relay": relay_url, **({"shuffler": True} if shuffler else {})}
    survey["embed"] = {"origins": [platform]}
    return survey


Post = tuple[str, str, bytes]  # a POST the page made: url, content type, bytes


def _embed_posts(collector_url: str, platform: str, answers: list[bool]) -> tuple[list[dict[str, Any]], list[Post]]:
    """``Deniable.submit`` of the classic build in Chromium, on a page of the platform's origin (no
    Content-Security-Policy of its own); its results and every POST the page made (url, content type, bytes)."""
    api = sync_playwright_api()
    posts: list[Post] = []
    with api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page()
        page.on("request", lambda r: posts.append(
            (r.url, r.headers.get("content-type", ""), r.post_data_buffer or b"")) if r.method == "POST" else None)
        page.goto(f"{platform}/question")
        page.add_script_tag(url=f"{collector_url}/static/deniable-embed.js")
        results = page.evaluate(EMBED_SUBMIT, [collector_url, answers])
        browser.close()
    return results, posts


def test_the_embed_posts_through_the_relay(platform: str) -> None:
    with runner.BackgroundServer([], relay_token=TOKEN, ohttp_keys=KeyRing(), host="127.0.0.3") as collector, \
            BackgroundRelay(Relay(collector.url, TOKEN)) as relay:
        collector.storage.add_survey(_embedded_survey(relay.url, platform))
        results, posts = _embed_posts(collector.url, platform, [True, False])
        stored = collector.storage.count_responses("honor-code")
    assert [(r["ok"], r["status"], r["queued"]) for r in results] == [(True, 201, False)] * 2, results
    assert all(r["response"]["status"] == "accepted" for r in results)  # the collector's receipt, opened
    assert stored == 2
    assert not [url for url, _, _ in posts if url.startswith(collector.url)]  # nothing posted to the collector
    to_relay = [(kind, body) for url, kind, body in posts if url == relay.url]
    assert len(to_relay) == 2
    for kind, body in to_relay:
        assert kind == "message/ohttp-req" and b"idempotency_key" not in body and b"reports" not in body


def test_the_embed_through_a_shuffling_relay_returns_its_queued_receipt(tmp_path: Path, platform: str) -> None:
    from deniable._ohttp._shuffler import Buffer, Shuffler

    shuffler = Shuffler(Buffer(tmp_path / "buffer.sqlite"), threshold=2, max_delay=0.2)
    with runner.BackgroundServer([], relay_token=TOKEN, ohttp_keys=KeyRing(), host="127.0.0.3") as collector, \
            BackgroundRelay(Relay(collector.url, TOKEN, shuffler=shuffler)) as relay:
        collector.storage.add_survey(_embedded_survey(relay.url, platform, shuffler=True))
        results, posts = _embed_posts(collector.url, platform, [True, False])
        deadline = time.monotonic() + 30  # the batch is recorded after its responses are stored: wait for both
        while not collector.storage.shuffled_batches("honor-code") and time.monotonic() < deadline:
            time.sleep(0.1)
        batches = collector.storage.shuffled_batches("honor-code")
        assert collector.storage.count_responses("honor-code") == 2
    receipt = {"status": "queued", "stored": False, "threshold": 2, "max_delay": 0.2}
    assert [(r["ok"], r["status"], r["queued"], r["response"]) for r in results] == [(True, 202, True, receipt)] * 2
    assert not [url for url, _, _ in posts if url.startswith(collector.url)]
    assert batches == [2]


def test_the_results_page_states_each_rounds_shuffled_guarantee_only_for_its_own_batches() -> None:
    """A survey with rounds through a shuffler (tests/server/test_ohttp_shuffled_rounds.py's batches): the
    page's per-round table states a guarantee for a round whose every response came in its batches, and none,
    saying why, for a round with responses of the batch served across the round's end."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from test_ohttp_shuffled_rounds import START, Clock, collected

    api = sync_playwright_api()
    problems: list[str] = []
    with collected(Clock(START + 60)) as server:
        rounds = httpx.get(server.url + "/surveys/daily/results").json()["rounds"]["rounds"]
        with api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(f"{server.url}/s/daily/results")
            page.wait_for_selector(".shuffled-rounds tbody tr")
            rows = page.eval_on_selector_all(".shuffled-rounds tbody tr", "trs => trs.map(tr => "
                                             "Array.from(tr.cells, c => c.textContent.trim()))")
            survey_line = page.is_visible("#shuffled")
            browser.close()
    assert problems == [] and not survey_line  # no statement for the survey as a whole: one per round
    assert [row[:4] for row in rows] == [
        [str(r["round"]), str(r["n_responses"]), str(r["shuffler"]["responses"]),
         f"1 batch of {r['shuffler']['smallest']} responses"] for r in rounds]
    for row, r in zip(rows, rounds, strict=True):
        missing = r["n_responses"] - r["shuffler"]["responses"]
        if missing:
            assert row[4] == f"none: {missing} of its responses did not come in a shuffled batch of this round"
        else:
            assert row[4].startswith(("still only ε = 0.50", "each response is also ("))
    assert sum(r["n_responses"] - r["shuffler"]["responses"] for r in rounds) == 2
