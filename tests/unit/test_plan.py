"""Planning and simulation: mechanism choice, sample sizes, and huge simulated surveys."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import deniable as dn
from deniable import plan, testing


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


@pytest.mark.stat
@pytest.mark.parametrize("make", [lambda: dn.GRR(10, epsilon=1.0), lambda: dn.OUE(10, epsilon=1.0)],
                         ids=["GRR", "OUE"])
def test_simulate_a_billion_respondents(make, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
    """n = 10^9 in well under a second (joint binomial draws), and the estimate is within
    z sd of the truth per category (alpha 1e-6 over 2 mechanisms x 10 categories)."""
    m = make()
    truth = np.array([0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.0, 0.0])
    start = time.perf_counter()
    est = dn.simulate(m, truth, 10**9, rng=rng, target="respondents")
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"simulate took {elapsed:.2f} s"
    assert est.n == 10**9 and est.support_counts.sum() > 0
    np.testing.assert_allclose(est.truth, truth, atol=1e-9)
    z = testing.z_for(1e-6 / 20)
    sd = np.sqrt(m.variance(10**9, est.truth, "respondents"))
    assert np.all(np.abs(est.frequencies - est.truth) <= z * sd), (est.frequencies - est.truth) / sd
    assert est.std_errors is not None and np.all(est.std_errors < 1e-3)


def test_simulate_is_reproducible_and_rounds_population() -> None:
    m = dn.OLH(5, epsilon=1.0)
    a = dn.simulate(m, [0.2] * 5, 1000, rng=5)
    b = dn.simulate(m, [0.2] * 5, 1000, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    est = dn.simulate(dn.GRR(3, epsilon=1.0), [1 / 3] * 3, 10, rng=1, target="respondents")
    assert sorted((est.truth * 10).round().astype(int).tolist()) == [3, 3, 4]


# ---------------------------------------- best_mechanism: categories or a numeric range
def test_numeric_range_dispatches_to_the_numeric_comparison() -> None:
    got = dn.best_mechanism(epsilon=1.0, low=0.0, high=120.0)
    direct = dn.best_numeric_mechanism(1.0, 0.0, 120.0)
    assert got.name == direct.name == "Hybrid"
    assert got.variances == direct.variances
    assert (got.mechanism.low, got.mechanism.high) == (0.0, 120.0)


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
