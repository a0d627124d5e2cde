"""The oTree app (examples/otree_deniable) under oTree's own bots, and its export analyzed.

``otree test deniable_rr 12 --export DIR`` runs the app's bots on a copy of the
project: each submits a field text made by deniable-embed.js (under node; by
Python's ``to_field`` without node) after the page refused an unrandomized
answer and another configuration's report; oTree writes its real CSV export,
whose column ``deniable_rr.1.player.report`` ``deniable analyze`` reads as the
prevalence fit of those reports, exactly. The app's configuration and
fingerprint constants are the forced-response design's.

oTree pins old Starlette, SQLAlchemy and Click, so it lives in its own
environment: the ``otree`` command is DENIABLE_OTREE, else ``otree`` on PATH;
the test skips, saying so, without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from platform_exports import otree_command

from deniable import survey
from deniable.wire import to_field

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from node_env import ROOT, STATIC, run_node  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

APP = ROOT / "examples" / "otree_deniable"
DESIGN = survey.design("FR", ["1/6", "1/6"])
N = 12


def test_the_apps_constants_are_the_designs() -> None:
    text = (APP / "deniable_rr" / "__init__.py").read_text()
    config = re.search(r"CONFIG = \((.*?)\)\n", text, re.S)
    assert config is not None
    pieces = re.findall(r"'([^']*)'", config.group(1))
    assert json.loads("".join(pieces)) == DESIGN.to_config()
    assert f'FINGERPRINT = "{DESIGN.fingerprint}"' in text


def _texts(truths: list[bool]) -> list[str]:
    if shutil.which("node"):
        return run_node(ROOT / "tests" / "js" / "embed_fields.mjs",
                        {"config": json.dumps(DESIGN.to_config()), "values": truths})
    return [to_field(DESIGN, bool(r)) for r in DESIGN.privatize_many(np.array(truths))]


def test_otree_bots_and_the_export(tmp_path: Path, cli) -> None:
    otree = otree_command()
    project = tmp_path / "project"
    shutil.copytree(APP, project)
    shutil.copy(STATIC / "dist" / "deniable-embed.js", project / "_static" / "deniable" / "deniable-embed.js")
    truths = [i % 3 == 0 for i in range(N)]
    texts = _texts(truths)
    reports = tmp_path / "reports.json"
    reports.write_text(json.dumps(texts))
    export = tmp_path / "export"
    proc = subprocess.run([otree, "test", "deniable_rr", str(N), "--export", str(export)], cwd=project,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DENIABLE_OTREE_REPORTS": str(reports)})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wide = sorted(export.glob("all_apps_wide*.csv"))
    assert wide, sorted(p.name for p in export.iterdir())
    column = "deniable_rr.1.player.report"
    result = cli("analyze", wide[0], "--design", "FR", "--p", "1/6,1/6", "--response", column, "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    fit = survey.prevalence(np.array([int(json.loads(t)["report"]) for t in texts]), DESIGN)
    assert record["n"] == N
    assert record["prevalence"][0]["estimate"] == pytest.approx(float(next(iter(fit.params.values()))), rel=1e-9)
