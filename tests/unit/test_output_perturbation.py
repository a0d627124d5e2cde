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
where a generator is given; the clients' flips come from the OS CSPRNG.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable.mechanisms._telemetry import DBitFlip, OneBitMean

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


def _flip_band(n: int, gamma: float) -> tuple[int, int]:
    return int(stats.binom.ppf(ALPHA / 2, n, gamma)), int(stats.binom.isf(ALPHA / 2, n, gamma))


def test_kept_clients_flip_their_memoized_bits_at_rate_gamma() -> None:
    """Exact binomial bands (alpha 2.5e-7 each); the band of 1.25 gamma rejects the count (power)."""
    n = 4000
    ob = OneBitMean(0, 100, epsilon=1.0, points=5, gamma=0.2)
    c = ob.client(secret=b"s" * 32)
    memo = c.bit(c.point(40.0))
    flips = sum(int(c.privatize(40.0)) != memo for _ in range(n))
    low, high = _flip_band(n, float(ob.gamma))
    assert low <= flips <= high
    w_low, w_high = _flip_band(n, 1.25 * float(ob.gamma))
    assert not w_low <= flips <= w_high

    db = DBitFlip(8, d=4, epsilon=1.0, gamma=0.2)
    kept = db.client(secret=b"t" * 32)
    plain = DBitFlip(8, d=4, epsilon=1.0).client(secret=b"t" * 32)  # the same memoized bits, unperturbed
    memo_bits = plain.privatize(3)["bits"]
    reports = [kept.privatize(3) for _ in range(n // 4)]
    assert all(np.array_equal(r["buckets"], plain.buckets) for r in reports)
    flips = int(sum((r["bits"] != memo_bits).sum() for r in reports))
    low, high = _flip_band(n, float(db.gamma))
    assert low <= flips <= high
    w_low, w_high = _flip_band(n, 1.25 * float(db.gamma))
    assert not w_low <= flips <= w_high


def test_perturbed_reports_are_decoded_without_bias() -> None:
    """Estimates of perturbed reports lie within z standard errors of the truth (alpha 2.5e-7 each,
    Bonferroni over categories); the unperturbed decoder's estimates of the same reports do not."""
    rng = np.random.default_rng(20261123)
    n, truth = 200_000, np.array([0.5, 0.3, 0.15, 0.05])
    m = DBitFlip(4, d=2, epsilon=2.0, gamma=0.2)
    values = rng.choice(4, n, p=truth)
    reports = m.privatize_many(values, rng=rng)
    counts = np.bincount(values, minlength=4) / n
    est = m.estimate(reports, target="respondents")
    z = stats.norm.isf(ALPHA / (2 * 4))
    assert np.all(np.abs(est.frequencies - counts) <= z * est.std_errors)
    wrong = DBitFlip(4, d=2, epsilon=2.0).estimate(reports, target="respondents")
    assert np.any(np.abs(wrong.frequencies - counts) > z * wrong.std_errors)

    ob = OneBitMean(0, 10, epsilon=1.0, points=3, gamma=0.15)
    xs = rng.uniform(0, 3, n)  # away from the middle, towards which the flips pull an undebiased mean
    mean = ob.estimate(ob.privatize_many(xs, rng=rng))
    z1 = stats.norm.isf(ALPHA / 2)
    assert abs(mean.mean - xs.mean()) <= z1 * mean.std_error
    plain = OneBitMean(0, 10, epsilon=1.0, points=3)
    shrunk = plain.estimate(ob.privatize_many(xs, rng=rng))
    assert abs(shrunk.mean - xs.mean()) > z1 * shrunk.std_error


def test_a_rounds_survey_caps_a_perturbed_question_at_its_memoized_bits_epsilon() -> None:
    """deniable._accounting: per report the perturbed epsilon, for one value at most epsilon_perm."""
    from deniable._accounting import report_cost

    for m in (DBitFlip(5, d=2, epsilon=1.0, gamma=0.1), OneBitMean(0, 1, epsilon=1.0, points=3, gamma=0.1)):
        cost = report_cost(m)
        assert cost.per_report == m.epsilon < m.epsilon_perm
        assert cost.after(100) == pytest.approx(m.epsilon_perm)
