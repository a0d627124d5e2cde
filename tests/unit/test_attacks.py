"""deniable.attacks: well-formed fake reports, the attacks' structure, their support rates and refusals.

Deterministic: every property checked holds for every draw.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import deniable as dn
from deniable import attacks

K = 40
TARGETS = [2, 11, 29]


def _mechanisms() -> list[dn.FrequencyOracle]:
    return [dn.GRR(K, epsilon=1.0), dn.SUE(K, epsilon=1.0), dn.OUE(K, epsilon=1.0), dn.BLH(K, epsilon=1.0),
            dn.OLH(K, epsilon=1.0), dn.HadamardResponse(K, epsilon=1.0), dn.SubsetSelection(K, epsilon=1.0),
            dn.SubsetSelection(K, epsilon=1.0, omega=2)]


def _memoizing() -> list[dn.FrequencyOracle]:
    """The longitudinal mechanisms: their one-report channels, which a fake report imitates."""
    return [dn.LGRR(K, epsilon_perm=3.0, epsilon_1=1.0), dn.LOSUE(K, epsilon_perm=3.0, epsilon_1=1.0),
            dn.DBitFlip(K, d=4, epsilon=1.0), dn.DBitFlip(K, d=2, epsilon=1.0),
            dn.RAPPOR(K, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8),
            dn.RAPPOR(8, epsilon=4.0, num_bits=70, num_hashes=3, num_cohorts=3)]


@pytest.mark.parametrize("mechanism", _mechanisms() + _memoizing(), ids=repr)
def test_fake_reports_are_well_formed(mechanism: dn.FrequencyOracle) -> None:
    """Each attack's reports pass the mechanism's own report checks and survive the wire."""
    targets = [t for t in TARGETS if t < mechanism.k]
    for fakes in (attacks.maximal_gain(mechanism, targets, 50, rng=1),
                  attacks.random_item(mechanism, targets, 50, rng=2),
                  attacks.random_value(mechanism, 50, rng=3)):
        checked = mechanism.validate(fakes)
        assert len(checked) == 50
        back = mechanism.reports_from_json(mechanism.reports_to_json(fakes))
        assert mechanism.aggregate(back).counts.tolist() == mechanism.aggregate(fakes).counts.tolist()
    assert len(attacks.maximal_gain(mechanism, targets, 0, rng=1)) == 0


@pytest.mark.parametrize("mechanism", _mechanisms() + _memoizing()[:4], ids=repr)
def test_maximal_gain_reports_support_the_most_targets(mechanism: dn.FrequencyOracle) -> None:
    fakes = attacks.maximal_gain(mechanism, TARGETS, 200, rng=4)
    supported = sum(mechanism.supports(fakes, t).astype(int) for t in TARGETS)
    assert np.all(supported == mechanism.max_support(np.array(TARGETS)))


def test_padded_unary_fakes_have_the_expected_number_of_ones() -> None:
    m = dn.OUE(K, epsilon=1.0)
    expected = round(float(m.p + (K - 1) * m.q))
    assert np.all(m.unpack(attacks.maximal_gain(m, TARGETS, 100, rng=5)).sum(axis=1) == expected)
    assert np.all(m.unpack(attacks.maximal_gain(m, TARGETS, 100, rng=5, pad=False)).sum(axis=1) == len(TARGETS))


def test_grr_and_binary_fakes() -> None:
    grr = dn.GRR(["a", "b", "c", "d"], epsilon=1.0)
    assert set(attacks.maximal_gain(grr, ["b", "d"], 200, rng=6).tolist()) == {"b", "d"}
    binary = dn.BinaryRR(prob=0.75)
    assert attacks.maximal_gain(binary, [True], 10, rng=7).tolist() == [True] * 10
    assert attacks.random_value(binary, 10, rng=8).dtype == bool


@pytest.mark.parametrize("mechanism", _mechanisms(), ids=repr)
def test_fake_support_is_each_attack_s_support_rate(mechanism: dn.FrequencyOracle) -> None:
    """Maximal gain: the stated rates are the exact support of its reports over its draws (targets: 1 or r/omega).

    Random item and random value are the honest and uniform rates, whose means the statistical suite checks.
    """
    s = attacks.fake_support(mechanism, "maximal-gain", TARGETS)
    assert s.shape == (K,) and np.all((s >= 0) & (s <= 1))
    most = mechanism.max_support(np.array(TARGETS))
    assert s[TARGETS].sum() == pytest.approx(most)
    p, q = mechanism.support_rates()
    item = attacks.fake_support(mechanism, "random-item", TARGETS)
    assert item[TARGETS].sum() == pytest.approx(3 * q[0] + (p[0] - q[0]))


def test_expected_gains_are_cao_et_al_s_closed_forms() -> None:
    """Theorems of Cao, Jia & Gong (2021): MGA, RIA and RPA gains for kRR, OUE and OLH."""
    k, r, beta, f_t = 1024, 10, 0.05, 0.01
    targets = list(range(0, 10 * r, 10))
    grr, oue, olh = dn.GRR(k, epsilon=1.0), dn.OUE(k, epsilon=1.0), dn.OLH(k, epsilon=1.0)
    e = float(np.exp(grr.epsilon))
    assert attacks.expected_gain(grr, "maximal-gain", targets, beta, f_t) == pytest.approx(
        beta * (1 - f_t) + beta * (k - r) / (e - 1), rel=1e-9)
    assert attacks.expected_gain(grr, "random-value", targets, beta, f_t) == pytest.approx(beta * (r / k - f_t))
    e = float(np.exp(oue.epsilon))
    assert attacks.expected_gain(oue, "maximal-gain", targets, beta, f_t) == pytest.approx(
        beta * (2 * r - f_t) + 2 * beta * r / (e - 1), rel=1e-6)
    assert attacks.expected_gain(oue, "random-value", targets, beta, f_t) == pytest.approx(beta * (r - f_t), rel=1e-6)
    p, g = float(olh.prob), olh.g
    assert attacks.expected_gain(olh, "maximal-gain", targets, beta, f_t) == pytest.approx(
        beta * (r * (1 - 1 / g) / (p - 1 / g) - f_t), rel=1e-9)
    assert attacks.expected_gain(olh, "random-value", targets, beta, f_t) == pytest.approx(-beta * f_t, abs=1e-12)
    for m in (grr, oue, olh):
        assert attacks.expected_gain(m, "random-item", targets, beta, f_t) == pytest.approx(beta * (1 - f_t))


@pytest.mark.parametrize("mechanism", _memoizing(), ids=repr)
def test_maximal_gain_fakes_add_the_stated_gain_to_the_estimate(mechanism: dn.FrequencyOracle) -> None:
    """Exactly, on fakes alone: DBitFlip's estimate is the mean of the reports' contributions, and RAPPOR's
    is too when the cohorts are equal (the attack spreads its fakes evenly: 8 x 40 fakes, 3 x 40)."""
    targets = [t for t in TARGETS if t < mechanism.k]
    m = 40 * getattr(mechanism, "num_cohorts", 1)
    fakes = attacks.maximal_gain(mechanism, targets, m, rng=9)
    summed = float(mechanism.estimate(fakes).frequencies[targets].sum())
    assert summed == pytest.approx(mechanism.manipulation(targets).target_gain, rel=1e-9)
    assert attacks.expected_gain(mechanism, "maximal-gain", targets, 1.0) == pytest.approx(summed, rel=1e-9)


@pytest.mark.parametrize("mechanism", _memoizing()[2:], ids=repr)
def test_the_uniform_report_s_gain_is_its_mean_over_every_report(mechanism: dn.FrequencyOracle) -> None:
    """DBitFlip: 1/2 per target. RAPPOR: the mean over every cohort and bit vector (16 bits: all 65,536)."""
    targets = [t for t in TARGETS if t < mechanism.k]
    stated = attacks.expected_gain(mechanism, "random-value", targets, 1.0)
    if isinstance(mechanism, dn.DBitFlip):
        assert stated == pytest.approx(len(targets) / 2)
        return
    if mechanism.num_bits > 16:
        return
    every = np.arange(1 << mechanism.num_bits, dtype=np.uint64)
    reports = np.empty(every.size * mechanism.num_cohorts, dtype=[("cohort", "<u4"), ("bits", "<u8")])
    reports["cohort"] = np.repeat(np.arange(mechanism.num_cohorts), every.size)
    reports["bits"] = np.tile(every, mechanism.num_cohorts)
    assert float(mechanism.estimate(reports).frequencies[targets].sum()) == pytest.approx(stated, rel=1e-9)


@pytest.mark.parametrize("mechanism", _mechanisms() + _memoizing(), ids=repr)
def test_fake_contribution_sums_to_the_expected_gain(mechanism: dn.FrequencyOracle) -> None:
    """The per-category contributions (what a recovery subtracts) add up, on the targets, to the per-report
    gain :func:`expected_gain` states from the manipulation bounds (a separate derivation), for each attack;
    a random item adds ``1/r`` to each target and nothing elsewhere."""
    targets = [t for t in TARGETS if t < mechanism.k]
    for attack in attacks.ATTACKS:
        z = attacks.fake_contribution(mechanism, attack, targets)
        assert z.shape == (mechanism.k,) and np.all(np.isfinite(z))
        stated = attacks.expected_gain(mechanism, attack, targets, 1.0)
        assert z[targets].sum() == pytest.approx(stated, rel=1e-9, abs=1e-12)
    item = attacks.fake_contribution(mechanism, "random-item", targets)
    assert item.sum() == pytest.approx(1.0) and np.all(item[targets] == 1 / len(targets))


@pytest.mark.parametrize("mechanism", _memoizing()[2:], ids=repr)
def test_the_memoizing_fakes_estimate_is_their_contribution(mechanism: dn.FrequencyOracle) -> None:
    """Exactly, on maximal-gain fakes alone, for every category: RAPPOR's fakes (40 per cohort) set fixed bits per
    cohort; DBitFlip's with r <= d sample every target with bit 1 (its other buckets are drawn, so only the
    targets are fixed); with r > d the targets' sum is fixed (each report holds d of them, bit 1)."""
    targets = [t for t in TARGETS if t < mechanism.k]
    z = attacks.fake_contribution(mechanism, "maximal-gain", targets)
    fakes = attacks.maximal_gain(mechanism, targets, 40 * getattr(mechanism, "num_cohorts", 1), rng=10)
    got = mechanism.estimate(fakes).frequencies
    if isinstance(mechanism, dn.RAPPOR):
        assert np.allclose(got, z, rtol=1e-9, atol=1e-9)
    elif len(targets) <= mechanism.d:
        assert np.allclose(got[targets], z[targets], rtol=1e-12)
    else:
        assert got[targets].sum() == pytest.approx(z[targets].sum(), rel=1e-12)
        assert np.all(got[np.setdiff1d(np.arange(mechanism.k), targets)] == 0) and np.all(z[~np.isin(
            np.arange(mechanism.k), targets)] == 0)


def test_refusals() -> None:
    grr = dn.GRR(4, epsilon=1.0)
    with pytest.raises(ValueError, match="non-negative int"):
        attacks.maximal_gain(grr, [0], -1)
    with pytest.raises(ValueError, match="at least one category"):
        attacks.maximal_gain(grr, [], 3)
    with pytest.raises(ValueError, match="attack must be one of"):
        attacks.expected_gain(grr, "flood", [0], 0.1)
    with pytest.raises(ValueError, match="attack must be one of"):
        attacks.fake_support(grr, "flood", [0])
    with pytest.raises(ValueError, match="attack must be one of"):
        attacks.fake_contribution(grr, "flood", [0])
    with pytest.raises(ValueError, match="fake_fraction"):
        attacks.expected_gain(grr, "random-item", [0], 2.0)
    with pytest.raises(TypeError, match="not implemented for SimpleNamespace"):
        attacks.random_value(SimpleNamespace(k=3), 3)
    est = grr.estimate(grr.privatize_many([0, 1, 2, 3], rng=1))
    other = dn.GRR(5, epsilon=1.0).estimate(dn.GRR(5, epsilon=1.0).privatize_many([0, 1], rng=1))
    with pytest.raises(ValueError, match="same categories"):
        attacks.overall_gain(est, other, [0])
    with pytest.raises(ValueError, match="not a category"):
        attacks.overall_gain(est, est, [9])
