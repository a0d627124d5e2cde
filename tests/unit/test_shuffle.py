"""Amplification by shuffling (deniable.shuffle_epsilon): exact checks, no randomness.

* ``shuffle_delta`` against a brute-force enumeration of the two distributions
  of Feldman, McMillan & Talwar's Theorem 3.2 (every ``(c, x)``, both
  directions of the hockey-stick divergence), to 1e-12; power: the same
  comparison with a wrong clone probability differs.
* ``shuffle_epsilon`` between the lower and upper numerical bounds of the
  authors' reference implementation (apple/ml-shuffling-amplification,
  ``numericalanalysis`` with 40 bisection steps, step 1 for n <= 10^4 and 10
  above; numbers computed by running it, not part of this package), and within
  the range their README publishes for n = 10^5, epsilon0 = 4, delta = 1e-6.
* The closed form (Theorem 3.1) against the formula evaluated here, its
  range, and that it is never below the numerical bound.
* Monotone in n, epsilon0 and delta; never above epsilon0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable._shuffle import shuffle_delta

TOL = 1e-6  # the bisection's resolution in epsilon


def brute_delta(epsilon: float, epsilon0: float, n: int, clone: float | None = None) -> float:
    clone = math.exp(-epsilon0) if clone is None else clone
    alpha = math.exp(epsilon0) / (math.exp(epsilon0) + 1)
    forward = backward = 0.0
    for c in range(n):
        w = stats.binom.pmf(c, n - 1, clone)
        a = np.append(stats.binom.pmf(np.arange(c + 1), c, 0.5), 0.0)  # A on 0..c+1
        shifted = np.roll(a, 1)  # A + 1
        p = alpha * a + (1 - alpha) * shifted
        q = (1 - alpha) * a + alpha * shifted
        forward += w * np.maximum(p - math.exp(epsilon) * q, 0).sum()
        backward += w * np.maximum(q - math.exp(epsilon) * p, 0).sum()
    return max(forward, backward)


@pytest.mark.parametrize("n", [1, 2, 10, 60])
@pytest.mark.parametrize("epsilon0", [0.3, 1.0, 3.0])
def test_delta_matches_a_brute_force_enumeration(n: int, epsilon0: float) -> None:
    for epsilon in np.linspace(0, epsilon0, 7):
        assert shuffle_delta(epsilon, epsilon0, n) == pytest.approx(brute_delta(epsilon, epsilon0, n), abs=1e-12)
    assert shuffle_delta(epsilon0, epsilon0, n) == 0.0


def test_power_a_wrong_clone_probability_is_detected() -> None:
    wrong = brute_delta(0.2, 1.0, 60, clone=math.exp(-0.5))
    assert abs(shuffle_delta(0.2, 1.0, 60) - wrong) > 1e-3


# (epsilon0, n, delta, reference lower bound, reference upper bound)
REFERENCE = [
    (4.0, 100_000, 1e-6, 0.1695450721259185, 0.1751213180496022),
    (1.0, 10_000, 1e-6, 0.053005191723349304, 0.05556159185771903),
    (0.5, 1_000, 1e-6, 0.07052225471744583, 0.07378365073115628),
    (2.0, 50_000, 1e-6, 0.06533479216642965, 0.06829890565307023),
    (3.0, 5_000, 1e-5, 0.40239434657576706, 0.4211972724907199),
    (6.0, 1_000_000, 1e-8, 0.18928085253435423, 0.19329744321686715),
    (1.0, 100, 1e-3, 0.3312248422580524, 0.36789988026612264),
]


@pytest.mark.parametrize(("epsilon0", "n", "delta", "low", "high"), REFERENCE)
def test_within_the_reference_implementations_bounds(epsilon0, n, delta, low, high) -> None:
    eps = dn.shuffle_epsilon(epsilon0, n, delta)
    assert low - TOL <= eps <= high
    # the search's upper end is a valid guarantee: delta(eps) <= delta
    assert shuffle_delta(eps, epsilon0, n) <= delta


def test_the_papers_published_example() -> None:
    """README of the authors' code: n = 10^5, epsilon0 = 4, delta = 1e-6 gives eps in [0.16754, 0.17279]."""
    assert 0.1675385583317841 <= dn.shuffle_epsilon(4.0, 100_000, 1e-6) <= 0.172790550755978


def test_closed_form_is_theorem_3_1() -> None:
    e0, n, delta = 4.0, 100_000, 1e-6
    shrink = (math.e**e0 - 1) / (math.e**e0 + 1)
    e = math.e**e0
    expected = math.log(1 + shrink * (8 * math.sqrt(e * math.log(4 / delta)) / math.sqrt(n) + 8 * e / n))
    assert dn.shuffle_epsilon(e0, n, delta, method="closed-form") == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(0.53463399165, rel=1e-10)
    with pytest.raises(ValueError, match=r"epsilon0 <= ln\(n / \(16 ln\(2/delta\)\)\)"):
        dn.shuffle_epsilon(8.0, 10_000, 1e-6, method="closed-form")


IN_RANGE = [
    (e0, n) for e0 in (0.1, 0.5, 1.0, 2.0, 4.0) for n in (1_000, 100_000)
    if e0 <= math.log(n / (16 * math.log(2 / 1e-6)))
]


@pytest.mark.parametrize(("epsilon0", "n"), IN_RANGE)
def test_closed_form_is_never_tighter_than_the_numerical_bound(epsilon0: float, n: int) -> None:
    assert dn.shuffle_epsilon(epsilon0, n, 1e-6, method="closed-form") >= dn.shuffle_epsilon(epsilon0, n, 1e-6)


def test_monotone_and_never_above_epsilon0() -> None:
    ns = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
    for e0 in (0.5, 2.0, 6.0):
        by_n = [dn.shuffle_epsilon(e0, n, 1e-6) for n in ns]
        assert all(b <= a + TOL for a, b in zip(by_n, by_n[1:], strict=False)), by_n
        assert all(0 <= v <= e0 for v in by_n)
        assert by_n[-1] < by_n[0]
    e0s = [0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 12.0]
    by_e0 = [dn.shuffle_epsilon(e0, 10_000, 1e-6) for e0 in e0s]
    assert all(b >= a - TOL for a, b in zip(by_e0, by_e0[1:], strict=False)), by_e0
    assert all(v <= e0 for v, e0 in zip(by_e0, e0s, strict=True))
    by_delta = [dn.shuffle_epsilon(1.0, 10_000, d) for d in (1e-3, 1e-6, 1e-9)]
    assert by_delta[0] < by_delta[1] < by_delta[2]


def test_one_report_gains_nothing_beyond_delta() -> None:
    """n = 1: delta(eps) = alpha - e^eps (1 - alpha), so eps = ln((alpha - delta) / (1 - alpha))."""
    e0, delta = 2.0, 1e-3
    alpha = math.exp(e0) / (math.exp(e0) + 1)
    assert dn.shuffle_epsilon(e0, 1, delta) == pytest.approx(math.log((alpha - delta) / (1 - alpha)), abs=TOL)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((0.0, 100, 1e-6), {}, "epsilon0 must be a finite number > 0; got 0.0"),
        ((math.inf, 100, 1e-6), {}, "epsilon0 must be a finite number > 0"),
        ((1.0, 0, 1e-6), {}, "n must be an int >= 1"),
        ((1.0, 10.5, 1e-6), {}, "n must be an int >= 1"),
        ((1.0, 100, 0.0), {}, "delta must be in (0, 1); got 0.0"),
        ((1.0, 100, 1e-6), {"method": "exact"}, "method must be 'numerical' or 'closed-form'"),
        ((1.0, 100, 1e-6), {"tol": 0}, "tol must be a positive number"),
    ],
)
def test_bad_arguments(args, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        dn.shuffle_epsilon(*args, **kwargs)
