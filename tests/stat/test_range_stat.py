"""Range mechanisms (HierarchicalHistogram with OUE and OLH, HaarHRR): samplers, privacy, estimators.

* Samplers: the reports of three values in a small domain against the exact output law of
  ``transition_matrix`` (chi-square); power: the same counts against the law of the mechanism at a 25%
  larger epsilon fail.
* Privacy: the largest ratio of two values' output probabilities is ``e^epsilon`` (never above the
  claimed epsilon, and tight to 1e-9).
* Estimators: for CDF values and a short and a long range, over R = 2000 simulated surveys, the
  estimates are unbiased (Student t on the errors), their variance is the closed form of each
  mechanism at the truth (``query_variance``; variance-ratio band), and the 95% intervals cover
  (binomial band); quantile intervals cover the true quantile at 95% or more (one-sided band).
  The surveys' aggregates are drawn from their exact law (``simulate_aggregate``: level counts
  multinomial, OUE support counts binomial given the node counts, HRR rows multinomial and bits
  binomial); a second test runs real reports (fewer replicates), OLH included.
* Power: errors shifted by half a standard error fail the mean check (about 22 standard errors of
  the mean at R = 2000, a miss below 1e-60); standard errors 30% too small fail the variance check
  (ratio 2.04 against a band ending near 1.3 at R = 1000); intervals 30% too narrow fail the
  coverage check (about 83% expected against a band from 91.5%, 8 or more standard errors away).

Alpha: each test function spends at most 1e-6 in total (Bonferroni over its checks).
"""

from __future__ import annotations

import numpy as np
import pytest
from range_outputs import output_index

import deniable as dn
from deniable import testing

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 2000
LEVEL = 0.95


def _truth(bins: int) -> np.ndarray:
    """A skewed, bumpy distribution over the bins (no bin empty)."""
    x = (np.arange(bins) + 0.5) / bins
    f = np.exp(-((x - 0.3) ** 2) / 0.02) + 0.5 * np.exp(-((x - 0.75) ** 2) / 0.005) + 0.05
    return f / f.sum()


SMALL = {
    "hh-oue": lambda eps: dn.HierarchicalHistogram(0, 8, bins=4, branching=2, epsilon=eps, oracle="oue"),
    "hh-olh": lambda eps: dn.HierarchicalHistogram(0, 8, bins=4, branching=2, epsilon=eps, oracle="olh"),
    "haar": lambda eps: dn.HaarHRR(0, 8, bins=8, epsilon=eps),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_sampler_matches_its_exact_law(name: str) -> None:
    """Three values, 40,000 reports each, against their rows (alpha 1e-6 / 3 each); power: the rows of the
    mechanism at epsilon 1.25 (chi-square far beyond its critical value: a miss below 1e-20)."""
    m, wrong = SMALL[name](1.0), SMALL[name](1.25)
    outputs, matrix = m.transition_matrix()
    _, wrong_matrix = wrong.transition_matrix()
    rng = np.random.default_rng(5)
    for value in (0.5, 3.0, 7.9):
        cells = output_index(m, m.privatize_many(np.full(40_000, value), rng=rng))
        counts = np.bincount(cells, minlength=len(outputs))
        row = int(m.bin_of([value])[0])
        r = testing.chi_square_gof(counts, matrix[row], ALPHA / 3, label=f"{name} value {value}")
        assert r.passed, r.message
        assert not testing.chi_square_gof(counts, wrong_matrix[row], ALPHA / 3).passed


@pytest.mark.deterministic
@pytest.mark.parametrize("name", sorted(SMALL))
def test_epsilon_is_exact(name: str) -> None:
    """``max_y max_{x, x'} P(y | x) / P(y | x') = e^epsilon`` of the exact law: never above, tight to 1e-9."""
    for eps in (0.5, 1.0, 3.0):
        m = SMALL[name](eps)
        _, matrix = m.transition_matrix()
        assert np.allclose(matrix.sum(axis=1), 1.0)
        worst = float(np.max(np.log(matrix.max(axis=0) / matrix.min(axis=0))))
        assert worst <= m.epsilon + 1e-12
        assert worst >= m.epsilon - 1e-9
        assert m.epsilon <= eps + 1e-12


# ------------------------------------------------------------------ estimators
def _true_cdf(f: np.ndarray, edges: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.interp(x, edges, np.concatenate([[0.0], np.cumsum(f)]))


def _true_quantile(f: np.ndarray, edges: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.interp(q, np.concatenate([[0.0], np.cumsum(f)]), edges)


ESTIMATORS = {
    "hh-oue-b4": lambda: dn.HierarchicalHistogram(0, 640, bins=64, branching=4, epsilon=1.0, oracle="oue"),
    "hh-oue-b2": lambda: dn.HierarchicalHistogram(0, 640, bins=64, branching=2, epsilon=2.0, oracle="oue"),
    "haar": lambda: dn.HaarHRR(0, 640, bins=64, epsilon=1.0),
    "haar-256": lambda: dn.HaarHRR(0, 640, bins=256, epsilon=1.0),  # fine bins: many edges near each quantile
}
# CDF at three points, a short range and a long one
POINTS = np.array([100.0, 250.0, 413.0])
RANGES = np.array([[100.0, 140.0], [30.0, 600.0]])
QUANTILES = np.array([0.25, 0.5, 0.9])


def _check_queries(m: object, estimates: list, f: np.ndarray, n: int, a: float, label: str) -> None:
    """Unbiased, variance = the closed form, covering intervals, with the power checks of the docstring."""
    edges = m.edges  # type: ignore[attr-defined]
    truth = np.concatenate([_true_cdf(f, edges, POINTS),
                            _true_cdf(f, edges, RANGES[:, 1]) - _true_cdf(f, edges, RANGES[:, 0])])
    queries = np.concatenate([np.stack([np.zeros(POINTS.size), POINTS], axis=1), RANGES])
    sd = np.sqrt(m.query_variance(n, queries, f))  # type: ignore[attr-defined]
    est = np.array([np.concatenate([e.cdf(POINTS).estimate, e.range(RANGES[:, 0], RANGES[:, 1]).estimate])
                    for e in estimates])
    se = np.array([np.concatenate([e.cdf(POINTS).std_error, e.range(RANGES[:, 0], RANGES[:, 1]).std_error])
                   for e in estimates])
    errors = est - truth
    r = testing.mean_check(errors, 0.0, a, label=f"{label} unbiased")
    assert r.passed, r.message
    assert not testing.mean_check(errors - 0.5 * sd, 0.0, a).passed  # power: a bias of half an SE
    r = testing.variance_ratio_check(errors / sd, 1.0, a, label=f"{label} variance = formula")
    assert r.passed, r.message
    assert not testing.variance_ratio_check(errors / (0.7 * sd), 1.0, a).passed  # power: SE 30% small
    z = 1.959963984540054
    hits = np.abs(errors) <= z * se
    for j in range(truth.size):
        r = testing.coverage_check(int(hits[:, j].sum()), len(estimates), LEVEL, a / truth.size,
                                   label=f"{label} query {j}")
        assert r.passed, r.message
    narrow = np.abs(errors[:, 0]) <= 0.7 * z * se[:, 0]  # power: intervals 30% narrow
    assert not testing.coverage_check(int(narrow.sum()), len(estimates), LEVEL, a / truth.size).passed


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_queries_unbiased_with_formula_variance_and_covering_intervals(name: str) -> None:
    """CDF values and ranges (module docstring) from R = 2000 exact aggregate draws, n = 20,000;
    quantile intervals cover (one-sided); alpha 1e-6 over 4 checks (the coverage one split over the
    queries) plus the quantiles' 3."""
    m = ESTIMATORS[name]()
    f = _truth(m.bins)
    n = 20_000
    rng = np.random.default_rng(11)
    estimates = [m.estimate_from(m.simulate_aggregate(f, n, rng)) for _ in range(R)]
    a = ALPHA / 7
    _check_queries(m, estimates, f, n, a, name)
    true_q = _true_quantile(f, m.edges, QUANTILES)
    cis = [e.quantile(QUANTILES).confidence_interval(LEVEL) for e in estimates]
    hits = np.array([(lo <= true_q) & (true_q <= hi) for lo, hi in cis])
    for j, q in enumerate(QUANTILES):
        r = testing.coverage_check(int(hits[:, j].sum()), R, LEVEL, a, conservative=True,
                                   label=f"{name} quantile {q}")
        assert r.passed, r.message


REAL = {
    "hh-oue": lambda: dn.HierarchicalHistogram(0, 640, bins=16, branching=4, epsilon=1.0, oracle="oue"),
    "hh-olh": lambda: dn.HierarchicalHistogram(0, 640, bins=16, branching=4, epsilon=1.0, oracle="olh"),
    "haar": lambda: dn.HaarHRR(0, 640, bins=16, epsilon=1.0),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(REAL))
def test_through_real_reports(name: str) -> None:
    """R = 1000 surveys of n = 4000 real reports (population: values drawn from f, spread within
    their bins): the same checks as above (OLH's variance formula assumes hashes independent on three
    points; this checks it holds to the band). Alpha 1e-6 over 4 checks."""
    m = REAL[name]()
    f = _truth(m.bins)
    n, reps = 4000, 1000
    rng = np.random.default_rng(12)
    width = (m.high - m.low) / m.bins
    estimates = []
    for _ in range(reps):
        bins = rng.choice(m.bins, size=n, p=f)
        values = m.low + (bins + rng.random(n)) * width
        estimates.append(m.estimate(m.privatize_many(values, rng=rng)))
    _check_queries(m, estimates, f, n, ALPHA / 4, name)
