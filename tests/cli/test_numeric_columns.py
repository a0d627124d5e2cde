"""The command line on numeric columns: privatize with a numeric mechanism, estimate the mean.

Calibration: each estimate is checked against the sample mean of the clamped
true values with |mean - truth| < 5.33 SE, which a correct (asymptotically
normal) estimator fails with probability about 1e-7 per check; power: the
band is narrower than six years, so an estimate biased by six years fails.
The audits of numeric mechanisms fail a correct mechanism with probability
at most alpha = 1e-6 (the audit's own construction); power: one that claims
80% of its real epsilon is caught.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable.cli import _data as cli_data
from deniable.cli._common import MECHANISM_NAMES
from deniable.mechanisms import registry

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
    shown = cli("estimate", private, "--column", "age", "--json", "--target", "respondents")
    assert shown.exit_code == 0, shown.output
    est = json.loads(shown.stdout)  # these ages are the respondents': the formula error
    assert est["n"] == ages.size and est["mechanism"] == m.name and est["target"] == "respondents"
    assert abs(est["mean"] - ages.mean()) < Z * est["std_error"]
    assert est["ci_low"] < est["mean"] < est["ci_high"]
    assert Z * est["std_error"] < 6.0  # power: a bias of six years fails the check
    table = cli("estimate", private, "--column", "age")
    assert table.exit_code == 0 and "mean" in table.stdout and m.name in table.stdout
    words = " ".join(table.stdout.split())
    assert "std. error" in words and "95% interval low" in words and "target: population" in words
    population = json.loads(cli("estimate", private, "--column", "age", "--json").stdout)
    assert population["target"] == "population" and population["mean"] == est["mean"]


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


def test_privatize_and_estimate_a_parquet_column(cli, tmp_path: Path) -> None:
    """The same band (|mean - truth| < 5.33 SE) on a Parquet file of float values."""
    ages = np.random.default_rng(12).uniform(18, 90, 20_000)
    data, private = tmp_path / "data.parquet", tmp_path / "private.parquet"
    pd.DataFrame({"age": ages}).to_parquet(data, index=False)
    result = cli("privatize", data, "-c", "age", "-m", "piecewise", "-e", 3, "--low", 18,
                 "--high", 90, "-o", private, "--chunk-size", 7_000)
    assert result.exit_code == 0, result.output
    est = json.loads(cli("estimate", private, "-c", "age", "--json").stdout)
    assert est["n"] == ages.size and est["range"] == [18.0, 90.0]
    assert abs(est["mean"] - ages.mean()) < Z * est["std_error"] < 6.0


def test_a_bad_report_in_a_numeric_column_names_its_row(cli, tmp_path: Path) -> None:
    data, private = tmp_path / "data.csv", tmp_path / "private.csv"
    _write(data, np.linspace(0, 10, 300))
    assert cli("privatize", data, "-c", "age", "-m", "duchi", "-e", 1, "--low", 0, "--high", 10,
               "-o", private).exit_code == 0
    frame = pd.read_csv(private, dtype=str)
    frame.loc[141, "age"] = "1e9"  # outside every report Duchi's mechanism can make
    frame.to_csv(private, index=False)
    bad = cli("estimate", private, "-c", "age", "--chunk-size", 100)
    assert bad.exit_code == 1 and bad.stderr.strip().count("\n") == 0
    assert "row 142 (line 143 of the file)" in bad.stderr and "'1e9' rejected" in bad.stderr
    mean = cli("estimate", private, "-c", "age", "--consistent", "norm-sub")  # before reading
    assert mean.exit_code == 1 and "not to a mean" in mean.stderr


@pytest.mark.parametrize("mechanism", ["laplace", "duchi", "piecewise", "hybrid", "square-wave"])
def test_audit_passes_a_numeric_mechanism(cli, mechanism: str) -> None:
    """PASS at alpha = 1e-6; power: the lower bound is near the claim (about 0.94 at 10^5 trials)."""
    result = cli("audit", "-m", mechanism, "-e", 1, "--low", -5, "--high", 5, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["passed"] is True and data["range"] == [-5.0, 5.0] and "k" not in data
    assert 0.8 < data["epsilon_lower"] <= data["epsilon_claimed"] <= 1.0


def test_audit_fails_a_numeric_mechanism_that_understates_epsilon(cli, monkeypatch) -> None:
    piecewise = registry.entry("piecewise").cls

    class Understated(piecewise):  # type: ignore[misc, valid-type]
        @property
        def epsilon(self) -> float:
            return 0.8 * super().epsilon

    monkeypatch.setattr("deniable.cli._plan.build_numeric",
                        lambda name, low, high, eps: Understated(low, high, epsilon=eps))
    result = cli("audit", "-m", "piecewise", "-e", 1, "--seed", 1)
    assert result.exit_code == 1 and "FAIL" in result.stdout


def test_audit_numeric_errors(cli) -> None:
    gaussian = cli("audit", "-m", "gaussian", "-e", 1)
    assert gaussian.exit_code == 1 and "(epsilon, delta)" in gaussian.stderr
    ranged = cli("audit", "-m", "grr", "--k", 4, "-e", 1, "--low", 0)
    assert ranged.exit_code == 1 and "go with a numeric --mechanism" in ranged.stderr
    empty = cli("audit", "-m", "laplace", "-e", 1, "--low", 2, "--high", 2)
    assert empty.exit_code == 1 and empty.stderr.startswith("error: ")
    assert empty.stderr.count("\n") == 1


def test_mechanism_names_are_the_registry_recipes_that_take_an_epsilon() -> None:
    assert MECHANISM_NAMES == (
        "auto", "binary-rr", "grr", "sue", "oue", "blh", "olh", "hadamard", "subset", "dbitflip",
        "laplace", "gaussian", "duchi", "piecewise", "square-wave", "hybrid", "one-bit-mean",
        "hierarchical", "haar",
    )
    assert "forced-response" in registry.recipes()  # a recipe, but without an epsilon


@pytest.mark.parametrize("name", [n for n in MECHANISM_NAMES if n != "auto"])
def test_written_reports_are_what_the_checked_path_gives(name: str) -> None:
    """``reports_to_text`` skips the check of fresh reports but writes what ``reports_to_json`` would."""
    recipe = registry.recipe(name)
    numeric = registry.entry(recipe.wire_id).kind in ("numeric", "range")
    params = {"epsilon": 1.0, **({"delta": 1e-6} if "delta" in recipe.required else {})}
    domain = (0.0, 10.0) if numeric else ["A", "B", "C", "D", "E"]
    m = recipe.build(domain, params)
    rng = np.random.default_rng(3)
    values = (rng.uniform(0, 10, 50) if numeric else [True, False] * 25 if name == "binary-rr"
              else [domain[i % 5] for i in range(50)])
    reports = m.privatize_many(values, rng=rng)
    text = cli_data.reports_to_text(m, reports)
    items = m.reports_to_json(reports)
    expected = items if cli_data.plain_reports(m) else [json.dumps(x, separators=(",", ":"))
                                                        for x in items]
    assert list(text) == expected
