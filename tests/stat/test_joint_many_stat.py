"""Joints of d = 3 and d = 5 questions: k-way marginals unbiased with their covariance formula and covering
intervals, the pairwise independence test calibrated with power, and Cramér's V's standard error.

Each replicate draws n respondents' cells from a table of shares (multinomial) and the oracle's support
counts exactly (``simulate_support_counts``: the law of the reports' counts, no reports made), then
estimates the joint and its marginals.

Alpha: each test spends at most 1e-6 (Bonferroni over its checks). Power checks are deterministic in
effect (stated at each).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from deniable import testing
from deniable._aggregates import SupportCounts
from deniable._joint import Joint
from deniable._marginals import summing_matrix

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 2000


def _replicates(joint: Joint, truth: np.ndarray, n: int, seed: int) -> list:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    m = joint.mechanism
    out = []
    for _ in range(R):
        counts = m.simulate_support_counts(rng.multinomial(n, truth), rng)
        out.append(joint.estimate_from(SupportCounts(m.fingerprint, counts, n)))
    return out


def _covariance(joint: Joint, f: np.ndarray, n: int) -> np.ndarray:
    """The true covariance of the debiased cells (population target)."""
    p, q = joint.mechanism.support_rates()
    rate = q + (p - q) * f
    if joint.mechanism.name == "GRR":
        support = np.diag(rate) - np.outer(rate, rate)
    else:
        support = -np.outer((p - q) * f, (p - q) * f)
        np.fill_diagonal(support, rate * (1 - rate))
    return support / (n * np.outer(p - q, p - q))


CASES = {
    "d3": ([[0, 1], ["a", "b", "c"], ["x", "y"]], [(0, 2), (2,), (0, 1, 2)]),
    "d5": ([[0, 1]] * 5, [(1, 3), (0, 2, 4)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_marginals_unbiased_with_their_covariance_and_coverage(case: str) -> None:
    """Per marginal: mean of the cells, their variance against ``M Sigma M^T`` at the truth, and 95%
    coverage of its first cell; 3 checks per marginal at 1e-6 / 9 (d = 3: 3 marginals) or / 6. Power of
    the variance check: question 2's marginal variance without the cells' covariances (GRR at d = 3,
    epsilon = 2, six cells summed) is 1.76 to 1.91 times the truth: an observed ratio near 0.55 against a
    band from about 0.8, some 8 standard errors away (a miss far below 1e-6)."""
    questions, margins = CASES[case]
    joint = Joint(*questions, epsilon=2.0, mechanism="grr" if case == "d3" else "auto")
    rng = np.random.default_rng(5)
    truth = rng.dirichlet(np.full(int(np.prod(joint.shape)), 3.0))
    n = 5000
    reps = _replicates(joint, truth, n, seed=61 if case == "d3" else 62)
    cov = _covariance(joint, truth, n)
    a = ALPHA / (3 * len(margins))
    for which in margins:
        summing = summing_matrix(joint.shape, which)
        expected = summing @ truth
        got = np.array([e.marginal(which if len(which) > 1 else which[0]).frequencies for e in reps])
        r = testing.mean_check(got, expected, a, label=f"marginal {which}")
        assert r.passed, r.message
        variance = np.diag(summing @ cov @ summing.T)
        r = testing.variance_ratio_check(got, variance, a, label=f"marginal {which}")
        assert r.passed, r.message
        if case == "d3" and which == (2,):  # power: the same variance without the cells' covariances
            naive = summing @ np.diag(cov)
            assert np.min(naive / variance) > 1.7 and not testing.variance_ratio_check(got, naive, a).passed
        hits = 0
        for e in reps:
            low, high = e.marginal(which if len(which) > 1 else which[0]).ci(0.95)
            hits += bool(low[0] <= expected[0] <= high[0])
        r = testing.coverage_check(hits, R, 0.95, a, label=f"marginal {which}, first cell")
        assert r.passed, r.message


def test_pairwise_independence_is_calibrated_with_power() -> None:
    """d = 3, questions 0 and 2 independent, 0 and 1 not (Cramér's V = 0.2): the Wald statistic of (0, 2)
    follows chi-square(1) (KS) and its 5% test keeps its level (binomial band); (0, 1) is rejected at 5% in
    at least its asymptotic power's band (noncentral chi-square at the true covariance). 3 checks at 1e-6/3.
    Power of the size check: Pearson's statistic on the debiased two-way counts (ignoring the
    randomization) rejects far more often than 5% (deterministic in effect)."""
    joint = Joint([0, 1], ["a", "b", "c"], ["x", "y"], epsilon=2.0, mechanism="grr")
    f01 = np.array([[0.25, 0.15, 0.10], [0.08, 0.17, 0.25]])
    truth = (f01[:, :, None] * np.array([0.3, 0.7])[None, None, :]).ravel()
    n = 5000
    reps = _replicates(joint, truth, n, seed=71)
    a = ALPHA / 3
    tests = [e.independence(0, 2) for e in reps]
    assert {t.df for t in tests} == {1}
    r = testing.ks_gof(np.array([t.statistic for t in tests]), stats.chi2(1).cdf, a, label="W(0, 2)")
    assert r.passed, r.message
    r = testing.coverage_check(sum(t.p_value >= 0.05 for t in tests), R, 0.95, a, label="5% test of (0, 2)")
    assert r.passed, r.message
    pearson = 0
    for e in reps:
        table = np.clip(e.marginal((0, 2)).table, 1e-9, None) * n
        pearson += int(stats.chi2_contingency(table, correction=False)[1] < 0.05)
    assert not testing.coverage_check(R - pearson, R, 0.95, a).passed
    rejected = sum(e.independence(0, 1).p_value < 0.05 for e in reps)
    assert rejected > 0.99 * R  # asymptotic power above 0.999 at V = 0.2, n = 5000 (a miss far below 1e-6)


def test_cramers_v_standard_error_matches_its_spread() -> None:
    """Cramér's V of a dependent pair (V = 0.3): the delta-method standard errors' mean is within 15% of
    the replicates' standard deviation, and V's mean within 3 of its standard errors of the truth (the
    plug-in's upward bias is small at V = 0.3 and n = 20,000). Deterministic in effect at R = 2000: the
    standard deviation's relative sampling error is 1.6%."""
    joint = Joint([0, 1], [0, 1, 2], epsilon=3.0, mechanism="grr")
    table = np.array([[0.25, 0.15, 0.05], [0.10, 0.15, 0.30]])
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    v_true = np.sqrt(np.sum((table - np.outer(rows, cols)) ** 2 / np.outer(rows, cols)) / 1)
    reps = _replicates(joint, table.ravel(), 20_000, seed=81)
    found = [e.association(0, 1) for e in reps]
    v = np.array([f.cramers_v for f in found])
    se = np.array([f.std_error for f in found])
    assert abs(se.mean() / v.std(ddof=1) - 1) < 0.15
    assert abs(v.mean() - v_true) < 3 * v.std(ddof=1)
