"""The frequency-oracle base: support probabilities, the unbiased estimator and its variance.

Exact checks against each mechanism's transition matrix and the closed forms
of the variance, in ``e = exp(epsilon)``; no sampling.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_grid import CASES, ENUMERABLE, Case, as_reports, e_of, matrix_of, params

import deniable as dn
from deniable._estimate import SupportCounts
from deniable.mechanisms._frequency import FrequencyOracle


@params(ENUMERABLE)
def test_support_probabilities_match_matrix(case: Case) -> None:
    """``P[v in S(y) | x]`` summed from the matrix is p* on the diagonal and q* off it."""
    m = case.make()
    outputs, P = matrix_of(m)
    reports = as_reports(m, outputs)
    p_star, q_star = (np.array([float(v) for v in side]) for side in m.support_probabilities())
    for v_pos, v in enumerate(m.domain):
        supported = m.supports(reports, v)
        rate = P @ supported.astype(float)
        expected = np.where(np.arange(m.k) == v_pos, p_star[v_pos], q_star[v_pos])
        np.testing.assert_allclose(rate, expected, rtol=0, atol=1e-12)


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
    p, q = m.support_rates()
    expected = n * (q + (p - q) * f)
    est = m.estimate_from(SupportCounts(m.fingerprint, expected, n))
    np.testing.assert_allclose(est.frequencies, f, rtol=0, atol=1e-9)
    np.testing.assert_allclose(est.counts, counts, rtol=1e-9, atol=1e-6)


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
    np.testing.assert_allclose(m.variance(250, f, target="respondents"), want, rtol=1e-9)


def test_mechanism_specific_parameters() -> None:
    with pytest.raises(ValueError, match="omega must be an int in 1..4"):
        dn.SubsetSelection(5, epsilon=1.0, omega=5)
    with pytest.raises(ValueError, match="omega"):
        dn.SubsetSelection(5, epsilon=1.0, omega=0)
    with pytest.raises(ValueError, match="omega"):
        dn.SubsetSelection(5, epsilon=1.0, omega=True)
    with pytest.raises(ValueError, match="omega"):
        dn.SubsetSelection(5, epsilon=1.0, omega=2.0)  # type: ignore[arg-type]
    for g in (3, 1, 0, True, 4.0):
        with pytest.raises(ValueError, match="g must be a power of two"):
            dn.OLH(5, epsilon=1.0, g=g)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        dn.SUE(5, 1.0)  # type: ignore[misc]  # epsilon is keyword-only, never defaulted
    with pytest.raises(TypeError):
        dn.OUE(5)  # type: ignore[call-arg]


@params()
def test_support_rates_are_the_exact_probabilities_as_floats(case: Case) -> None:
    m = case.make()
    p, q = m.support_rates()
    exact_p, exact_q = m.support_probabilities()
    np.testing.assert_array_equal(p, [float(x) for x in exact_p])
    np.testing.assert_array_equal(q, [float(x) for x in exact_q])
    assert not p.flags.writeable and not q.flags.writeable
    assert m.support_rates()[0] is p  # computed once


def test_estimate_passes_the_target_on() -> None:
    m = dn.GRR(4, epsilon=1.0)
    reports = m.privatize_many([0, 1, 1, 2, 3, 3, 3], rng=3)
    for target in ("population", "respondents"):
        est = m.estimate(reports, target=target)
        want = m.estimate_from(m.aggregate(reports), target=target)
        assert est.target == target
        np.testing.assert_array_equal(est.std_errors, want.std_errors)
    assert not np.array_equal(m.estimate(reports).std_errors, m.estimate(reports, target="respondents").std_errors)


def test_estimate_from_checks_the_aggregate_in_whole_messages() -> None:
    """The count vector's length is its last axis (a stack of aggregates estimates each)."""
    m = dn.GRR(4, epsilon=1.0)
    with pytest.raises(TypeError, match=r"^estimate_from needs a SupportCounts aggregate; got list$"):
        m.estimate_from([1, 2, 3, 4])  # type: ignore[arg-type]
    for counts in (np.ones(3, dtype=np.int64), np.ones((2, 3), dtype=np.int64)):
        with pytest.raises(ValueError, match=r"^aggregate has \(3,\) counts; GRR needs k=4$"):
            m.estimate_from(SupportCounts(m.fingerprint, counts, 3))
    with pytest.raises(ValueError, match=r"^aggregate has \(\) counts; GRR needs k=4$"):
        m.estimate_from(SupportCounts(m.fingerprint, np.int64(3), 3))
    one = m.estimate_from(SupportCounts(m.fingerprint, np.array([1, 2, 0, 3]), 6))
    stack = m.estimate_from(SupportCounts(m.fingerprint, np.array([[1, 2, 0, 3], [1, 2, 0, 3]]), 6))
    np.testing.assert_array_equal(stack.frequencies, [one.frequencies, one.frequencies])


def test_no_reports_estimate_nan_without_warnings() -> None:
    """n = 0: every share, observed rate and standard error is NaN, also for hand-made counts."""
    m = dn.GRR(4, epsilon=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for counts in (np.zeros(4, dtype=np.int64), np.array([1, 0, 2, 0])):
            for target in ("population", "respondents"):
                est = m.estimate_from(SupportCounts(m.fingerprint, counts, 0), target=target)
                assert all(np.isnan(x).all() and x.dtype == float
                           for x in (est.frequencies, est.observed, est.std_errors))


def test_variance_checks_its_arguments_in_whole_messages() -> None:
    m = dn.GRR(4, epsilon=1.0)
    for n in (0, -3):
        with pytest.raises(ValueError, match=rf"^n must be positive; got {n}$"):
            m.variance(n)
    assert m.variance(1).shape == (4,)
    with pytest.raises(ValueError, match=r"^frequencies must have length k=4; got shape \(3,\)$"):
        m.variance(10, [0.2, 0.3, 0.5])
    with pytest.raises(TypeError):  # a mapping of shares is not numbers (not a length error)
        m.variance(10, {0: 0.25, 1: 0.25, 2: 0.25, 3: 0.25})


def test_default_transition_matrix_says_the_outputs_are_not_enumerated() -> None:
    """The base's default, for oracles whose output space is too large to list."""
    with pytest.raises(NotImplementedError, match=r"^GRR does not enumerate its outputs$"):
        FrequencyOracle.transition_matrix(dn.GRR(3, epsilon=1.0))


def test_repr_names_the_domain_and_epsilon() -> None:
    """A range domain by its size; listed categories up to six, then the first six and '...'."""
    assert repr(dn.GRR(5, epsilon=1.0)) == "GRR(5, epsilon=1)"
    assert repr(dn.GRR(list("ABCDEF"), epsilon=0.5)) == "GRR(['A', 'B', 'C', 'D', 'E', 'F'], epsilon=0.5)"
    assert repr(dn.OUE(list("ABCDEFG"), epsilon=2.0)) == "OUE(['A', 'B', 'C', 'D', 'E', 'F', '...'], epsilon=2)"
