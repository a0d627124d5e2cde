"""Layer D: the estimators are unbiased, have the formula variance, and their intervals cover.

Everything here is the fixed-population model (``target="respondents"``);
tests/stat/test_targets.py covers respondents sampled from a population.

Replicates: for a fixed population (counts per category) each cell draws
R = 2000 surveys' support counts with the mechanism's exact joint sampler
(``m.simulate_support_counts``, binomial/multinomial) and estimates all of
them at once through the real ``estimate_from`` / ``Estimate.ci`` code (the
arrays broadcast over a leading replicate axis). A smaller slow-path run goes
through real ``privatize_many`` reports, also for the mechanisms that have no
joint sampler (local hashing, subset selection).

Coverage is checked exactly, not against a guessed tolerance: the support
count of one category is ``Bin(n_v, p*) + Bin(n - n_v, q*)``, so the true
coverage probability of each interval method is a finite sum. The simulated
hit count must lie in the two-sided binomial band around that exact coverage,
and the exact coverage itself is compared with the nominal 95%:
Clopper-Pearson (mapped) is never below it (MECHANISMS.md 6.2), Wilson and
the normal (Wald) interval are within 2 points of it once n >= 1000, and the
normal interval under-covers at small n (documented below).

Alpha: every test function spends 1e-6 in total (Bonferroni over its checks,
which split further over categories). Power: each check is rerun with a
deliberately wrong ingredient (the estimator or variance of a mechanism with
1.2 x epsilon, 85% intervals passed off as 95%) and must reject.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable import testing
from deniable._estimate import SupportCounts
from deniable.simulate import population_counts

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 2000
LEVEL = 0.95
METHODS = ("normal", "wilson", "clopper-pearson")


@dataclass(frozen=True)
class Cell:
    id: str
    build: Any
    truth: tuple[float, ...]
    n: int


def _zipf(k: int) -> tuple[float, ...]:
    w = 1 / np.arange(1, k + 1)
    return tuple(w / w.sum())


CELLS = [
    Cell("BinaryRR-ln3-n1000", lambda: dn.BinaryRR(epsilon=math.log(3)), (0.7, 0.3), 1000),
    Cell("BinaryRR-forced-n2000", lambda: dn.BinaryRR.forced_response(0.3, 0.8), (0.9, 0.1), 2000),
    Cell("GRR-k10-zeros-n5000", lambda: dn.GRR(10, epsilon=1.0),
         (0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05, 0, 0, 0), 5000),
    Cell("GRR-ABCD-uniform-n500", lambda: dn.GRR(["A", "B", "C", "D"], prob=0.75), (0.26, 0.25, 0.25, 0.24), 500),
    Cell("GRR-k20-small-n100", lambda: dn.GRR(20, epsilon=0.5), (0.5, 0.5) + (0,) * 18, 100),
    Cell("SUE-k8-zipf-n3000", lambda: dn.SUE(8, epsilon=2.0), _zipf(8), 3000),
    Cell("OUE-k20-sparse-n5000", lambda: dn.OUE(20, epsilon=1.0), (0.5, 0.3, 0.2) + (0,) * 17, 5000),
    Cell("OUE-k10-small-n100", lambda: dn.OUE(10, epsilon=0.5), (0.9, 0.1) + (0,) * 8, 100),
    Cell("HR-k10-uniform-n5000", lambda: dn.HadamardResponse(10, epsilon=1.0), (0.1,) * 10, 5000),
]


def cell_params(cells: list[Cell]) -> Any:
    return pytest.mark.parametrize("cell", cells, ids=[c.id for c in cells])


def replicate_counts(m: Any, counts: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """``(reps, k)`` support counts of independent simulated surveys (exact joint draw)."""
    return np.stack([m.simulate_support_counts(counts, rng) for _ in range(reps)])


def stacked_estimate(m: Any, support: np.ndarray, n: int, target: str = "respondents") -> Any:
    """One Estimate whose arrays carry a leading replicate axis (the real estimator code)."""
    return m.estimate_from(SupportCounts(m.fingerprint, support, n), target=target)


def exact_coverage(m: Any, counts: np.ndarray, method: str) -> np.ndarray:
    """Exact per-category coverage probability of ``Estimate.ci(LEVEL, method)``.

    ``C_v ~ Bin(n_v, p*) + Bin(n - n_v, q*)``: sum its pmf over the support
    counts whose interval contains the true share.
    """
    n = int(counts.sum())
    p, q = m.support_rates()
    grid = np.repeat(np.arange(n + 1)[:, None], m.k, axis=1)
    low, high = stacked_estimate(m, grid, n).ci(LEVEL, method)
    truth = counts / n
    out = np.empty(m.k)
    for v in range(m.k):
        pmf = np.convolve(stats.binom.pmf(np.arange(counts[v] + 1), counts[v], p[v]),
                          stats.binom.pmf(np.arange(n - counts[v] + 1), n - counts[v], q[v]))
        inside = (low[:, v] <= truth[v]) & (truth[v] <= high[:, v])
        out[v] = float(pmf[inside].sum())
    return out


def simulate_cell(cell: Cell, rng: np.random.Generator) -> tuple[Any, np.ndarray, Any]:
    m = cell.build()
    counts = population_counts(np.array(cell.truth), cell.n, m.k)
    return m, counts, stacked_estimate(m, replicate_counts(m, counts, R, rng), cell.n)


# ---------------------------------------------------------- unbiasedness, variance
@cell_params(CELLS)
def test_unbiased_with_formula_variance(cell: Cell, rng: np.random.Generator) -> None:
    """Mean within z sd/sqrt(R) of the truth and sample variance within the chi-square band
    of formula (A); alpha 1e-6 over 2 checks x k categories."""
    m, counts, est = simulate_cell(cell, rng)
    truth = counts / cell.n
    a = ALPHA / 2
    res = testing.mean_check(est.frequencies, truth, a, label=cell.id)
    assert res.passed, str(res)
    res = testing.variance_ratio_check(est.frequencies, m.variance(cell.n, truth, "respondents"), a, label=cell.id)
    assert res.passed, str(res)
    # the per-replicate standard errors plug in clip(f, 0, 1) into the same formula
    for i in range(5):
        np.testing.assert_allclose(est.std_errors[i] ** 2,
                                   m.variance(cell.n, np.clip(est.frequencies[i], 0, 1), "respondents"),
                                   rtol=1e-12)


@cell_params(CELLS[:3] + CELLS[5:7])  # skewed truths: a wrong debias shifts them
def test_unbiasedness_and_variance_checks_have_power(cell: Cell, rng: np.random.Generator) -> None:
    """Power: debiasing with the p*, q* of 1.2 x epsilon is caught as biased, and that
    mechanism's (smaller) variance formula is caught by the variance band."""
    m, counts, est = simulate_cell(cell, rng)
    truth = counts / cell.n
    wrong = _stronger(m)
    p, q = wrong.support_rates()
    biased = (est.observed - q) / (p - q)
    assert not testing.mean_check(biased, truth, ALPHA / 2).passed
    wrong_variance = wrong.variance(cell.n, truth, "respondents")
    assert not testing.variance_ratio_check(est.frequencies, wrong_variance, ALPHA / 2).passed


def _stronger(m: Any) -> Any:
    """The same mechanism 20% off: 1.2 x epsilon, or a forced-response yes rate 20% low."""
    if isinstance(m, dn.BinaryRR):
        if m.p_yes_given_yes + m.p_yes_given_no == 1:
            return dn.BinaryRR(epsilon=m.epsilon * 1.2)
        return dn.BinaryRR._from_channel(m.p_yes_given_yes, m.p_yes_given_no * 4 / 5)
    return type(m)(list(m.domain), epsilon=m.epsilon * 1.2)


# --------------------------------------------------------------------- coverage
@cell_params(CELLS)
def test_interval_coverage(cell: Cell, rng: np.random.Generator) -> None:
    """Hits of each method within the two-sided binomial band around its exact coverage;
    alpha 1e-6 over 3 methods x k categories."""
    m, counts, est = simulate_cell(cell, rng)
    truth = counts / cell.n
    a = ALPHA / (len(METHODS) * m.k)
    failures = []
    for method in METHODS:
        low, high = est.ci(LEVEL, method)
        hits = ((low <= truth) & (truth <= high)).sum(axis=0)
        exact = exact_coverage(m, counts, method)
        for v in range(m.k):
            res = testing.coverage_check(int(hits[v]), R, min(exact[v], 1 - 1e-12), a,
                                         label=f"{cell.id} {method} category {v}")
            if not res.passed:
                failures.append(str(res))
    assert not failures, "\n".join(failures)


@cell_params(CELLS)
def test_exact_coverage_against_nominal(cell: Cell) -> None:
    """Deterministic: Clopper-Pearson (mapped) never covers less than 95%; Wilson and the
    normal interval lose at most 2 points once n >= 1000."""
    m = cell.build()
    counts = population_counts(np.array(cell.truth), cell.n, m.k)
    cp = exact_coverage(m, counts, "clopper-pearson")
    assert cp.min() >= LEVEL - 1e-9, cp
    if cell.n >= 1000:
        for method in ("wilson", "normal"):
            cov = exact_coverage(m, counts, method)
            assert cov.min() >= LEVEL - 0.02, (method, cov)


def test_normal_interval_undercovers_at_small_n() -> None:
    """The documented regime: GRR, k = 20, epsilon 0.5, n = 100, two categories at 50%.

    The Wald interval covers those categories about 93% of the time; the
    recommended Clopper-Pearson interval keeps at least 95%.
    """
    cell = next(c for c in CELLS if c.id == "GRR-k20-small-n100")
    m = cell.build()
    counts = population_counts(np.array(cell.truth), cell.n, m.k)
    normal = exact_coverage(m, counts, "normal")
    assert normal[:2].max() < 0.94
    assert exact_coverage(m, counts, "clopper-pearson").min() >= LEVEL


@cell_params([CELLS[2], CELLS[6], CELLS[8]])
def test_coverage_check_has_power(cell: Cell, rng: np.random.Generator) -> None:
    """Power: 85% intervals passed off as 95% intervals fall outside the band.

    (With R = 2000 the band around a 95% coverage is about +-2.3 points at the
    Bonferroni level used; conservative methods' 90% intervals can cover 93%.)
    """
    m, counts, est = simulate_cell(cell, rng)
    truth = counts / cell.n
    a = ALPHA / (len(METHODS) * m.k)
    for method in METHODS:
        low, high = est.ci(0.85, method)
        hits = ((low <= truth) & (truth <= high)).sum(axis=0)
        exact = exact_coverage(m, counts, method)
        rejected = [not testing.coverage_check(int(hits[v]), R, exact[v], a).passed
                    for v in range(m.k) if counts[v] > 0]
        assert all(rejected), (method, hits, exact)


# ------------------------------------------------------------------ slow path
SLOW_CELLS = [
    Cell("GRR-k6-n800", lambda: dn.GRR(["a", "b", "c", "d", "e", "f"], epsilon=1.0), (0.4, 0.3, 0.2, 0.1, 0, 0), 800),
    Cell("OUE-k9-n800", lambda: dn.OUE(9, epsilon=1.0), _zipf(9), 800),
    Cell("OLH-k16-n800", lambda: dn.OLH(16, epsilon=2.0), _zipf(16), 800),
    Cell("BLH-k6-n800", lambda: dn.BLH(["u", "v", "w", "x", "y", "z"], epsilon=1.0), (0.5, 0.5, 0, 0, 0, 0), 800),
    Cell("SS-k12-n800", lambda: dn.SubsetSelection(12, epsilon=1.0), _zipf(12), 800),
    Cell("SS-k40-n800", lambda: dn.SubsetSelection(40, epsilon=0.5), _zipf(40), 800),
    Cell("HR-k5-n800", lambda: dn.HadamardResponse(5, epsilon=1.0), (0.2,) * 5, 800),
]
R_SLOW = 300


@pytest.mark.slow
@cell_params(SLOW_CELLS)
def test_slow_path_through_real_reports(cell: Cell, rng: np.random.Generator) -> None:
    """R = 300 surveys of real reports: values -> privatize_many -> JSON -> aggregate -> estimate.

    Unbiasedness, formula variance and Clopper-Pearson coverage (one-sided,
    it is conservative); alpha 1e-6 over 3 checks x k categories.
    """
    m = cell.build()
    counts = population_counts(np.array(cell.truth), cell.n, m.k)
    truth = counts / cell.n
    values = m.domain_obj.decode(np.repeat(np.arange(m.k), counts))
    reports = m.privatize_many(np.tile(values, R_SLOW), rng=rng)
    wire_back = m.reports_from_json(m.reports_to_json(reports[: cell.n]))
    assert m.aggregate(wire_back) == m.aggregate(reports[: cell.n])
    support = np.stack([m.aggregate(reports[i * cell.n:(i + 1) * cell.n]).counts for i in range(R_SLOW)])
    est = stacked_estimate(m, support, cell.n)
    a = ALPHA / 3
    res = testing.mean_check(est.frequencies, truth, a, label=cell.id)
    assert res.passed, str(res)
    res = testing.variance_ratio_check(est.frequencies, m.variance(cell.n, truth, "respondents"), a, label=cell.id)
    assert res.passed, str(res)
    low, high = est.ci(LEVEL, "clopper-pearson")
    hits = ((low <= truth) & (truth <= high)).sum(axis=0)
    failures = [str(r) for v in range(m.k)
                if not (r := testing.coverage_check(int(hits[v]), R_SLOW, LEVEL, a / m.k, conservative=True,
                                                    label=f"{cell.id} category {v}")).passed]
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------ simulate()
def test_simulate_matches_population(rng: np.random.Generator) -> None:
    """dn.simulate: the truth is the rounded population, and its estimate is within
    z sd of it for each category (alpha 1e-6 over the 4 mechanisms x k). Power: the band
    around a population with the shares 0.5 and 0.25 swapped (0.25 apart, about 10 sd)
    rejects the same estimate."""
    truth = np.array([0.5, 0.25, 0.125, 0.125, 0.0])
    mechs = [dn.GRR(5, epsilon=1.0), dn.OUE(5, epsilon=1.0), dn.OLH(5, epsilon=1.0), dn.SubsetSelection(5, epsilon=1.0)]
    z = testing.z_for(ALPHA / (len(mechs) * 5))
    for m in mechs:
        est = dn.simulate(m, truth, 4001, rng=rng, target="respondents")
        assert est.n == 4001 and est.truth is not None
        np.testing.assert_array_equal(est.truth * 4001, np.round(est.truth * 4001))
        assert abs(est.truth - truth).max() <= 1 / 4001
        sd = np.sqrt(m.variance(4001, est.truth, "respondents"))
        assert np.all(np.abs(est.frequencies - est.truth) <= z * sd), (m, est.frequencies)
        # power: the same band around another population (first two shares swapped) rejects the estimate
        other = est.truth[[1, 0, 2, 3, 4]]
        assert not np.all(np.abs(est.frequencies - other) <= z * np.sqrt(m.variance(4001, other))), m


# ----------------------------------------------------------------- consistency
@pytest.mark.parametrize("make", [lambda: dn.OUE(50, epsilon=1.0), lambda: dn.GRR(50, epsilon=2.0)],
                         ids=["OUE", "GRR"])
def test_projection_reduces_error_for_sparse_truths(make, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
    """Norm-Sub never increases the distance to the truth (it is a projection onto a convex
    set holding the truth), and for a sparse truth it lowers the mean squared error:
    a one-sided z test on the per-replicate reduction, alpha 1e-6."""
    m = make()
    truth = np.zeros(50)
    truth[:3] = (0.5, 0.3, 0.2)
    counts = population_counts(truth, 2000, m.k)
    est = stacked_estimate(m, replicate_counts(m, counts, 500, rng), 2000)
    raw = ((est.frequencies - counts / 2000) ** 2).sum(axis=1)
    projected = np.stack([dn.project_simplex(f) for f in est.frequencies])
    post = ((projected - counts / 2000) ** 2).sum(axis=1)
    assert np.all(post <= raw + 1e-12)
    gain = raw - post
    z = testing.z_for(ALPHA, two_sided=False)
    assert gain.mean() - z * gain.std(ddof=1) / np.sqrt(gain.size) > 0, (raw.mean(), post.mean())
    # power: projecting estimates that are already on the simplex gains nothing, and fails
    again = ((np.stack([dn.project_simplex(f) for f in projected]) - counts / 2000) ** 2).sum(axis=1)
    none = post - again
    assert not none.mean() - z * none.std(ddof=1) / np.sqrt(none.size) > 0
