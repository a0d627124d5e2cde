"""The joint distribution of two questions: unbiased cells and marginals, covering intervals,
and a calibrated, powerful Wald test of independence.

Each replicate draws n respondents' pairs from a 2 x 3 table of shares,
randomizes them through the real ``Joint.privatize_many`` (GRR and OUE on
the product domain) and estimates.

* cells: unbiased (mean check); their empirical covariance's diagonal and the
  marginals' variances equal the closed forms at the truth (chi-square bands);
  the 95% marginal intervals cover (binomial band). Power (GRR, whose cells
  covary strongly): the marginal variance that leaves out the cells'
  covariances is rejected.
* independence, size: under an independent table the Wald statistics follow
  chi-square(2) (Kolmogorov-Smirnov at alpha), and the 5% test rejects within
  the binomial band around 5%. Power of that check: Pearson's chi-square on
  the debiased counts (ignoring the randomization) rejects far more often.
* independence, power: against a dependent table with the same margins
  (Cramer's V = 0.17) the 5% test rejects in at least 80% of replicates (its
  asymptotic power at n = 5000, epsilon = 2 is 0.998 for GRR and 0.92 for OUE).

Alpha: each test function spends 1e-6 in total (Bonferroni over its checks).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from deniable import testing
from deniable._joint import Joint

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 2000
LEVEL = 0.95
ROWS, COLS = np.array([0.3, 0.7]), np.array([0.2, 0.3, 0.5])
INDEPENDENT = np.outer(ROWS, COLS)
DEPENDENT = np.array([[0.09, 0.09, 0.12], [0.11, 0.21, 0.38]])  # the same margins, Cramer's V = 0.17


def _replicates(joint: Joint, table: np.ndarray, n: int, seed: int, reps: int = R) -> list:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    k2 = table.shape[1]
    first, second = np.asarray(joint.first), np.asarray(joint.second)
    out = []
    for _ in range(reps):
        cells = rng.choice(table.size, size=n, p=table.ravel())
        out.append(joint.estimate(joint.privatize_many(first[cells // k2], second[cells % k2], rng=rng)))
    return out


def _true_covariance(joint: Joint, table: np.ndarray, n: int) -> np.ndarray:
    """The closed-form covariance of the debiased cells at the true shares."""
    p, q = joint.mechanism.support_rates()
    f = table.ravel()
    rate = q + (p - q) * f
    if joint.mechanism.name == "GRR":
        support = np.diag(rate) - np.outer(rate, rate)
    else:
        support = -np.outer((p - q) * f, (p - q) * f)
        np.fill_diagonal(support, rate * (1 - rate))
    return support / (n * np.outer(p - q, p - q))


@pytest.mark.parametrize("mechanism", ["grr", "oue"])
def test_cells_and_marginals_unbiased_with_their_covariance(mechanism: str) -> None:
    """Cells and both marginals: means, variances against the covariance formula, and the
    marginals' coverage; alpha 1e-6 over these 8 checks. Power (GRR): the rows' variance
    without the cells' covariances is twice the true one in one row (variance ratio 0.50 against a
    band from 0.84: a miss below 1e-100). Not for the columns: their ratios (0.75 to 0.85) stay in
    the band with probability 1e-4 or more at R = 2000."""
    n = 4000
    joint = Joint(["yes", "no"], [0, 1, 2], epsilon=2.0, mechanism=mechanism)
    reps = _replicates(joint, INDEPENDENT, n, seed=21)
    a = ALPHA / 8
    cells = np.array([e.cells.frequencies for e in reps])
    r = testing.mean_check(cells, INDEPENDENT.ravel(), a, label="cells")
    assert r.passed, r.message
    cov = _true_covariance(joint, INDEPENDENT, n)
    r = testing.variance_ratio_check(cells, np.diag(cov), a, label="cells")
    assert r.passed, r.message
    for which, truth in ((0, ROWS), (1, COLS)):
        margins = [e.marginal(which) for e in reps]
        freqs = np.array([m.frequencies for m in margins])
        r = testing.mean_check(freqs, truth, a, label=f"marginal {which}")
        assert r.passed, r.message
        summing = np.zeros((truth.size, INDEPENDENT.size))
        cell = np.arange(INDEPENDENT.size)
        summing[cell // 3 if which == 0 else cell % 3, cell] = 1
        r = testing.variance_ratio_check(freqs, np.diag(summing @ cov @ summing.T), a, label=f"marginal {which}")
        assert r.passed, r.message
        if mechanism == "grr" and which == 0:  # power: summing the cells' variances without their covariances
            naive = summing @ np.diag(cov)  # (for OUE the covariances are only -f_u f_v / n: too small)
            assert not testing.variance_ratio_check(freqs, naive, a).passed
        hits = np.array([(lo <= truth) & (truth <= hi) for lo, hi in (m.ci(LEVEL) for m in margins)])
        # a two-category marginal's intervals are one event (its shares sum to 1): check one column
        r = testing.coverage_check(int(hits[:, -1].sum()), R, LEVEL, a, label=f"marginal {which}")
        assert r.passed, r.message


@pytest.mark.parametrize("mechanism", ["grr", "oue"])
def test_independence_test_size_and_power(mechanism: str) -> None:
    n = 5000
    joint = Joint([0, 1], ["A", "B", "C"], epsilon=2.0, mechanism=mechanism)
    a = ALPHA / 4
    null = _replicates(joint, INDEPENDENT, n, seed=31)
    tests = [e.independence() for e in null]
    assert {t.df for t in tests} == {2}
    statistic = np.array([t.statistic for t in tests])
    r = testing.ks_gof(statistic, stats.chi2(2).cdf, a, label="Wald statistic under independence")
    assert r.passed, r.message
    kept = sum(t.p_value >= 0.05 for t in tests)
    r = testing.coverage_check(kept, R, 0.95, a, label="5% test under independence")
    assert r.passed, r.message
    # power of the size check: Pearson's chi-square on the debiased counts ignores the randomization
    pearson = 0
    for e in null:
        table = np.clip(e.table, 1e-9, None) * n
        pearson += stats.chi2_contingency(table, correction=False)[1] < 0.05
    assert not testing.coverage_check(R - pearson, R, 0.95, a).passed, pearson
    # power against a dependent table
    dependent = _replicates(joint, DEPENDENT, n, seed=32, reps=R // 4)
    rejected = sum(e.independence().p_value < 0.05 for e in dependent)
    assert testing.coverage_band(R // 4, 0.8, a)[0] <= rejected, rejected
