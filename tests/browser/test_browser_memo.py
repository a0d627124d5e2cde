"""Repeated collection in a real headless Chromium: the browser keeps its RAPPOR state.

The real server serves a survey page; on it ``memo.mjs`` (playwright-core with the
system Chromium) makes ``persistentClient(config, {key})`` of client_state.js, which keeps
a secret and the cohort in IndexedDB. Checks: after a reload and after a browser
restart with the same profile, the cohort and every permanent response are the same
(with ``p=0, q=1`` the reports themselves are); a fresh profile (another device)
draws other ones; a state kept for another configuration is refused; the reports
are valid for the Python mechanism.

Skips when node, playwright-core or Chromium are missing, unless
DENIABLE_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import chromium, playwright_core, run_node  # noqa: E402

import deniable as dn  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.integration]

runner = pytest.importorskip("deniable.server._runner")

SURVEY = {
    "id": "daily", "title": "Daily check-in", "budget": 2.0,
    "questions": [{"id": "ok", "text": "Did you sleep well?", "type": "yes-no",
                   "mechanism": "forced-response", "p_truth": 0.75, "p_yes": 0.5}],
}
VALUES = ["news", "sport", "music", "café"]


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    playwright_core()
    browser = chromium()
    m = dn.RAPPOR(VALUES, f=0.5, p=0.0, q=1.0, num_bits=128, num_hashes=2, num_cohorts=32, hashing="google")
    other = dn.RAPPOR(VALUES, f=0.25, p=0.0, q=1.0, num_bits=128, num_hashes=2, num_cohorts=32, hashing="google")
    tmp = tmp_path_factory.mktemp("memo")
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'responses.db'}") as server:
        out = run_node(Path(__file__).with_name("memo.mjs"), {
            "chromium": browser, "base_url": server.url, "page_path": f"/s/{SURVEY['id']}",
            "config": m.to_config(), "other_config": other.to_config(), "key": "daily/topic", "values": VALUES,
        })
    out["mechanism"] = m
    return out


def test_reload_and_restart_keep_the_permanent_responses(seen: dict[str, Any]) -> None:
    assert seen["problems"] == []
    first = seen["first"]
    assert "error" not in first, first
    for later in ("reloaded", "restarted"):
        assert seen[later]["cohort"] == first["cohort"]
        assert seen[later]["permanent"] == first["permanent"]
        assert seen[later]["reports"] == first["reports"]  # p=0, q=1: the report is the permanent response
    assert [int(b) for b in first["permanent"]] != [int(b) for b in seen["other_profile"]["permanent"]]


def test_reports_are_valid_and_another_configuration_is_refused(seen: dict[str, Any]) -> None:
    m = seen["mechanism"]
    reports = [json.loads(r) for r in seen["first"]["reports"]]
    checked = m.reports_from_json(reports)
    assert [r["cohort"] for r in m.reports_to_json(checked)] == [seen["first"]["cohort"]] * len(VALUES)
    assert [r["bits"] for r in reports] == [int(b) for b in seen["first"]["permanent"]]
    refused = seen["other_config"]
    assert refused["error"] == "DeniableError" and refused["field"] == "state", refused
