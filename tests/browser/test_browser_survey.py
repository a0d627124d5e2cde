"""End to end in a real headless Chromium: the survey page randomizes in the browser.

The real server (``BackgroundServer``, SQLite file in a temporary directory)
serves the pages; ``drive.mjs`` (playwright-core with the system Chromium)
answers the survey 300 times with a known truth, and records every request
the page makes. Checks:

* each POST body holds only ``idempotency_key`` (unique, contract pattern), ``wire_version`` (2) and
  ``reports`` (one valid mechanism report per question; no answer label);
* the server stored exactly those reports (admin CSV export);
* the results endpoint estimates the truth: every estimate lies in its exact
  band (tests/js/support_bands.py; the support count is a sum of two
  binomials) at alpha = 1e-6 split (Bonferroni) over every category; the same
  bands reject the truth with the answers shifted by one category (power
  check, e.g. a page that mislabels its radio buttons);
* the results page draws one bar and one whisker per category, with the line
  "n respondents, epsilon = ..."; a screenshot is written for inspection;
* validation (no request without every answer), a dropped connection retried
  with the identical body, invitation-only surveys (a used invite gets the
  server's refusal on the page), closed surveys, the rate limit (the page
  says in a respondent's words when to try again; the API's 429 keeps the details);
* every page answer carries the strict Content-Security-Policy (no inline
  script or style, ``frame-ancestors 'none'``), ``nosniff`` and
  ``Referrer-Policy: no-referrer``, and the pages work under it: every
  console message is captured and none is a policy violation (the driver also
  reports each ``securitypolicyviolation`` event as a console error);
* ``/docs`` draws the API with Swagger UI from this server's own files;
* a results page for administrators (``results: admin``) is refused without
  the admin token and loads with it (HTTP Basic, as a user types it).

Skips when node, playwright-core or Chromium are missing, unless
DENIABLE_REQUIRE_BROWSER=1 (CI), which turns the skip into a failure.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, playwright_core, run_node  # noqa: E402
from page_text import assert_odds_sentence, estimate_text  # noqa: E402
from support_bands import outside_bands  # noqa: E402

import deniable as dn  # noqa: E402
from deniable.client import Client  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

httpx = pytest.importorskip("httpx")
runner = pytest.importorskip("deniable.server._runner")

DRIVER = Path(__file__).with_name("drive.mjs")
ALPHA = 1e-6
N = 300
TOKEN = "browser-test-admin-token"
APPS = ["WhatsApp", "Signal", "Telegram", "Other"]
STUDY = ["Humanities", "Sciences", "Engineering", "Medicine", "Law"]

SURVEY = {
    "id": "browser-e2e",
    "title": "Campus life survey",
    "budget": 6.0,
    "rate_limit": "off",  # 300 respondents answer from one browser, one address
    "questions": [
        {"id": "cheated", "text": "Have you broken the honor code this term?", "type": "yes-no",
         "mechanism": "forced-response", "p_truth": 0.75, "p_yes": 0.5},
        {"id": "app", "text": "Which messaging app do you use most?", "type": "categorical",
         "categories": APPS, "mechanism": "oue", "epsilon": 2.0},
        {"id": "study", "text": "What do you study?", "type": "categorical",
         "categories": STUDY, "mechanism": "subset", "epsilon": 2.0, "omega": 2},
    ],
}
# the known truth: counts per category (in domain order: yes-no is [false, true])
TRUTH = {"cheated": [210, 90], "app": [150, 90, 60, 0], "study": [165, 75, 45, 15, 0]}
CLOSED_SURVEY = {
    "id": "closed", "title": "Closed survey", "budget": 1.2,
    "questions": [{"id": "ok", "text": "Too late?", "type": "yes-no",
                   "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5}],
}
RATE_SURVEY = {
    "id": "rate-limited", "title": "One answer per address", "budget": 1.2,
    "rate_limit": {"responses": 1, "seconds": 600},
    "questions": [{"id": "ok", "text": "Is this working?", "type": "yes-no",
                   "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5}],
}
PRIVATE_SURVEY = {**SURVEY, "id": "browser-private", "title": "Results for administrators", "results": "admin"}
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
INVITE_SURVEY = {
    "id": "invite-only", "title": "Invitation-only check", "budget": 1.2, "invite_only": True,
    "questions": [{"id": "ok", "text": "Is this working?", "type": "yes-no",
                   "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5}],
}


@pytest.fixture(scope="module")
def tools() -> dict[str, str]:
    playwright_core()
    return {"chromium": chromium()}


@pytest.fixture(scope="module")
def run(tools: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Start the server, let Chromium answer the survey N times, fetch results and the export."""
    tmp = tmp_path_factory.mktemp("browser")
    rng = np.random.default_rng(20261122)
    per_question = [rng.permutation(np.repeat(np.arange(len(c)), c)) for c in TRUTH.values()]
    answers = np.stack(per_question, axis=1).tolist()  # N x questions, category positions
    visits: list[dict[str, Any]] = [
        {"path": f"/s/{SURVEY['id']}", "answers": a} for a in answers[:10]
    ] + [  # the rest answer on one page in kiosk mode ("Next respondent" clears the form)
        {"path": f"/s/{SURVEY['id']}?kiosk=1", "answers": a, "fast": True} for a in answers[10:]
    ]
    visits[0].update(try_empty_submit=True, screenshot="survey")
    visits[1]["fail_first_post"] = True
    with runner.BackgroundServer(
        [SURVEY], db_url=f"sqlite:///{tmp / 'responses.db'}", admin_token=TOKEN
    ) as server:
        admin = {"Authorization": f"Bearer {TOKEN}"}
        for definition in (INVITE_SURVEY, CLOSED_SURVEY, RATE_SURVEY, PRIVATE_SURVEY):
            created = httpx.post(f"{server.url}/admin/surveys", json=definition, headers=admin)
            assert created.status_code == 201, created.text
        closed = httpx.post(f"{server.url}/admin/surveys/closed/close", headers=admin)
        assert closed.status_code == 200, closed.text
        invites = httpx.post(
            f"{server.url}/admin/surveys/invite-only/invites", json={"count": 1}, headers=admin
        ).json()["tokens"]
        visits += [
            {"path": "/s/invite-only", "answers": None},
            {"path": f"/s/invite-only?invite={invites[0]}", "answers": [1]},
            {"path": f"/s/invite-only?invite={invites[0]}", "answers": [0]},  # used up
            {"path": "/s/closed", "answers": None},
            {"path": "/s/rate-limited", "answers": [1]},
            {"path": "/s/rate-limited", "answers": [0]},  # the address's second response: 429
        ]
        with Client(server.url, token=TOKEN) as relay:  # answers for the administrators' results page
            relay.respond_many(PRIVATE_SURVEY["id"], [{"cheated": i % 3 == 0, "app": APPS[i % 4], "study": STUDY[i % 5]}
                                                      for i in range(200)])
        plan = {
            "chromium": tools["chromium"], "base_url": server.url, "visits": visits,
            "results_path": f"/s/{SURVEY['id']}/results", "screenshot_dir": str(tmp), "docs_path": "/docs",
            "admin_results": {"path": f"/s/{PRIVATE_SURVEY['id']}/results", "token": TOKEN},
        }
        out = run_node(DRIVER, plan, timeout=240)
        private = httpx.get(f"{server.url}/surveys/{PRIVATE_SURVEY['id']}/results")
        assert private.status_code == 401, private.text
        public = httpx.get(f"{server.url}/surveys/{SURVEY['id']}").json()
        results = httpx.get(f"{server.url}/surveys/{SURVEY['id']}/results").json()
        export = httpx.get(
            f"{server.url}/admin/surveys/{SURVEY['id']}/export?format=csv", headers=admin
        )
        assert export.status_code == 200, export.text
    mechanisms = {q["id"]: dn.from_config(q["mechanism"]) for q in public["questions"]}
    return {"out": out, "results": results, "export": export.text, "mechanisms": mechanisms,
            "base_url": server.url}


def _posts(out: dict[str, Any], survey_id: str) -> list[dict[str, Any]]:
    return [r for r in out["requests"]
            if r["method"] == "POST" and r["url"].endswith(f"/surveys/{survey_id}/responses")]


def test_pages_have_no_errors_and_every_submission_succeeds(run: dict[str, Any]) -> None:
    out = run["out"]
    # the only console errors: the connection the test dropped on purpose (visit 1), the
    # refused reuse of an invite (403), the rate limit (429) and the administrators' results
    # page opened without the token (401); no uncaught page errors, no policy violation
    assert out["problems"] == [
        "console: Failed to load resource: net::ERR_CONNECTION_RESET",
        "console: Failed to load resource: the server responded with a status of 403 (Forbidden)",
        "console: Failed to load resource: the server responded with a status of 429 (Too Many Requests)",
        "console: Failed to load resource: the server responded with a status of 401 ()",
    ]
    survey_visits = out["visits"][:N]
    assert [v["state"] for v in survey_visits] == ["submitted"] * N
    assert all("Thank you" in v["status"] for v in survey_visits)
    # the privacy explanation names the survey's total epsilon: ln 7 + 2 + 2
    total = sum(m.epsilon for m in run["mechanisms"].values())
    assert f"ε = {total:.2f}" in survey_visits[0]["privacy"]
    assert_odds_sentence(survey_visits[0]["privacy"], total)  # e^5.95 = 382: at most 99.7% sure
    seconds = sum(v["ms"] for v in survey_visits) / 1000
    print(f"{N} browser submissions in {seconds:.1f} s")


def test_pages_load_nothing_from_elsewhere(run: dict[str, Any]) -> None:
    """No CDN or other origin: every request goes to the collection server itself."""
    urls = {r["url"] for r in run["out"]["requests"]}
    assert urls and all(u.startswith(run["base_url"] + "/") for u in urls), sorted(urls)[:5]


def test_a_submission_needs_every_answer(run: dict[str, Any]) -> None:
    first = run["out"]["visits"][0]
    assert first["empty_submit_requests"] == 0
    assert first["empty_submit_missing"] == 3
    assert "answer every question" in first["empty_submit_status"]


def test_only_randomized_reports_leave_the_browser(run: dict[str, Any]) -> None:
    posts = [p for p in _posts(run["out"], SURVEY["id"]) if "failed" not in p]
    assert len(posts) == N + 1  # one retry after the dropped connection, below
    keys = set()
    labels = [*APPS, *STUDY, "Yes", "No", "yes", "no"]
    for post in posts:
        body = json.loads(post["body"])
        assert set(body) == {"idempotency_key", "wire_version", "reports"} and body["wire_version"] == 2
        assert re.fullmatch(r"[A-Za-z0-9_-]{8,128}", body["idempotency_key"])
        keys.add(body["idempotency_key"])
        assert set(body["reports"]) == set(TRUTH)
        for qid, report in body["reports"].items():
            run["mechanisms"][qid].reports_from_json([report])  # raises if not a valid report
        assert not any(label in post["body"] for label in labels), post["body"]
    assert len(keys) == N


def test_a_dropped_connection_is_retried_with_the_identical_body(run: dict[str, Any]) -> None:
    requests = run["out"]["requests"]
    posts = [r for r in requests if r["method"] == "POST" and "/surveys/browser-e2e/" in r["url"]]
    # visit 1: the first POST was aborted, the page resent the same key and reports
    failed = [i for i, r in enumerate(requests) if r.get("failed") and "/responses" in r["url"]]
    assert len(failed) == 1
    attempt = requests[failed[0] - 1]
    retry = next(r for r in requests[failed[0] + 1:] if r["method"] == "POST")
    assert attempt["body"] == retry["body"]
    assert sum(1 for p in posts if p.get("body") == retry["body"]) == 2  # sent twice, stored once
    assert run["results"]["n_responses"] == N


def test_the_server_stored_exactly_the_reports_the_browser_sent(run: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO(run["export"])))
    assert len(rows) == N
    stored = sorted(json.dumps({q: json.loads(r[q]) for q in TRUTH}, sort_keys=True) for r in rows)
    by_key = {}  # a retried request carries the same key and body: stored once
    for post in _posts(run["out"], SURVEY["id"]):
        if post.get("body"):
            body = json.loads(post["body"])
            by_key[body["idempotency_key"]] = json.dumps(body["reports"], sort_keys=True)
    assert stored == sorted(by_key.values())


def test_results_estimate_the_truth(run: dict[str, Any]) -> None:
    """Every estimate in its exact band; alpha 1e-6 (Bonferroni over questions and categories)."""
    results = {q["id"]: q for q in run["results"]["questions"]}
    alpha = ALPHA / len(TRUTH)
    for qid, counts in TRUTH.items():
        m = run["mechanisms"][qid]
        q = results[qid]
        assert q["n"] == N
        assert outside_bands(m, counts, q["estimate"], alpha) == [], qid
        # power: the answers shifted by one category (a mislabelled page) are rejected
        assert outside_bands(m, np.roll(counts, 1), q["estimate"], alpha) != [], qid


def test_results_page_shows_charts(run: dict[str, Any]) -> None:
    out = run["out"]
    assert out["results_summary"].startswith(f"{N} responses")
    shown = {r["id"]: r for r in out["results"]}
    for q in SURVEY["questions"]:
        r = shown[q["id"]]
        k = len(TRUTH[q["id"]])
        m = run["mechanisms"][q["id"]]
        assert r["heading"] == q["text"]
        assert r["meta"].startswith(f"{N} respondents, ε = {m.epsilon:.2f}")
        assert r["bars"] == k and r["whiskers"] == 3 * k  # a bar, a whisker and two caps
        assert r["svg_role"] == "img" and q["text"] in r["svg_title"]
        assert r["svg_desc"].count("95% interval") == k
        assert len(r["rows"]) == k
        # the target is named; an interval is shown as a range and a standard error as a column
        assert r["meta"].endswith("estimates of: population")
        assert r["note"] == "Estimates of the population the respondents were sampled from."
        assert r["head"][2:4] == ["Standard error", "95% confidence interval"]
        assert len(r["values"]) == len(r["ranges"]) == k
        assert not any("±" in v for v in r["values"] + r["ranges"] + r["rows"])
        # each estimate and its interval with the decimals set by its standard error (two significant digits)
        served = next(s for s in run["results"]["questions"] if s["id"] == q["id"])
        texts = [estimate_text(*(served[f][i] for f in ("estimate", "ci_low", "ci_high", "std_error")))
                 for i in range(k)]
        assert sorted(r["values"]) == sorted(est for est, _ in texts)
        assert sorted(r["ranges"]) == sorted(interval.replace("% to ", "–") for _, interval in texts)
    assert out["results_target"] == "population"
    assert "95% confidence interval (not a standard error" in " ".join(out["results_legend"].split())
    assert "population the respondents were sampled from" in " ".join(out["results_legend"].split())
    # switched to the respondents: the page fetched ?target=respondents and says so
    switched = out["respondents"]
    assert switched["url"].endswith("/results?target=respondents")
    assert "these respondents only" in " ".join(switched["legend"].split())
    assert all(m.endswith("estimates of: these respondents") for m in switched["metas"])
    served = [r for q in run["results"]["questions"] for r in q["std_error"]]
    assert len(switched["std_errors"]) == len(served)
    screenshot = Path(out["screenshots"]["results"])
    assert screenshot.stat().st_size > 10_000
    print(f"results screenshot: {screenshot}")


def test_invitation_only_and_closed_surveys(run: dict[str, Any]) -> None:
    blocked, invited, reused, closed = run["out"]["visits"][N:N + 4]
    assert blocked["submit_disabled"] and "invitation" in blocked["status"]
    assert invited["state"] == "submitted"
    body = json.loads(_posts(run["out"], "invite-only")[0]["body"])
    assert set(body) == {"idempotency_key", "invite_token", "wire_version", "reports"}
    # a used invite: the server refuses, the page says so and offers to resend the same body
    assert reused["state"] == "ready" and reused["retry_visible"]
    assert reused["status"].startswith("Your answers were not recorded."), reused["status"]
    assert "invite" in reused["status"].lower()
    assert closed["submit_disabled"] and "closed" in closed["status"]


def test_the_page_shows_the_rate_limit(run: dict[str, Any]) -> None:
    """In words for a respondent (once the API's "too many responses from your address: survey ... takes at
    most 1 per 600 seconds"); the details stay in the API's JSON (tests/server)."""
    first, second = run["out"]["visits"][N + 4:]
    assert first["state"] == "submitted"
    assert second["state"] == "ready" and second["retry_visible"]
    text = " ".join(second["status"].split())
    assert text.startswith("Your answers were not recorded. Many answers to this survey have just come from your "
                           "network"), text
    assert re.search(r"Nothing you chose is lost: please try again in about 10 minutes with the button below\.$",
                     text), text
    assert "rate_limit" not in text and "per 600 seconds" not in text and "field" not in text


def test_every_page_is_served_with_the_strict_policy(run: dict[str, Any]) -> None:
    """Survey, results and docs pages: the headers as Chromium received them."""
    documents = run["out"]["documents"]
    paths = {d["url"].split("?")[0].removeprefix(run["base_url"]) for d in documents}
    assert {"/s/browser-e2e", "/s/browser-e2e/results", "/s/invite-only", "/docs",
            "/s/browser-private/results"} <= paths
    for d in documents:
        h = d["headers"]
        assert h["x-content-type-options"] == "nosniff" and h["referrer-policy"] == "no-referrer", d["url"]
        assert h["content-security-policy"] == PAGE_CSP, d["url"]
        assert "frame-ancestors 'none'" in h["content-security-policy"]


def test_no_console_message_reports_a_policy_violation(run: dict[str, Any]) -> None:
    messages = run["out"]["console"]
    assert messages, "the console was not captured"
    violations = [m for m in messages if "Content Security Policy" in m["text"] or "CSP violation" in m["text"]
                  or "Refused to" in m["text"]]
    assert violations == []
    # every message is one of the expected errors (test_pages_have_no_errors...) or harmless
    assert {m["type"] for m in messages} <= {"error", "log", "info", "debug"}, messages


def test_the_api_docs_render_from_this_server(run: dict[str, Any]) -> None:
    docs = run["out"]["docs"]
    assert docs["title"].startswith("deniable collection service")
    assert docs["operations"] >= 8
    assert docs["opened"] > 500  # an operation opened, with its "Try it out" form
    assert Path(run["out"]["screenshots"]["docs"]).stat().st_size > 10_000
    docs_requests = [r["url"] for r in run["out"]["requests"] if "/docs" in r["url"]]
    assert f"{run['base_url']}/docs/assets/swagger-ui-bundle.js" in docs_requests


def test_results_for_administrators_need_the_token_in_the_browser(run: dict[str, Any]) -> None:
    admin = run["out"]["admin_results"]
    assert admin["anonymous_statuses"] == [401]  # the page is refused without the token
    assert "ERR_INVALID_AUTH_CREDENTIALS" in admin.get("anonymous_error", "")
    assert admin["summary"].startswith("200 responses")
    served = {s["url"].split("?")[0].removeprefix(run["base_url"]): s["status"] for s in admin["statuses"]}
    assert served["/s/browser-private/results"] == 200
    assert served["/surveys/browser-private/results"] == 200
    print(f"administrators' results screenshot: {run['out']['screenshots']['admin_results']}")
