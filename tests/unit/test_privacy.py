"""Privacy accounting of the frequency oracles: epsilon is checked, realised from exact integers.

Every mechanism refuses a bad epsilon naming it; the realised epsilon is the
worst log-ratio of the exact transition matrix, rounded up to the next float,
never above the request, and monotone in the privacy parameter. No sampling.

Also: ``deniable._privacy``: exact epsilon <-> integer conversions, their guards, composition and budgets.

Deterministic: every reference is exact rational arithmetic or a 60-digit
Decimal computation, independent of the code under test.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_grid import BAD_EPSILONS, CASES, ENUMERABLE, K_ORACLES, Case, matrix_of, params

import deniable as dn
from deniable import _privacy as privacy
from deniable._privacy import PrivacyBudget, exp_ratio
from deniable.errors import BudgetError


@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")  # OLH sizing g at 1e6
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.parametrize("cls", K_ORACLES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("eps", "exc", "message"), BAD_EPSILONS, ids=[repr(e) for e, *_ in BAD_EPSILONS])
def test_bad_epsilon(cls, eps, exc, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message.format(name=cls.__name__)):
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


def _exp(eps: float) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 80
        return Decimal(eps).exp()


def _is_closest_below(a: int, b: int, eps: float) -> bool:
    """``a / b <= e^eps < (a + 1) / b``: a is the largest numerator the denominator allows."""
    with localcontext() as ctx:
        ctx.prec = 80
        growth = _exp(eps)
        return Decimal(a) / Decimal(b) <= growth < Decimal(a + 1) / Decimal(b)


def _largest_b(b: int, eps: float, others: int, bits: int) -> bool:
    """``b (e^eps + others) <= 2^bits < (b + 1) (e^eps + others)``: the finest denominator that fits."""
    with localcontext() as ctx:
        ctx.prec = 80
        step = _exp(eps) + others
        return b * step <= (1 << bits) < (b + 1) * step


@pytest.mark.parametrize(("eps", "others"), [(1.0, 1), (1.0, 9), (0.1, 2), (5.0, 99)])
def test_exp_ratio_in_32_bit_words(eps: float, others: int) -> None:
    a, b = exp_ratio(eps, others)
    assert a + others * b <= 1 << 32 and b >= 1 << 16
    assert _largest_b(b, eps, others, 32)
    assert _is_closest_below(a, b, eps) and privacy.ln_up(Fraction(a, b)) <= eps


@pytest.mark.parametrize(("eps", "others"), [(12.0, 1), (1.0, 70_000), (20.0, 3), (1e-12, 1)])
def test_exp_ratio_falls_back_to_63_bits(eps: float, others: int) -> None:
    """e^eps + others > 2^16 (b would be coarser than 2^-16), or eps so small that a = b in 32 bits."""
    a, b = exp_ratio(eps, others)
    assert 1 << 32 < a + others * b <= 1 << 63
    assert _largest_b(b, eps, others, 63)
    assert _is_closest_below(a, b, eps) and a > b


def test_exp_ratio_word_choice_at_the_coarseness_threshold() -> None:
    """32-bit words are kept while b >= 2^16: b = 2^16 exactly (e^eps + 1 = 65535.5) and b near 2^16.5
    stay in 32 bits."""
    a, b = exp_ratio(math.log(65534.5), 1)
    assert b == 1 << 16 and a + b <= 1 << 32
    a, b = exp_ratio(math.log(46340.0), 1)
    assert (1 << 16) < b < (1 << 17) and a + b <= 1 << 32 and _largest_b(b, math.log(46340.0), 1, 32)
    a, b = exp_ratio(math.log(65537.0), 1)  # b = 65535 < 2^16: 63 bits
    assert a + b > 1 << 32


@pytest.mark.parametrize(
    ("eps", "others", "excess"), [(1.0, 1, 1e-8), (0.1, 2, 3e-8), (12.0, 1, 1e-17), (1.0, 70_000, 1e-13)]
)
def test_exp_ratio_steps_a_first_guess_above_e_eps_down(
    monkeypatch: pytest.MonkeyPatch, eps: float, others: int, excess: float
) -> None:
    """The guard ``while ln_up(a / b) > eps: a -= 1`` keeps the realised loss within the request
    whatever the first guess. A 60-digit ``e^eps`` never needs it, so here ``exp`` rounds up by
    ``excess`` (relative): the first guess ``floor(e^eps (1 + excess) b)`` is a few to ~100 steps
    too large (32-bit and 63-bit words), and the result is still the largest ``a`` within ``e^eps``."""
    class RoundsUp(Decimal):
        def exp(self, context: Any = None) -> Decimal:
            return Decimal.exp(self, context) * (1 + Decimal(excess))

    monkeypatch.setattr(privacy, "Decimal", RoundsUp)
    a, b = exp_ratio(eps, others)
    monkeypatch.undo()
    with localcontext() as ctx:
        ctx.prec = 60
        first = int(Decimal(eps).exp() * (1 + Decimal(excess)) * b)
    assert first - a >= 2  # the guard stepped down
    assert _is_closest_below(a, b, eps) and privacy.ln_up(Fraction(a, b)) <= eps


def test_exp_ratio_guards() -> None:
    """Too large for 63 bits (even b = 1 overflows, or eps >= 64 ln 2) and too small (a = b) are refused."""
    a, b = exp_ratio(43.6, 1)  # e^43.6 < 2^63: b = 1 still fits
    assert b == 1 and _is_closest_below(a, b, 43.6)
    for eps in (44.0, math.log(2) * 63.99, math.log(2) * 64, 50.0, 1e7):
        with pytest.raises(ValueError, match=rf"epsilon={eps} is too large to realise with 63-bit"):
            exp_ratio(eps, 1)
    with pytest.raises(ValueError, match=r"epsilon=1e-20 is too small to realise with 63-bit"):
        exp_ratio(1e-20, 1)


def test_ln_up_is_the_smallest_float_not_below_ln() -> None:
    with localcontext() as ctx:
        ctx.prec = 60
        for x in (Fraction(2), Fraction(3, 7), Fraction(10**18 + 1, 10**18), Fraction(1, 3)):
            exact = (Decimal(x.numerator) / Decimal(x.denominator)).ln()
            value = privacy.ln_up(x)
            assert Decimal(value) >= exact > Decimal(math.nextafter(value, -math.inf))
    assert privacy.ln_up(1) == 0.0 and privacy.ln_up(Fraction(1, 2)) < 0
    for bad in (0, -1, Fraction(-1, 2)):
        with pytest.raises(ValueError, match="ln_up needs a positive number"):
            privacy.ln_up(bad)


@pytest.mark.parametrize("value", [0, 0.0, -1.0, float("inf"), float("nan"), -0.0])
def test_check_epsilon_refuses_non_positive_and_non_finite(value: float) -> None:
    with pytest.raises(ValueError, match=rf"^epsilon must be a positive finite number; got {value!r}$"):
        privacy.check_epsilon(value)
    with pytest.raises(ValueError, match=r"^budget must be a positive finite number for SUE; got"):
        privacy.check_epsilon(value, "budget", "SUE")


@pytest.mark.parametrize("value", [True, np.bool_(False), "1", None, [1.0], np.array([1.0])])
def test_check_epsilon_refuses_non_numbers(value: Any) -> None:
    with pytest.raises(TypeError, match=r"^epsilon must be a positive finite number; got"):
        privacy.check_epsilon(value)


def test_check_epsilon_accepts_numbers() -> None:
    for value, want in [(1, 1.0), (0.5, 0.5), (np.float32(0.25), 0.25), (np.int64(2), 2.0), (5e-324, 5e-324)]:
        got = privacy.check_epsilon(value)
        assert got == want and type(got) is float


def test_check_probability() -> None:
    lo, hi = Fraction(0), Fraction(1)
    assert privacy.check_probability(0.3, "p", lo, hi) == Fraction(3, 10)  # the decimal it prints as
    assert privacy.check_probability(np.float64(0.3), "p", lo, hi) == Fraction(3, 10)
    assert privacy.check_probability(np.float32(0.25), "p", lo, hi) == Fraction(1, 4)
    assert privacy.check_probability(Fraction(1, 3), "p", lo, hi) == Fraction(1, 3)
    for bad in (0, 1, 0.0, 1.0, -0.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"^p must be in \(0, 1\) for GRR; got"):
            privacy.check_probability(bad, "p", lo, hi, "GRR")
    for bad in (True, "0.5", None, np.int64(1)):
        with pytest.raises(TypeError, match=r"^p must be a number; got"):
            privacy.check_probability(bad, "p", lo, hi)


def test_closed_probability_intervals_keep_their_ends() -> None:
    """``closed=True`` accepts both ends exactly and names the interval with brackets."""
    lo, hi = Fraction(1, 4), Fraction(3, 4)
    assert privacy.check_probability(0.25, "p", lo, hi, closed=True) == lo
    assert privacy.check_probability(Fraction(3, 4), "p", lo, hi, closed=True) == hi
    for bad in (0.2, Fraction(4, 5)):
        with pytest.raises(ValueError, match=rf"^p must be in \[0.25, 0.75\] for FR; got {re.escape(repr(bad))}$"):
            privacy.check_probability(bad, "p", lo, hi, "FR", closed=True)
    with pytest.raises(ValueError, match=r"^p must be in \(0.25, 0.75\); got 0.25$"):
        privacy.check_probability(0.25, "p", lo, hi)


def test_exact_probability_reads_fractions_and_decimals() -> None:
    """Strings as survey files write them, exactly; 0 and 1 are probabilities too."""
    exact = privacy.exact_probability
    assert exact("1/6", "p") == Fraction(1, 6) and exact(" 0.25 ", "p") == Fraction(1, 4)
    assert exact(0.3, "p") == Fraction(3, 10) and exact(Fraction(2, 3), "p") == Fraction(2, 3)
    assert [exact(v, "p") for v in (0, 1, 0.0, 1.0, "0", "1/1")] == [0, 1, 0, 1, 0, 1]
    for bad in ("1.5", "-1/6", 1.0001, -0.5):
        shown = repr(Fraction(bad) if isinstance(bad, str) else bad)
        with pytest.raises(ValueError, match=rf"^p must be in \[0, 1\] for FR; got {re.escape(shown)}$"):
            exact(bad, "p", "FR")
        with pytest.raises(ValueError, match=rf"^piUQ must be in \[0, 1\]; got {re.escape(shown)}$"):
            exact(bad, "piUQ")
    for text in ("abc", "1/0", "", "one sixth"):
        with pytest.raises(ValueError, match=rf"^p must be a number or a fraction like 1/6 for FR; got {text!r}$"):
            exact(text, "p", "FR")
        with pytest.raises(ValueError, match=rf"^p must be a number or a fraction like 1/6; got {text!r}$"):
            exact(text, "p")
    with pytest.raises(TypeError, match=r"^p must be a number for FR; got None$"):
        exact(None, "p", "FR")


def test_check_realisable_refuses_only_above_the_largest() -> None:
    assert privacy.check_realisable(2.0, 2.0, "Duchi") == 2.0
    assert privacy.check_realisable(0.5, 2.0, "Duchi") == 0.5
    with pytest.raises(ValueError, match=r"^Duchi realises epsilon to within 1% only up to 2 \(its integer "
                       r"probabilities run out of bits\); got epsilon=2\.0000001$"):
        privacy.check_realisable(2.0000001, 2.0, "Duchi")


def test_integer_probabilities() -> None:
    assert privacy.integer_probabilities([Fraction(1, 3), Fraction(1, 6)]) == ([2, 1], 6)
    assert privacy.integer_probabilities([Fraction(1, 4)], limit=4) == ([1], 4)
    with pytest.raises(ValueError, match=r"^probabilities \['1/5'\] need a denominator of 5, above the sampler's "
                       r"limit 2\*\*2; pass simpler values$"):
        privacy.integer_probabilities([Fraction(1, 5)], limit=4)
    # the default limit is the samplers' 2**63: a denominator of 2**63 fits, one above it is refused
    assert privacy.integer_probabilities([Fraction(3, 2**63)]) == ([3], 2**63)
    with pytest.raises(ValueError, match=r"^probabilities \['1/9223372036854775809'\] need a denominator of "
                       r"9223372036854775809, above the sampler's limit 2\*\*63; pass simpler values$"):
        privacy.integer_probabilities([Fraction(1, 2**63 + 1)])
    with pytest.raises(ValueError, match=r"need a denominator of 18446744073709551616, above the sampler's limit"):
        dn.GRR(["x", "y"], prob=Fraction(2**63 + 1, 2**64))


def test_conversions() -> None:
    a, b = exp_ratio(1.0, 1)
    assert privacy.binary_prob(1.0) == Fraction(a, a + b)
    assert privacy.binary_epsilon(Fraction(3, 4)) == privacy.ln_up(3)
    assert privacy.grr_epsilon(Fraction(1, 2), 5) == privacy.ln_up(4)
    with pytest.raises(ValueError, match="epsilon must be a positive finite number"):
        privacy.binary_prob(0.0)


def test_compose_adds_exactly() -> None:
    assert privacy.compose([0.5, 0.25, 0.25]) == 1.0
    assert privacy.compose([0.1] * 10) == 1.0  # fsum: exact despite 0.1's rounding
    assert privacy.compose(iter([2.0])) == 2.0 and privacy.compose([]) == 0.0
    with pytest.raises(ValueError, match="epsilon must be a positive finite number; got 0"):
        privacy.compose([1.0, 0])


def test_budget_arithmetic() -> None:
    budget = PrivacyBudget(2.0)
    assert budget.used == 0.0 and budget.remaining == 2.0
    budget.spend(0.5, "q1")
    budget.spend(0.25)
    assert budget.used == 0.75 and budget.remaining == 1.25
    assert budget.spent == [("q1", 0.5), ("", 0.25)]
    budget.spend(1.25, "q3")  # exactly to the total
    assert budget.remaining == 0.0
    with pytest.raises(BudgetError, match=r"spending epsilon=1e-09 for this release brings the total to 2, "
                       r"above the budget 2 \(already spent: q1=0.5, \?=0.25, q3=1.25\)"):
        budget.spend(1e-9)
    assert budget.used == 2.0  # a refused spend is not recorded


def test_budget_tolerates_only_rounding_noise() -> None:
    """Spends that overshoot the total by float noise (relative 1e-12) pass; anything above is refused."""
    budget = PrivacyBudget(1.0)
    budget.spend(1.0 + 5e-13)
    PrivacyBudget(1.0).spend(1.0 * (1 + 1e-12))  # exactly at the tolerance: accepted
    budget = PrivacyBudget(1.0)
    for _ in range(10):
        budget.spend(0.1)
    with pytest.raises(BudgetError, match=r"for q brings the total to 1, above the budget 1 \(already spent: nothing"):
        PrivacyBudget(1.0).spend(1.0 + 2e-12, "q")
    with pytest.raises(ValueError, match="total budget must be a positive finite number; got 0"):
        PrivacyBudget(0)
    with pytest.raises(BudgetError):
        PrivacyBudget(1.0).spend(1.5)


def test_docstring_examples() -> None:
    import doctest

    assert doctest.testmod(privacy, optionflags=doctest.ELLIPSIS).failed == 0
