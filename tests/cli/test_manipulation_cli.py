"""The command line states manipulation: ``plan --robust`` and the bound under ``estimate``. Deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import deniable as dn


def test_plan_shows_sensitivity_and_the_robust_rule(cli) -> None:
    result = cli("plan", "--k", 1024, "--epsilon", 1, "--robust", 1.2, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    choice = dn.best_mechanism(1024, 1.0, robust=1.2)
    assert data["recommended"] == choice.name == "SUE" and data["rule"] == choice.rule
    for row in data["mechanisms"]:
        assert row["manipulation"] == pytest.approx(choice.sensitivities[row["mechanism"]])
    table = cli("plan", "--k", 1024, "--epsilon", 1)
    assert table.exit_code == 0 and "596.4/n" in table.output and "lowest Var*" in table.output
    bad = cli("plan", "--k", 8, "--epsilon", 1, "--robust", 0.5)
    assert bad.exit_code != 0 and "--robust must be a factor >= 1" in bad.output


def test_estimate_states_how_far_fake_reports_could_move_it(cli, tmp_path: Path) -> None:
    m = dn.GRR(["a", "b", "c", "d"], epsilon=1.0)
    reports = m.privatize_many(np.array(["a", "b", "c", "d"] * 250), rng=1)
    path = tmp_path / "private.csv"
    path.write_text("x\n" + "\n".join(reports.tolist()) + "\n")
    (tmp_path / "private.csv.deniable.json").write_text(json.dumps(m.to_config()))
    per_report = float(np.max(m.estimate(reports).manipulation_bound(1)))
    result = cli("estimate", str(path), "--column", "x", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["manipulation_per_fake_report"] == pytest.approx(per_report)
    table = cli("estimate", str(path), "--column", "x")
    assert "m fake reports among these 1,000 could move a share by at most m" in " ".join(table.output.split())
