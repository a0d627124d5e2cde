"""The Qualtrics, LimeSurvey and REDCap recipes, end to end in a real headless Chromium.

The snippets of docs/howto/platforms/*.md, taken from the pages as they are,
run in local stand-ins of each platform's survey page (platform_mocks.py, built
as the platforms document their JavaScript API and pages) served from their
own origin; the embed is loaded cross-origin from a real deniable server with
its integrity hash (the server answers through the test's proxy at its own
origin). Respondents with known answers (a forced-response design,
p = 1/6, 1/6) answer one after another. Checks:

* what the platform records (Qualtrics's declared embedded data; the form
  LimeSurvey and REDCap receive) holds the embed's report with the design's
  fingerprint, and never the answer (the answer buttons are outside the form);
* the platform's export written from those records (tests/platform_exports.py)
  gives ``deniable analyze`` exactly the prevalence fit of the reports;
* the pages are screenshotted at 390 and 1280 px wide (in the test's folder, or
  in DENIABLE_SCREENSHOT_DIR when set).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import numpy as np
import pytest
from platform_exports import write_export
from platform_mocks import SGQA, limesurvey_page, qualtrics_page, redcap_page, snippet, with_embed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import STATIC, chromium, sync_playwright_api  # noqa: E402

from deniable import survey  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

runner = pytest.importorskip("deniable.server._runner")

DESIGN = survey.design("FR", ["1/6", "1/6"])
MANIFEST = json.loads((STATIC / "dist" / "deniable-embed.json").read_text())
INTEGRITY = MANIFEST["files"]["deniable-embed.js"]["integrity"]
RESPONDENTS = 12
ORIGINS = {"qualtrics": "http://survey.qualtrics.mock", "limesurvey": "http://survey.limesurvey.mock",
           "redcap": "http://redcap.mock"}
DENIABLE = "http://deniable.mock"


def _pages(embed_url: str) -> dict[str, dict[str, Any]]:
    """Each platform's page (from the docs' snippets), how to answer it, and its export's column."""
    def embed(html: str) -> str:
        return with_embed(html, embed_url, INTEGRITY)

    return {
        "qualtrics": {
            "html": qualtrics_page(embed(snippet("qualtrics.md", "Qualtrics header")),
                                   snippet("qualtrics.md", "Qualtrics question HTML"),
                                   snippet("qualtrics.md", "Qualtrics question JavaScript")),
            "path": "/jfe/form/SV_3kJd81LsQ0aZ9bT", "next": "#NextButton", "column": "__js_deniable_report",
        },
        "limesurvey": {
            "html": limesurvey_page(embed(snippet("limesurvey.md", "LimeSurvey question text"))
                                    + snippet("limesurvey.md", "LimeSurvey question script")),
            "path": "/index.php/461723", "next": "#ls-button-submit", "column": "deniable", "field": SGQA,
        },
        "redcap": {
            "html": redcap_page(embed(snippet("redcap.md", "REDCap survey page scripts")),
                                snippet("redcap.md", "REDCap survey JavaScript")),
            "path": "/surveys/", "next": "button[name=submit-btn-saverecord]", "column": "deniable_report",
            "field": "deniable_report",
        },
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = sync_playwright_api()
    shots = Path(os.environ.get("DENIABLE_SCREENSHOT_DIR") or tmp_path_factory.mktemp("platform-shots"))
    shots.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261127)
    truths = {name: [bool(t) for t in rng.random(RESPONDENTS) < 0.4] for name in ORIGINS}
    out: dict[str, Any] = {}
    with runner.BackgroundServer([]) as server, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
        def proxy(route: Any, request: Any) -> None:
            # the deniable server as the pages' third origin (a loopback address cannot be fetched from a
            # public page's origin under Chromium's private network rules): its own response, headers and all
            route.fulfill(response=route.fetch(url=server.url + request.url.removeprefix(DENIABLE)))

        for name, spec in _pages(DENIABLE).items():
            records: list[Any] = []
            errors: list[str] = []

            def serve(route: Any, request: Any, spec: dict[str, Any] = spec, records: list[Any] = records) -> None:
                if request.method == "POST":
                    body = request.post_data or ""
                    records.append(json.loads(body) if body.startswith("{") else parse_qs(body, keep_blank_values=True))
                    route.fulfill(status=200, content_type="text/html", body="<p>Thank you.</p>")
                else:
                    route.fulfill(status=200, content_type="text/html; charset=utf-8", body=spec["html"])

            context = browser.new_context()
            context.route(f"{ORIGINS[name]}/**", serve)
            context.route(f"{DENIABLE}/**", proxy)
            page = context.new_page()
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
            for i, truth in enumerate(truths[name]):
                page.goto(f"{ORIGINS[name]}{spec['path']}")
                page.wait_for_function("typeof Deniable === 'object'", timeout=30_000)
                choice = page.locator(f'input[name="deniable-truth"][value="{"yes" if truth else "no"}"]')
                if i == 0:
                    for width in (390, 1280):
                        page.set_viewport_size({"width": width, "height": 800})
                        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
                choice.check()
                if i == 0:
                    page.set_viewport_size({"width": 390, "height": 800})
                    page.screenshot(path=str(shots / f"{name}-answered-390.png"), full_page=True)
                    page.set_viewport_size({"width": 1280, "height": 800})
                with page.expect_request(lambda r: r.method == "POST"):
                    page.click(spec["next"])
            page.wait_for_timeout(200)
            context.close()
            out[name] = {"records": records, "errors": errors, "truths": truths[name], "spec": spec}
        browser.close()
    out["shots"] = shots
    return out


def _texts(run: dict[str, Any]) -> list[str]:
    """The stored field text of each response (a form post's value, or Qualtrics's recorded embedded data)."""
    spec = run["spec"]
    if "field" in spec:
        return [record[spec["field"]][0] for record in run["records"]]
    return [record[spec["column"]] for record in run["records"]]


@pytest.mark.parametrize("platform", list(ORIGINS))
def test_the_platform_stores_only_the_report(runs: dict[str, Any], platform: str) -> None:
    run = runs[platform]
    assert run["errors"] == []
    assert len(run["records"]) == RESPONDENTS
    for record, text in zip(run["records"], _texts(run), strict=True):
        data = json.loads(text)
        assert set(data) == {"format", "version", "fingerprint", "report"}
        assert data["fingerprint"] == DESIGN.fingerprint and data["report"] in (True, False)
        assert "deniable-truth" not in record  # the answer buttons are not the platform's
        if platform == "qualtrics":
            assert set(record) == {"__js_deniable_report"}


@pytest.mark.parametrize("platform", list(ORIGINS))
def test_the_export_analyzes_as_the_reports(runs: dict[str, Any], platform: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from deniable.cli import app

    run = runs[platform]
    texts = _texts(run)
    path = tmp_path / f"{platform}.csv"
    write_export(platform, path, {run["spec"]["column"]: texts})
    result = CliRunner().invoke(app, ["analyze", str(path), "--design", "FR", "--p", "1/6,1/6",
                                      "--response", run["spec"]["column"], "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    fit = survey.prevalence(np.array([int(json.loads(t)["report"]) for t in texts]), DESIGN)
    assert record["n"] == RESPONDENTS
    assert record["prevalence"][0]["estimate"] == pytest.approx(float(next(iter(fit.params.values()))), rel=1e-9)


def test_screenshots_were_taken(runs: dict[str, Any]) -> None:
    for name in ORIGINS:
        for shot in (f"{name}-390.png", f"{name}-1280.png", f"{name}-answered-390.png"):
            assert (runs["shots"] / shot).stat().st_size > 1000
