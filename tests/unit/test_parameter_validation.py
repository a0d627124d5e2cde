"""Validation table: every bad parameter or report is refused with a message naming it."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import deniable as dn
from deniable.mechanisms.hashing import REPORT_DTYPE

NUMERIC = [dn.SUE, dn.OUE, dn.BLH, dn.OLH, dn.HadamardResponse, dn.SubsetSelection, dn.GRR]
BAD_EPSILONS = [
    (float("nan"), ValueError),
    (float("inf"), ValueError),
    (-float("inf"), ValueError),
    (-1.0, ValueError),
    (0.0, ValueError),
    (0, ValueError),
    (True, TypeError),
    ("1.0", TypeError),
    (None, TypeError),
    (Fraction(1, 2), TypeError),
    ([1.0], TypeError),
    (1e-300, ValueError),  # too small to realise with 63-bit integers
    (1e6, ValueError),  # too large to realise
]


@pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")  # OLH sizing g at 1e6
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.parametrize("cls", NUMERIC, ids=lambda c: c.__name__)
@pytest.mark.parametrize(("eps", "exc"), BAD_EPSILONS, ids=repr)
def test_bad_epsilon(cls, eps, exc) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match="epsilon"):
        cls(5, epsilon=eps)


@pytest.mark.parametrize(("eps", "exc"), BAD_EPSILONS, ids=repr)
def test_bad_epsilon_binary(eps, exc) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match="epsilon"):
        dn.BinaryRR(epsilon=eps)


def test_numpy_scalars_are_accepted() -> None:
    assert dn.GRR(np.int64(4), epsilon=np.float64(1.0)) == dn.GRR(4, epsilon=1.0)
    assert dn.BinaryRR(prob=np.float64(0.75)) == dn.BinaryRR(prob=0.75)
    with pytest.raises(TypeError, match="epsilon"):
        dn.GRR(4, epsilon=np.bool_(True))


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        ({"prob": 0.4}, ValueError, r"^prob must be in \(0\.5, 1\) for BinaryRR; got 0\.4$"),
        ({"prob": 0.5}, ValueError, r"prob must be in \(0\.5, 1\) for BinaryRR; got 0\.5"),
        ({"prob": 1.0}, ValueError, r"prob must be in \(0\.5, 1\) for BinaryRR; got 1\.0"),
        ({"prob": 1}, ValueError, r"prob must be in \(0\.5, 1\) for BinaryRR; got 1"),
        ({"prob": float("nan")}, ValueError, "prob must be in"),
        ({"prob": float("inf")}, ValueError, "prob must be in"),
        ({"prob": "0.75"}, TypeError, "prob must be a number"),
        ({"prob": True}, TypeError, "prob must be a number"),
        ({"gamma": 0.0}, ValueError, r"gamma must be in \(0, 0\.5\)"),
        ({"gamma": 0.5}, ValueError, r"gamma must be in \(0, 0\.5\)"),
        ({"gamma": -0.1}, ValueError, "gamma must be in"),
        ({}, TypeError, "exactly one of prob, epsilon or gamma; got none"),
        ({"prob": 0.75, "epsilon": 1.0}, TypeError, "exactly one of prob, epsilon or gamma; got prob, epsilon"),
    ],
)
def test_binary_rr_parameters(kwargs, exc, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message):
        dn.BinaryRR(**kwargs)


@pytest.mark.parametrize(
    ("p_truth", "p_yes", "name"),
    [(0.0, 0.5, "p_truth"), (1.0, 0.5, "p_truth"), (0.5, 0.0, "p_yes"), (0.5, 1.0, "p_yes"),
     (float("nan"), 0.5, "p_truth"), (0.5, -0.2, "p_yes")],
)
def test_forced_response_parameters(p_truth: float, p_yes: float, name: str) -> None:
    with pytest.raises(ValueError, match=f"{name} must be in"):
        dn.BinaryRR.forced_response(p_truth, p_yes)


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


@pytest.mark.parametrize("cls", NUMERIC, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    ("categories", "exc", "message"),
    [(1, ValueError, "k must be >= 2"), (True, TypeError, "int k"), ([], ValueError, "at least 2"),
     (["x"], ValueError, "at least 2"), (["x", "y", "x"], ValueError, "duplicate")],
)
def test_bad_domains_everywhere(cls, categories, exc, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message):
        cls(categories, epsilon=1.0)


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


# ------------------------------------------------------------------- values
@pytest.mark.parametrize(
    ("m", "value"),
    [
        (dn.GRR(4, epsilon=1.0), 4),
        (dn.GRR(4, epsilon=1.0), -1),
        (dn.GRR(4, epsilon=1.0), 1.0),
        (dn.GRR(4, epsilon=1.0), True),
        (dn.GRR(4, epsilon=1.0), "1"),
        (dn.GRR(["A", "B"], epsilon=1.0), "C"),
        (dn.GRR(["A", "B"], epsilon=1.0), None),
        (dn.BinaryRR(prob=0.75), 1),
        (dn.BinaryRR(prob=0.75), "yes"),
        (dn.OUE([False, True], epsilon=1.0), 0),
        (dn.OLH(["x", "y", "z"], epsilon=1.0), ["x"]),
        (dn.SubsetSelection(5, epsilon=1.0), 5),
        (dn.HadamardResponse(5, epsilon=1.0), np.int64(7)),
    ],
)
def test_value_outside_domain(m, value) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="not in the domain"):
        m.privatize(value)
    if value is True and m.domain_obj.is_range:
        return  # np.asarray([0, True]) is an int array: a list cannot tell True from 1
    with pytest.raises(ValueError, match="not in the domain|1-D sequence of categories"):
        m.privatize_many([m.domain[0], value])


def test_values_must_be_one_dimensional() -> None:
    m = dn.GRR(4, epsilon=1.0)
    with pytest.raises(ValueError, match="1-D"):
        m.privatize_many([[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="1-D"):
        m.privatize_many(2)


@pytest.mark.parametrize("rng", [np.random.RandomState(0), True, 1.5, "seed"], ids=repr)
def test_bad_rng(rng) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="rng must be None, an int seed or a numpy Generator"):
        dn.GRR(4, epsilon=1.0).privatize_many([0, 1], rng=rng)


# ------------------------------------------------------------------ reports
OUE5 = dn.OUE(5, epsilon=1.0)
OUE12 = dn.OUE(12, epsilon=1.0)
OLH10 = dn.OLH(10, epsilon=1.0)
SS6 = dn.SubsetSelection(6, epsilon=0.5)  # omega = 2
HR5 = dn.HadamardResponse(5, epsilon=1.0)  # K = 8


@pytest.mark.parametrize(
    ("m", "reports", "message"),
    [
        (dn.BinaryRR(prob=0.75), [True, 1], "booleans"),
        (dn.BinaryRR(prob=0.75), ["true"], "booleans"),
        (dn.BinaryRR(prob=0.75), [[True], [False]], "1-D"),
        (dn.BinaryRR(prob=0.75), np.array([0.0, 1.0]), "booleans"),
        (dn.GRR(["A", "B"], epsilon=1.0), ["A", "C"], "GRR report rejected: value 'C'"),
        (dn.GRR(4, epsilon=1.0), [0, 4], "GRR report rejected"),
        (dn.GRR(4, epsilon=1.0), np.array([0.0, 1.0]), "GRR report rejected"),
        (OUE5, np.zeros((2, 2), dtype=np.uint8), "1 packed bytes"),
        (OUE5, np.zeros(5, dtype=np.uint8), "2-D"),
        (OUE5, np.array([[0b00000100]], dtype=np.uint8), "padding bits"),
        (OUE5, np.array([[1, 0, 2, 0, 0]]), "only 0 and 1"),
        (OUE5, np.array([[1.0, 0, 0, 0, 0]]), "dtype float64"),
        (OUE12, np.array([[0, 0b00000001]], dtype=np.uint8), "report 0 sets padding bits"),
        (OLH10, [{"seed": 1}], "value must be a non-negative integer"),
        (OLH10, [{"seed": -1, "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": 1.0, "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": True, "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": 1, "value": OLH10.g}], f"value must be in 0..{OLH10.g - 1}"),
        (OLH10, [{"seed": 1 << OLH10.seed_bits, "value": 0}], f"seed must be below 2\\*\\*{OLH10.seed_bits}"),
        (OLH10, [[1, 2, 3]], "must be"),
        (OLH10, ["1,2"], "must be"),
        (OLH10, np.zeros(2, dtype=[("seed", "<u8"), ("val", "<u4")]), "fields 'seed' and 'value'"),
        (SS6, [[0, 0]], "distinct positions in ascending order"),
        (SS6, [[3, 1]], "distinct positions in ascending order"),
        (SS6, [[0, 6]], "outside 0..5"),
        (SS6, [[-1, 2]], "outside 0..5"),
        (SS6, [[0, 1, 2]], "each be 2 sorted category positions"),
        (SS6, np.array([[0.0, 1.0]]), "each be 2 sorted category positions"),
        (HR5, [0, 8], "not in 0..7"),
        (HR5, [-1], "not in 0..7"),
        (HR5, np.array([1.0, 2.0]), "integers in 0..7"),
        (HR5, np.array([True, False]), "integers in 0..7"),
        (HR5, [[1, 2]], "integers in 0..7"),
    ],
)
def test_malformed_reports_rejected(m, reports, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        m.aggregate(reports)
    with pytest.raises(ValueError):
        m.estimate(reports)


@pytest.mark.parametrize(
    ("m", "items", "message"),
    [
        (dn.BinaryRR(prob=0.75), [True, "false"], "booleans"),
        (dn.BinaryRR(prob=0.75), {"a": 1}, "JSON array"),
        (dn.GRR(["A", "B"], epsilon=1.0), ["A", 0], "GRR report rejected"),
        (OUE5, ["0"], "hex string of 2 characters"),
        (OUE5, ["zz"], "not valid hex"),
        (OUE5, [5], "hex string"),
        (OUE5, ["04"], "padding bits"),
        (OLH10, [{"seed": "1", "value": 0}], "seed must be a non-negative integer"),
        (OLH10, [{"seed": 1, "value": -1}], "value must be a non-negative integer"),
        (SS6, [[1]], "2 sorted category positions|2 integers"),
        (SS6, [[1, 2], [3]], "report 1|2 integers"),
        (SS6, [[1, 2.0]], "list of 2 integers"),
        (SS6, ["1,2"], "list of 2 integers"),
        (SS6, [[2, 1]], "ascending"),
        (HR5, [1, 9], "not in 0..7"),
        (HR5, [1, "2"], "integers"),
        (HR5, [True], "integers"),
    ],
)
def test_malformed_json_reports_rejected(m, items, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        m.reports_from_json(items)


def test_structured_olh_reports_with_wrong_types() -> None:
    """A structured array with signed or float fields is checked, not silently cast."""
    bad_value = np.zeros(1, dtype=[("seed", "<u8"), ("value", "<f8")])
    bad_value["value"] = 1.5
    with pytest.raises(ValueError, match="value"):
        OLH10.aggregate(bad_value)
    good = np.zeros(2, dtype=REPORT_DTYPE)
    assert OLH10.aggregate(good).n == 2


# ----------------------------------------------------------- other inputs
def test_estimate_and_planning_arguments() -> None:
    m = dn.GRR(4, epsilon=1.0)
    est = m.estimate([0, 1, 2, 3])
    for level in (0, 1, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="level must be in"):
            est.ci(level)
    with pytest.raises(ValueError, match="method must be"):
        est.ci(0.95, method="bootstrap")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="consistency method must be one of"):
        est.consistent("magic")
    with pytest.raises(ValueError, match="n must be positive"):
        m.variance(0)
    with pytest.raises(ValueError, match="length k=4"):
        m.variance(10, [0.5, 0.5])
    for margin in (0, 1, -0.1):
        with pytest.raises(ValueError, match="margin"):
            dn.sample_size(m, margin)
    with pytest.raises(ValueError, match="level"):
        dn.sample_size(m, 0.01, level=1.0)
    with pytest.raises(ValueError, match="frequency"):
        dn.sample_size(m, 0.01, frequency=1.5)
    with pytest.raises(ValueError, match="population"):
        dn.sample_size(m, 0.01, population="all")  # type: ignore[arg-type]
    for k in (1, True, 2.5, "4"):
        with pytest.raises(ValueError, match="k must be an int >= 2"):
            dn.best_mechanism(k, 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="epsilon"):
        dn.best_mechanism(4, float("nan"))
    with pytest.raises(ValueError, match="true_frequencies must have length k=4"):
        dn.simulate(m, [0.5, 0.5], 100, rng=1)
    with pytest.raises(ValueError, match="sum to 1"):
        dn.simulate(m, [0.5, 0.5, 0.5, 0.5], 100, rng=1)
    with pytest.raises(ValueError, match="non-negative"):
        dn.simulate(m, [1.5, -0.5, 0, 0], 100, rng=1)
    for n in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="n must be a positive int"):
            dn.simulate(m, [0.25] * 4, n, rng=1)  # type: ignore[arg-type]
    for trials in (10, 1000.0, True):
        with pytest.raises(ValueError, match="trials must be an int >= 100"):
            dn.audit(m, trials=trials, rng=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        dn.audit(m, trials=1000, rng=1, alpha=0)


def test_debias_function_arguments() -> None:
    with pytest.raises(ValueError, match=r"prob must be in \(0\.5, 1\]"):
        dn.debias_binary(0.3, 1.5)
    with pytest.raises(ValueError, match="prob must be in"):
        dn.debias_binary(0.3, 0.5)
    with pytest.raises(ValueError, match="mean_release must be shares"):
        dn.debias_binary(1.2, 0.75)
    with pytest.raises(ValueError, match="mean_releases must be a 1-D sequence"):
        dn.debias_categorical([1.0], 0.75)
    with pytest.raises(ValueError, match="prob must be in"):
        dn.debias_categorical([0.5, 0.25, 0.25], 0.3)


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


@given(st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
@settings(max_examples=200, deadline=None)
def test_prob_parameter_space(prob: float) -> None:
    try:
        m = dn.BinaryRR(prob=prob)
    except ValueError as exc:
        assert str(exc) == f"prob must be in (0.5, 1) for BinaryRR; got {prob!r}"
        assert not 0.5 < prob < 1
        return
    assert 0.5 < prob < 1 and m.epsilon > 0
    assert m.prob == Fraction(repr(prob))


@pytest.mark.parametrize("cls", NUMERIC, ids=lambda c: c.__name__)
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
