"""Output perturbation of memoized 1BitMean and dBitFlip (Ding, Kulkarni & Yekhanin 2017).

Every report flips each memoized bit afresh with probability ``gamma``
(``deniable.mechanisms._telemetry``). Checked exactly: one report's epsilon is
the perturbed channel's (transition matrix / report distribution, and the
closed form ``ln((e (1 - gamma) + gamma) / (e gamma + 1 - gamma))`` per bit),
the memoized bits keep ``epsilon_perm`` (the lifetime bound), and the time of
a change is ``ln((1 - gamma) / gamma)``-private per bit (the largest
likelihood ratio between reports of two memoized bit vectors). Sampled: a
kept client's reports differ from its memoized bits at rate ``gamma``
(exact binomial band), and the estimators decode perturbed reports without
bias, which the unperturbed decoder does not (power checks).

Alpha: 4 calibrated assertions at 2.5e-7 each (1e-6 in all), fixed seeds
where a generator is given; the clients' flips come from the OS CSPRNG. The
power checks miss with probability below 1.4e-8 (see each test).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms._telemetry import DBitFlip, OneBitMean
from deniable.testing import coverage_band, estimate_check, proportion_check

ALPHA = 1e-6 / 4


def _bit_epsilon(eps: float, gamma: float) -> float:
    e = math.exp(eps)
    return math.log((e * (1 - gamma) + gamma) / (e * gamma + 1 - gamma))


@pytest.mark.parametrize(("k", "d", "eps", "gamma"), [(4, 1, 1.0, 0.1), (5, 2, 2.0, 0.25), (4, 3, 1.0, 0.02)])
def test_dbitflip_report_epsilon_is_the_perturbed_transition_matrix_loss(k: int, d: int, eps: float,
                                                                       gamma: float) -> None:
    m = DBitFlip(k, d=d, epsilon=eps, gamma=gamma)
    plain = DBitFlip(k, d=d, epsilon=eps)
    assert m.epsilon_perm == plain.epsilon and m.epsilon < m.epsilon_perm
    assert m.gamma == math.floor(gamma * 2**32) / 2**32
    _, matrix = m.transition_matrix()
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-12)
    ratios = np.log(matrix[:, None, :] / matrix[None, :, :])
    assert ratios.max() == pytest.approx(m.epsilon, rel=1e-9)
    per_bit = _bit_epsilon(plain.epsilon / min(d, 2), float(m.gamma))
    assert m.epsilon == pytest.approx(min(d, 2) * per_bit, rel=1e-9)
    # lifetime: the memoized bits' epsilon, unchanged by the flips
    assert m.lifetime_epsilon(2) == 2 * m.epsilon_perm and m.lifetime_epsilon(99) == (d + 1) * m.epsilon_perm


@pytest.mark.parametrize("gamma", [0.05, 0.3])
def test_one_bit_mean_report_epsilon_and_distribution(gamma: float) -> None:
    m = OneBitMean(0, 10, epsilon=1.5, points=3, gamma=gamma)
    plain = OneBitMean(0, 10, epsilon=1.5, points=3)
    g = float(m.gamma)
    for value in (0.0, 2.0, 5.0, 7.5, 10.0):
        one = plain.report_distribution(value)[1][1]
        assert m.report_distribution(value)[1][1] == pytest.approx(g + (1 - 2 * g) * one, rel=1e-12)
    ends = np.array([m.report_distribution(v)[1] for v in (0.0, 10.0)])
    assert np.log(ends[1] / ends[0]).max() == pytest.approx(m.epsilon, rel=1e-9)
    assert m.epsilon == pytest.approx(_bit_epsilon(plain.epsilon, g), rel=1e-9)
    assert m.epsilon_perm == plain.epsilon and m.lifetime_epsilon(2) == 2 * plain.epsilon


@pytest.mark.parametrize("d", [1, 3])
def test_time_epsilon_is_the_largest_ratio_between_reports_of_two_memoized_vectors(d: int) -> None:
    m = DBitFlip(6, d=d, epsilon=1.0, gamma=0.1)
    g = float(m.gamma)
    vectors = list(itertools.product((0, 1), repeat=d))

    def report_probs(memo: tuple[int, ...]) -> np.ndarray:
        return np.array([math.prod(g if y != b else 1 - g for y, b in zip(ys, memo, strict=True)) for ys in vectors])

    worst = max(np.log(report_probs(a) / report_probs(b)).max() for a in vectors for b in vectors)
    assert m.time_epsilon == pytest.approx(worst, rel=1e-9) == pytest.approx(d * math.log((1 - g) / g))
    assert OneBitMean(0, 1, epsilon=1.0, gamma=0.1).time_epsilon == pytest.approx(math.log((1 - g) / g))
    assert math.isinf(DBitFlip(6, d=d, epsilon=1.0).time_epsilon)  # no perturbation: the change shows


def test_config_keeps_gamma_and_refuses_a_bad_one() -> None:
    m = DBitFlip(4, d=2, epsilon=1.0, gamma=0.125)
    config = m.to_config()
    assert config["params"]["flip_numerator"] == 2**29 and dn.from_config(config) == m
    assert "flip_numerator" not in DBitFlip(4, d=2, epsilon=1.0).to_config()["params"]  # old configs unchanged
    for bad in (-0.1, 0.5, 0.7, True, "0.1"):
        with pytest.raises(ValueError, match="gamma"):
            OneBitMean(0, 1, epsilon=1.0, gamma=bad)  # type: ignore[arg-type]
    bad_config = {**config, "params": {**config["params"], "flip_numerator": 2**31}}
    del bad_config["epsilon"]
    with pytest.raises(ValueError, match="flip_numerator"):
        dn.from_config(bad_config)


FLIPS = 8000  # the smallest round number at which the bands of gamma and 1.25 gamma are disjoint


@pytest.mark.stat
def test_kept_clients_flip_their_memoized_bits_at_rate_gamma() -> None:
    """Exact binomial bands (alpha 2.5e-7 each) on 8000 flips from the OS CSPRNG.

    Power: at n = 8000 the bands of gamma and 1.25 gamma (1418..1787 and
    1802..2202 for gamma 0.2) are disjoint, so a client flipping at 1.25 gamma
    fails the check with probability 1 - 1.4e-8. (At n = 4000 they overlapped,
    and asserting that the count missed the 1.25 gamma band failed a correct
    client 1.75% of the time.)
    """
    ob = OneBitMean(0, 100, epsilon=1.0, points=5, gamma=0.2)
    gamma = float(ob.gamma)
    assert coverage_band(FLIPS, gamma, ALPHA)[1] < coverage_band(FLIPS, 1.25 * gamma, ALPHA)[0]
    c = ob.client(secret=b"s" * 32)
    memo = c.bit(c.point(40.0))
    flips = sum(int(c.privatize(40.0)) != memo for _ in range(FLIPS))
    assert (res := proportion_check(flips, FLIPS, gamma, ALPHA, label="1BitMean")), res.message

    db = DBitFlip(8, d=4, epsilon=1.0, gamma=0.2)
    kept = db.client(secret=b"t" * 32)
    plain = DBitFlip(8, d=4, epsilon=1.0).client(secret=b"t" * 32)  # the same memoized bits, unperturbed
    memo_bits = plain.privatize(3)["bits"]
    reports = [kept.privatize(3) for _ in range(FLIPS // 4)]
    assert all(np.array_equal(r["buckets"], plain.buckets) for r in reports)
    flips = int(sum((r["bits"] != memo_bits).sum() for r in reports))
    assert float(db.gamma) == gamma
    assert (res := proportion_check(flips, FLIPS, gamma, ALPHA, label="dBitFlip")), res.message


@pytest.mark.stat
def test_perturbed_reports_are_decoded_without_bias() -> None:
    """Estimates of perturbed reports lie within z standard errors of the truth (alpha 2.5e-7 each,
    Bonferroni over categories); the unperturbed decoder's estimates of the same reports do not
    (they miss by 24 to 55 standard errors, against z = 5.4: a miss probability below 1e-100)."""
    rng = np.random.default_rng(20261123)
    n, truth = 200_000, np.array([0.5, 0.3, 0.15, 0.05])
    m = DBitFlip(4, d=2, epsilon=2.0, gamma=0.2)
    values = rng.choice(4, n, p=truth)
    reports = m.privatize_many(values, rng=rng)
    counts = np.bincount(values, minlength=4) / n
    est = m.estimate(reports, target="respondents")
    assert (res := estimate_check(est.frequencies, counts, est.std_errors, ALPHA)), res.message
    wrong = DBitFlip(4, d=2, epsilon=2.0).estimate(reports, target="respondents")
    assert not estimate_check(wrong.frequencies, counts, wrong.std_errors, ALPHA)

    ob = OneBitMean(0, 10, epsilon=1.0, points=3, gamma=0.15)
    xs = rng.uniform(0, 3, n)  # away from the middle, towards which the flips pull an undebiased mean
    mean = ob.estimate(ob.privatize_many(xs, rng=rng))
    assert (res := estimate_check(mean.mean, xs.mean(), mean.std_error, ALPHA)), res.message
    plain = OneBitMean(0, 10, epsilon=1.0, points=3)
    shrunk = plain.estimate(ob.privatize_many(xs, rng=rng))
    assert not estimate_check(shrunk.mean, xs.mean(), shrunk.std_error, ALPHA)  # 46 standard errors off


def test_a_rounds_survey_caps_a_perturbed_question_at_its_memoized_bits_epsilon() -> None:
    """deniable._accounting: per report the perturbed epsilon, for one value at most epsilon_perm."""
    from deniable._accounting import report_cost

    for m in (DBitFlip(5, d=2, epsilon=1.0, gamma=0.1), OneBitMean(0, 1, epsilon=1.0, points=3, gamma=0.1)):
        cost = report_cost(m)
        assert cost.per_report == m.epsilon < m.epsilon_perm
        assert cost.after(100) == pytest.approx(m.epsilon_perm)
