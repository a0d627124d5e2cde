"""``deniable._intervals`` against independent values and its exact coverage, tail by tail.

Deterministic: no sampling. Reference values come from scipy's
``binomtest(...).proportion_ci`` (a separate implementation), closed forms
and Newcombe (1998)'s worked examples; the coverage checks sum the exact
binomial probabilities of missing on each side, so an interval that is too
wide, too narrow or shifted fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats

from deniable._intervals import (
    clopper_pearson,
    clopper_pearson_lower,
    clopper_pearson_upper,
    normal_interval,
    wilson_interval,
    z_for,
)

CASES = [(0, 20), (1, 29), (15, 148), (81, 263), (30, 100), (50, 50), (7, 7), (3, 1000)]


def test_z_for_textbook_values() -> None:
    assert z_for(0.05) == pytest.approx(1.959963984540054, rel=1e-14)
    assert z_for(0.01) == pytest.approx(2.5758293035489004, rel=1e-14)
    assert z_for(0.05, two_sided=False) == pytest.approx(1.6448536269514722, rel=1e-14)


def test_z_for_is_scipys_normal_quantile_from_the_far_tail_to_the_centre() -> None:
    """The standard library's AS 241 against ``-scipy.special.ndtri(alpha / 2)`` (what
    ``scipy.stats.norm.isf`` computes) for alpha from 1e-300 to 0.999: within 1e-14 relative."""
    from scipy import special

    for alpha in np.concatenate([np.logspace(-300, -1, 400), np.linspace(0.01, 0.999, 100)]):
        assert z_for(alpha) == pytest.approx(-special.ndtri(alpha / 2), rel=1e-14), alpha
        assert z_for(alpha, two_sided=False) == pytest.approx(-special.ndtri(alpha), rel=1e-14), alpha


def test_normal_interval() -> None:
    ci = normal_interval(0.5, 0.1, 0.05)
    assert (ci.low, ci.high) == pytest.approx((0.5 - 0.1959963984540054, 0.5 + 0.1959963984540054), abs=1e-15)
    assert ci.level == pytest.approx(0.95)
    low, high = normal_interval(np.array([0.1, 0.2]), np.array([0.01, 0.0]), 0.05)
    assert low.shape == (2,) and high[1] == low[1] == 0.2


@pytest.mark.parametrize(("c", "n"), CASES)
def test_wilson_matches_scipy(c: int, n: int) -> None:
    ref = stats.binomtest(c, n).proportion_ci(0.95, method="wilson")
    ci = wilson_interval(c, n, 0.05)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-12)


def test_wilson_with_billions_of_trials() -> None:
    """Counts are taken as floats: 4 n^2 at n = 3e9 overflows 64-bit integers."""
    ref = stats.binomtest(10**9, 3 * 10**9).proportion_ci(0.95, method="wilson")
    ci = wilson_interval(np.int64(10**9), np.int64(3 * 10**9), 0.05)
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), rel=1e-12)
    # the z^2/(4n^2) term is 1e-7 of the half-width here; an overflow would change the width by about that
    assert ci.high - ci.low == pytest.approx(ref.high - ref.low, rel=1e-9)


@pytest.mark.parametrize(("c", "n"), CASES)
def test_clopper_pearson_matches_scipy(c: int, n: int) -> None:
    for level in (0.95, 0.999):
        ref = stats.binomtest(c, n).proportion_ci(level, method="exact")
        ci = clopper_pearson(c, n, 1 - level)
        assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
        # the two-sided interval is the pair of one-sided bounds at alpha / 2
        assert ci.low == clopper_pearson_lower(c, n, (1 - level) / 2)
        assert ci.high == clopper_pearson_upper(c, n, (1 - level) / 2)


def test_newcombe_examples() -> None:
    """Wilson score intervals of Newcombe (1998), Stat. Med. 17:857, to his 4 decimals."""
    for (c, n), want in {
        (81, 263): (0.2553, 0.3662),
        (15, 148): (0.0624, 0.1605),
        (0, 20): (0.0, 0.1611),
        (1, 29): (0.0061, 0.1718),
    }.items():
        ci = wilson_interval(c, n, 0.05)
        assert (round(ci.low, 4), round(ci.high, 4)) == want


def test_clopper_pearson_closed_forms() -> None:
    """At c = 0 and c = n the exact bounds have closed forms: 1 - (alpha)^(1/n) and alpha^(1/n)."""
    n, alpha = 20, 0.05
    assert clopper_pearson_upper(0, n, alpha) == pytest.approx(1 - alpha ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(n, n, alpha) == pytest.approx(alpha ** (1 / n), rel=1e-12)
    assert clopper_pearson_lower(0, n, alpha) == 0.0 and clopper_pearson_upper(n, n, alpha) == 1.0
    ci = clopper_pearson(0, n, alpha)
    assert (ci.low, ci.high) == pytest.approx((0.0, 1 - (alpha / 2) ** (1 / n)), rel=1e-12)


def test_clopper_pearson_bounds_solve_their_tail_equations() -> None:
    """The defining property, both tails: P(X <= c | upper) = alpha = P(X >= c | lower)."""
    n, alpha = 40, 0.01
    for c in range(n + 1):
        if c < n:
            assert stats.binom.cdf(c, n, clopper_pearson_upper(c, n, alpha)) == pytest.approx(alpha, rel=1e-9)
        if c > 0:
            assert stats.binom.sf(c - 1, n, clopper_pearson_lower(c, n, alpha)) == pytest.approx(alpha, rel=1e-9)


def test_wilson_endpoints_invert_the_score_test() -> None:
    """Wilson's interval is {p : |c/n - p| <= z sqrt(p (1 - p) / n)}; its ends satisfy it with equality."""
    n, z = 50, z_for(0.05)
    for c in range(n + 1):
        ci = wilson_interval(c, n, 0.05)
        for p in (ci.low, ci.high):
            if 0 < p < 1:
                assert abs(c / n - p) == pytest.approx(z * math.sqrt(p * (1 - p) / n), rel=1e-9)


def _miss_probabilities(low: np.ndarray, high: np.ndarray, n: int, p: float) -> tuple[float, float]:
    """Exact P(interval lies above p) and P(interval lies below p) for X ~ Binomial(n, p)."""
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    return float(pmf[low > p].sum()), float(pmf[high < p].sum())


def _grid(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Rates just beyond every interval end (where a tail's miss probability peaks) and a fine grid."""
    ends = np.concatenate([low[low > 0] * (1 - 1e-9), high[high < 1] * (1 + 1e-9)])
    return np.concatenate([ends, np.linspace(0.001, 0.999, 999)])


@pytest.mark.parametrize("n", [10, 37, 200])
def test_clopper_pearson_exact_coverage_each_tail(n: int) -> None:
    """Each tail misses with probability at most alpha/2 at every rate, and reaches it (not too wide)."""
    alpha = 0.05
    c = np.arange(n + 1)
    ci = clopper_pearson(c, n, alpha)
    misses = np.array([_miss_probabilities(ci.low, ci.high, n, p) for p in _grid(ci.low, ci.high)])
    assert misses.max(axis=0) == pytest.approx([alpha / 2, alpha / 2], rel=1e-6)
    assert (misses <= alpha / 2 * (1 + 1e-9)).all()


def test_coverage_checks_catch_wrong_intervals() -> None:
    """Power: an interval widened to alpha/4 per tail, or shifted by 0.01, fails the checks above."""
    n, alpha = 37, 0.05
    c = np.arange(n + 1)
    wide = clopper_pearson(c, n, alpha / 2)
    wide_misses = np.array([_miss_probabilities(wide.low, wide.high, n, p) for p in _grid(wide.low, wide.high)])
    assert wide_misses.max() < 0.6 * alpha / 2
    base = clopper_pearson(c, n, alpha)
    low, high = base.low + 0.01, np.minimum(base.high + 0.01, 1.0)
    shifted = np.array([_miss_probabilities(low, high, n, p) for p in _grid(low, high)])
    assert shifted[:, 0].max() > alpha / 2 * 1.2


@pytest.mark.parametrize("n", [40, 400])
def test_wilson_exact_coverage_is_near_nominal_on_both_sides(n: int) -> None:
    """Wilson is approximate: averaged over rates in [0.1, 0.9] each tail misses close to alpha/2."""
    alpha = 0.05
    c = np.arange(n + 1)
    ci = wilson_interval(c, n, alpha)
    rates = np.linspace(0.1, 0.9, 161)
    misses = np.array([_miss_probabilities(ci.low, ci.high, n, p) for p in rates])
    mean_low, mean_high = misses.mean(axis=0)
    assert mean_low == pytest.approx(mean_high, rel=1e-6)  # symmetric in p <-> 1 - p
    assert 0.6 * alpha / 2 < mean_low < 1.4 * alpha / 2
    shifted = np.array([_miss_probabilities(ci.low + 0.02, ci.high + 0.02, n, p) for p in rates])
    assert not 0.6 * alpha / 2 < shifted.mean(axis=0)[0] < 1.4 * alpha / 2


def test_vectorised_matches_scalar() -> None:
    c = np.array([0, 3, 10])
    ci = clopper_pearson(c, 10, 0.1)
    for i, ci_ in enumerate(c):
        one = clopper_pearson(int(ci_), 10, 0.1)
        assert (ci.low[i], ci.high[i]) == (one.low, one.high)
    assert isinstance(one.low, float) and ci.contains(0.3).tolist() == [False, True, False]


@pytest.mark.parametrize("fn", [wilson_interval, clopper_pearson, clopper_pearson_lower, clopper_pearson_upper])
def test_bad_arguments(fn: Callable[..., Any]) -> None:
    with pytest.raises(ValueError, match="alpha"):
        fn(1, 10, 0.0)
    with pytest.raises(ValueError, match="successes <= trials"):
        fn(11, 10, 0.05)
    with pytest.raises(ValueError, match="trials > 0"):
        fn(0, 0, 0.05)


def test_docstring_examples() -> None:
    import doctest

    from deniable import _intervals as intervals

    assert doctest.testmod(intervals).failed == 0


def test_interval_contains_its_ends() -> None:
    """A closed interval: both ends belong to it, points just outside do not."""
    ci = normal_interval(np.array([0.5]), np.array([0.1]), 0.05)
    assert ci.contains(ci.low).all() and ci.contains(ci.high).all()
    assert not ci.contains(np.nextafter(ci.low, -1)).any() and not ci.contains(np.nextafter(ci.high, 2)).any()


def test_levels_are_one_minus_alpha() -> None:
    for ci in (wilson_interval(3, 10, 0.1), clopper_pearson(3, 10, 0.1), normal_interval(0.3, 0.1, 0.1)):
        assert ci.level == pytest.approx(0.9, abs=1e-15)


def test_wilson_clips_rounding_outside_the_unit_interval() -> None:
    """At c = 0 and c = n the formula's end is exactly 0 / 1 but rounds to either side of it (n = 77 and
    n = 38 round outside); the ends are exactly 0 and 1, and never outside [0, 1]."""
    assert wilson_interval(0, 77, 0.05).low == 0.0
    assert wilson_interval(38, 38, 0.05).high == 1.0
    ci = wilson_interval(np.array([0, 38]), 38, 0.05)
    assert ci.low.min() >= 0.0 and ci.high.max() <= 1.0
    for n in range(1, 200):
        assert wilson_interval(0, n, 0.05).low == 0.0 and wilson_interval(n, n, 0.05).high == 1.0


@pytest.mark.parametrize("alpha", [1.0, 1.5, -0.1, float("nan"), "0.05"])
def test_alpha_outside_0_1_is_refused(alpha: Any) -> None:
    for fn in (z_for, lambda a: wilson_interval(1, 10, a), lambda a: clopper_pearson(1, 10, a)):
        with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
            fn(alpha)


def test_counts_checks_name_the_function_and_accept_one_trial() -> None:
    """One trial is a valid sample; negative successes are refused; the message names the function called."""
    assert tuple(clopper_pearson(1, 1, 0.05)) == pytest.approx((0.025, 1.0), abs=1e-15)
    assert wilson_interval(0, 1, 0.05).low == 0.0
    for fn, name in [
        (wilson_interval, "wilson_interval"),
        (clopper_pearson, "clopper_pearson"),
        (clopper_pearson_lower, "clopper_pearson_lower"),
        (clopper_pearson_upper, "clopper_pearson_upper"),
    ]:
        with pytest.raises(ValueError, match=rf"^{name} needs 0 <= successes"):
            fn(-1, 10, 0.05)
        with pytest.raises(ValueError, match=rf"^{name} needs"):
            fn(np.array([1, 11]), 10, 0.05)
