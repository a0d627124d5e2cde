"""The stated manipulation sensitivity of RAPPOR and DBitFlip equals the measured gain of the maximal-gain attack.

Setting: k = 8 candidates held with shares (0.3, 0.25, 0.2, 0.15, 0.1, 0, 0, 0)
by n = 10,000 genuine reports; the attacker's targets are the three nobody
holds (5, 6, 7), and its fakes are 5% of the reports (m = 526, beta =
m / (n + m)). RAPPOR: 16 bits, 2 hashes, 8 cohorts, epsilon_infinity = 4;
DBitFlip: d = 4 of k = 8 buckets at epsilon = 1. In each of R = 40 rounds the
targets' summed estimate from genuine and fake reports together is measured
(one round's SD: 0.048); its mean must be ``beta * target_gain``
(:meth:`deniable.Manipulation.gain` with ``f_T = 0``: 0.623 for RAPPOR,
0.762 for DBitFlip) within a Student t band at alpha 1e-7 (6.9 standard
errors, about 0.052).

DBitFlip's estimate is a mean of per-report terms, so the statement is exact.
RAPPOR's least-squares decode weights cohort ``j`` by ``N_j^2``; the attack
keeps its fakes evenly spread, so only the genuine cohorts' sampling
imbalance departs from the linear statement (over 150 rounds the mean was
0.6218 +- 0.0039 against the stated 0.6229).

Power (each at least 8 standard errors beyond the band: a miss below 1e-12):
a statement from the best cohort alone (fakes crowded there gain it only to
first order), 0.747 for RAPPOR; the pure-oracle formula
``(min(r, d) - r q*)/(p* - q*)`` that DBitFlip's support rates would give,
0.993; the random-item gain ``beta``, 0.05, for both.
"""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable import attacks, testing
from deniable.mechanisms._rappor_manipulation import contributions, report_extremes

pytestmark = pytest.mark.stat

K, N, BETA, R = 8, 10_000, 0.05, 40
SHARES = np.array([0.3, 0.25, 0.2, 0.15, 0.1, 0.0, 0.0, 0.0])
TARGETS = [5, 6, 7]
M_FAKE = round(BETA * N / (1 - BETA))
ALPHA = 1e-7


def _gains(mechanism: dn.FrequencyOracle, rng: np.random.Generator) -> np.ndarray:
    out = []
    for _ in range(R):
        genuine = mechanism.privatize_many(rng.choice(K, N, p=SHARES), rng=rng)
        fakes = attacks.maximal_gain(mechanism, TARGETS, M_FAKE, rng=rng)
        out.append(mechanism.estimate(np.concatenate([genuine, fakes])).frequencies[TARGETS].sum())
    return np.array(out)


def _wrong(mechanism: dn.FrequencyOracle) -> float:
    """The tempting wrong per-fake gain: RAPPOR's best cohort alone; DBitFlip's pure-oracle formula."""
    if isinstance(mechanism, dn.RAPPOR):
        weights = contributions(mechanism)[:, :, TARGETS].sum(axis=2)
        return float(report_extremes(mechanism, weights)[0].max())
    p, q = (float(x[0]) for x in mechanism.support_rates())
    return (min(len(TARGETS), mechanism.d) - len(TARGETS) * q) / (p - q)


@pytest.mark.parametrize(
    "mechanism",
    [dn.RAPPOR(K, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8), dn.DBitFlip(K, d=4, epsilon=1.0)],
    ids=lambda m: type(m).__name__,
)
def test_the_stated_gain_is_the_measured_shift(mechanism: dn.FrequencyOracle, rng: np.random.Generator) -> None:
    beta = M_FAKE / (N + M_FAKE)
    stated = mechanism.manipulation(TARGETS).gain(beta)
    assert stated == pytest.approx(attacks.expected_gain(mechanism, "maximal-gain", TARGETS, beta))
    gains = _gains(mechanism, rng)
    assert testing.mean_check(gains, stated, ALPHA / 3)
    assert not testing.mean_check(gains, beta * _wrong(mechanism), ALPHA / 3)  # power
    assert not testing.mean_check(gains, attacks.expected_gain(mechanism, "random-item", TARGETS, beta), ALPHA / 3)
