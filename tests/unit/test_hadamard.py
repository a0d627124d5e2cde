"""Hadamard response: its integer probabilities, configs, report checks and decoding.

Deterministic except the one calibrated test of ``simulate_support_counts`` (its docstring
states its failure probability). The references are exact rational arithmetic (``Fraction``),
:func:`deniable._privacy.exp_ratio`'s documented contract, and the definition in the module
docstring evaluated report by report: category ``i`` owns ``C_i = {y in [K] :
popcount((i + 1) & y) is even}``, and a report ``y`` lands in ``C_x`` with probability
``p = a / (a + b)`` (uniformly within ``C_x`` or its complement).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import deniable as dn
from deniable._privacy import exp_ratio, ln_up
from deniable.errors import ConfigError, ReportError
from deniable.wire import from_config

HR5 = dn.HadamardResponse(5, epsilon=1.0)  # K = 8
SHAPE = "reports must be a 1-D array of integers in 0..7; got dtype "  # then the dtype and shape


def owns(i: int, y: int) -> bool:
    """The definition: category position ``i`` owns report ``y`` when ``(i + 1) & y`` has even popcount."""
    return bin((i + 1) & y).count("1") % 2 == 0


def counts_by_definition(m: dn.HadamardResponse, reports: list[int]) -> list[int]:
    return [sum(owns(i, y) for y in reports) for i in range(m.k)]


@pytest.mark.parametrize(("k", "K"), [(2, 4), (3, 4), (4, 8), (7, 8), (8, 16), (15, 16), (16, 32), (100, 128)])
def test_output_space_is_the_smallest_power_of_two_above_k(k: int, K: int) -> None:
    m = dn.HadamardResponse(k, epsilon=1.0)
    assert m.K == K and m.report_bits == K.bit_length() - 1


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0, 10.0])
def test_probabilities_are_exp_ratio_with_one_other(eps: float) -> None:
    """``(a, b) = exp_ratio(eps, 1)``: ``a + b`` (the Bernoulli's denominator) fits 32 bits,
    ``p* = a / (a + b)``, ``q* = 1/2`` exactly, and the realised epsilon is ``ln_up(a / b) <= eps``."""
    a, b = exp_ratio(eps, 1)
    assert a + b <= 1 << 32
    m = dn.HadamardResponse(6, epsilon=eps)
    assert m.prob == Fraction(a, a + b)
    assert m.support_probabilities() == ([Fraction(a, a + b)] * 6, [Fraction(1, 2)] * 6)
    assert m.epsilon == ln_up(Fraction(a, b)) <= eps
    assert m.to_config()["params"] == {"K": 8, "inside_numerator": a, "outside_numerator": b}


def test_transition_matrix_is_the_definition() -> None:
    """``P(y | x) = 2p/K`` on ``C_x`` and ``2(1 - p)/K`` off it; each row sums to 1."""
    m = HR5
    p = m.prob
    outputs, matrix = m.transition_matrix()
    assert outputs == list(range(8)) and matrix.shape == (5, 8)
    want = [[float(2 * p / 8 if owns(x, y) else 2 * (1 - p) / 8) for y in range(8)] for x in range(5)]
    assert matrix.tolist() == want
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-15)


def test_variance_is_var_star_over_n() -> None:
    """``q*(1-q*)/(n (p*-q*)^2) = ((a + b)/(a - b))^2 / n``; with frequencies, formula (A) adds
    ``f (1 - p* - q*)/(n (p* - q*))`` and the population target ``f (1 - f)/n``."""
    a, b = exp_ratio(1.0, 1)
    n, f = 1000, np.array([0.0, 0.1, 0.2, 0.3, 0.4])
    var_star = float(Fraction(a + b, a - b) ** 2)
    np.testing.assert_allclose(HR5.variance(n), np.full(5, var_star / n), rtol=1e-12)
    p = float(Fraction(a, a + b))
    respondents = var_star / n + f * (0.5 - p) / (n * (p - 0.5))
    np.testing.assert_allclose(HR5.variance(n, f, target="respondents"), respondents, rtol=1e-12)
    np.testing.assert_allclose(HR5.variance(n, f), respondents + f * (1 - f) / n, rtol=1e-12)


def test_small_batch_counts_and_estimate_by_hand() -> None:
    """k = 3, K = 4: ``C_0 = {0, 2}``, ``C_1 = {0, 1}``, ``C_2 = {0, 3}``. Reports 0, 1, 3, 3 give
    the counts 1, 2, 3 and the estimates ``(C/n - 1/2) / (p - 1/2)``."""
    m = dn.HadamardResponse(["a", "b", "c"], epsilon=1.0)
    assert [[y for y in range(4) if owns(i, y)] for i in range(3)] == [[0, 2], [0, 1], [0, 3]]
    reports = [0, 1, 3, 3]
    stat = m.aggregate(reports)
    assert stat.counts.tolist() == [1, 2, 3] and stat.n == 4 and stat.counts.dtype == np.int64
    p = float(m.prob)
    est = m.estimate(reports)
    np.testing.assert_allclose(est.frequencies, (np.array([1, 2, 3]) / 4 - 0.5) / (p - 0.5), rtol=1e-12)
    assert m.supports(reports, "a").tolist() == [True, False, False, False]
    assert m.supports(reports, "c").tolist() == [True, False, True, True]


@pytest.mark.parametrize("k", [2, 3, 5, 8, 13])
def test_counts_and_supports_equal_the_definition(k: int) -> None:
    """Every report of ``0..K-1`` three times over, and a seeded batch: the Walsh-Hadamard counts
    (int64, also from ``_support_counts`` itself) and ``supports`` equal the definition."""
    m = dn.HadamardResponse(k, epsilon=1.0)
    batches = [list(range(m.K)) * 3, np.random.default_rng(k).integers(0, m.K, 500).tolist()]
    for reports in batches:
        want = counts_by_definition(m, reports)
        assert m.aggregate(reports).counts.tolist() == want
        direct = m._support_counts(np.array(reports, dtype=np.int64))
        assert direct.dtype == np.int64 and direct.tolist() == want
        for i in range(k):
            got = m.supports(reports, i)
            assert got.dtype == np.bool_ and got.tolist() == [owns(i, y) for y in reports]


def test_reports_of_every_integer_form_are_accepted() -> None:
    """int64, uint8, uint64 and Python ints (an object array, as from JSON) count alike; no reports
    is an empty int64 batch with zero counts."""
    reports = [0, 7, 3, 3, 5]
    want = counts_by_definition(HR5, reports)
    for form in (np.array(reports), np.array(reports, dtype=np.uint8), np.array(reports, dtype=np.uint64),
                 np.array(reports, dtype=object), reports):
        assert HR5.aggregate(form).counts.tolist() == want
        checked = HR5._checked(form)
        assert checked.dtype == np.int64 and checked.tolist() == reports
    assert HR5.reports_from_json(reports).tolist() == reports
    empty = HR5._checked([])
    assert empty.dtype == np.int64 and empty.shape == (0,)
    stat = HR5.aggregate([])
    assert stat.n == 0 and stat.counts.tolist() == [0] * 5


@pytest.mark.parametrize(
    ("reports", "message"),
    [
        ([0, 9, 8, -1], "report 1 is 9, not in 0..7"),
        ([0, 0, -1, 9], "report 2 is -1, not in 0..7"),
        (np.array([3, 0, 8], dtype=np.uint8), "report 2 is 8, not in 0..7"),
        (np.array([1 << 63], dtype=np.uint64), "report 0 is 9223372036854775808, not in 0..7"),
        ([1, 2, 1 << 70], f"report 2 is {1 << 70}, not in 0..7"),  # beyond 64 bits: no OverflowError
        ([-(1 << 70)], f"report 0 is {-(1 << 70)}, not in 0..7"),
        (np.array([1.0, 2.0]), SHAPE + r"float64 and shape \(2,\)"),
        (np.array([True, False]), SHAPE + r"bool and shape \(2,\)"),
        (np.array([1, True], dtype=object), SHAPE + r"object and shape \(2,\)"),
        ([1, True], SHAPE + r"object and shape \(2,\)"),  # numpy alone would read True as 1
        ((False, 1), SHAPE + r"object and shape \(2,\)"),
        (np.array([1, 2.0], dtype=object), SHAPE + r"object and shape \(2,\)"),
        ([[1, 2]], SHAPE + r"int64 and shape \(1, 2\)"),
        ([[]], SHAPE + r"float64 and shape \(1, 0\)"),
        (np.array([[1, 2]], dtype=object), SHAPE + r"object and shape \(1, 2\)"),
        (np.int64(3), SHAPE + r"int64 and shape \(\)"),
    ],
)
def test_malformed_reports_are_refused_by_first_bad_row(reports, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=rf"^HadamardResponse {message}$"):
        HR5.aggregate(reports)


def test_json_reports_name_the_first_bad_one() -> None:
    with pytest.raises(ReportError, match=r"^HadamardResponse report 2 is 8, not in 0..7$") as info:
        HR5.reports_from_json([0, 1, 8, 1 << 70])
    assert info.value.index == 2 and info.value.reason == "HadamardResponse report is 8, not in 0..7"
    with pytest.raises(ReportError, match=rf"^HadamardResponse report 1 is {1 << 70}, not in 0..7$") as info:
        HR5.reports_from_json([0, 1 << 70])
    assert info.value.index == 1
    with pytest.raises(ReportError, match=r"^HadamardResponse reports must be a 1-D array of integers") as info:
        HR5.reports_from_json([0, 1, True])
    assert info.value.index == 2


def test_messages_name_the_mechanism() -> None:
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for HadamardResponse; got 0$"):
        dn.HadamardResponse(5, epsilon=0)
    with pytest.raises(TypeError, match=r"^epsilon must be a positive finite number for HadamardResponse; got '1'$"):
        dn.HadamardResponse(5, epsilon="1")
    with pytest.raises(ValueError, match=r"^domain for HadamardResponse has duplicate category 1$"):
        dn.HadamardResponse([1, 1], epsilon=1.0)


def without_epsilon(config: dict, **params: int) -> dict:  # type: ignore[type-arg]
    """The config with other params and no claimed epsilon (which the params would contradict)."""
    out = {key: value for key, value in config.items() if key != "epsilon"}
    out["params"] = dict(config["params"], **params)
    return out


def test_config_round_trip_and_checks() -> None:
    config = HR5.to_config()
    again = from_config(config)
    assert again == HR5 and again.epsilon == HR5.epsilon and again.K == 8
    three_to_one = from_config(without_epsilon(config, inside_numerator=3, outside_numerator=1))
    assert three_to_one.prob == Fraction(3, 4) and three_to_one.epsilon == ln_up(Fraction(3))
    assert from_config(without_epsilon(config, inside_numerator=2, outside_numerator=1)).prob == Fraction(2, 3)
    order = r"^HadamardResponse params need 0 < outside_numerator < inside_numerator$"
    for a, b in [(5, 0), (5, -1), (5, 5), (3, 5)]:
        with pytest.raises(ConfigError, match=order):
            from_config(without_epsilon(config, inside_numerator=a, outside_numerator=b))
    for K in (4, 16):
        with pytest.raises(ConfigError, match=r"^HadamardResponse params: K must be 8 for k=5$"):
            from_config(without_epsilon(config, K=K))
    with pytest.raises(ConfigError, match=r"^domain for HadamardResponse has duplicate category 1$"):
        from_config(dict(config, domain=[1, 1, 2, 3, 4]))


def test_simulation_is_refused_beyond_2_to_the_24_matrix_entries() -> None:
    """k = 4096 needs K = 8192 (2^25 entries in the transition matrix): None, simulate by reports."""
    assert dn.HadamardResponse(4096, epsilon=1.0).simulate_support_counts(
        np.zeros(4096, np.int64), np.random.default_rng(1)
    ) is None


@pytest.mark.stat
def test_simulated_support_counts_follow_the_binomials() -> None:
    """``C_v ~ Binomial(n_v, p) + Binomial(n - n_v, 1/2)`` (a report lands in another category's set
    with probability 1/2 exactly): each simulated count of 100,000 reports is within z sd of
    ``n_v p + (n - n_v)/2`` (alpha 1e-6 over the 5 categories, seed fixed). Power: the counts of
    the complements (``n - C_v``), a third instead of a half, or only the last category's reports
    are off by more than 9,000 (over 60 sd) for category 0."""
    from deniable.testing import estimate_check

    m = HR5
    p = float(m.prob)
    true_counts = np.array([60_000, 0, 40_000, 0, 0])
    n = int(true_counts.sum())
    counts = m.simulate_support_counts(true_counts, np.random.default_rng(11))
    assert counts is not None and counts.shape == (5,) and counts.dtype == np.int64
    mean = true_counts * p + (n - true_counts) * 0.5
    sd = np.sqrt(true_counts * p * (1 - p) + (n - true_counts) * 0.25)
    assert (res := estimate_check(counts, mean, sd, 1e-6)), res.message
    assert 9_000 > 60 * sd[0]

