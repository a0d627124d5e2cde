"""Privacy accounting of the frequency oracles: epsilon is checked, realised from exact integers.

Every mechanism refuses a bad epsilon naming it; the realised epsilon is the
worst log-ratio of the exact transition matrix, rounded up to the next float,
never above the request, and monotone in the privacy parameter. No sampling.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_grid import BAD_EPSILONS, CASES, ENUMERABLE, K_ORACLES, Case, matrix_of, params

import deniable as dn
from deniable import privacy


@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")  # OLH sizing g at 1e6
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.parametrize("cls", K_ORACLES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("eps", "exc"), BAD_EPSILONS, ids=repr)
def test_bad_epsilon(cls, eps, exc) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match="epsilon"):
        cls(5, epsilon=eps)


def test_numpy_scalars_are_accepted() -> None:
    assert dn.GRR(np.int64(4), epsilon=np.float64(1.0)) == dn.GRR(4, epsilon=1.0)
    assert dn.BinaryRR(prob=np.float64(0.75)) == dn.BinaryRR(prob=0.75)
    with pytest.raises(TypeError, match="epsilon"):
        dn.GRR(4, epsilon=np.bool_(True))


@pytest.mark.parametrize("cls", K_ORACLES, ids=lambda c: c.__name__)
@given(eps=st.floats(min_value=1e-12, max_value=50.0))
@settings(max_examples=40, deadline=None)
def test_every_mechanism_over_the_epsilon_range(cls, eps: float) -> None:  # type: ignore[no-untyped-def]
    """Any epsilon either builds a mechanism realising at most that epsilon (within 0.1% of it
    for 1e-3 <= epsilon <= 10), or is refused with a ValueError that names epsilon (too large
    or too small for the mechanism's integer probabilities; unary encoding's 32-bit
    probabilities refuse an epsilon above ~20 that they would realise more than 1% short)."""
    try:
        m = cls(6, epsilon=eps)
    except ValueError as exc:
        unary_limit = cls.__name__ in ("SUE", "OUE") and eps > 20
        assert "epsilon" in str(exc) and (eps > 40 or eps < 1e-6 or unary_limit)
        return
    assert 0 < m.epsilon <= eps
    if cls.__name__ in ("SUE", "OUE"):
        assert m.epsilon >= eps * (1 - 1e-2)
    if 1e-3 <= eps <= 10:
        assert m.epsilon >= eps * (1 - 1e-3)


REQUESTED = [case for case in CASES if case.requested is not None]


def test_grid_covers_every_matrix() -> None:
    """Most of the grid enumerates its outputs (the exact tests below cover most cases)."""
    assert len(ENUMERABLE) >= 0.8 * len(CASES)
    assert {type(c.make()).__name__ for c in ENUMERABLE} >= {
        "BinaryRR", "GRR", "SUE", "OUE", "BLH", "OLH", "HadamardResponse", "SubsetSelection"
    }


@params(ENUMERABLE)
def test_transition_matrix_realises_epsilon(case: Case) -> None:
    m = case.make()
    outputs, P = matrix_of(m)
    assert P.shape == (m.k, len(outputs))
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(P > 0), "a zero probability makes the privacy loss infinite"
    logs = np.log(P)
    worst = float(np.max(logs.max(axis=0) - logs.min(axis=0)))
    assert abs(worst - m.epsilon) <= 1e-9 * max(1.0, m.epsilon), (worst, m.epsilon)
    # float noise only: the claim is computed from the exact integers, rounded up
    assert worst <= m.epsilon * (1 + 1e-12) + 1e-15


@params(REQUESTED)
def test_epsilon_never_above_request(case: Case) -> None:
    m = case.make()
    assert case.requested is not None
    assert m.epsilon <= case.requested
    assert m.epsilon >= case.requested * (1 - 1e-6), "realised epsilon should be close to the request"


@params()
def test_epsilon_is_rounded_up_tightly(case: Case) -> None:
    """``m.epsilon`` is the smallest float >= ln(p*(1-q*)... ) of the exact integers."""
    m = case.make()
    exact = _exact_loss(m)
    with localcontext() as ctx:
        ctx.prec = 60
        truth = (Decimal(exact.numerator) / Decimal(exact.denominator)).ln()
        assert Decimal(m.epsilon) >= truth
        assert Decimal(math.nextafter(m.epsilon, -math.inf)) < truth


def _exact_loss(m) -> Fraction:  # type: ignore[no-untyped-def]
    """The exact likelihood ratio bound ``e^epsilon`` from each mechanism's definition."""
    name = type(m).__name__
    if name == "BinaryRR":
        yt, yf = m.p_yes_given_yes, m.p_yes_given_no
        return max(yt / yf, (1 - yf) / (1 - yt))
    if name in ("GRR", "BLH", "OLH"):
        p = m.prob
        g = m.k if name == "GRR" else m.g
        return p * (g - 1) / (1 - p)
    if name in ("SUE", "OUE"):
        return m.p * (1 - m.q) / ((1 - m.p) * m.q)
    if name == "HadamardResponse":
        return m.prob / (1 - m.prob)
    if name == "SubsetSelection":
        p, w, k = m.prob, m.omega, m.k
        return p * (k - w) / ((1 - p) * w)
    raise AssertionError(name)


EPS_GRID = [0.05, 0.1, 0.3, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0]


FAMILIES = [
    lambda e: dn.BinaryRR(epsilon=e),
    lambda e: dn.GRR(7, epsilon=e),
    lambda e: dn.SUE(7, epsilon=e),
    lambda e: dn.OUE(7, epsilon=e),
    lambda e: dn.BLH(7, epsilon=e),
    lambda e: dn.OLH(7, epsilon=e),
    lambda e: dn.HadamardResponse(7, epsilon=e),
    lambda e: dn.SubsetSelection(7, epsilon=e),
]


@pytest.mark.parametrize("family", FAMILIES, ids=["BinaryRR", "GRR", "SUE", "OUE", "BLH", "OLH", "HR", "SS"])
def test_privacy_map_monotone_in_epsilon(family) -> None:  # type: ignore[no-untyped-def]
    eps = [family(e).epsilon for e in EPS_GRID]
    assert all(a < b for a, b in zip(eps, eps[1:], strict=False)), eps
    assert all(got <= want for got, want in zip(eps, EPS_GRID, strict=True))


@given(st.fractions(min_value=Fraction(51, 100), max_value=Fraction(99, 100)),
       st.fractions(min_value=Fraction(51, 100), max_value=Fraction(99, 100)))
@settings(max_examples=60, deadline=None)
def test_binary_epsilon_monotone_in_prob(a: Fraction, b: Fraction) -> None:
    a = a.limit_denominator(10_000)
    b = b.limit_denominator(10_000)
    ea, eb = dn.BinaryRR(prob=a).epsilon, dn.BinaryRR(prob=b).epsilon
    assert (ea < eb) == (a < b) and (ea == eb) == (a == b)
    assert ea == privacy.binary_epsilon(a)


@given(st.integers(2, 50), st.integers(1, 999), st.integers(1, 999))
@settings(max_examples=80, deadline=None)
def test_grr_epsilon_monotone_in_prob(k: int, i: int, j: int) -> None:
    a, b = Fraction(i, 1000), Fraction(j, 1000)
    if min(a, b) <= Fraction(1, k):
        with pytest.raises(ValueError, match="prob must be in"):
            dn.GRR(k, prob=min(a, b))
        return
    ea, eb = dn.GRR(k, prob=a).epsilon, dn.GRR(k, prob=b).epsilon
    assert (ea < eb) == (a < b)
    assert ea == privacy.grr_epsilon(a, k)


def test_named_epsilons() -> None:
    """The textbook values: ln 3, ln 9 (OpenDP's k=4, p=0.75 test) and ln 3 for the two-coin design."""
    assert dn.BinaryRR(prob=0.75).epsilon == privacy.ln_up(3)
    assert dn.GRR(4, prob=0.75).epsilon == privacy.ln_up(9)
    assert dn.BinaryRR.forced_response(0.5, 0.5) == dn.BinaryRR(prob=0.75)
    assert dn.BinaryRR(gamma=0.25) == dn.BinaryRR(prob=0.75)
    m = dn.BinaryRR.forced_response(0.3, 0.8)  # yes: 0.86 / 0.56
    assert m.p_yes_given_yes == Fraction(43, 50) and m.p_yes_given_no == Fraction(14, 25)
    assert m.epsilon == privacy.ln_up(max(Fraction(43, 28), Fraction(44, 14)))
