"""The benchmark scripts run, and compare.py's bias flag is calibrated and has power.

``benchmarks/run_all.py --quick`` runs every ``benchmarks/bench_*.py`` and
``compare.py`` in quick mode in subprocesses (the same Python as the tests);
each script runs here as its own test, through run_all's runner: it must exit
0, and compare.py must report deniable's side and name the peers it skipped
(none of the peer libraries is a test dependency).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import deniable as dn

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _compare() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("bench_compare", BENCH / "compare.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_compare"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def _run_all() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run_all", BENCH / "run_all.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RUN_ALL = _run_all()


@pytest.mark.slow
@pytest.mark.parametrize("script", RUN_ALL.scripts(), ids=lambda p: p.name)
def test_each_benchmark_runs_quick(script: Path) -> None:
    """What ``run_all.py --quick`` runs, one script per test (each in its own process, so that the
    workers of a parallel run share them out, each with run_all's own timeout)."""
    ok, _seconds, out = RUN_ALL.run(script, True, 180.0)
    assert ok, out[-4000:]
    if script.name == "compare.py":
        assert "skipped peers:" in out
        assert "| GRR k=16 | deniable |" in out  # deniable's side runs with or without peers
        assert "deniable OUE + Norm-Sub" in out


def test_run_all_runs_every_benchmark_script() -> None:
    assert [p.name for p in RUN_ALL.scripts()] == sorted(p.name for p in BENCH.glob("bench_*.py")) + ["compare.py"]


def _grr_variances() -> np.ndarray:
    compare = _compare()
    return dn.GRR(16, epsilon=1.0).variance(100_000, compare.zipf(16), "respondents")  # compare.py's


def _sse(rng: np.random.Generator, variances: np.ndarray, reps: int, scale: float) -> list[float]:
    errors = rng.normal(0.0, np.sqrt(scale * variances), size=(reps, variances.size))
    return list(np.sum(errors**2, axis=1))


@pytest.mark.stat
def test_mse_flag_is_calibrated(rng: np.random.Generator) -> None:
    """Under the theory, p < 0.01 in about 1% of tables of 20 repetitions.

    300 trials: the count of p < 0.01 is ~Binomial(300, 0.01) (mean 3);
    P(count >= 16) < 1e-7, and < 1e-6 even if the chi-square approximation
    lets 1.2% through (alpha 1e-6).
    """
    chi2_p = _compare().chi2_p
    variances = _grr_variances()
    small = sum(chi2_p(_sse(rng, variances, 20, 1.0), variances) < 0.01 for _ in range(300))
    assert small < 16


@pytest.mark.stat
@pytest.mark.parametrize("scale", [1.8, 0.5])
def test_mse_flag_has_power(rng: np.random.Generator, scale: float) -> None:
    """An MSE 1.8x (or 0.5x) its theory is flagged at compare.py's alpha = 1e-4.

    With nu ~ 15 per repetition and 20 repetitions the statistic has ~300
    degrees of freedom (relative sd ~0.08), so either error is > 6 sd away;
    a trial escapes the flag with probability < 1e-3 (none of 2000 simulated
    trials did), so fewer than 15 of 20 flagged has probability < 1e-13.
    """
    chi2_p = _compare().chi2_p
    variances = _grr_variances()
    flagged = sum(chi2_p(_sse(rng, variances, 20, scale), variances) < 1e-4 for _ in range(20))
    assert flagged >= 15
