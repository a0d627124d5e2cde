"""The calibrated helpers of ``deniable.testing`` pass correct samplers and reject wrong ones.

Each check runs at alpha = 1e-6 on a correct sample (false failure < 1e-6 per
assertion) and at the same alpha on a deliberately wrong one (power check).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from deniable import testing

pytestmark = pytest.mark.stat

ALPHA = 1e-6


def test_chi_square_gof_accepts_and_rejects(rng: np.random.Generator) -> None:
    """alpha 1e-6; power: a pmf off by 20% in one heavy bin (noncentrality 374 at n = 50000 against
    the critical 38 at 7 df: miss < 1e-39)."""
    probs = np.array([0.4, 0.3, 0.2, 0.05, 0.03, 0.01, 0.005, 0.005])
    good = rng.multinomial(20_000, probs)
    res = testing.chi_square_gof(good, probs, ALPHA)
    assert res.passed, res.message
    skewed = probs.copy()
    skewed[1] *= 1.2
    skewed /= skewed.sum()
    bad = testing.chi_square_gof(rng.multinomial(50_000, skewed), probs, ALPHA)
    assert not bad.passed, bad.message
    assert bad.critical_value == pytest.approx(stats.chi2.isf(ALPHA, bad.details["df"]))


@pytest.mark.deterministic
def test_chi_square_merges_small_bins() -> None:
    """Deterministic: bins expecting < 5 are pooled; too small a sample refuses to run."""
    probs = np.full(1000, 1 / 1000)
    res = testing.chi_square_gof(np.full(1000, 10), probs, ALPHA)  # n = 10000, 10 per bin
    assert res.details["df"] == 999 and res.statistic == 0
    res = testing.chi_square_gof(np.full(1000, 1), probs, ALPHA)  # n = 1000: 5 bins per group
    assert res.details["df"] == 199
    with pytest.raises(ValueError, match="too small"):
        testing.chi_square_gof([3, 2], [0.5, 0.5], ALPHA)
    impossible = testing.chi_square_gof([50, 50, 1], [0.5, 0.5, 0.0], ALPHA)
    assert not impossible.passed and "probability 0" in impossible.message
    with pytest.raises(ValueError, match="sum to 1"):
        testing.chi_square_gof([1, 2], [0.5, 0.6], ALPHA)


def test_ks_gof_accepts_and_rejects(rng: np.random.Generator) -> None:
    """alpha 1e-6; power: an exponential with a 30% larger scale (its cdf is 0.096 below at
    x = 1.14, 8 standard deviations of the empirical cdf beyond the critical 0.038: miss < 1e-15;
    at 20% larger the margin was 4 standard deviations, a miss in 1e5)."""
    assert testing.ks_gof(rng.exponential(1.0, 5000), stats.expon.cdf, ALPHA).passed
    bad = testing.ks_gof(rng.exponential(1.3, 5000), stats.expon.cdf, ALPHA)
    assert not bad.passed, bad.message
    assert bad.critical_value == pytest.approx(0.03805161788799083)


def test_proportion_check_and_intervals(rng: np.random.Generator) -> None:
    """alpha 1e-6 for the exact binomial check; power: a rate 20% off (the bands of 0.3 and 0.36
    at n = 50000 are disjoint, so the wrong rate fails with probability 1 - 1e-6 at least)."""
    n = 50_000
    hits = int(rng.binomial(n, 0.3))
    assert testing.proportion_check(hits, n, 0.3, ALPHA).passed
    assert testing.coverage_band(n, 0.3, ALPHA)[1] < testing.coverage_band(n, 0.36, ALPHA)[0]
    assert not testing.proportion_check(int(rng.binomial(n, 0.36)), n, 0.3, ALPHA).passed
    # The interval helpers agree with scipy's implementations.
    ci = stats.binomtest(30, 100).proportion_ci(0.95, method="wilson")
    w = testing.wilson_interval(30, 100, 0.05)
    assert (w.low, w.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    ci = stats.binomtest(30, 100).proportion_ci(0.95, method="exact")
    cp = testing.clopper_pearson(30, 100, 0.05)
    assert (cp.low, cp.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert testing.clopper_pearson(0, 10, 0.05).low == 0.0
    assert testing.clopper_pearson(10, 10, 0.05).high == 1.0


@pytest.mark.deterministic
def test_coverage_band_matches_style_numbers() -> None:
    """Deterministic: the band quoted in the test guide, and its exact tail masses."""
    low, high = testing.coverage_band(2000, 0.95, ALPHA)
    assert (low, high) == (1849, 1944)
    assert stats.binom.cdf(low - 1, 2000, 0.95) <= ALPHA / 2
    assert stats.binom.sf(high, 2000, 0.95) <= ALPHA / 2
    # Power: a 90%-coverage method lands inside the band with probability < 1e-4.
    assert stats.binom.cdf(high, 2000, 0.90) - stats.binom.cdf(low - 1, 2000, 0.90) < 1e-4
    assert not testing.coverage_check(1800, 2000, 0.95, ALPHA).passed
    assert testing.coverage_check(1900, 2000, 0.95, ALPHA).passed


@pytest.mark.deterministic
def test_proportion_check_is_exact_for_small_counts() -> None:
    """Deterministic: the accepted counts hold at least 1 - alpha of the binomial's mass, also where a
    score (Wilson) band holds far less (10 expected successes at alpha 1e-8), and certain rates
    accept only the certain count."""
    for n, p, alpha in [(1000, 0.01, 1e-8), (2000, 0.05, 1e-7), (30, 0.5, 1e-3)]:
        details = testing.proportion_check(round(n * p), n, p, alpha).details
        low, high = details["low"], details["high"]
        assert stats.binom.cdf(low - 1, n, p) + stats.binom.sf(high, n, p) <= alpha
        assert not testing.proportion_check(high + 1, n, p, alpha) and testing.proportion_check(high, n, p, alpha)
    assert testing.proportion_check(0, 10, 0.0, 1e-6) and not testing.proportion_check(1, 10, 0.0, 1e-6)
    assert testing.proportion_check(10, 10, 1.0, 1e-6) and not testing.proportion_check(9, 10, 1.0, 1e-6)
    with pytest.raises(ValueError, match="p must be"):
        testing.proportion_check(1, 10, 1.5, 1e-6)


@pytest.mark.deterministic
def test_estimate_check_and_recording() -> None:
    """Deterministic: z bands around stated standard errors, Bonferroni over the entries, and
    every check made inside ``recording`` is collected (nested blocks too)."""
    z = testing.z_for(1e-6 / 2)
    with testing.recording() as outer:
        assert testing.estimate_check([0.1, 0.2], [0.1, 0.2 + 0.99 * z * 0.01], 0.01, 1e-6)
        with testing.recording() as inner:
            res = testing.estimate_check([0.1, 0.2], [0.1, 0.2 + 1.01 * z * 0.01], [0.01, 0.01], 1e-6)
    assert not res and res.critical_value == pytest.approx(z)
    assert [r.passed for r in outer] == [True, False] and inner == [res]
    assert testing.estimate_check(1.0, 1.0, 0.0, 1e-6) and not testing.estimate_check(1.0, 1.1, 0.0, 1e-6)


@pytest.mark.deterministic
def test_family_and_hidden_recording() -> None:
    """Deterministic: a family passes when every member passes and spends their summed alpha; checks
    made in a hidden block reach it only."""
    with testing.recording() as outer:
        with testing.recording(hide=True) as inner:
            good = testing.proportion_check(50, 100, 0.5, 1e-7)
            bad = testing.proportion_check(90, 100, 0.5, 1e-7)
        both = testing.family([good, bad], label="pair")
    assert inner == [good, bad] and outer == [both]
    assert not both and both.alpha == pytest.approx(2e-7) and "1 of 2 checks failed [pair]" in both.message
    assert testing.family([good]) and testing.family([good]).details["members"] == [good]


@pytest.mark.deterministic
def test_mean_check_uses_student_t_with_the_sample_sd() -> None:
    """Deterministic: with the sample SD the critical value is the t quantile with R - 1 df."""
    x = np.tile([-1.0, 1.0], 50)  # R = 100, sample SD 1.005
    res = testing.mean_check(x, 0.0, 1e-6)
    assert res.critical_value == pytest.approx(stats.t.isf(1e-6 / 2, 99))
    assert testing.mean_check(x, 0.0, 1e-6, sd=1.0).critical_value == pytest.approx(stats.norm.isf(1e-6 / 2))


def test_mean_and_variance_checks(rng: np.random.Generator) -> None:
    """alpha 1e-6 / 3 for each of the three checks of correct samples; power: a mean shifted by
    0.2 sd (28 standard errors at R = 20000 against z = 5.6) and a variance 20% too large (the
    ratio's band ends at 1.055, 12 standard deviations below 1.2): misses below 1e-30."""
    x = rng.normal(0.0, 1.0, size=(20_000, 4))
    assert testing.mean_check(x, 0.0, ALPHA / 3).passed
    assert testing.mean_check(x, 0.0, ALPHA / 3, sd=1.0).passed
    assert not testing.mean_check(x + 0.2, 0.0, ALPHA / 3, sd=1.0).passed
    assert testing.variance_ratio_check(x, 1.0, ALPHA / 3).passed
    assert not testing.variance_ratio_check(x * np.sqrt(1.2), 1.0, ALPHA / 3).passed


def test_independence_2x2(rng: np.random.Generator) -> None:
    """alpha 1e-6; power: the second bit copies the first 20% of the time."""
    a = rng.random(50_000) < 0.3
    b = rng.random(50_000) < 0.3
    assert testing.independence_2x2(a, b, ALPHA).passed
    copy = rng.random(50_000) < 0.2
    assert not testing.independence_2x2(a, np.where(copy, a, b), ALPHA).passed


def test_duplicated_samples_are_rejected(rng: np.random.Generator) -> None:
    """alpha 1e-6; 200x-duplicated uniforms (an RNG reused 200 times) fail the KS test."""
    x = np.repeat(rng.random(25), 200)
    assert not testing.ks_gof(x, lambda u: u, ALPHA).passed


def test_bad_alpha_rejected() -> None:
    with pytest.raises(ValueError, match="alpha"):
        testing.chi_square_gof([10, 10], [0.5, 0.5], 0.0)
    with pytest.raises(ValueError, match="alpha"):
        testing.coverage_band(100, 0.95, 1.5)
    assert testing.bonferroni(1e-6, 10) == pytest.approx(1e-7)


def test_ks_gof_discrete(rng: np.random.Generator) -> None:
    """alpha 1e-6 on Binomial(20, 0.3) samples; power: Binomial(20, 0.36) and a shifted support."""
    support = np.arange(21)
    probs = stats.binom.pmf(support, 20, 0.3)
    assert testing.ks_gof_discrete(rng.binomial(20, 0.3, 5000), support, probs, ALPHA).passed
    assert not testing.ks_gof_discrete(rng.binomial(20, 0.36, 5000), support, probs, ALPHA).passed
    assert not testing.ks_gof_discrete(rng.binomial(20, 0.3, 5000) + 1, support, probs, ALPHA).passed


def test_variance_band_widens_for_heavy_tails(rng: np.random.Generator) -> None:
    """alpha 1e-6: exponential samples (excess kurtosis 6) with the right variance pass, with a
    band wider than the normal-theory one; power: a variance 40% off still fails (at R = 20000
    the widened band ends near 1.11, ten standard deviations of the ratio below 1.4)."""
    x = rng.exponential(1.0, size=(20_000, 2))
    res = testing.variance_ratio_check(x, 1.0, ALPHA)
    assert res.passed, res.message
    normal_high = stats.chi2.isf(ALPHA / 4, 19_999) / 19_999
    assert np.all(res.details["high"] > normal_high)
    assert not testing.variance_ratio_check(x * np.sqrt(1.4), 1.0, ALPHA).passed


def test_docstring_examples() -> None:
    """The module's example runs (seeded; a correct sampler at alpha 1e-6)."""
    import doctest

    assert doctest.testmod(testing).failed == 0


def test_public_names_are_documented() -> None:
    """deniable.testing is public: every name in __all__ exists and (but the constant) has a docstring."""
    for name in testing.__all__:
        obj = getattr(testing, name)
        assert name == "MIN_EXPECTED" or (obj.__doc__ or "").strip(), name
    assert "public" in (testing.__doc__ or "")
