"""Generalized (k-ary) randomized response: parameters, epsilon, a single report debiased."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import deniable as dn


@pytest.mark.parametrize(
    ("categories", "kwargs", "exc", "message"),
    [
        (4, {"prob": 0.25}, ValueError, r"prob must be in \(0\.25, 1\) for GRR; got 0\.25"),
        (4, {"prob": 0.2}, ValueError, r"prob must be in \(0\.25, 1\) for GRR"),
        (4, {"prob": 1.0}, ValueError, "prob must be in"),
        (4, {}, TypeError, "exactly one of epsilon or prob"),
        (4, {"prob": 0.5, "epsilon": 1.0}, TypeError, "exactly one of epsilon or prob"),
        (1, {"epsilon": 1.0}, ValueError, "k must be >= 2"),
        (0, {"epsilon": 1.0}, ValueError, "k must be >= 2"),
        (-3, {"epsilon": 1.0}, ValueError, "k must be >= 2"),
        (True, {"epsilon": 1.0}, TypeError, "int k >= 2 or a sequence"),
        (2.0, {"epsilon": 1.0}, TypeError, "int k >= 2 or a sequence"),
        ("ABCD", {"epsilon": 1.0}, TypeError, "int k >= 2 or a sequence"),
        ([], {"epsilon": 1.0}, ValueError, "at least 2 categories"),
        (["only"], {"epsilon": 1.0}, ValueError, "at least 2 categories"),
        (["A", "B", "A"], {"epsilon": 1.0}, ValueError, "duplicate category 'A'"),
        ([1, 2, 1], {"epsilon": 1.0}, ValueError, "duplicate category 1"),
        ([0.5, float("nan")], {"epsilon": 1.0}, TypeError, "not a usable category"),
        ([[1], [2]], {"epsilon": 1.0}, TypeError, "not a usable category"),
    ],
)
def test_grr_parameters(categories, kwargs, exc, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message):
        dn.GRR(categories, **kwargs)


@given(st.floats(allow_nan=True, allow_infinity=True))
@settings(max_examples=200, deadline=None)
def test_epsilon_parameter_space(eps: float) -> None:
    """Any float either builds a mechanism whose epsilon is within (0, eps] or raises ValueError."""
    try:
        m = dn.GRR(3, epsilon=eps)
    except ValueError as exc:
        assert "epsilon" in str(exc)
        assert not (math.isfinite(eps) and 1e-15 < eps < 40)
        return
    assert 0 < m.epsilon <= eps


def test_grr_epsilon_is_ln9() -> None:
    assert dn.GRR(["A", "B", "C", "D"], prob=0.75).epsilon == 2.1972245773362196


@pytest.mark.parametrize("make", [lambda: dn.GRR(10, epsilon=math.log(3)), lambda: dn.GRR(10, prob=0.25)])
def test_single_krr_report_debiased(make) -> None:
    m = make()
    est = m.estimate([4])
    expected = np.full(10, -0.5)
    expected[4] = 5.5
    np.testing.assert_allclose(est.frequencies, expected, atol=1e-9)
