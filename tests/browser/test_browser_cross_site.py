"""Pages of other sites in a real headless Chromium: they store nothing, unless the survey lists their origin.

The collection server runs on 127.0.0.1. Two pages of other origins, each a
plain static server on loopback: ``127.0.0.2`` (another site) and another
port of ``127.0.0.1`` (the same site, another origin). Each page tries what
the security audit did (issue 27): the simple requests a browser sends
cross-origin without asking (``fetch`` with a ``text/plain`` body that is a
valid response, an urlencoded form body, a multipart ``FormData``, a real
``<form enctype="text/plain">`` submitted into a frame), and a ``fetch`` with
``Content-Type: application/json`` (which needs a preflight). Checks:

* a survey without ``embed``: nothing is stored from either page; the server
  answered every simple request 403 (Chromium's own network log, which sees
  the status of opaque answers), the JSON post never left the browser (its
  preflight was refused; the preflight's own answers are checked over plain
  HTTP in ``tests/server/test_embed.py``), and the page could not read the
  survey;
* a survey whose ``embed.origins`` lists ``127.0.0.2``'s page: that page
  reads the survey and posts one response with CORS (201, read by the page);
  its simple requests are refused 415 (not JSON) and store nothing; the
  same-site page, not listed, is refused as above;
* framing: the page of ``127.0.0.2`` frames the listed survey's page, and a
  respondent answers in the frame (stored); the page of the survey without
  ``embed`` is not drawn in a frame (``frame-ancestors 'none'``);
* deniable-embed's server mode (``Deniable.submit``) on the page of
  ``127.0.0.2``: the listed survey stores its response, the other cannot be
  read from there, so nothing is sent to it;
* power check: the ``text/plain`` body the pages sent is a valid response:
  posted as JSON by a non-browser client, it is stored.

Uses the Python ``playwright`` package with the system Chromium; skips when
either is missing, unless DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import http.server
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, sync_playwright_api  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

runner = pytest.importorskip("deniable.server._runner")
httpx = pytest.importorskip("httpx")

QUESTION = {"id": "q", "text": "Have you broken the honor code?", "type": "yes-no",
            "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5}
CLOSED = {"id": "not-embedded", "title": "Not embedded", "budget": 1.1, "rate_limit": "off", "questions": [QUESTION]}

PAGE = """<!doctype html>
<meta charset="utf-8"><title>another site</title>
<iframe name="sink"></iframe>
<script>
const params = new URLSearchParams(location.search);
const server = params.get('server');
const survey = params.get('survey');
const tag = params.get('tag');
const url = `${server}/surveys/${survey}/responses`;
const body = (kind) => JSON.stringify({ idempotency_key: `${tag}-${kind}`.padEnd(24, '0'), reports: { q: true } });
async function attempt(target, init) {
  try {
    const r = await fetch(target, init);
    let text = null;
    try { text = await r.text(); } catch (e) { text = null; }
    return { type: r.type, status: r.status, text };
  } catch (e) {
    return { error: String(e) };
  }
}
window.attempts = (async () => {
  const form = new URLSearchParams();
  form.set(body('urlencoded'), '');
  const multipart = new FormData();
  multipart.set('response', body('multipart'));
  const out = {
    'text/plain': await attempt(url, { method: 'POST', mode: 'no-cors', body: body('text') }),
    urlencoded: await attempt(url, { method: 'POST', mode: 'no-cors', body: form }),
    multipart: await attempt(url, { method: 'POST', mode: 'no-cors', body: multipart }),
    json: await attempt(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body('json') }),
    read: await attempt(`${server}/surveys/${survey}`, {}),
  };
  const sent = new Promise((resolve) => { document.querySelector('iframe').onload = resolve; });
  const f = document.createElement('form');
  f.method = 'POST'; f.action = url; f.enctype = 'text/plain'; f.target = 'sink';
  const input = document.createElement('input');
  input.name = body('form').slice(0, -2);
  input.value = '"}';
  f.append(input);
  document.body.append(f);
  f.submit();
  await sent;
  return out;
})();
</script>
"""

FRAMES = """<!doctype html>
<meta charset="utf-8"><title>a host platform</title>
<iframe id="listed" width="800" height="900"></iframe>
<iframe id="unlisted" width="800" height="900"></iframe>
<script>
const params = new URLSearchParams(location.search);
document.getElementById('listed').src = `${params.get('server')}/s/${params.get('listed')}`;
document.getElementById('unlisted').src = `${params.get('server')}/s/${params.get('unlisted')}`;
</script>
"""


EMBED = """<!doctype html>
<meta charset="utf-8"><title>a host platform with deniable-embed</title>
<script>
const params = new URLSearchParams(location.search);
const server = params.get('server');
const tag = document.createElement('script');
tag.src = `${server}/static/deniable-embed.js`;
window.submitted = new Promise((resolve) => {
  tag.onload = async () => {
    const out = {};
    for (const survey of ['embedded', 'not-embedded']) {
      try {
        out[survey] = await Deniable.submit({ server, survey, answers: { q: true } });
      } catch (e) {
        out[survey] = { error: String(e) };
      }
    }
    resolve(out);
  };
});
document.head.append(tag);
</script>
"""


class _Pages(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        page = FRAMES if self.path.startswith("/frames") else EMBED if self.path.startswith("/embed") else PAGE
        data = page.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: Any) -> None:
        pass


def _static_site(host: str) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer((host, 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}"


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    playwright = sync_playwright_api()
    tmp = tmp_path_factory.mktemp("cross-site")
    other_site, other_origin = _static_site("127.0.0.2")
    same_site, same_site_origin = _static_site("127.0.0.1")
    embedded = {**CLOSED, "id": "embedded", "title": "Embedded", "embed": {"origins": [other_origin]}}
    server = runner.BackgroundServer([CLOSED, embedded], db_url=f"sqlite:///{tmp / 'x.db'}")
    server.start()
    out: dict[str, Any] = {"server": server, "network": [], "errors": []}
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
            page = browser.new_page()
            page.on("pageerror", lambda e: out["errors"].append(str(e)))

            def answered(response: Any) -> None:  # Chromium's log sees the status of opaque answers too
                if "/responses" in response.url:
                    out["network"].append((response.request.method, response.status))

            page.on("response", answered)
            for name, origin in (("other", other_origin), ("same-site", same_site_origin)):
                for survey in (CLOSED["id"], "embedded"):
                    out["network"].clear()
                    page.goto(f"{origin}/attack?server={server.url}&survey={survey}&tag={name}-{survey}")
                    out[(name, survey)] = page.evaluate("() => window.attempts")
                    out[(name, survey, "answers")] = sorted(out["network"])
            page.goto(f"{other_origin}/embed?server={server.url}")  # deniable-embed's server mode
            out["embed-submit"] = page.evaluate("() => window.submitted")
            page.goto(f"{other_origin}/frames?server={server.url}&listed=embedded&unlisted={CLOSED['id']}")
            listed = page.frame_locator("#listed")
            listed.locator("#survey-form:not([hidden])").wait_for()
            listed.locator("#q0-o0").check()
            listed.locator("#submit").click()
            listed.locator("#status").filter(has_text="Thank you").wait_for()
            out["frame-status"] = " ".join(listed.locator("#status").inner_text().split())
            unlisted = page.locator("#unlisted").element_handle().content_frame()
            for _ in range(100):  # until the frame's navigation ended: the page, or Chromium's error page
                if unlisted.url.startswith(("chrome-error:", server.url)):
                    break
                page.wait_for_timeout(50)
            out["unlisted-frame"] = (unlisted.url, page.frame_locator("#unlisted").locator("#survey-form").count())
            page.screenshot(path=str(tmp / "framed.png"))
            browser.close()
        out["stored"] = {sid: server.storage.count_responses(sid) for sid in (CLOSED["id"], "embedded")}
        yield out
    finally:
        server.stop()
        other_site.shutdown()
        same_site.shutdown()


def test_pages_of_other_origins_store_nothing_in_a_survey_without_embed(seen: dict[str, Any]) -> None:
    assert seen["stored"]["not-embedded"] == 0
    for name in ("other", "same-site"):
        tried = seen[(name, "not-embedded")]
        assert tried["json"] == {"error": "TypeError: Failed to fetch"}, tried["json"]  # the preflight refused
        assert "error" in tried["read"], tried["read"]  # no CORS: the page cannot read the survey
        for kind in ("text/plain", "urlencoded", "multipart"):
            assert tried[kind]["type"] == "opaque", (name, kind, tried[kind])
        # three fetches and the form reached the server and were refused as cross-site; the JSON
        # post was never sent (its preflight was refused; Chromium's log does not show preflights)
        assert seen[(name, "not-embedded", "answers")] == [("POST", 403)] * 4, seen[(name, "not-embedded", "answers")]


def test_a_listed_origin_posts_with_cors_and_nothing_else_is_stored(seen: dict[str, Any]) -> None:
    tried = seen[("other", "embedded")]
    assert tried["json"]["status"] == 201 and '"accepted"' in tried["json"]["text"], tried["json"]
    assert tried["read"]["status"] == 200 and '"embedded"' in tried["read"]["text"]
    # the JSON post (after its preflight), and the simple requests and the form: not JSON (415)
    assert seen[("other", "embedded", "answers")] == [("POST", 201)] + [("POST", 415)] * 4
    unlisted = seen[("same-site", "embedded")]
    assert unlisted["json"] == {"error": "TypeError: Failed to fetch"} and "error" in unlisted["read"]
    assert seen[("same-site", "embedded", "answers")] == [("POST", 403)] * 4
    # one from the listed page's fetch, one from deniable-embed's submit on it, one answered in the frame
    assert seen["stored"]["embedded"] == 3


def test_the_embed_posts_from_a_listed_origin_only(seen: dict[str, Any]) -> None:
    """deniable-embed's server mode on another site's page: the survey that lists the page's origin takes
    the response; the other cannot even be read from there (no CORS), so nothing is sent to it."""
    submitted = seen["embed-submit"]
    assert "error" not in submitted["embedded"], submitted
    assert "Failed to fetch" in submitted["not-embedded"]["error"], submitted


def test_only_the_listed_origin_may_frame_the_survey_page(seen: dict[str, Any]) -> None:
    assert seen["frame-status"].startswith("Thank you"), seen["frame-status"]
    url, forms = seen["unlisted-frame"]
    assert url.startswith("chrome-error:") and forms == 0, seen["unlisted-frame"]  # blocked, not drawn
    assert not seen["errors"], seen["errors"]


def test_the_refused_bodies_were_valid_responses(seen: dict[str, Any]) -> None:
    """Power check: what the pages sent as text/plain is stored when a non-browser client posts it as JSON."""
    server = seen["server"]
    body = '{"idempotency_key":"other-not-embedded-text0","reports":{"q":true}}'  # the page's, as it sent it
    r = httpx.post(f"{server.url}/surveys/not-embedded/responses", content=body,
                   headers={"Content-Type": "application/json"})
    assert r.status_code == 201, r.text
