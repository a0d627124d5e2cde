"""A regression on a randomized predictor from a complex sample: the design-based intervals cover the census value.

The population is that of ``test_complex_coverage`` (4 strata of 80 clusters, a strong cluster
effect on who is a carrier). Each person also has a plain 0/1 outcome ``o`` (fixed seed) with
``P(o = 1) = logistic(-0.3 + 0.5 x + 1.0 carrier + c)``, ``c`` a cluster effect of SD 0.8. A
sample draws 60 of the 80 clusters in each stratum without replacement (weight 4/3, sampling
fraction f = 0.75: an fpc that matters) and asks everyone in them through Warner's design
(p = 0.75) on the device path (seeded); about 4,900 respondents in 240 PSUs. The fit is
``logit("o ~ x + y", rr_predictors={"y": Warner})`` (the carrier's answer as the predictor,
the carriers' model ``logit P(carrier | x)``) with weights, strata, clusters and fpc. The target
is the census parameter: the maximum over the whole population of the expected
pseudo-log-likelihood over the randomization, ``sum_i sum_y P(y | T_i) log L_i(y)``.

Tolerance: as in ``test_complex_coverage``, any true coverage in [0.935, 0.97] is accepted
(the binomial band from the alpha / 2 lower quantile of Binomial(R, 0.935) to the upper of
Binomial(R, 0.97)), alpha = 1e-6 Bonferroni over the file's 5 + 1 checks, so a correct
implementation fails with probability below 1e-6. Power: the fpc applied to the whole
variance, the randomization's share too (what a survey package given the answers as data
computes: here ``sqrt(1 - f)`` times the SE without fpc), must fail. Measured once (seed 1,
R = 500, binomial SE 0.01): the five parameters (the outcome's intercept, x and truth, the
carriers' intercept and x) covered 0.948, 0.950, 0.944, 0.950, 0.940; with the fpc on the whole
variance 0.780, 0.854, 0.722, 0.784, 0.684 (the power check takes the truth's coefficient,
0.722, against an accepted 0.870 and up); without the fpc, conservative, 0.970 to 1.000. About
6 minutes of CPU on a loaded 2-core machine, so marked slow.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest
from test_complex_coverage import CLUSTERS, HIGH, LOW, P, population

import deniable.survey as sv
from deniable.survey._likelihood import maximize
from deniable.survey._predictor_likelihood import PredictorLikelihood
from deniable.testing import bonferroni, coverage_band, z_for

ALPHA = bonferroni(1e-6, 5 + 1)
DESIGN = sv.Warner(p=P)
SAMPLE = {"weights": "w", "strata": "stratum", "cluster": "cluster", "fpc": "f"}
SAMPLED = 60  # clusters of the 80 in each stratum
FRACTION = SAMPLED / CLUSTERS


@cache
def outcomes() -> np.ndarray:
    """The population's plain outcome ``o`` (module docstring)."""
    pop = population()
    rng = np.random.default_rng(20261128)
    effect = rng.normal(0, 0.8, (4, int(pop["cluster"].max()) + 1))[pop["stratum"], pop["cluster"]]
    eta = -0.3 + 0.5 * pop["x"].to_numpy() + 1.0 * pop["carrier"].to_numpy() + effect
    return (rng.random(len(pop)) < 1 / (1 + np.exp(-eta))).astype(np.float64)


def sample(rng: np.random.Generator) -> pd.DataFrame:
    """A stratified cluster sample of the population with Warner answers about being a carrier."""
    pop = population()
    chosen = np.concatenate([h * CLUSTERS + rng.choice(CLUSTERS, SAMPLED, replace=False) for h in range(4)])
    s = pop[np.isin(pop["stratum"] * CLUSTERS + pop["cluster"], chosen)]
    s = s.assign(y=np.asarray(DESIGN.privatize_many(s["carrier"].to_numpy(), rng=rng)).astype(int))
    return s.assign(o=outcomes()[s.index], w=1 / FRACTION, f=FRACTION)


def census() -> np.ndarray:
    """Each person twice (answers 0 and 1), weighted by the answer's probability given the truth."""
    pop = population()
    n = len(pop)
    x = np.column_stack([np.ones(n), pop["x"].to_numpy(), np.zeros(n)])
    answers = np.repeat([0, 1], n)
    lik = PredictorLikelihood("logit", np.tile(outcomes(), 2), np.vstack([x, x]), [2], np.vstack([x, x])[:, :2],
                              [(DESIGN, answers, None)])
    p_yes = np.where(pop["carrier"].to_numpy(), P, 1 - P)
    lik.weights = np.concatenate([1 - p_yes, p_yes])
    return np.asarray(maximize(lik, np.zeros(lik.k_params)).params)


@pytest.mark.stat
@pytest.mark.slow
def test_rr_predictor_intervals_cover_the_census_parameter(rng: np.random.Generator) -> None:
    truth = census()
    replicates = 500
    est, se, se_naive = (np.empty((replicates, 5)) for _ in range(3))
    for r in range(replicates):
        s = sample(rng)
        res = sv.logit("o ~ x + y", s, None, rr_predictors={"y": DESIGN}, **SAMPLE)
        est[r], se[r] = res.params, res.bse
        without = sv.logit("o ~ x + y", s, None, rr_predictors={"y": DESIGN}, weights="w", strata="stratum",
                           cluster="cluster")
        se_naive[r] = np.sqrt(1 - FRACTION) * without.bse
    low, high = coverage_band(replicates, LOW, ALPHA)[0], coverage_band(replicates, HIGH, ALPHA)[1]
    hits = np.sum(np.abs(est - truth) <= z_for(0.05) * se, axis=0)
    for j, h in enumerate(hits):
        assert low <= h <= high, f"parameter {j}: {h}/{replicates} covered {truth[j]:.4f}; accepted {low}..{high}"
    wrong = int(np.sum(np.abs(est[:, 2] - truth[2]) <= z_for(0.05) * se_naive[:, 2]))
    assert not low <= wrong <= high, f"no power, the fpc on the whole variance: {wrong}/{replicates} in {low}..{high}"
