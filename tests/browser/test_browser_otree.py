"""The oTree app (examples/otree_deniable) for real: oTree's server, the page in headless Chromium.

A copy of the project (with deniable-embed.js in its ``_static/deniable/``) runs
under ``otree devserver``; a demo session is created from its demo page and
each participant's link is opened in Chromium, where the page randomizes the
chosen answer with the embed and submits it. oTree's own export
(``/ExportWide``) then holds one report per participant, with the design's
fingerprint, and no answer: ``deniable analyze`` reads it. The question page is
screenshotted at 390 and 1280 px wide.

Skips without oTree (DENIABLE_OTREE, or ``otree`` on PATH) or Chromium.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from platform_exports import otree_command

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import ROOT, STATIC, chromium, sync_playwright_api  # noqa: E402

from deniable import survey  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.slow]

httpx = pytest.importorskip("httpx")

DESIGN = survey.design("FR", ["1/6", "1/6"])
PARTICIPANTS = 4  # the session config's num_demo_participants
COLUMN = "deniable_rr.1.player.report"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    otree = otree_command()
    project = tmp_path_factory.mktemp("otree") / "project"
    shutil.copytree(ROOT / "examples" / "otree_deniable", project)
    shutil.copy(STATIC / "dist" / "deniable-embed.js", project / "_static" / "deniable" / "deniable-embed.js")
    port = _free_port()
    # devserver starts oTree again by its name: its folder goes first on PATH
    env = {**os.environ, "PATH": f"{Path(otree).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen([otree, "devserver", str(port)], cwd=project, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{url}/demo", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.25)
        else:
            pytest.fail("otree devserver did not start")
        yield url
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)


def test_participants_answer_and_otree_stores_only_reports(server: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from deniable.cli import app

    sync_api = sync_playwright_api()
    shots = Path(os.environ.get("DENIABLE_SCREENSHOT_DIR") or tmp_path)
    truths = [True, False, False, True]
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{server}/demo/deniable_rr")
        page.wait_for_url(lambda u: "/SessionStartLinks/" in u, timeout=60_000)
        links = [h for h in page.eval_on_selector_all("a", "els => els.map((e) => e.href)")
                 if "/InitializeParticipant/" in h]
        assert len(links) == PARTICIPANTS
        for i, (link, truth) in enumerate(zip(links, truths, strict=True)):
            page.goto(link)
            page.wait_for_function("typeof Deniable === 'object'", timeout=30_000)
            page.check(f'input[name="deniable-truth"][value="{"yes" if truth else "no"}"]')
            if i == 0:
                for width in (390, 1280):
                    page.set_viewport_size({"width": width, "height": 800})
                    page.screenshot(path=str(shots / f"otree-{width}.png"), full_page=True)
            with page.expect_request(lambda r: r.method == "POST") as posted:
                page.click("button.otree-btn-next")
            assert "deniable-truth" not in (posted.value.post_data or "")
            page.wait_for_selector("text=Your randomized answer was recorded.", timeout=30_000)
        browser.close()
    assert errors == []
    export = tmp_path / "all_apps_wide.csv"
    export.write_bytes(httpx.get(f"{server}/ExportWide", timeout=30).content)
    with open(export, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.DictReader(f) if r[COLUMN]]
    assert len(rows) == PARTICIPANTS
    for row in rows:
        data = json.loads(row[COLUMN])
        assert data["fingerprint"] == DESIGN.fingerprint and data["report"] in (True, False)
    result = CliRunner().invoke(app, ["analyze", str(export), "--design", "FR", "--p", "1/6,1/6",
                                      "--response", COLUMN, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n"] == PARTICIPANTS
