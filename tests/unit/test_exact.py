"""Layer A: exact properties of every mechanism, no sampling.

Transition matrices are proper and realise exactly the claimed epsilon; the
support probabilities agree with the matrices; the estimator inverts the
expected support counts; the variance is the closed form of MECHANISMS.md;
epsilon is monotone in the privacy parameter and never above the request.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_grid import CASES, Case, e_of, params

import deniable as dn
from deniable import privacy
from deniable.estimate import SupportCounts


def _enumerates(case: Case) -> bool:
    try:
        case.make().transition_matrix()
    except NotImplementedError:
        return False
    return True


# mechanisms whose output space is small enough to enumerate exactly
ENUMERABLE = [case for case in CASES if _enumerates(case)]
REQUESTED = [case for case in CASES if case.requested is not None]


def _matrix(m):  # type: ignore[no-untyped-def]
    return m.transition_matrix()


def _as_reports(m, outputs):  # type: ignore[no-untyped-def]
    """The enumerated outputs in a form ``m.validate`` accepts."""
    kind = type(m).__name__
    if kind in ("SUE", "OUE"):
        return np.array(outputs, dtype=np.uint8)
    if kind == "SubsetSelection":
        return np.array(outputs, dtype=np.int64).reshape(len(outputs), m.omega)
    return outputs


def test_grid_covers_every_matrix() -> None:
    """Most of the grid enumerates its outputs (the exact tests below cover most cases)."""
    assert len(ENUMERABLE) >= 0.8 * len(CASES)
    assert {type(c.make()).__name__ for c in ENUMERABLE} >= {
        "BinaryRR", "GRR", "SUE", "OUE", "BLH", "OLH", "HadamardResponse", "SubsetSelection"
    }


@params(ENUMERABLE)
def test_transition_matrix_realises_epsilon(case: Case) -> None:
    m = case.make()
    outputs, P = _matrix(m)
    assert P.shape == (m.k, len(outputs))
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(P > 0), "a zero probability makes the privacy loss infinite"
    logs = np.log(P)
    worst = float(np.max(logs.max(axis=0) - logs.min(axis=0)))
    assert abs(worst - m.epsilon) <= 1e-9 * max(1.0, m.epsilon), (worst, m.epsilon)
    # float noise only: the claim is computed from the exact integers, rounded up
    assert worst <= m.epsilon * (1 + 1e-12) + 1e-15


@params(ENUMERABLE)
def test_support_probabilities_match_matrix(case: Case) -> None:
    """``P[v in S(y) | x]`` summed from the matrix is p* on the diagonal and q* off it."""
    m = case.make()
    outputs, P = _matrix(m)
    reports = _as_reports(m, outputs)
    p_star, q_star = (np.array([float(v) for v in side]) for side in m.support_probabilities())
    for v_pos, v in enumerate(m.domain):
        supported = m.supports(reports, v)
        rate = P @ supported.astype(float)
        expected = np.where(np.arange(m.k) == v_pos, p_star[v_pos], q_star[v_pos])
        np.testing.assert_allclose(rate, expected, rtol=0, atol=1e-12)


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


# ------------------------------------------------------------------ monotone
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


# ------------------------------------------------------------ unbiasedness
@params()
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_estimator_inverts_expected_counts(case: Case, data: st.DataObject) -> None:
    """Feeding ``n (q* + (p* - q*) f)`` returns ``f`` (the estimator is unbiased by algebra)."""
    m = case.make()
    if m.k <= 20:
        counts = np.array(data.draw(st.lists(st.integers(0, 10**6), min_size=m.k, max_size=m.k)))
    else:  # a sparse histogram: a few categories carry everyone
        counts = np.zeros(m.k, dtype=np.int64)
        for i, c in data.draw(st.lists(st.tuples(st.integers(0, m.k - 1), st.integers(0, 10**6)), max_size=12)):
            counts[i] += c
    if counts.sum() == 0:
        counts[0] = 1
    n = int(counts.sum())
    f = counts / n
    p, q = m._pq()
    expected = n * (q + (p - q) * f)
    est = m.estimate_from(SupportCounts(m.fingerprint, expected, n))
    np.testing.assert_allclose(est.frequencies, f, rtol=0, atol=1e-9)
    np.testing.assert_allclose(est.counts, counts, rtol=1e-9, atol=1e-6)


# ----------------------------------------------------------------- variance
def closed_form_var_star(m) -> float:  # type: ignore[no-untyped-def]
    """``Var*`` from the closed forms of MECHANISMS.md section 1.0, in ``e = exp(epsilon)``."""
    e, k = e_of(m), m.k
    name = type(m).__name__
    if name == "BinaryRR":
        return e / (e - 1) ** 2
    if name == "GRR":
        return (e + k - 2) / (e - 1) ** 2
    if name == "SUE":
        h = math.sqrt(e)
        return h / (h - 1) ** 2
    if name == "OUE":
        return 4 * e / (e - 1) ** 2
    if name in ("BLH", "HadamardResponse"):
        return (e + 1) ** 2 / (e - 1) ** 2
    if name == "OLH":
        g = m.g
        p, q = e / (e + g - 1), 1 / g
        return q * (1 - q) / (p - q) ** 2
    if name == "SubsetSelection":
        w = m.omega
        p = w * e / (w * e + k - w)
        q = (w * (w - 1) * e + w * (k - w)) / ((k - 1) * (w * e + k - w))
        gap = w * (k - w) * (e - 1) / ((k - 1) * (w * e + k - w))
        assert math.isclose(p - q, gap, rel_tol=1e-9)
        return q * (1 - q) / gap**2
    raise AssertionError(name)


@params([c for c in CASES if not c.id.startswith("BinaryRR-forced-0.3")])
def test_variance_matches_closed_form(case: Case) -> None:
    m = case.make()
    want = closed_form_var_star(m)
    np.testing.assert_allclose(m.variance(1), want, rtol=1e-6)
    np.testing.assert_allclose(m.variance(1000), want / 1000, rtol=1e-6)


@params()
def test_variance_formula_a_with_frequencies(case: Case) -> None:
    """Formula (A) with f: ``q*(1-q*)/(n gap^2) + f (1-p*-q*)/(n gap)``, from the exact fractions."""
    m = case.make()
    f = np.linspace(0, 1, m.k)
    f /= f.sum()
    p, q = m.support_probabilities()
    want = [float((qq * (1 - qq) / (pp - qq) ** 2 + Fraction(fv) * (1 - pp - qq) / (pp - qq)) / 250)
            for pp, qq, fv in zip(p, q, f, strict=True)]
    np.testing.assert_allclose(m.variance(250, f), want, rtol=1e-9)


def test_forced_response_variance() -> None:
    """Asymmetric forced response: Var = l(1-l)/(n (P(yes|T)-P(yes|F))^2) at the fixed population."""
    m = dn.BinaryRR.forced_response(0.3, 0.8)
    yt, yf = 0.86, 0.56
    for pi in (0.0, 0.3, 1.0):
        lam_t, lam_f = yt, yf  # per-respondent yes rates
        var = (pi * lam_t * (1 - lam_t) + (1 - pi) * lam_f * (1 - lam_f)) / (yt - yf) ** 2
        assert m.variance(1, [1 - pi, pi])[1] == pytest.approx(var, rel=1e-12)


def test_spot_values_table() -> None:
    """MECHANISMS.md section 3.2 spot values of Var* at (10, 1) and (1024, 1)."""
    shared = {"SUE": 3.92, "OUE": 3.68, "OLH": 3.69, "BLH": 4.68, "HadamardResponse": 4.68}
    table = {
        10: {"GRR": 3.63, "SubsetSelection": 2.84, **shared},
        1024: {"GRR": 347, "SubsetSelection": 3.67, **shared},
    }
    for k, row in table.items():
        choice = dn.best_mechanism(k, 1.0)
        for name, value in row.items():
            assert choice.variances[name] == pytest.approx(value, abs=0.006 if value < 100 else 0.5), (k, name)
        assert choice.name == "SubsetSelection"


@given(st.integers(51, 99), st.integers(0, 100))
@settings(max_examples=60, deadline=None)
def test_debias_binary_inverts_expected_share(p_pct: int, pi_pct: int) -> None:
    p, pi = p_pct / 100, pi_pct / 100
    share = p * pi + (1 - p) * (1 - pi)
    assert dn.debias_binary(share, p) == pytest.approx(pi, abs=1e-12)
    est = dn.BinaryRR(prob=p).estimate_from(
        SupportCounts(dn.BinaryRR(prob=p).fingerprint, np.array([1 - share, share]) * 1000, 1000))
    assert est.frequencies[1] == pytest.approx(dn.debias_binary(share, p), abs=1e-12)


@given(st.integers(2, 12), st.data())
@settings(max_examples=60, deadline=None)
def test_debias_categorical_is_the_grr_estimator(k: int, data: st.DataObject) -> None:
    counts = np.array(data.draw(st.lists(st.integers(0, 1000), min_size=k, max_size=k)))
    if counts.sum() == 0:
        counts[0] = 1
    p = data.draw(st.integers(100 // k + 1, 99)) / 100
    m = dn.GRR(k, prob=p)
    est = m.estimate_from(SupportCounts(m.fingerprint, counts, int(counts.sum())))
    np.testing.assert_allclose(dn.debias_categorical(counts / counts.sum(), p), est.frequencies,
                               rtol=0, atol=1e-12)
    assert est.frequencies.sum() == pytest.approx(1.0, abs=1e-12)  # GRR estimates sum to 1 exactly
