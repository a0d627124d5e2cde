"""Design-based intervals cover the finite population's value, by simulation from a fixed population.

The population (fixed seed): 4 strata of 80 clusters of 10 to 30 people, 6,400 or so in all,
each person a carrier or not with a prevalence that varies strongly between clusters (a
cluster effect of SD 1.2 on the logit) and between strata, and a covariate ``x``. A sample
draws ``n_h`` = 40, 20, 30, 16 clusters per stratum without replacement (sampling fractions
0.5, 0.25, 0.375, 0.2: weights 2, 4, 2.67, 5 and a finite population correction that matters)
and asks everyone in them through Warner's design (p = 0.75) on the device path (seeded).
The targets are the population's own: its share of carriers, and for the regression the
census parameter, the maximum of the expected pseudo-log-likelihood over the randomization
``sum_i sum_y P(y | T_i) log L_i(y; beta)`` over the whole population.

Tolerance. A Wald interval from 106 PSUs is only approximately at its nominal 95%, so the
checks accept any true coverage in [0.935, 0.97]: the hits must lie inside the binomial
band from the 1e-6 / 2 lower quantile of Binomial(R, 0.935) to the upper quantile of
Binomial(R, 0.97) (``_band``), so a correct implementation whose coverage is anywhere in
that range fails with probability below 1e-6 per check; Bonferroni over the file's checks.
Measured once (seed 1; binomial SEs in brackets): the prevalence interval covers 0.948
(0.0035) of 4,000 samples, the regression's intercept 0.961 and slope 0.944 (0.006) of
1,000. Power: the same prevalence samples analysed without the clusters (each person a PSU)
covered 0.874 and unweighted 0.558; each must fail. (Without the randomization's variance
that deniable adds under an fpc, as a survey package given the answers as data computes it,
the prevalence covered 0.927, too close to the band to be a power check at this size; the
unit tests check that term against its closed form.)
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest

import deniable.survey as sv
from deniable.survey._likelihood import ResponseLikelihood, maximize
from deniable.testing import bonferroni, coverage_band, z_for

CHECKS = 3 + 2  # the prevalence's and its two powers', the regression's two
ALPHA = bonferroni(1e-6, CHECKS)
LOW, HIGH = 0.935, 0.97
P = 0.75
DESIGN = sv.Warner(p=P)
SAMPLED = (40, 20, 30, 16)
CLUSTERS = 80


@cache
def population() -> pd.DataFrame:
    rng = np.random.default_rng(20261127)
    rows = []
    for h in range(4):
        for c in range(CLUSTERS):
            size = int(rng.integers(10, 31))
            effect = rng.normal(0, 1.2)
            x = rng.normal(0.4 * h - 0.6, 1.0, size)
            carrier = rng.random(size) < 1 / (1 + np.exp(-(-0.5 + 0.3 * h + 0.8 * x + effect)))
            rows.append(pd.DataFrame({"stratum": h, "cluster": c, "x": x, "carrier": carrier,
                                      "w": CLUSTERS / SAMPLED[h], "f": SAMPLED[h] / CLUSTERS}))
    return pd.concat(rows, ignore_index=True)


def draw(rng: np.random.Generator) -> pd.DataFrame:
    """A stratified cluster sample of the population with Warner answers."""
    pop = population()
    chosen = np.concatenate([h * CLUSTERS + rng.choice(CLUSTERS, SAMPLED[h], replace=False) for h in range(4)])
    sample = pop[np.isin(pop["stratum"] * CLUSTERS + pop["cluster"], chosen)].copy()
    sample["y"] = np.asarray(DESIGN.privatize_many(sample["carrier"].to_numpy(), rng=rng)).astype(int)
    return sample


def _band(replicates: int) -> tuple[int, int]:
    return coverage_band(replicates, LOW, ALPHA)[0], coverage_band(replicates, HIGH, ALPHA)[1]


def _census_beta() -> np.ndarray:
    """The census parameter: each person twice (answers 0 and 1) weighted by the answer's probability."""
    pop = population()
    t = pop["carrier"].to_numpy()
    x = np.column_stack([np.ones(len(pop)), pop["x"].to_numpy()])
    lik = ResponseLikelihood(DESIGN, np.repeat([0, 1], len(pop)), None, np.vstack([x, x]))
    p_yes = np.where(t, P, 1 - P)
    lik.weights = np.concatenate([1 - p_yes, p_yes])
    return np.asarray(maximize(lik, np.zeros(2)).params)


def _hits(values: np.ndarray, ses: np.ndarray, target: Any) -> np.ndarray:
    return np.sum(np.abs(values - target) <= z_for(0.05) * ses, axis=0)


@pytest.mark.stat
def test_prevalence_interval_covers_the_population_share(rng: np.random.Generator) -> None:
    truth = float(population()["carrier"].mean())
    replicates = 2000
    est, se, se_naive, unweighted = (np.empty(replicates) for _ in range(4))
    for r in range(replicates):
        s = draw(rng)
        fit = sv.prevalence("y", DESIGN, data=s, weights="w", strata="stratum", cluster="cluster", fpc="f")
        est[r], se[r] = fit.params["pi"], fit.bse["pi"]
        se_naive[r] = sv.prevalence("y", DESIGN, data=s, weights="w", strata="stratum", fpc="f").bse["pi"]
        plain = sv.prevalence(s["y"].to_numpy(), DESIGN)
        unweighted[r] = abs(plain.params["pi"] - truth) <= z_for(0.05) * plain.bse["pi"]
    low, high = _band(replicates)
    hits = int(_hits(est, se, truth))
    assert low <= hits <= high, f"{hits}/{replicates} covered {truth:.4f}; accepted {low}..{high}"
    for name, wrong in (("without clusters", int(_hits(est, se_naive, truth))),
                        ("unweighted", int(unweighted.sum()))):
        assert not low <= wrong <= high, f"no power {name}: {wrong}/{replicates} within {low}..{high}"


@pytest.mark.stat
@pytest.mark.slow
def test_logit_intervals_cover_the_census_parameter(rng: np.random.Generator) -> None:
    beta = _census_beta()
    replicates = 1000
    est, se = np.empty((replicates, 2)), np.empty((replicates, 2))
    for r in range(replicates):
        res = sv.logit("y ~ x", draw(rng), DESIGN, weights="w", strata="stratum", cluster="cluster", fpc="f")
        est[r], se[r] = res.params, res.bse
    low, high = _band(replicates)
    for j, hits in enumerate(_hits(est, se, beta)):
        assert low <= hits <= high, f"beta{j}: {hits}/{replicates} covered {beta[j]:.4f}; accepted {low}..{high}"
