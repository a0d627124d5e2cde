"""L-GRR, L-OSUE, dBitFlip and 1BitMean in a real headless Chromium: kept across reloads.

The real server serves a page; ``memo.mjs`` (playwright-core with the system
Chromium) makes ``persistentClient(config, {key})`` of client_state.js for each of
the four mechanisms there, kept in IndexedDB. After a reload and after a
browser restart with the same profile every memoized draw (L-GRR's and
L-OSUE's first rounds, dBitFlip's slot bits, 1BitMean's bits) is the same, and
dBitFlip's and 1BitMean's reports (which have no fresh part) are too; a fresh
profile (another device) draws other ones; a state kept for another
configuration is refused; the reports decode in Python.

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
    "id": "weekly", "title": "Weekly check-in", "budget": 2.0,
    "questions": [{"id": "ok", "text": "Did you sleep well?", "type": "yes-no",
                   "mechanism": "forced-response", "p_truth": 0.75, "p_yes": 0.5}],
}
CATEGORIES = [f"c{i}" for i in range(40)]
NUMBERS = [0.0, 13.0, 37.5, 61.25, 99.0]
# (name, mechanism, another configuration, values); wide enough that two devices' memoized
# draws differ except with negligible probability (at least 2^-40 apart per case)
CASES: list[tuple[str, Any, Any, list[Any]]] = [
    ("l-grr", dn.LGRR(CATEGORIES, epsilon_perm=2.0, epsilon_1=1.0),
     dn.LGRR(CATEGORIES, epsilon_perm=3.0, epsilon_1=1.0), CATEGORIES),
    ("l-osue", dn.LOSUE(CATEGORIES, epsilon_perm=2.0, epsilon_1=1.0),
     dn.LOSUE(CATEGORIES, epsilon_perm=3.0, epsilon_1=1.0), CATEGORIES[:8]),
    ("dbitflip", dn.DBitFlip(CATEGORIES, d=8, epsilon=1.0), dn.DBitFlip(CATEGORIES, d=4, epsilon=1.0), CATEGORIES),
    ("one-bit-mean", dn.OneBitMean(0, 100, epsilon=1.0, points=101),
     dn.OneBitMean(0, 100, epsilon=2.0, points=101), [float(v) for v in range(0, 100, 2)]),
]
DETERMINISTIC = {"dbitflip", "one-bit-mean"}  # no fresh randomness after the memoized draws


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    playwright_core()
    browser = chromium()
    tmp = tmp_path_factory.mktemp("longitudinal")
    cases = [{"config": m.to_config(), "other_config": other.to_config(), "key": f"weekly/{name}", "values": values}
             for name, m, other, values in CASES]
    with runner.BackgroundServer([SURVEY], db_url=f"sqlite:///{tmp / 'responses.db'}") as server:
        return dict(run_node(Path(__file__).with_name("memo.mjs"), {
            "chromium": browser, "base_url": server.url, "page_path": f"/s/{SURVEY['id']}", "cases": cases,
        }))


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0] for c in CASES])
def test_reload_and_restart_keep_the_memoized_draws(seen: dict[str, Any], i: int) -> None:
    assert seen["problems"] == []
    name = CASES[i][0]
    first = seen["first"][i]
    assert "error" not in first, first
    for later in ("reloaded", "restarted"):
        assert seen[later][i]["permanent"] == first["permanent"], (name, later)
        if name in DETERMINISTIC:
            assert seen[later][i]["reports"] == first["reports"], (name, later)
    assert seen["other_profile"][i]["permanent"] != first["permanent"], name


@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0] for c in CASES])
def test_reports_decode_and_another_configuration_is_refused(seen: dict[str, Any], i: int) -> None:
    name, m, _, values = CASES[i]
    reports = [json.loads(r) for r in seen["first"][i]["reports"]]
    assert len(m.reports_from_json(reports)) == len(values)
    refused = seen["other_config"][i]
    assert refused["error"] == "DeniableError" and refused["field"] == "state", (name, refused)
