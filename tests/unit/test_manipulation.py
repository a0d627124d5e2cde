"""Manipulation sensitivity: the stated shift per fake report equals the shift the maximal-gain attack makes.

The maximal-gain attack's fake reports each support exactly ``max_support``
targets, so adding ``m`` of them to ``n`` genuine reports moves the targets'
summed estimate by exactly ``m/(n+m) (target_gain - f_T before)``: an
identity of the estimator, checked here to rounding (no Monte Carlo error
enters). Deterministic apart from the seeded draws, which the identities
do not depend on.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from randomizers import RANDOMIZERS, Randomizer

import deniable as dn
from deniable import attacks
from deniable._manipulation import manipulation

K, EPS = 64, 1.0
TARGETS = [3, 17, 40]


def _mechanisms() -> list[dn.FrequencyOracle]:
    return [dn.GRR(K, epsilon=EPS), dn.SUE(K, epsilon=EPS), dn.OUE(K, epsilon=EPS), dn.BLH(K, epsilon=EPS),
            dn.OLH(K, epsilon=EPS), dn.HadamardResponse(K, epsilon=EPS), dn.SubsetSelection(K, epsilon=EPS),
            dn.SubsetSelection(K, epsilon=EPS, omega=2)]


def test_the_issue_s_sanity_figures() -> None:
    """k = 1,024, epsilon = 1: one GRR report moves an item by 596/n, one OUE report by 3.2/n."""
    e = math.e
    grr = dn.GRR(1024, epsilon=1.0).manipulation()
    oue = dn.OUE(1024, epsilon=1.0).manipulation()
    assert float(grr.output[0]) == pytest.approx((e + 1022) / (e - 1), rel=1e-6)  # (1 - q)/(p - q)
    assert round(float(grr.output[0])) == 596
    assert float(oue.output[0]) == pytest.approx(2 * e / (e - 1), rel=1e-6)
    assert round(float(oue.output[0]), 1) == 3.2
    assert np.all(grr.input == 1.0) and np.all(oue.input == 1.0)
    assert float(grr.spread[0]) == pytest.approx((e + 1023) / (e - 1), rel=1e-6)  # 1/(p - q)


@pytest.mark.parametrize("mechanism", _mechanisms(), ids=lambda m: repr(m))
def test_stated_gain_is_the_maximal_gain_attack_s_shift(
    mechanism: dn.FrequencyOracle, rng: np.random.Generator
) -> None:
    n, m = 3000, 250
    truth = rng.integers(0, K, n)
    honest = mechanism.privatize_many(truth, rng=rng)
    before = mechanism.estimate(honest)
    fakes = attacks.maximal_gain(mechanism, TARGETS, m, rng=rng)
    after = mechanism.estimate(np.concatenate([honest, fakes]))
    sensitivity = mechanism.manipulation(TARGETS)
    f_t = float(before.frequencies[TARGETS].sum())
    measured = attacks.overall_gain(before, after, TARGETS)
    assert measured == pytest.approx(sensitivity.gain(m / (n + m), f_t), rel=1e-9, abs=1e-12)
    # each target alone: a fake supporting it moves it by (output - f_v) m/N at most, within the realised bound
    shift = after.frequencies - before.frequencies
    assert np.all(np.abs(shift) <= after.manipulation_bound(m) * (1 + 1e-12))


@pytest.mark.parametrize("mechanism", _mechanisms(), ids=lambda m: repr(m))
def test_one_target_moves_by_the_output_sensitivity(mechanism: dn.FrequencyOracle, rng: np.random.Generator) -> None:
    n, m = 2000, 100
    honest = mechanism.privatize_many(rng.integers(0, K, n), rng=rng)
    before = mechanism.estimate(honest)
    after = mechanism.estimate(np.concatenate([honest, attacks.maximal_gain(mechanism, [5], m, rng=rng)]))
    stated = mechanism.manipulation()
    expected = m / (n + m) * (stated.output[5] - before.frequencies[5])
    assert after.frequencies[5] - before.frequencies[5] == pytest.approx(expected, rel=1e-9)


def test_the_realised_bound_is_attained() -> None:
    """Genuine reports supporting nothing, fakes supporting the item: the shift is the whole bound."""
    m = dn.GRR(10, epsilon=1.0)
    honest = np.zeros(900, dtype=np.int64)  # every genuine report says 0
    fakes = np.full(100, 7, dtype=np.int64)
    before, after = m.estimate(honest), m.estimate(np.concatenate([honest, fakes]))
    assert after.frequencies[7] - before.frequencies[7] == pytest.approx(after.manipulation_bound(100)[7])


def _brute_max_support(mechanism: dn.FrequencyOracle, reports: np.ndarray, targets: list[int]) -> int:
    supported = np.zeros(len(reports), dtype=np.int64)
    for t in targets:
        supported += mechanism.supports(reports, t)
    return int(supported.max())


def test_max_support_of_local_hashing_is_exact() -> None:
    """Every seed and value of a small OLH: the search over hash matrices finds the true maximum."""
    m = dn.OLH(8, epsilon=2.0, g=2)
    seeds = np.arange(1 << m.seed_bits, dtype=np.uint64)
    reports = np.empty(seeds.size * m.g, dtype=m.validate(m.privatize_many([0], rng=1)).dtype)
    reports["seed"] = np.repeat(seeds, m.g)
    reports["value"] = np.tile(np.arange(m.g), seeds.size)
    for targets in ([0, 1], [0, 1, 2], [1, 2, 4, 7], list(range(8))):
        assert m.max_support(np.array(targets)) == _brute_max_support(m, reports, targets)


def test_max_support_of_hadamard_and_subsets_is_exact() -> None:
    hr = dn.HadamardResponse(6, epsilon=1.0)
    subset = dn.SubsetSelection(6, epsilon=1.0, omega=2)
    outputs, _ = subset.transition_matrix()
    subset_reports = np.empty(len(outputs), dtype=subset.dtype)
    subset_reports["subset"] = np.array(outputs)
    for targets in itertools.combinations(range(6), 3):
        chosen = list(targets)
        assert hr.max_support(np.array(chosen)) == _brute_max_support(hr, np.arange(hr.K), chosen)
        assert subset.max_support(np.array(chosen)) == _brute_max_support(subset, subset_reports, chosen)


def test_estimate_states_its_bound() -> None:
    m = dn.OUE(16, epsilon=1.0)
    est = m.estimate(m.privatize_many(np.arange(16).repeat(50), rng=2))
    gap = est.p_star - est.q_star
    assert np.allclose(est.manipulation_bound(8), 8 / (est.n * gap))
    assert "m fake reports among these 800 could move a share by at most m" in repr(est)
    assert "could move a share by at most" in est._repr_html_()
    assert "fake reports" not in repr(est.consistent())  # post-processed: the bound is of the unbiased estimate
    with pytest.raises(ValueError, match="m_fake must be at most n"):
        est.manipulation_bound(801)
    with pytest.raises(ValueError, match="m_fake must be a non-negative int"):
        est.manipulation_bound(-1)


def test_numeric_mechanisms_state_their_bound(rng: np.random.Generator) -> None:
    """A fake Duchi report at the top moves the mean by exactly (m/N)(top - mean before)."""
    m = dn.Duchi(0, 10, epsilon=1.0)
    honest = m.privatize_many(rng.uniform(0, 10, 500), rng=rng)
    before = m.estimate(honest)
    top = m.report_range[1]
    after = m.estimate(np.concatenate([honest, np.full(20, top)]))
    stated = m.manipulation()
    assert after.mean - before.mean == pytest.approx(20 / 520 * (stated.output + m.low - before.mean), rel=1e-9)
    assert abs(after.mean - before.mean) <= after.manipulation_bound(20)
    assert stated.input == 10.0
    assert "m fake reports could move it by at most m" in repr(after)


def test_targets_and_refusals() -> None:
    grr = dn.GRR(["a", "b", "c"], epsilon=1.0)
    s = grr.manipulation(targets=["a", "c"])
    assert s.targets == ("a", "c")
    assert s.gain(0.1) == pytest.approx(0.1 * (1 - 2 * float(grr.support_rates()[1][0])) / float(
        grr.support_rates()[0][0] - grr.support_rates()[1][0]))
    assert "2 targets" in repr(s)
    with pytest.raises(ValueError, match="fake_fraction"):
        s.gain(1.5)
    with pytest.raises(ValueError, match="no targets"):
        grr.manipulation().gain(0.1)
    with pytest.raises(ValueError, match="at least one category"):
        grr.manipulation(targets=[])
    with pytest.raises(NotImplementedError, match="selects candidates"):
        dn.RAPPOR(40, epsilon=2.0, num_bits=8, num_hashes=2, num_cohorts=2).manipulation()
    with pytest.raises(ValueError, match="frequency oracles"):
        manipulation(dn.Duchi(0, 1, epsilon=1.0), targets=[0])


def test_sketches_state_the_same_figures(rng: np.random.Generator) -> None:
    """A CMS report with every bucket set supports every string: it moves each by (output - f) m/N exactly."""
    m = dn.CountMeanSketch(["a", "b", "c"], epsilon=2.0, width=64)
    honest = m.privatize_many(rng.choice(["a", "b", "c"], 1000), rng=rng)
    fakes = honest[:50].copy()
    fakes["bits"] = 255
    before, after = m.estimate(honest), m.estimate(np.concatenate([honest, fakes]))
    stated = m.manipulation()
    expected = 50 / 1050 * (stated.output - before.frequencies)
    assert np.allclose(after.frequencies - before.frequencies, expected, rtol=1e-9)
    assert np.all(np.abs(after.frequencies - before.frequencies) <= after.manipulation_bound(50))
    with pytest.raises(NotImplementedError, match="set of targets"):
        manipulation(m, targets=["a"])


NUMERIC = [r for r in RANDOMIZERS if isinstance(r.build(), dn.NumericMechanism)]


@pytest.mark.parametrize("randomizer", NUMERIC, ids=lambda r: r.id)
def test_every_numeric_mechanism_s_extreme_reports_move_the_mean_as_stated(
    randomizer: Randomizer, rng: np.random.Generator
) -> None:
    """Fakes at the highest report move the mean by exactly (m/N)(output + low - mean); both ends by at most
    the bound."""
    m = randomizer.build()
    honest = m.privatize_many(rng.uniform(m.low, m.high, 400), rng=rng)
    before = m.estimate(honest)
    stated = m.manipulation()
    low, high = m.report_range
    top = m.estimate(np.concatenate([honest, np.full(20, high)]))
    assert top.mean - before.mean == pytest.approx(20 / 420 * (stated.output + m.low - before.mean), rel=1e-9)
    for end in (low, high):
        moved = m.estimate(np.concatenate([honest, np.full(20, end)]))
        assert abs(moved.mean - before.mean) <= moved.manipulation_bound(20) * (1 + 1e-12)


def test_rappor_figures_are_one_report_s_move_of_its_least_squares_decode() -> None:
    """Honest expected bit counts of 10^7 reports per cohort with no candidate held (every rate p*), plus one
    report: the decode moves by the report's contribution over N, to first order (relative 1e-5 here). The
    best report for a category, in its best cohort, moves it by ``output / N``; the worst by
    ``(output - spread) / N``. Its realised decode is also what the stated sums over the targets are checked
    against (tests/unit/test_attacks.py, exactly)."""
    from deniable.mechanisms._rappor_decode import least_squares
    from deniable.mechanisms._rappor_manipulation import contributions, report_extremes

    m = dn.RAPPOR(8, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8)
    s = m.manipulation()
    weights = contributions(m)
    ps, qs, each = float(m.p_star), float(m.q_star), 10**7
    for v in range(m.k):
        high, low = report_extremes(m, weights[:, :, v])
        for cohort, sign in ((int(high.argmax()), 1), (int(low.argmin()), -1)):
            bits = (sign * weights[cohort, :, v]) > 0
            sizes = np.full(m.num_cohorts, float(each))
            sizes[cohort] += 1
            ones = np.outer(np.full(m.num_cohorts, each * ps), np.ones(m.num_bits))
            ones[cohort] += bits
            t = ((ones - ps * sizes[:, None]) / (qs - ps)).ravel()
            moved = least_squares(m._design(sizes), t, np.ones(t.size))[0][v] * sizes.sum()
            stated = s.output[v] if sign > 0 else s.output[v] - s.spread[v]
            assert moved == pytest.approx(stated, rel=1e-5)
    assert np.all(s.input == 1) and s.target_gain is None
