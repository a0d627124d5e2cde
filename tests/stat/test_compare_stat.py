"""Comparisons of two arms (``dn.compare``): the difference is unbiased with the formula's variance, its
intervals cover, the per-category and whole-vector tests keep their size and have power, and the planned
sample size gives the planned power.

Each replicate draws two arms of n respondents from a population (multinomial true counts) and their
support counts exactly (``simulate_support_counts``: the law of the reports' counts, no reports made),
then estimates each arm (population target) and compares them.

Alpha: each test function spends at most 1e-6 (Bonferroni over its checks, stated at each); power
checks are deterministic or many standard errors away (stated).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable import testing
from deniable._aggregates import SupportCounts
from deniable._compare import difference_sample_size

pytestmark = pytest.mark.stat

ALPHA = 1e-6
R = 2000
F_A = np.array([0.5, 0.3, 0.2])
F_B = np.array([0.4, 0.4, 0.2])


def _arm(m, f, n, rng):  # type: ignore[no-untyped-def]
    counts = rng.multinomial(n, f)
    return m.estimate_from(SupportCounts(m.fingerprint, m.simulate_support_counts(counts, rng), n))


def _pairs(m, fa, fb, n, seed, reps=R):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    return [dn.compare(_arm(m, fa, n, rng), _arm(m, fb, n, rng)) for _ in range(reps)]


MECHANISMS = {"grr": lambda: dn.GRR(3, epsilon=1.0), "oue": lambda: dn.OUE(3, epsilon=1.0)}


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_difference_unbiased_with_formula_variance_and_coverage(name: str) -> None:
    """Mean, variance (against ``m.variance(n, f_a) + m.variance(n, f_b)``) and 95% coverage of the
    difference per category: 3 checks at 1e-6 / 3. Power of the variance check: the variance without
    the mechanism's term (sampling only, ``f(1-f)/n`` per arm) is 4 to 10 times too small at epsilon = 1,
    a ratio far outside the chi-square band (deterministic at R = 2000: the band is about 0.8..1.2)."""
    m, n = MECHANISMS[name](), 3000
    reps = _pairs(m, F_A, F_B, n, seed=11)
    d = np.array([c.difference for c in reps])
    a = ALPHA / 3
    r = testing.mean_check(d, F_A - F_B, a, label="difference")
    assert r.passed, r.message
    var = m.variance(n, F_A) + m.variance(n, F_B)
    r = testing.variance_ratio_check(d, var, a, label="difference")
    assert r.passed, r.message
    sampling_only = (F_A * (1 - F_A) + F_B * (1 - F_B)) / n
    assert np.all(var / sampling_only > 4)
    assert not testing.variance_ratio_check(d, sampling_only, a).passed
    hits = [int(np.all(c.confidence_interval(0.95).contains(F_A - F_B)[:1])) for c in reps]
    r = testing.coverage_check(sum(hits), R, 0.95, a, label="first category")
    assert r.passed, r.message


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_tests_keep_their_size_and_have_power(name: str) -> None:
    """Under equal arms: the whole-vector Wald statistic follows chi-square(df) (KS), the 5% vector
    test and the 5% per-category test (first category) reject within the binomial band of 5%, and
    Holm's correction rejects any category in at most 5% (one-sided band): 4 checks at 1e-6 / 5.
    Power of the size check: a Pearson-style statistic ignoring the randomization (variance f(1-f)/n)
    rejects in far more than 5% (observed over 60%, deterministic in effect: its band ends near 6.5%).
    Power: against F_A vs F_B (n = 3000 per arm) the vector test rejects at its asymptotic power
    (noncentral chi-square with the true covariance: 0.86 for GRR, 0.57 for OUE), a two-sided binomial
    check at 1e-6 / 5 that also fails a wrong covariance (the sampling-only one gives power near 1)."""
    m, n = MECHANISMS[name](), 3000
    a = ALPHA / 5
    null = _pairs(m, F_A, F_A, n, seed=21)
    df = 2 if name == "grr" else 3
    assert {c.chi_square.df for c in null} == {df}
    w = np.array([c.chi_square.statistic for c in null])
    r = testing.ks_gof(w, stats.chi2(df).cdf, a, label="Wald statistic, equal arms")
    assert r.passed, r.message
    kept = sum(c.chi_square.p_value >= 0.05 for c in null)
    r = testing.coverage_check(kept, R, 0.95, a, label="5% vector test")
    assert r.passed, r.message
    kept = sum(c.p_values[0] >= 0.05 for c in null)
    r = testing.coverage_check(kept, R, 0.95, a, label="5% test of the first category")
    assert r.passed, r.message
    holm_kept = sum(bool(np.all(c.p_adjusted >= 0.05)) for c in null)
    r = testing.coverage_check(holm_kept, R, 0.95, a, conservative=True, label="Holm, any category")
    assert r.passed, r.message
    naive = 0
    for c in null:  # power of the size check: the sampling variance alone
        se = np.sqrt(2 * F_A * (1 - F_A) / n)
        naive += int(np.any(np.abs(c.difference / se) > 1.96))
    assert not testing.coverage_check(R - naive, R, 0.95, a).passed
    alt = _pairs(m, F_A, F_B, n, seed=22)
    rejected = sum(c.chi_square.p_value < 0.05 for c in alt)
    power = _asymptotic_power(m, n, df)
    r = testing.coverage_check(rejected, R, power, a, label=f"power against F_B (asymptotic {power:.3f})")
    assert r.passed, r.message


def _covariance(m, f, n):  # type: ignore[no-untyped-def]
    """The true covariance of one arm's debiased shares (population target)."""
    p, q = m.support_rates()
    gap = p - q
    rate = q + gap * f
    if m.name == "GRR":
        support = np.diag(rate) - np.outer(rate, rate)
    else:
        support = -np.outer(gap * f, gap * f)
        np.fill_diagonal(support, rate * (1 - rate))
    return support / (n * np.outer(gap, gap))


def _asymptotic_power(m, n, df):  # type: ignore[no-untyped-def]
    """The 5% Wald test's power against F_A vs F_B: noncentral chi-square(df, d^T Sigma^-1 d)."""
    sigma = (_covariance(m, F_A, n) + _covariance(m, F_B, n))[:df, :df]
    d = (F_A - F_B)[:df]
    return float(stats.ncx2.sf(stats.chi2.isf(0.05, df), df, d @ np.linalg.solve(sigma, d)))


def test_planned_sample_size_gives_the_planned_power() -> None:
    """``difference_sample_size`` for one category 0.30 vs 0.36, 80% power at 5%: the simulated
    rejection rate of the per-category test lies in the binomial band around 0.8 (1e-6). Power: the
    same check at the size that ignores the mechanism (the sampling variance only) gives a rate far
    below (about 0.2), deterministic at R = 2000."""
    m = dn.GRR(2, epsilon=1.0)
    n = difference_sample_size(m, 0.30, 0.36, power=0.8)
    rng = np.random.default_rng(41)
    fa, fb = np.array([0.70, 0.30]), np.array([0.64, 0.36])
    rejected = sum(dn.compare(_arm(m, fa, n, rng), _arm(m, fb, n, rng)).p_values[1] < 0.05 for _ in range(R))
    r = testing.coverage_check(rejected, R, 0.8, ALPHA, label="power at the planned n")
    assert r.passed, r.message
    z = stats.norm.isf(0.025) + stats.norm.ppf(0.8)
    naive = int(np.ceil(z * z * (0.3 * 0.7 + 0.36 * 0.64) / 0.06**2))
    assert naive < n / 4


def test_holm_over_slices_keeps_the_family_wise_error() -> None:
    """Four equal slices, three compared with the reference over three categories (9 tests): Holm's
    correction rejects any of them in at most 5% of replicates (one-sided binomial check at 1e-6); the
    uncorrected 5% tests reject some in far more (about 25%: power of the check, deterministic in effect)."""
    from deniable._slices import sliced_estimate

    m, n = dn.GRR(3, epsilon=1.0), 2000
    rng = np.random.default_rng(31)
    kept = naive = 0
    for _ in range(R):
        stats_ = []
        for _ in range(4):
            counts = rng.multinomial(n, F_A)
            stats_.append(SupportCounts(m.fingerprint, m.simulate_support_counts(counts, rng), n))
        together = dn.compare(sliced_estimate(m, "arm", ["r", "s", "t", "u"], stats_), reference="r")
        p_adj = np.concatenate([c.p_adjusted for c in together.comparisons.values()])
        p_raw = np.concatenate([c.p_values for c in together.comparisons.values()])
        kept += bool(np.all(p_adj >= 0.05))
        naive += bool(np.all(p_raw >= 0.05))
    r = testing.coverage_check(kept, R, 0.95, ALPHA, conservative=True, label="Holm over 9 tests")
    assert r.passed, r.message
    assert not testing.coverage_check(naive, R, 0.95, ALPHA, conservative=True).passed
