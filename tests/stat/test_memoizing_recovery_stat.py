"""Recovery from the maximal-gain attack on the memoizing mechanisms DBitFlip and RAPPOR, calibrated.

Setting: k = 8 candidates held with shares (0.3, 0.25, 0.2, 0.15, 0.1, 0, 0, 0)
by N = 200,000 genuine reports; the attacker's targets are the three nobody
holds (5, 6, 7) and its fakes are 5% of the reports (m = 10,526, beta =
m / (N + m)). DBitFlip: d = 4 of the 8 buckets at epsilon = 1; RAPPOR: 16
bits, 2 hashes, 8 cohorts, epsilon_infinity = 4 (one report's epsilon 0.99).

:func:`deniable.recover` with :func:`deniable.attacks.fake_contribution`
and the true beta, without the projection, must put each target within
``c = z_{alpha/(2r)}`` standard errors (those of the poisoned estimate over
``1 - beta``) of its genuine share, alpha = 2.5e-7 per mechanism
(:func:`deniable.testing.estimate_check`: c = 5.36). The fakes add no
spread to the targets (DBitFlip's sample every target with bit 1, RAPPOR's
set fixed bits per cohort), so that band is the genuine reports' own. For
RAPPOR the decode is linear only with equal cohorts; the genuine cohorts'
imbalance (relative 0.6%) leaves a first-order error, which 60 rounds
measured at well under one standard error (the targets' z-scores had SD 0.8 to 1.0 for
both mechanisms).

The factor. Since ``poisoned - truth = beta (z - truth) + (1 - beta)
(recovered - truth)``, a recovered estimate inside the band makes the
targets' summed absolute error of the poisoned estimate at least
``beta z_T - (1 - beta) c S`` and that of the recovered one at most ``c S``
(``S`` the targets' summed standard errors): a factor of at least 6.2
(DBitFlip) and 4.2 (RAPPOR) at the model's standard errors. The test
asserts a factor of 3 or more, so it fails only when the band check fails:
at most 2.5e-7 per mechanism. Measured: the factor's median over 60
rounds was 48x (DBitFlip) and 44x (RAPPOR), its least 26x and 21x.

Power: the poisoned estimate is rejected by the same band (its targets are
39 and 25 to 31 standard errors away; a miss below 1e-12).
"""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable import attacks, testing

pytestmark = pytest.mark.stat

K, N, BETA = 8, 200_000, 0.05
SHARES = np.array([0.3, 0.25, 0.2, 0.15, 0.1, 0.0, 0.0, 0.0])
TARGETS = [5, 6, 7]
M_FAKE = round(BETA * N / (1 - BETA))
ALPHA = 2.5e-7


def _target_error(frequencies: np.ndarray, truth: np.ndarray) -> float:
    return float(np.abs(frequencies - truth)[TARGETS].sum())


@pytest.mark.parametrize(
    "mechanism",
    [dn.DBitFlip(K, d=4, epsilon=1.0), dn.RAPPOR(K, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=8)],
    ids=lambda m: type(m).__name__,
)
def test_recovery_puts_the_targets_back(mechanism: dn.FrequencyOracle, rng: np.random.Generator) -> None:
    values = rng.choice(K, N, p=SHARES)
    truth = np.bincount(values, minlength=K) / N
    reports = np.concatenate([mechanism.privatize_many(values, rng=rng),
                              attacks.maximal_gain(mechanism, TARGETS, M_FAKE, rng=rng)])
    poisoned = mechanism.estimate(reports, target="respondents")
    beta = M_FAKE / (N + M_FAKE)
    z = attacks.fake_contribution(mechanism, "maximal-gain", TARGETS)
    recovered = dn.recover(poisoned, fake_fraction=beta, contribution=z, project=False)
    se = recovered.std_errors[TARGETS]
    assert testing.estimate_check(recovered.frequencies[TARGETS], truth[TARGETS], se, ALPHA)
    assert not testing.estimate_check(poisoned.frequencies[TARGETS], truth[TARGETS], se, ALPHA)  # power
    factor = _target_error(poisoned.frequencies, truth) / _target_error(recovered.frequencies, truth)
    assert factor >= 3.0
