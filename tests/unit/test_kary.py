"""Generalized (k-ary) randomized response: parameters, epsilon, a single report debiased.

Also: Generalized randomized response (GRR): counts, simulation, messages and config checks. Deterministic.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import deniable as dn
from deniable._randomness import GeneratorSource
from deniable.errors import ConfigError
from deniable.wire import from_config


@pytest.mark.parametrize(
    ("categories", "kwargs", "exc", "message"),
    [
        (4, {"prob": 0.25}, ValueError, r"prob must be in \(0\.25, 1\) for GRR; got 0\.25"),
        (4, {"prob": 0.2}, ValueError, r"prob must be in \(0\.25, 1\) for GRR"),
        (4, {"prob": 1.0}, ValueError, "prob must be in"),
        (1, {"epsilon": 1.0}, ValueError, "k must be >= 2"),
        (0, {"epsilon": 1.0}, ValueError, "k must be >= 2"),
        (-3, {"epsilon": 1.0}, ValueError, "k must be >= 2"),
        (True, {"epsilon": 1.0}, TypeError, "int k >= 2 or a sequence"),
        (2.0, {"epsilon": 1.0}, TypeError, "int k >= 2 or a sequence"),
        ("ABCD", {"epsilon": 1.0}, TypeError, "int k >= 2 or a sequence"),
        ([], {"epsilon": 1.0}, ValueError, "at least 2 categories"),
        (["only"], {"epsilon": 1.0}, ValueError, "at least 2 categories"),
        (["A", "B", "A"], {"epsilon": 1.0}, ValueError, "duplicate category 'A'"),
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


def test_counts_cover_categories_without_reports() -> None:
    m = dn.GRR(5, epsilon=1.0)
    assert m.aggregate([0, 1, 1]).counts.tolist() == [1, 2, 0, 0, 0]


def test_simulated_counts_add_up() -> None:
    m = dn.GRR(4, epsilon=1.0)
    counts = m.simulate_support_counts(np.array([5, 0, 3, 2]), np.random.default_rng(2))
    assert counts.shape == (4,) and counts.dtype == np.int64 and counts.sum() == 10 and (counts >= 0).all()


def test_messages_name_grr() -> None:
    for kwargs in ({}, {"epsilon": 1.0, "prob": 0.5}):
        with pytest.raises(TypeError, match=r"^GRR needs exactly one of epsilon or prob$"):
            dn.GRR(5, **kwargs)
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for GRR; got 0$"):
        dn.GRR(5, epsilon=0)
    with pytest.raises(ValueError, match=r"^domain for GRR has duplicate category 1$"):
        dn.GRR([1, 1], epsilon=1.0)


def test_config_numerators_are_checked() -> None:
    config = dn.GRR(5, epsilon=1.0).to_config()
    assert from_config(config) == dn.GRR(5, epsilon=1.0)
    for truth, other in [(5, 0), (5, 5), (3, 5)]:
        bad = dict(config, params={"truth_numerator": truth, "other_numerator": other})
        with pytest.raises(ConfigError, match=r"GRR"):
            from_config(bad)
    bad = dict(config, domain=[1, 1])
    with pytest.raises(ConfigError, match=r"domain for GRR has duplicate category 1"):
        from_config(bad)


def test_simulated_reports_move_only_to_other_categories() -> None:
    """All 1,000 respondents hold category 0: the moved reports land on categories 1 and 2 (each gets
    some unless a Binomial(about 270, 1/2) draw is 0, probability 2^-270), never back on 0."""
    m = dn.GRR(3, epsilon=1.0)
    counts = m.simulate_support_counts(np.array([1000, 0, 0]), np.random.default_rng(3))
    assert counts is not None and counts.sum() == 1000 and counts[1] > 0 and counts[2] > 0
    for k, simulated in [(2048, True), (2049, False)]:  # above 2048 categories: None (simulate by reports)
        got = dn.GRR(k, epsilon=1.0).simulate_support_counts(np.zeros(k, np.int64), np.random.default_rng(1))
        assert (got is not None) == simulated


def test_integer_probabilities_fill_32_bits() -> None:
    """D = a + (k - 1) b fits 2^32 and b is the largest that does (exp_ratio with k - 1 others)."""
    from deniable._privacy import exp_ratio

    for k, eps in [(3, 1.0), (5, 2.0), (100, 0.5)]:
        params = dn.GRR(k, epsilon=eps).to_config()["params"]
        a, b = exp_ratio(eps, k - 1)
        assert (params["truth_numerator"], params["other_numerator"]) == (a, b)
        assert a + (k - 1) * b <= 1 << 32


class Scripted(GeneratorSource):
    """A simulation source that hands out the scripted bytes in order."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def random_bytes(self, n: int) -> bytes:
        assert n <= len(self.data)
        out, self.data = self.data[:n], self.data[n:]
        return out


def test_draws_near_2_63_are_compared_as_integers() -> None:
    """At epsilon 20 the denominator D = a + 2b is near 2^63: the draw a - 1 keeps the truth and
    the draw a gives the first other category (float64 could not tell a - 1 from a)."""
    m = dn.GRR(["x", "y", "z"], epsilon=20.0)
    params = m.to_config()["params"]
    a, b = params["truth_numerator"], params["other_numerator"]
    assert a + 2 * b > 1 << 62
    for draw, want in [(a - 1, "x"), (a, "y"), (a + b, "z")]:
        source = Scripted(np.array([draw], dtype=np.uint64).tobytes())
        assert m.privatize_many(["x"], rng=source).tolist() == [want] and source.data == b""


def test_the_last_draw_of_another_category_is_divided_exactly() -> None:
    """``prob = (2^62 + 1) / 2^63`` for two categories: ``a = 2^62 + 1``, ``b = 2^62 - 1``. The last
    draw ``D - 1`` is the other category: ``(D - 1 - a) // b = 0``, where a float quotient of the
    61-bit ``b - 1`` by ``b`` rounds to 1 and names a third category."""
    m = dn.GRR(["x", "y"], prob=Fraction(2**62 + 1, 2**63))
    params = m.to_config()["params"]
    a, b = params["truth_numerator"], params["other_numerator"]
    assert (a, b) == (2**62 + 1, 2**62 - 1)
    for draw, want in [(a - 1, "x"), (a, "y"), (a + b - 1, "y")]:
        source = Scripted(np.array([draw], dtype=np.uint64).tobytes())
        assert m.privatize_many(["x"], rng=source).tolist() == [want] and source.data == b""
        assert m.privatize("x", rng=Scripted(np.array([draw], dtype=np.uint64).tobytes())) == want


@pytest.mark.stat
def test_simulated_moved_reports_split_evenly() -> None:
    """30,000 respondents hold category 0 of 4 at epsilon 0.5 (about 19,000 reports move): the moved
    reports split evenly over the 3 other categories, chi-square at alpha 1e-6 (fixed seed). Power:
    the split that ``1 / (k + 1)`` per category would give (1/5, 1/5, 3/5) fails the same test."""
    m = dn.GRR(4, epsilon=0.5)
    counts = m.simulate_support_counts(np.array([30_000, 0, 0, 0]), np.random.default_rng(11))
    assert counts is not None
    moved = counts[1:]
    assert check(moved, [1 / 3] * 3).passed, str(check(moved, [1 / 3] * 3))
    assert not check(moved, [0.2, 0.2, 0.6]).passed
    assert not check(moved, [0.3, 1 / 3, 11 / 30]).passed  # a 10% error in one category is seen too


def check(observed: np.ndarray, law: list[float]) -> Any:
    from deniable.testing import chi_square_gof

    return chi_square_gof(observed, law, 1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                   np.uint64])
def test_integer_report_arrays_are_counted_as_the_checked_way_counts_them(dtype: Any) -> None:
    """An integer array over ``0..k-1`` is checked in one pass (its maximum read as unsigned, where a
    negative report is huge); the counts, and for a bad report the error naming the first bad report, are
    those of the base class's aggregate, for every integer type."""
    from deniable.mechanisms import FrequencyOracle

    m = dn.GRR(7, epsilon=1.0)
    reports = (np.arange(1000) * 3 % 7).astype(dtype)
    stat = m.aggregate(reports)
    assert stat.counts.tolist() == FrequencyOracle.aggregate(m, reports).counts.tolist()
    assert stat.counts.dtype == np.int64 and stat.n == 1000 and stat.fingerprint == m.fingerprint
    bad_values = [7, np.iinfo(dtype).max] + ([-1, np.iinfo(dtype).min] if np.iinfo(dtype).min < 0 else [])
    for bad in bad_values:
        broken = reports.copy()
        broken[[5, 9]] = bad
        with pytest.raises(ValueError, match=rf"^GRR report rejected: value {bad} is not in the domain") as got:
            m.aggregate(broken)
        with pytest.raises(ValueError) as want:
            FrequencyOracle.aggregate(m, broken)
        assert str(got.value) == str(want.value)
