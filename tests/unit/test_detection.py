"""Detection and recovery: the null laws are exact, the results say what they found, bad input is refused.

Deterministic (the null laws against enumeration; fixed data for the rest).
The calibrated false-alarm rates and the power: tests/stat/test_detection_stat.py.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

import deniable as dn
from deniable import attacks
from deniable._detection import _honest_all_rate, honest_count_pmf


def test_honest_count_law_is_exact() -> None:
    """The 1-bits of an OUE report over its whole output space (k = 6) follow Bernoulli(p) + Binomial(k-1, q)."""
    m = dn.OUE(6, epsilon=1.0)
    outputs, matrix = m.transition_matrix()
    ones = np.array([sum(y) for y in outputs])
    pmf = honest_count_pmf(6, float(m.p), float(m.q))
    for x in range(6):
        assert np.allclose(np.bincount(ones, weights=matrix[x], minlength=7), pmf)


@pytest.mark.parametrize("mechanism", [
    dn.OUE(6, epsilon=1.0), dn.SUE(6, epsilon=1.0), dn.HadamardResponse(6, epsilon=1.0),
    dn.SubsetSelection(6, epsilon=1.0, omega=3), dn.SubsetSelection(6, epsilon=1.0, omega=2),
    dn.GRR(6, epsilon=1.0),
], ids=repr)
def test_honest_rate_of_supporting_every_target_is_exact(mechanism: dn.FrequencyOracle) -> None:
    outputs, matrix = mechanism.transition_matrix()
    reports = np.array(outputs)
    if isinstance(mechanism, dn.SubsetSelection):
        reports = np.empty(len(outputs), dtype=mechanism.dtype)
        reports["subset"] = np.array(outputs)
    for targets in itertools.combinations(range(6), 2):
        every = np.ones(len(outputs), dtype=bool)
        for t in targets:
            every &= mechanism.supports(reports, t)
        exact = float((matrix[:, every]).sum(axis=1).max())
        assert _honest_all_rate(mechanism, np.array(targets)) == pytest.approx(exact, abs=1e-12)


def test_local_hashing_rate_bounds_the_enumerated_one() -> None:
    m = dn.OLH(8, epsilon=2.0, g=2)
    outputs, matrix = m.transition_matrix()
    reports = np.array(outputs, dtype=m.validate(m.privatize_many([0], rng=1)).dtype)
    for targets in ([0, 1], [2, 5, 6]):
        every = np.ones(len(outputs), dtype=bool)
        for t in targets:
            every &= m.supports(reports, t)
        exact = float(matrix[:, every].sum(axis=1).max())
        bound = _honest_all_rate(m, np.array(targets))
        assert exact <= bound + 1e-12 and bound <= 2 * exact


def test_detections_report_what_they_found() -> None:
    """600 fakes among 3,800 reports push each target by about 0.5, 10 standard errors of the change
    against the change test's 4.3 (alpha 1e-3 over 32 categories), and support all three targets
    (honest reports do with probability at most p q^2 = 0.036): flagged whatever the seeds."""
    m = dn.OUE(32, epsilon=1.0)
    honest = m.privatize_many(np.arange(32).repeat(100), rng=11)
    fakes = attacks.maximal_gain(m, [4, 9, 20], 600, rng=12)
    found = dn.supporting_all_test(m, np.concatenate([honest, fakes]), [4, 9, 20])
    assert found.flagged and found.items == (4, 9, 20)
    assert found.detail["mask"][-600:].all() and found.statistic >= 600
    assert "FLAGGED" in repr(found) and found.to_dict()["flagged"] is True
    before, after = m.estimate(honest), m.estimate(np.concatenate([honest, fakes]))
    change = dn.change_test(before, after)
    assert change.flagged and set(change.items[:3]) == {4, 9, 20}
    quiet = dn.unary_count_test(m, honest, alpha=1e-9)
    assert quiet.detail["counts"].shape == (3200,) and quiet.detail["upper"] < 32
    assert "not flagged" in repr(dn.frequency_test(before, alpha=1e-9))


def test_recover_inverts_the_mixture_exactly() -> None:
    """Estimates built as (1 - beta) f + beta z_fake come back to f (before the projection)."""
    m = dn.GRR(5, epsilon=1.0)
    est = m.estimate(m.privatize_many(np.arange(5).repeat(40), rng=3))
    s = attacks.fake_support(m, "maximal-gain", [1])
    beta = 0.1
    z = (s - est.q_star) / (est.p_star - est.q_star)
    poisoned = dn.Estimate(**{**est.__dict__, "frequencies": (1 - beta) * est.frequencies + beta * z})
    back = dn.recover(poisoned, s, beta, project=False)
    assert np.allclose(back.frequencies, est.frequencies)
    assert back.post_processing == "recovered" and np.allclose(back.std_errors, est.std_errors / 0.9)
    projected = dn.recover(poisoned, s, beta)
    assert projected.std_errors is None and projected.frequencies.sum() == pytest.approx(1.0)
    assert dn.estimate_fake_fraction(est, poisoned, s, [1]) == pytest.approx(beta)


@pytest.mark.parametrize("mechanism", [dn.DBitFlip(6, d=3, epsilon=1.0),
                                       dn.RAPPOR(6, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=4)],
                         ids=repr)
def test_recover_inverts_the_memoizing_mixture_exactly(mechanism: dn.FrequencyOracle) -> None:
    """With ``contribution`` (DBitFlip's and RAPPOR's estimators have no support rates) the same inversion;
    support rates for RAPPOR's least-squares decode are refused."""
    est = mechanism.estimate(mechanism.privatize_many(np.arange(6).repeat(40), rng=4))
    z = attacks.fake_contribution(mechanism, "maximal-gain", [1, 4])
    beta = 0.2
    poisoned = replace(est, frequencies=(1 - beta) * est.frequencies + beta * z)
    back = dn.recover(poisoned, fake_fraction=beta, contribution=z, project=False)
    assert np.allclose(back.frequencies, est.frequencies) and back.post_processing == "recovered"
    assert dn.estimate_fake_fraction(est, poisoned, targets=[1, 4], contribution=z) == pytest.approx(beta)
    if isinstance(mechanism, dn.RAPPOR):
        with pytest.raises(NotImplementedError, match="give contribution="):
            dn.recover(poisoned, np.zeros(6), beta)


def test_supporting_all_for_dbitflip_counts_the_reports_holding_d_targets() -> None:
    """Four targets, d = 2: a report supports at most two; the maximal-gain fakes all do, and the honest rate
    is ``C(4, 2)/C(10, 2) (A B / 2 + B^2 / 2)`` (the value a target, sampled with probability 1/2)."""
    m = dn.DBitFlip(10, d=2, epsilon=1.0)
    targets = [2, 4, 6, 8]
    honest = m.privatize_many(np.arange(10).repeat(50), rng=5)
    fakes = attacks.maximal_gain(m, targets, 100, rng=6)
    found = dn.supporting_all_test(m, np.concatenate([honest, fakes]), targets)
    assert found.detail["mask"][-100:].all() and found.flagged and found.items == tuple(targets)
    one = float(m._ra) / float(m._ra + m._rb)
    assert found.detail["pi"] == pytest.approx(6 / 45 * (one * (1 - one) / 2 + (1 - one) ** 2 / 2))


def test_repeated_reports_bound_is_the_most_likely_vector() -> None:
    """The honest bound ``pi_w`` holds for every value and vector (the exact transition matrix, within a
    cohort) and is attained where a value's two Bloom bits lie among the vector's ones; 200 copies of one
    vector in a cohort are flagged and masked, and nothing else is."""
    m = dn.RAPPOR(4, epsilon=4.0, num_bits=8, num_hashes=2, num_cohorts=2)
    outputs, matrix = m.transition_matrix()
    ones = np.array([bin(bits).count("1") for _, bits in outputs])
    p, q = float(m.p_star), float(m.q_star)
    on = np.minimum(ones, 2)
    bound = q**on * p ** (ones - on) * (1 - p) ** (8 - ones)
    within = matrix * m.num_cohorts  # P(bits | value, cohort)
    assert np.all(within <= bound * (1 + 1e-12)) and np.any(np.isclose(within, bound, rtol=1e-12))
    honest = m.privatize_many(np.arange(4).repeat(50), rng=7)
    copies = honest[:1].repeat(200)
    found = dn.repeated_reports_test(m, np.concatenate([honest, copies]))
    assert found.flagged and found.detail["largest"] >= 201
    assert found.detail["mask"][-200:].all() and found.detail["mask"].sum() == found.detail["largest"]
    assert not dn.repeated_reports_test(m, honest, alpha=1e-3).flagged


def test_refusals() -> None:
    grr = dn.GRR(4, epsilon=1.0)
    est = grr.estimate(grr.privatize_many([0, 1, 2, 3] * 10, rng=1))
    with pytest.raises(TypeError, match="unary encoding"):
        dn.unary_count_test(grr, [0, 1])
    with pytest.raises(ValueError, match="at least two targets"):
        dn.supporting_all_test(grr, [0, 1], [0])
    with pytest.raises(TypeError, match="needs RAPPOR reports"):
        dn.repeated_reports_test(grr, [0, 1])
    with pytest.raises(ValueError, match="not post-processed"):
        dn.frequency_test(est.consistent())
    with pytest.raises(ValueError, match="same categories"):
        dn.change_test(est, dn.GRR(5, epsilon=1.0).estimate([0, 1]))
    with pytest.raises(ValueError, match="fake_support must hold 4"):
        dn.recover(est, [0.5], 0.1)
    with pytest.raises(ValueError, match="contribution must hold 4"):
        dn.recover(est, fake_fraction=0.1, contribution=[0.5])
    with pytest.raises(ValueError, match="exactly one of"):
        dn.recover(est, np.zeros(4), 0.1, contribution=np.zeros(4))
    with pytest.raises(ValueError, match="exactly one of"):
        dn.recover(est, fake_fraction=0.1)
    with pytest.raises(ValueError, match="needs fake_fraction"):
        dn.recover(est, np.zeros(4))
    with pytest.raises(ValueError, match="needs the targets"):
        dn.estimate_fake_fraction(est, est, np.zeros(4))
    with pytest.raises(ValueError, match=r"fake_fraction must be in \[0, 1\)"):
        dn.recover(est, np.zeros(4), 1.0)
    with pytest.raises(ValueError, match="post-processed"):
        dn.recover(est.consistent(), np.zeros(4), 0.1)
    with pytest.raises(ValueError, match="do not raise these targets"):
        dn.estimate_fake_fraction(est, est, np.zeros(4), [0])
    with pytest.raises(ValueError, match="alpha"):
        dn.frequency_test(est, alpha=0.0)
