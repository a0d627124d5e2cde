"""Layers B and D for the numeric mechanisms: samplers, estimators, intervals.

* Samplers (Layer B): reports drawn through the seeded batch path, the
  secure default (``rng=None``) and the one-report device path are compared
  with the exact law ``report_distribution(value)`` by a discrete KS test
  (``deniable.testing.ks_gof_discrete``; critical value
  ``scipy.stats.kstwo(n).isf(alpha)``, conservative for a discrete law).
  Power: a mechanism with epsilon 20% too large fails against the claimed law.
* Estimators (Layer D): R replicate surveys of a fixed population (values
  spread over and beyond the range, so clamping is exercised); the mean of
  the estimates matches the clamped population mean, their variance matches
  ``variance``, and 95% intervals (formula and sample) cover at the nominal
  rate (binomial band). Power: variance formula off by 1.6x and 85%
  intervals sold as 95% both fail.

Alpha: every test function spends at most 1e-6 in total (Bonferroni over
its checks); the power checks use fixed seeds and fail with overwhelming
margins (noted inline).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numeric_cases import ALL, HIGH, LOW, clamp

import deniable as dn
from deniable import testing
from deniable._randomness import below, randomized_round, resolve
from deniable.mechanisms._numeric.alias import AliasTable

pytestmark = pytest.mark.stat

ALPHA = 1e-6
N_BATCH = 20_000
N_SINGLE = 1_500
KS_VALUES = [LOW, 30.0, HIGH]


def _ks(m, value, samples, alpha, label):
    support, probs = m.report_distribution(value)
    return testing.ks_gof_discrete(samples, support, probs, alpha, label=label)


@pytest.mark.parametrize("name", list(ALL))
def test_sampler_matches_its_exact_law(name: str, rng: np.random.Generator) -> None:
    """9 KS checks (3 values x batch/secure/single) at alpha/9 each."""
    m = ALL[name](1.0)
    alpha = ALPHA / (3 * len(KS_VALUES))
    for value in KS_VALUES:
        batch = m.privatize_many(np.full(N_BATCH, value), rng=rng)
        secure = m.privatize_many(np.full(N_BATCH, value))
        single = [m.privatize(value) for _ in range(N_SINGLE)]
        for path, samples in (("batch", batch), ("secure", secure), ("single", single)):
            result = _ks(m, value, samples, alpha, f"{name} value={value} {path}")
            assert result.passed, str(result)


@pytest.mark.parametrize("name", list(ALL))
def test_sampler_check_has_power(name: str, rng: np.random.Generator) -> None:
    """Reports of epsilon x 1.2 are rejected at the endpoint: the exact laws differ by D = 0.034
    (Laplace) to 0.73 (Duchi); in 4 x N_BATCH reports the critical value is 0.010, so the sample's
    D stays below it with probability below 1e-60 (Laplace: 17.6 standard deviations of the
    empirical cdf; in N_BATCH reports, 5, a miss of 3e-7)."""
    m, wrong = ALL[name](1.0), ALL[name](1.2)
    samples = wrong.privatize_many(np.full(4 * N_BATCH, LOW), rng=rng)
    result = _ks(m, LOW, samples, ALPHA / 9, f"{name} with epsilon x 1.2")
    assert not result.passed, str(result)


def test_duplicated_samples_are_caught(rng: np.random.Generator) -> None:
    """Tumult's correlation check: 200x-duplicated reports fail the same test."""
    m = dn.Laplace(LOW, HIGH, epsilon=1.0)
    few = m.privatize_many(np.full(N_BATCH // 200, 30.0), rng=rng)
    result = _ks(m, 30.0, np.repeat(few, 200), ALPHA, "duplicated")
    assert not result.passed, str(result)


# ------------------------------------------------------------ primitives
def test_below_and_alias_are_exact(rng: np.random.Generator) -> None:
    """Byte-lazy and full-width comparisons, alias table, random rounding (8 checks, alpha/8)."""
    assert not below(np.full(1000, 0, dtype=np.uint64), resolve(rng)).any()
    source = resolve(rng)
    alpha = ALPHA / 8
    n = 200_000
    # thresholds with many low bytes set or clear, so lanes run through the tie rounds
    for t in (0x8000_0000_0000_0001, 0x0000_FF00_0000_0000, 0xFFFF_FFFF_0000_0000):
        for lazy in (True, False):
            hits = int(below(np.full(n, t, dtype=np.uint64), source, lazy).sum())
            r = testing.proportion_check(hits, n, t / 2**64, alpha, label=f"T={t:#x} lazy={lazy}")
            assert r.passed, str(r)
    weights = [1 << 62, 1 << 63, (1 << 62) - 12345, 12345]
    table = AliasTable(weights, column_bits=3)
    draws = table.sample(n, source)
    r = testing.chi_square_gof(np.bincount(draws, minlength=4), np.array(weights) / 2**64, alpha)
    assert r.passed, str(r)
    x = np.full(n, 7.3)
    rounded = randomized_round(x, source)
    assert set(np.unique(rounded)) == {7, 8}
    r = testing.proportion_check(int((rounded == 8).sum()), n, 0.3, alpha, label="round 7.3")
    assert r.passed, str(r)


# ------------------------------------------------------------- estimators
R = 2000
N_POP = 200
POPULATION = np.linspace(LOW - 10.0, HIGH + 10.0, N_POP)
TRUTH = float(np.mean([clamp(v) for v in POPULATION]))
MIDDLE = 30.0  # also the mean of clamp(X) for X uniform on [LOW - 10, HIGH + 10]


def _estimates(m, values, rng, target="respondents"):
    reports = m.privatize_many(values.ravel(), rng=rng)
    return [m.estimate(row, target=target) for row in reports.reshape(values.shape)]


def _builders():
    return {
        **{k: v for k, v in ALL.items() if k != "SquareWave"},
        "SquareWave": lambda e: dn.SquareWave(LOW, HIGH, epsilon=e, bins=None),
    }


def _hits(estimates, truth, level):
    return sum(lo <= truth <= hi for lo, hi in (e.ci(level) for e in estimates))


@pytest.mark.parametrize("eps", [0.5, 2.0])
@pytest.mark.parametrize("name", list(ALL))
def test_mean_is_unbiased_variance_matches_and_intervals_cover(
    name: str, eps: float, rng: np.random.Generator
) -> None:
    """Six checks at alpha/6 over three designs of R replicate surveys of 200 respondents.

    * fixed spread population: mean and variance against the formula; the
      ``target="respondents"`` (formula) interval covers at least the nominal
      rate (it may be conservative: for Duchi the reports carry no
      information on the spread of the values, and the formula uses its
      upper bound);
    * every respondent at 30 (the formula is then exact): the respondents'
      interval coverage within the two-sided binomial band;
    * a new sample of respondents drawn each time from U[low - 10, high + 10]
      (the population the default target aims at): the
      ``target="population"`` (sample-error) interval coverage within the band.
    """
    m = _builders()[name](eps)
    alpha = ALPHA / 6
    spread = _estimates(m, np.tile(POPULATION, (R, 1)), rng)
    means = np.array([e.mean for e in spread])
    variance = float(np.mean([m.variance(1, v) for v in POPULATION])) / N_POP
    r = testing.mean_check(means, TRUTH, alpha, sd=math.sqrt(variance), label=name)
    assert r.passed, str(r)
    r = testing.variance_ratio_check(means, variance, alpha, label=name)
    assert r.passed, str(r)
    low, _ = testing.coverage_band(R, 0.95, alpha)
    assert _hits(spread, TRUTH, 0.95) >= low, f"{name}: formula interval under-covers"

    constant = _estimates(m, np.full((R, N_POP), MIDDLE), rng)
    r = testing.coverage_check(_hits(constant, MIDDLE, 0.95), R, 0.95, alpha, label=f"{name} formula")
    assert r.passed, str(r)
    drawn = _estimates(m, rng.uniform(LOW - 10.0, HIGH + 10.0, (R // 2, N_POP)), rng, "population")
    assert all(e.target == "population" and e.std_error == e.sample_std_error for e in drawn)
    r = testing.coverage_check(_hits(drawn, MIDDLE, 0.95), R // 2, 0.95, alpha, label=f"{name} population")
    assert r.passed, str(r)

    # Power (same replicates): a formula off by 1.6x, and 85% intervals sold as 95%. The ratio's
    # band ends near 0.84 and 1.19, 8 and 11 of its standard deviations (0.0316 x ratio) from 1.6
    # and 1 / 1.6; 85% intervals cover 1700 +- 16 times, the band starts near 1848: misses below
    # 1e-15. (Off by 1.4x and 90% sold as 95%, the misses were 1e-6 and 2e-4 per case.)
    assert not testing.variance_ratio_check(means, 1.6 * variance, alpha).passed
    assert not testing.variance_ratio_check(means, variance / 1.6, alpha).passed
    assert not testing.coverage_check(_hits(constant, MIDDLE, 0.85), R, 0.95, alpha).passed


def test_the_seed_two_level_gaussian_mean() -> None:
    """The seed's numbers: 10**6 draws of N(42, 10), Gaussian noise added twice (sigma 1, 1).

    Read as standard deviation 10 (the harder reading), the estimate's
    standard deviation is sqrt(100 + 1 + 1) / 1000 = 0.0101, so 0.05 is 4.95
    of them: a correct implementation fails with probability 7e-7 < 1e-6.
    With variance 10 it is 14 of them.
    """
    from deniable.mechanisms._numeric import two_level_gaussian_mean

    for sd in (10.0, math.sqrt(10.0)):
        values = np.random.default_rng(42).normal(42.0, sd, 1_000_000)
        est = two_level_gaussian_mean(values, -60.0, 140.0, sigma1=1.0, sigma2=1.0, rng=7,
                                      target="respondents")
        assert abs(est.mean - 42.0) < 0.05, est
        assert est.n == 1_000_000
        assert est.sample_std_error == pytest.approx(math.sqrt(sd**2 + 2) / 1000, rel=0.01)
        # fixed-population error: the two noises only
        assert est.std_error == pytest.approx(math.sqrt(2) / 1000, rel=0.01)
        # the default target, the population: the values' spread counts too
        pop = two_level_gaussian_mean(values, -60.0, 140.0, sigma1=1.0, sigma2=1.0, rng=7)
        assert pop.target == "population"
        assert pop.std_error == pop.sample_std_error == pytest.approx(math.sqrt(sd**2 + 2) / 1000, rel=0.01)
    with pytest.raises(ValueError, match="sigma1 and sigma2 must be positive"):
        two_level_gaussian_mean([1.0, 2.0], 0, 1, sigma1=0.0)
    with pytest.raises(ValueError, match="finite numbers; got nan at index 0"):
        two_level_gaussian_mean([float("nan"), 2.0], 0, 1)


@pytest.mark.slow
def test_ems_recovers_a_bimodal_distribution(rng: np.random.Generator) -> None:
    """SquareWave + EMS on 1024 bins, n = 10**5, epsilon = 2.

    Truth: half N(25, 6), half N(65, 9) on [0, 100]. The Wasserstein-1
    distance between the EMS histogram and the respondents' empirical
    distribution, in units of the range, was 0.0024-0.0038 over six pilot
    seeds; the bound 0.012 is three times the worst. Power: the normal with
    the same mean and variance (a unimodal answer) is at 0.057.
    """
    from scipy import stats

    n = 100_000
    values = np.where(rng.random(n) < 0.5, rng.normal(25, 6, n), rng.normal(65, 9, n))
    m = dn.SquareWave(0, 100, epsilon=2.0, bins=1024)
    est = m.estimate(m.privatize_many(values, rng=rng))
    h = est.histogram
    assert h is not None and h.method == "ems" and h.converged
    grid = np.linspace(0, 100, 20_001)
    empirical = np.searchsorted(np.sort(np.clip(values, 0, 100)), grid, side="right") / n
    w1 = float(np.trapezoid(np.abs(h.cdf(grid) - empirical), grid)) / 100
    assert w1 < 0.012, w1
    unimodal = stats.norm.cdf(grid, values.mean(), values.std())
    assert float(np.trapezoid(np.abs(unimodal - empirical), grid)) / 100 > 0.012
    # the two modes are where they should be
    centers = h.centers
    assert abs(centers[np.argmax(np.where(centers < 45, h.probabilities, 0))] - 25) < 4
    assert abs(centers[np.argmax(np.where(centers > 45, h.probabilities, 0))] - 65) < 6
    assert abs(est.mean - values.mean()) < 5 * est.sample_std_error


def test_discrete_ks_helper_is_conservative_and_has_power(rng: np.random.Generator) -> None:
    """``testing.ks_gof_discrete`` on a 5-atom law: R = 200 tests at nominal 5%.

    A correct sampler is rejected at most 5% of the time (conservative for a
    discrete law); the count is checked against the binomial(200, 0.05)
    upper 1e-6 quantile (the one assertion that can fail a correct helper, at 1e-6).
    Power: a law with 0.05 of mass moved between atoms is rejected in most of the
    200 tests at n = 2000 (398 of 400 in a pilot; fewer than 101 has probability
    below 1e-100). The 400 checks are data, not assertions (hidden from recording).
    """
    from scipy import stats

    support = np.array([0.0, 1.0, 2.5, 3.0, 7.0])
    probs = np.array([0.1, 0.3, 0.2, 0.25, 0.15])
    wrong = probs + np.array([0.05, -0.05, 0, 0, 0])
    reps, n = 200, 2000
    upper = int(stats.binom.isf(ALPHA, reps, 0.05))
    with testing.recording(hide=True):
        rejected = sum(
            not testing.ks_gof_discrete(rng.choice(support, n, p=probs), support, probs, 0.05).passed
            for _ in range(reps)
        )
        caught = sum(
            not testing.ks_gof_discrete(rng.choice(support, n, p=wrong), support, probs, 0.05).passed
            for _ in range(reps)
        )
        point_mass = testing.ks_gof_discrete(np.full(50, 3.0), [3.0], [1.0], ALPHA)
    assert rejected <= upper
    assert caught > reps // 2
    # a point mass matched exactly has D = 0 (the continuous formula would give D = 1)
    assert point_mass.statistic == 0.0
