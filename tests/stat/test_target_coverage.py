"""Inference targets: each interval covers what it claims, under its own sampling model.

Two sampling models, drawn by ``dn.simulate(..., target=...)``:

* ``"respondents"``: a fixed set of ``n`` respondents with the given shares;
  only the randomization is random. The truth is their own shares.
* ``"population"``: every survey draws its respondents' values
  ``Multinomial(n, f)`` from a population with shares ``f``, then randomizes
  them. The truth is ``f``.

For each cell, R = 2000 surveys are simulated under each model and every
survey is estimated for both targets from the same support counts. A 2 x 2
table of (model, interval target) per category:

* matching pairs: the hits of the 95% normal interval lie in the two-sided
  binomial band around 95% (``testing.coverage_check``), so an interval too
  wide fails as surely as one too narrow;
* power: the mismatched pairs fail the same check. The ``"respondents"``
  interval under-covers under population sampling (it leaves out the
  sampling term ``f (1 - f) / n``) and the ``"population"`` interval
  over-covers a fixed set of respondents.

The cells have a large epsilon and shares away from 0, where the sampling
term is a large part of the variance, and n = 2000 makes the Wald interval
accurate. Under-coverage is checked in every cell (the population standard
error is at least 1.3 times the respondents' one: the respondents' interval
then covers at most 87%, and its count falls in the band with probability
below 1e-14); over-coverage in the cells marked ``over`` (ratio at least
1.45: the population interval covers more than 99.5% of fixed respondents).
``test_cells_separate_the_targets`` checks those ratios and the exact
binomial misses they imply, so the power checks cannot silently lose their
power. (With OUE at epsilon 4 and a share of 0.5 the ratio was 1.198, the
coverage 0.898, and the power check missed 1.2e-4 of the time; for OUE the
ratio is at most sqrt(2 - f), so its cell has four equal shares.)
Unary encoding (p* = 1/2) has too much noise of its own for the
over-coverage check. Under population sampling the empirical variance of the estimates
is also checked against ``variance(n, f, "population")`` (chi-square band),
and must reject the respondents' variance (power).

Alpha: every test function spends 1e-6 in total (Bonferroni over its checks
and categories).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable import testing
from deniable._estimate import SupportCounts

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 2000
LEVEL = 0.95
TARGETS = ("respondents", "population")


@dataclass(frozen=True)
class Cell:
    id: str
    build: Any
    truth: tuple[float, ...]
    n: int
    over: bool = True  # also check that the population interval over-covers fixed respondents


CELLS = [
    Cell("Warner-p0.9", lambda: dn.BinaryRR(prob=0.9), (0.5, 0.5), 2000),
    Cell("forced-response", lambda: dn.BinaryRR.forced_response(0.8, 0.5), (0.7, 0.3), 2000),
    Cell("GRR-k4-eps3", lambda: dn.GRR(["a", "b", "c", "d"], epsilon=3.0), (0.4, 0.3, 0.2, 0.1), 2000),
    Cell("SUE-k3-eps6", lambda: dn.SUE(3, epsilon=6.0), (0.5, 0.3, 0.2), 2000),
    Cell("OUE-k4-eps6", lambda: dn.OUE(4, epsilon=6.0), (0.25, 0.25, 0.25, 0.25), 2000, over=False),
]
# real reports (subset selection has no joint sampler): fewer surveys, so a wider separation
SLOW = Cell("SS-k4-eps4", lambda: dn.SubsetSelection(4, epsilon=4.0), (0.4, 0.3, 0.2, 0.1), 2000)
R_SLOW = 600


def cell_params(cells: list[Cell]) -> Any:
    return pytest.mark.parametrize("cell", cells, ids=[c.id for c in cells])


def surveys(m: Any, cell: Cell, model: str, reps: int, rng: np.random.Generator) -> tuple[Any, np.ndarray]:
    """``reps`` simulated surveys under ``model``: their support counts ``(reps, k)`` and the truth."""
    runs = [dn.simulate(m, cell.truth, cell.n, rng=rng, target=model) for _ in range(reps)]
    assert all(e.target == model for e in runs)
    return np.stack([e.support_counts for e in runs]), np.asarray(runs[0].truth)


def hits(m: Any, support: np.ndarray, n: int, target: str, truth: np.ndarray) -> np.ndarray:
    """Per category, how many of the surveys' 95% intervals for ``target`` contain ``truth``."""
    est = m.estimate_from(SupportCounts(m.fingerprint, support, n), target=target)
    assert est.target == target
    low, high = est.ci(LEVEL)
    return ((low <= truth) & (truth <= high)).sum(axis=0)


def two_by_two(cell: Cell, reps: int, rng: np.random.Generator) -> tuple[Any, dict[tuple[str, str], np.ndarray]]:
    m = cell.build()
    table = {}
    for model in TARGETS:
        support, truth = surveys(m, cell, model, reps, rng)
        for target in TARGETS:
            table[model, target] = hits(m, support, cell.n, target, truth)
    return m, table


def check_table(cell: Cell, k: int, table: dict[tuple[str, str], np.ndarray], reps: int) -> None:
    a = ALPHA / (2 * k)  # the two matching pairs, per category
    for model in TARGETS:
        for target in TARGETS:
            if model == "respondents" != target and not cell.over:
                continue  # no over-coverage check in this cell (module docstring)
            results = [testing.coverage_check(int(h), reps, LEVEL, a, label=f"{cell.id} {model} model, "
                                              f"{target} interval, category {v}")
                       for v, h in enumerate(table[model, target])]
            if model == target:
                assert all(r.passed for r in results), "\n".join(str(r) for r in results)
            else:  # power: the other target's interval is rejected in every category
                assert not any(r.passed for r in results), (model, target, table[model, target])


@cell_params(CELLS)
def test_each_target_covers_under_its_own_sampling_model(cell: Cell, rng: np.random.Generator) -> None:
    """2 x 2 coverage table (module docstring); alpha 1e-6 over 2 matching pairs x k categories."""
    m, table = two_by_two(cell, R, rng)
    check_table(cell, m.k, table, R)


@pytest.mark.slow
def test_each_target_covers_through_real_reports(rng: np.random.Generator) -> None:
    """The same table for subset selection, whose surveys go through privatize_many
    (R = 600 surveys); alpha 1e-6 over 2 matching pairs x k categories."""
    m, table = two_by_two(SLOW, R_SLOW, rng)
    check_table(SLOW, m.k, table, R_SLOW)


@cell_params(CELLS)
def test_population_variance_under_population_sampling(cell: Cell, rng: np.random.Generator) -> None:
    """Estimates of R surveys sampled from the population: mean within z sd/sqrt(R) of f and
    variance in the chi-square band of ``variance(n, f, "population")``; alpha 1e-6 over the
    2 checks x k categories. Power: the respondents' variance (A) is rejected."""
    m = cell.build()
    support, truth = surveys(m, cell, "population", R, rng)
    est = m.estimate_from(SupportCounts(m.fingerprint, support, cell.n))  # the default target
    assert est.target == "population"
    a = ALPHA / 2
    res = testing.mean_check(est.frequencies, truth, a, label=cell.id)
    assert res.passed, str(res)
    res = testing.variance_ratio_check(est.frequencies, m.variance(cell.n, truth), a, label=cell.id)
    assert res.passed, str(res)
    fixed = m.variance(cell.n, truth, "respondents")
    assert not testing.variance_ratio_check(est.frequencies, fixed, a).passed


def test_numeric_mean_covers_its_target(rng: np.random.Generator) -> None:
    """The same 2 x 2 table for a mean: Laplace on [0, 1] at epsilon 8, n = 200, R = 2000.

    Fixed respondents hold an even grid over [0, 1] (mean 1/2); sampled
    respondents are drawn U[0, 1] afresh for each survey (population mean
    1/2). Laplace's noise variance does not depend on the value, so its
    formula error is exact for fixed respondents. The spread of the values
    (1/12) against the noise (2 / 8^2 = 1/32 in [0, 1] units) makes the
    population error 1.9 times the respondents' one: the mismatched pairs
    cover about 70% and over 99.9%, both far outside the band (power).
    Alpha 1e-6 over the 2 matching pairs.
    """
    m = dn.Laplace(0.0, 1.0, epsilon=8.0)
    n = 200
    values = {"respondents": np.tile(np.linspace(0.0, 1.0, n), (R, 1)),
              "population": rng.uniform(0.0, 1.0, (R, n))}
    for model, grid in values.items():
        reports = m.privatize_many(grid.ravel(), rng=rng).reshape(R, n)
        stats = [m.aggregate(row) for row in reports]
        for target in TARGETS:
            bounds = [m.estimate_from(stat, target=target).ci(LEVEL) for stat in stats]
            hit = sum(lo <= 0.5 <= hi for lo, hi in bounds)
            res = testing.coverage_check(hit, R, LEVEL, ALPHA / 2, label=f"Laplace {model} model, {target}")
            assert res.passed == (model == target), str(res)


def test_cells_separate_the_targets() -> None:
    """Deterministic guard on the design: the population standard error over the respondents'
    one is at least 1.3 in every cell and category, 1.45 where over-coverage is checked and
    1.6 for the slow cell's 600 surveys; the hits of the mismatched intervals those ratios
    imply fall in the band with probability below 1e-14 (exact binomial tails; module docstring)."""
    from scipy import stats

    z = testing.z_for(1 - LEVEL)
    for cell in [*CELLS, SLOW]:
        m = cell.build()
        f = np.asarray(cell.truth)
        assert math.isclose(float(f.sum()), 1.0)
        ratio = np.sqrt(m.variance(cell.n, f, "population") / m.variance(cell.n, f, "respondents"))
        need = 1.6 if cell is SLOW else 1.45 if cell.over else 1.3
        assert ratio.min() >= need, (cell.id, ratio)
        reps = R_SLOW if cell is SLOW else R
        low, high = testing.coverage_band(reps, LEVEL, ALPHA / (2 * m.k))
        under = 2 * _phi(z / ratio.min()) - 1  # the respondents' interval, sampled respondents
        assert stats.binom.sf(low - 1, reps, under) < 1e-14, (cell.id, under)
        if cell.over:
            over = 2 * _phi(z * ratio.min()) - 1  # the population interval, fixed respondents
            assert stats.binom.cdf(high, reps, over) < 1e-14, (cell.id, over)


def _phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))
