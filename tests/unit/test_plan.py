"""Planning: mechanism choice and sample sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import deniable as dn
from deniable import _plan as plan
from deniable import testing


def test_best_mechanism_spot_values() -> None:
    """MECHANISMS.md 3.2: at (10, 1) and (1024, 1) subset selection wins (2.84 and 3.67)."""
    for k, omega, var in ((10, 3, 2.84), (1024, 275, 3.67)):
        choice = dn.best_mechanism(k, 1.0)
        assert choice.name == "SubsetSelection" and isinstance(choice.mechanism, dn.SubsetSelection)
        assert choice.mechanism.omega == omega
        assert choice.variances["SubsetSelection"] == pytest.approx(var, abs=0.005)
        assert choice.variances[choice.name] == min(choice.variances.values())
        assert set(choice.bits) == set(choice.variances)
        assert "SubsetSelection" in repr(choice)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 3.0, 4.0])
def test_grr_oue_crossover(eps: float) -> None:
    """GRR beats OUE exactly when k < 3 e^eps + 2 (Wang et al. 2017)."""
    e = math.exp(eps)
    for k in range(2, int(3 * e + 2) + 12):
        v = plan.candidates(k, eps)
        grr, oue = v["GRR"].variance(1)[0], v["OUE"].variance(1)[0]
        if abs(k - (3 * e + 2)) > 1e-6:
            assert (grr < oue) == (k < 3 * e + 2), (k, grr, oue)


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("k", [3, 8, 16, 64, 1024])
def test_subset_selection_never_worse_than_grr_or_oue(k: int, eps: float) -> None:
    """SS with omega = round(k/(e+1)) is never worse than either GRR or OUE (section 3.2)."""
    choice = dn.best_mechanism(k, eps)
    v = choice.variances
    assert v["SubsetSelection"] <= min(v["GRR"], v["OUE"]) * (1 + 1e-6)  # omega = 1 is GRR up to rounding
    assert v["BLH"] == pytest.approx(v["HadamardResponse"], rel=1e-6)
    ratio = (math.exp(eps) + 1) ** 2 / (4 * math.exp(eps))
    assert v["BLH"] / v["OUE"] == pytest.approx(ratio, rel=1e-6)


def test_binary_and_bit_budget() -> None:
    choice = dn.best_mechanism(2, 1.0)
    assert choice.name == "GRR"
    assert choice.variances["GRR"] == pytest.approx(math.e / (math.e - 1) ** 2, rel=1e-6)
    small = dn.best_mechanism(1024, 1.0, max_report_bits=16)
    assert small.bits[small.name] <= 16 and small.name not in ("SUE", "OUE")
    with pytest.raises(ValueError, match="max_report_bits"):
        dn.best_mechanism(1024, 1.0, max_report_bits=1)
    assert plan.report_bits(dn.BinaryRR(prob=0.75)) == 1
    assert plan.report_bits(dn.OUE(100, epsilon=1.0)) == 100
    assert plan.report_bits(dn.GRR(100, epsilon=1.0)) == 7
    assert plan.report_bits(dn.HadamardResponse(100, epsilon=1.0)) == 7


def test_sample_sizes_from_the_notes() -> None:
    """MECHANISMS.md 6.4: binary RR +-1 pp at 95% needs 38,415 (eps = ln 3) and 44,971 (eps = 1)."""
    assert dn.sample_size(dn.BinaryRR(epsilon=math.log(3)), 0.01) == 38_415
    assert dn.sample_size(dn.BinaryRR(prob=0.75), 0.01) == 38_415
    assert dn.sample_size(dn.BinaryRR(epsilon=1.0), 0.01) == 44_971
    fixed = {"frequency": 0.0, "target": "respondents"}
    assert dn.sample_size(dn.GRR(10, epsilon=1.0), 0.01, **fixed) == 139_455
    assert dn.sample_size(dn.OUE(10, epsilon=1.0), 0.01, **fixed) == 141_470
    assert dn.sample_size(dn.OUE(10, epsilon=2.0), 0.01, **fixed) == 27_815


def test_sample_size_is_consistent_with_variance() -> None:
    """The returned n is the smallest with z * sqrt(Var) <= margin (fixed population, given f)."""
    m = dn.OUE(8, epsilon=1.5)
    n = dn.sample_size(m, 0.02, 0.9, frequency=0.1, target="respondents")
    z = testing.z_for(0.1)
    half = lambda size: z * math.sqrt(m.variance(size, np.full(8, 0.1), "respondents")[0])  # noqa: E731
    assert half(n) <= 0.02 < half(n - 1)
    simultaneous = dn.sample_size(m, 0.02, 0.9, frequency=0.1, target="respondents", simultaneous=True)
    assert simultaneous > n
    assert dn.sample_size(m, 0.01) > dn.sample_size(m, 0.02)


# ---------------------------------------- best_mechanism: categories or a numeric range
def test_numeric_range_dispatches_to_the_numeric_comparison() -> None:
    got = dn.best_mechanism(epsilon=1.0, low=0.0, high=120.0)
    direct = dn.best_numeric_mechanism(1.0, 0.0, 120.0)
    assert got.name == direct.name == "Hybrid"
    assert got.variances == direct.variances
    assert (got.mechanism.low, got.mechanism.high) == (0.0, 120.0)


def test_a_delta_adds_gaussian_built_with_it_to_the_numeric_candidates() -> None:
    pure = dn.best_numeric_mechanism(1.0, 0.0, 120.0)
    assert "Gaussian" not in pure.variances
    with_delta = dn.best_numeric_mechanism(1.0, 0.0, 120.0, delta=1e-6)
    assert set(with_delta.variances) == set(pure.variances) | {"Gaussian"}
    gaussian = dn.Gaussian(0.0, 120.0, epsilon=1.0, delta=1e-6)
    assert with_delta.variances["Gaussian"] == pytest.approx(float(gaussian.variance(1)))
    assert with_delta.name == "Hybrid"  # Gaussian's sqrt(ln(1/delta))/epsilon noise loses at every usual delta
    assert {k: v for k, v in with_delta.variances.items() if k != "Gaussian"} == pure.variances
    with pytest.raises(ValueError, match="delta"):
        dn.best_numeric_mechanism(1.0, 0.0, 120.0, delta=2.0)


def test_categorical_call_is_unchanged() -> None:
    assert dn.best_mechanism(k=10, epsilon=1.0).name == "SubsetSelection"
    assert dn.best_mechanism(4, 3.0).name == "GRR"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 1.0}, "needs k"),
        ({"k": 4}, "needs epsilon"),
        ({"k": 4, "epsilon": 1.0, "low": 0.0, "high": 1.0}, "not both"),
        ({"epsilon": 1.0, "low": 0.0}, "needs k"),
    ],
)
def test_ambiguous_or_missing_arguments_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        dn.best_mechanism(**kwargs)


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
    with pytest.raises(ValueError, match="target"):
        dn.sample_size(m, 0.01, target="all")  # type: ignore[arg-type]
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
