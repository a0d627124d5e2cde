"""The maximum-likelihood estimate (deniable._mle): its MSE and its bootstrap standard errors.

Replicates are surveys of a fixed population drawn with the mechanism's exact
joint sampler of support counts (``m.simulate_support_counts``).

* MSE: on skewed data at small n the MLE's total squared error is below
  Norm-Sub's. Criterion: the paired difference ``|f_mle - f|^2 - |f_ns - f|^2``
  over R = 1000 replicates has a one-sided upper ``1 - alpha`` bound
  (normal, ``mean + z sd / sqrt(R)``) below 0. Power: the unprojected unbiased
  estimate passed off as the MLE must fail the same criterion.
* Bootstrap SE: at an interior truth the bootstrap variance (averaged over the
  first 20 replicates' fits, 400 bootstrap draws each) must match the
  variance of the MLE over R = 2000 replicates (``variance_ratio_check``).
  Power: the bootstrap of an analyst who believes the mechanism ran at 1.5 x
  epsilon must fail it.

Alpha: 1e-6 for the file, Bonferroni over its 10 checks (power checks included).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import deniable as dn
from deniable import _consistency as consistency
from deniable import _mle as mle
from deniable.testing import bonferroni, variance_ratio_check, z_for

ALPHA = bonferroni(1e-6, 10)
SKEWED = np.array([0.45, 0.25, 0.12, 0.08, 0.05, 0.03, 0.02, 0.0])
INTERIOR = np.array([0.4, 0.3, 0.2, 0.1])


def fixed_counts(freqs: np.ndarray, n: int) -> np.ndarray:
    counts = np.round(freqs * n).astype(np.int64)
    counts[0] += n - counts.sum()
    return counts


def replicate_counts(m: dn.FrequencyOracle, counts: np.ndarray, r: int, rng: np.random.Generator) -> np.ndarray:
    sims = [m.simulate_support_counts(counts, rng) for _ in range(r)]
    assert all(s is not None for s in sims)
    return np.array(sims, dtype=float)


def paired_upper_bound(diff: np.ndarray) -> float:
    return float(diff.mean() + z_for(ALPHA, two_sided=False) * diff.std(ddof=1) / np.sqrt(diff.size))


@pytest.mark.parametrize("mechanism", [dn.GRR, dn.OUE])
def test_mle_mse_is_below_norm_sub_on_skewed_small_n(mechanism, rng: np.random.Generator) -> None:
    n, r = 150, 1000
    m = mechanism(list(range(SKEWED.size)), epsilon=1.0)
    counts = fixed_counts(SKEWED, n)
    truth = counts / n
    sims = replicate_counts(m, counts, r, rng)
    p, q = m.support_rates()
    unbiased = (sims / n - q) / (p - q)
    norm_sub = np.array([consistency.norm_sub(u) for u in unbiased])
    ml = mle.solve(sims, p, q)
    assert np.all(ml >= 0) and np.allclose(ml.sum(axis=1), 1, rtol=0, atol=1e-12)

    def sq(x: np.ndarray) -> np.ndarray:
        return ((x - truth) ** 2).sum(axis=1)

    bound = paired_upper_bound(sq(ml) - sq(norm_sub))
    assert bound < 0, f"{m.name}: MSE(mle) - MSE(norm-sub) upper bound {bound:.3g}"
    # power: the raw unbiased estimate is not better than Norm-Sub
    assert paired_upper_bound(sq(unbiased) - sq(norm_sub)) >= 0


@pytest.mark.parametrize("mechanism", [dn.GRR, dn.OUE])
def test_bootstrap_standard_errors_match_the_replicate_spread(mechanism, rng: np.random.Generator) -> None:
    n, r, fitted = 2000, 2000, 20
    m = mechanism(list(range(INTERIOR.size)), epsilon=1.0)
    counts = fixed_counts(INTERIOR, n)
    sims = replicate_counts(m, counts, r, rng)
    p, q = m.support_rates()
    ml = mle.solve(sims, p, q)
    wrong = mechanism(list(range(INTERIOR.size)), epsilon=1.5)
    variances, wrong_variances = [], []
    for row in sims[:fitted]:
        est = m.estimate_from(dn.SupportCounts(m.fingerprint, row.astype(np.int64), n), target="respondents")
        variances.append(mle.fit(est, bootstrap=400, seed=rng).std_errors ** 2)
        believed = replace(est, p_star=wrong.support_rates()[0], q_star=wrong.support_rates()[1])
        wrong_variances.append(mle.fit(believed, bootstrap=400, seed=rng).std_errors ** 2)
    check = variance_ratio_check(ml, np.mean(variances, axis=0), ALPHA, label=m.name)
    assert check, str(check)
    power = variance_ratio_check(ml, np.mean(wrong_variances, axis=0), ALPHA, label=f"{m.name} at 1.5 x epsilon")
    assert not power, str(power)


def test_population_bootstrap_matches_the_spread_of_fresh_samples(rng: np.random.Generator) -> None:
    """Target population: each replicate samples new respondents (Multinomial(n, f)) before randomizing.

    Power: the respondents-target bootstrap (no sampling term) must fail the same check.
    """
    n, r, fitted = 2000, 2000, 20
    m = dn.GRR(list(range(INTERIOR.size)), epsilon=3.0)  # sampling is a large share of the error
    sims = np.array(
        [m.simulate_support_counts(rng.multinomial(n, INTERIOR), rng) for _ in range(r)], dtype=float
    )
    p, q = m.support_rates()
    ml = mle.solve(sims, p, q)
    pop, resp = [], []
    for row in sims[:fitted]:
        stat = dn.SupportCounts(m.fingerprint, row.astype(np.int64), n)
        pop.append(mle.fit(m.estimate_from(stat, target="population"), bootstrap=400, seed=rng).std_errors ** 2)
        resp.append(mle.fit(m.estimate_from(stat, target="respondents"), bootstrap=400, seed=rng).std_errors ** 2)
    check = variance_ratio_check(ml, np.mean(pop, axis=0), ALPHA, label="population")
    assert check, str(check)
    power = variance_ratio_check(ml, np.mean(resp, axis=0), ALPHA, label="respondents bootstrap for a population")
    assert not power, str(power)
