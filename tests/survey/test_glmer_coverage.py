"""Simulation: ``dn.survey.glmer`` recovers the truth of randomized answers and its Wald intervals cover it.

Respondents nested in schools, the true state ``Bernoulli(logistic(-0.6 +
0.8 x + b_school))`` with ``b_school ~ N(0, 0.8^2)`` (and a random slope in
one case), the answers drawn by the design's own device
(``privatize_many``, seeded).

* Recovery (one large sample per design): each fixed effect and lme4's
  ``theta`` (the SD) lies within ``z se`` of the truth, ``z`` for
  ``alpha = 1e-6`` split over the file's assertions; the Laplace
  approximation's error and the ML variance's O(1/J) bias (about 1% of the
  SD at 100 schools, 0.1 se) are far inside. Power: the same answers
  analysed with a misspecified design (Warner's ``p`` 0.65 for 0.8, forced
  answers 0.25 and 0.3 for 0.1 and 0.15, Kuk's decks 0.6 and 0.4 for 0.7
  and 0.3 with three cards, an answer of four values) move the slope by 7.5
  to 13 of the correct fit's se (seeds 1 to 3), so the check with those se
  fails.
* Coverage (40 replicates of 24 schools of 18, about 7 s of CPU, so also
  marked slow): the share
  of 95% intervals covering the slope is inside the two-sided binomial
  band at the same alpha (a coarse band at this size: it catches SEs off
  by a factor of about 2), and the mean estimate is unbiased
  (``mean_check``, resolution about 0.9 se).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable.testing import bonferroni, coverage_check, mean_check, z_for

ALPHA = bonferroni(1e-6, 5)  # recovery for three designs, the random slope, the coverage family
BETA = np.array([-0.6, 0.8])
SD = 0.8


def simulate(design: Any, schools: int, size: int, rng: np.random.Generator, slope_sd: float = 0.0
             ) -> pd.DataFrame:
    school = np.repeat(np.arange(schools), size)
    x = rng.normal(size=school.size)
    b0, b1 = rng.normal(0, SD, schools), rng.normal(0, slope_sd, schools)
    eta = BETA[0] + BETA[1] * x + b0[school] + b1[school] * x
    truth = rng.random(school.size) < 1 / (1 + np.exp(-eta))
    return pd.DataFrame({"y": design.privatize_many(truth, rng=rng).astype(int), "x": x, "school": school})


def recovered(res: Any, truth: np.ndarray, alpha: float, by: Any = None) -> bool:
    """Whether every fixed effect and ``theta`` lies within ``z se`` of the truth (the SEs of ``by`` if given)."""
    by = res if by is None else by
    estimates = np.concatenate([res.params.to_numpy(), res.theta])
    se = np.concatenate([by.bse.to_numpy(), by.theta_bse])
    return bool(np.all(np.abs(estimates - truth) <= z_for(alpha / len(truth)) * se))


@pytest.mark.stat
@pytest.mark.parametrize(("design", "wrong"), [(dn.survey.Warner(p=0.8), dn.survey.Warner(p=0.65)),
                                                (dn.survey.design("FR", p=[0.1, 0.15]),
                                                 dn.survey.design("FR", p=[0.25, 0.3])),
                                                (dn.survey.Kuk(p=[0.7, 0.3], cards=3),
                                                 dn.survey.Kuk(p=[0.6, 0.4], cards=3))],
                         ids=["Warner", "FR", "Kuk3"])
def test_recovers_simulated_truth(design: Any, wrong: Any, rng: np.random.Generator) -> None:
    df = simulate(design, 100, 25, rng)
    res = dn.survey.glmer("y ~ x + (1 | school)", df, design=design)
    assert recovered(res, np.array([*BETA, SD]), ALPHA), (res.params, res.bse, res.theta, res.theta_bse)
    misspecified = dn.survey.glmer("y ~ x + (1 | school)", df, design=wrong)
    assert not recovered(misspecified, np.array([*BETA, SD]), ALPHA, by=res), "no power against a wrong design"


@pytest.mark.stat
def test_recovers_a_random_slope(rng: np.random.Generator) -> None:
    design = dn.survey.Warner(p=0.85)
    df = simulate(design, 100, 25, rng, slope_sd=0.5)
    res = dn.survey.glmer("y ~ x + (1 + x | school)", df, design=design)
    theta = np.array([SD, 0.0, 0.5])  # Lambda = diag(0.8, 0.5), column by column
    assert recovered(res, np.array([*BETA, *theta])[[0, 1, 2, 3, 4]], ALPHA), (res.params, res.theta)
    assert res.variance_components["std_dev"].to_numpy() == pytest.approx([SD, 0.5], abs=0.25)


@pytest.mark.stat
@pytest.mark.slow
def test_slope_intervals_cover(rng: np.random.Generator) -> None:
    design = dn.survey.Warner(p=0.85)
    replicates = 40
    est, se = np.empty(replicates), np.empty(replicates)
    for r in range(replicates):
        res = dn.survey.glmer("y ~ x + (1 | school)", simulate(design, 24, 18, rng), design=design)
        est[r], se[r] = res.params["x"], res.bse["x"]
    hits = int(np.sum(np.abs(est - BETA[1]) <= z_for(0.05) * se))
    check = coverage_check(hits, replicates, 0.95, ALPHA / 2, label="glmer slope")
    assert check, str(check)
    mean = mean_check(est, BETA[1], ALPHA / 2, label="glmer slope mean")
    assert mean, str(mean)
