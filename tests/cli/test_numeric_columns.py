"""The command line on numeric columns: privatize with a numeric mechanism, estimate the mean.

Calibration: each estimate is checked against the sample mean of the clamped
true values with |mean - truth| < 5.33 SE, which a correct (asymptotically
normal) estimator fails with probability about 1e-7 per check; power: the
band is narrower than six years, so an estimate biased by six years fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable.cli import data as cli_data

Z = 5.33  # two-sided normal tail 1e-7


def _write(path: Path, values: np.ndarray) -> None:
    pd.DataFrame({"id": np.arange(values.size), "age": values}).to_csv(path, index=False)


@pytest.mark.parametrize(
    ("mechanism", "extra"),
    [("laplace", []), ("duchi", []), ("piecewise", []), ("hybrid", []), ("square-wave", []),
     ("gaussian", ["--delta", "1e-6"])],
)
def test_privatize_and_estimate_a_numeric_column(cli, tmp_path: Path, mechanism: str, extra: list[str]) -> None:
    rng = np.random.default_rng(11)
    ages = np.clip(rng.normal(40, 12, 50_000), 0, 100).round(1)
    data, private = tmp_path / "data.csv", tmp_path / "private.csv"
    _write(data, ages)
    result = cli("privatize", data, "--column", "age", "--mechanism", mechanism, "--epsilon", 2,
                 "--low", 0, "--high", 100, *extra, "-o", private)
    assert result.exit_code == 0, result.output
    m = dn.from_config(json.loads(cli_data.config_path(private).read_text()))
    assert (m.low, m.high) == (0.0, 100.0) and m.epsilon <= 2.0
    reports = pd.read_csv(private)["age"].to_numpy()
    assert not np.array_equal(reports, ages)
    shown = cli("estimate", private, "--column", "age", "--json")
    assert shown.exit_code == 0, shown.output
    est = json.loads(shown.stdout)
    assert est["n"] == ages.size and est["mechanism"] == m.name
    assert abs(est["mean"] - ages.mean()) < Z * est["std_error"]
    assert est["ci_low"] < est["mean"] < est["ci_high"]
    assert Z * est["std_error"] < 6.0  # power: a bias of six years fails the check
    table = cli("estimate", private, "--column", "age")
    assert table.exit_code == 0 and "mean" in table.stdout and m.name in table.stdout


def test_numeric_input_errors_are_one_line(cli, tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    _write(data, np.array([1.0, 2.0, 3.0]))
    missing = cli("privatize", data, "--column", "age", "--mechanism", "laplace", "--epsilon", 1,
                  "--high", 10, "-o", tmp_path / "out.csv")
    assert missing.exit_code == 1
    assert "needs --low and --high" in missing.stderr and missing.stderr.count("\n") == 1
    pd.DataFrame({"age": ["1", "x", "3"]}).to_csv(data, index=False)
    bad = cli("privatize", data, "--column", "age", "--mechanism", "laplace", "--epsilon", 1,
              "--low", 0, "--high", 10, "-o", tmp_path / "out.csv")
    assert bad.exit_code == 1 and "'x' is not a finite number" in bad.stderr
    assert not (tmp_path / "out.csv").exists()
    wrong = cli("privatize", data, "--column", "age", "--mechanism", "grr", "--epsilon", 1,
                "--categories", "1,3", "--low", 0, "-o", tmp_path / "out.csv")
    assert wrong.exit_code == 1 and "go with a numeric --mechanism" in wrong.stderr
    delta = cli("privatize", data, "--column", "age", "--mechanism", "gaussian", "--epsilon", 1,
                "--low", 0, "--high", 10, "-o", tmp_path / "out.csv")
    assert delta.exit_code == 1 and "needs --delta" in delta.stderr
