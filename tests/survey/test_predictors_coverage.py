"""Simulation: randomized predictors' regressions and correlations are unbiased with calibrated intervals.

Each replicate draws respondents with the latent truths, randomizes them on
the designs' own device path (``privatize_many``, seeded) and fits:

- ``logit`` with a forced-response predictor ``r`` (rr's ``rrreg.predictor``
  model): ``P(z = 1 | x) = logistic(-0.4 + 0.7 x)``, ``P(o = 1 | x, z) =
  logistic(-0.5 + 0.6 x + 1.1 z)``; R = 80 replicates of n = 1500;
- ``linear`` with a Warner and an FR predictor and constant state
  probabilities (RRlin's model): ``y = 1 + 1.5 z1 - z2 + 0.5 x + N(0, 1.2^2)``,
  ``z1 ~ B(0.35)``, ``z2 | z1 ~ B(0.6 or 0.25)``; R = 60 replicates of n = 1500;
- ``correlation`` of a Warner answer, an FR answer and a plain normal
  variable (latent phi 0.331, point-biserial correlations from a normal
  shifted by the truth); R = 150 replicates of n = 1000.

Checks per parameter: the mean of the estimates equals the truth
(``mean_check``, the replicates' own SD) and the 95% interval's coverage is
within the two-sided binomial band (``coverage_check``). Alpha: 1e-6 for the
file, Bonferroni over all of its checks. Power: the same data analysed
without the randomization's correction (the logit with the answers taken as
the truth, i.e. an identity design; the correlations of the raw answers)
fails: the attenuated effect lies outside the mean check by more than 10 of
its standard errors. The two regressions take 10 to 20 s of CPU and are marked slow.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import deniable.survey as sv
from deniable.testing import bonferroni, coverage_check, mean_check, z_for

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

LEVEL = 0.95
CHECKS = 2 * (5 + 6 + 3)  # mean and coverage per parameter of the three models
ALPHA = bonferroni(1e-6, CHECKS)
FR = sv.design("FR", [0.1, 0.2])
WARNER = sv.design("Warner", 0.8)
IDENTITY = sv.Custom(np.eye(2))


def _check(est: np.ndarray, se: np.ndarray, truth: np.ndarray, label: str) -> None:
    means = mean_check(est, truth, ALPHA, label=label)
    assert means, str(means)
    hits = np.sum(np.abs(est - truth) <= z_for(1 - LEVEL) * se, axis=0)
    for j in range(len(truth)):
        result = coverage_check(int(hits[j]), len(est), LEVEL, ALPHA, label=f"{label} parameter {j}")
        assert result, str(result)


@pytest.mark.stat
@pytest.mark.slow
def test_logit_with_randomized_predictor(rng: np.random.Generator) -> None:
    truth = np.array([-0.5, 0.6, 1.1, -0.4, 0.7])
    est, se, naive = [], [], []
    for _ in range(80):
        n = 1500
        x = rng.normal(size=n)
        z = rng.random(n) < 1 / (1 + np.exp(-(truth[3] + truth[4] * x)))
        o = rng.random(n) < 1 / (1 + np.exp(-(truth[0] + truth[1] * x + truth[2] * z)))
        df = pd.DataFrame({"o": o.astype(int), "x": x, "r": FR.privatize_many(z, rng=rng).astype(int)})
        res = sv.logit("o ~ x + r", df, None, rr_predictors={"r": FR})
        est.append(np.asarray(res.params))
        se.append(np.asarray(res.bse))
        naive.append(sv.logit("o ~ x + r", df, None, rr_predictors={"r": IDENTITY}).params["r"])
    _check(np.array(est), np.array(se), truth, "logit")
    # power: the answers taken as the truth attenuate the effect far beyond the mean check's reach
    spread = np.std(naive) / np.sqrt(len(naive))
    assert (truth[2] - np.mean(naive)) / spread > 10


@pytest.mark.stat
@pytest.mark.slow
def test_linear_with_two_randomized_predictors(rng: np.random.Generator) -> None:
    truth = np.array([1.0, 1.5, -1.0, 0.5, 1.2])
    est, se = [], []
    for _ in range(60):
        n = 1500
        z1 = rng.random(n) < 0.35
        z2 = rng.random(n) < np.where(z1, 0.6, 0.25)
        x = rng.normal(size=n)
        y = truth[0] + truth[1] * z1 + truth[2] * z2 + truth[3] * x + rng.normal(0, truth[4], n)
        df = pd.DataFrame({"y": y, "x": x, "r1": WARNER.privatize_many(z1, rng=rng).astype(int),
                           "r2": FR.privatize_many(z2, rng=rng).astype(int)})
        res = sv.linear("y ~ r1 + r2 + x", df, rr_predictors={"r1": WARNER, "r2": FR}, rr_formula="1")
        est.append(np.asarray(res.params)[:5])
        se.append(np.asarray(res.bse)[:5])
    _check(np.array(est), np.array(se), truth, "linear")


def _correlations(rng: np.random.Generator, n: int) -> tuple[Any, np.ndarray]:
    z1 = rng.random(n) < 0.35
    z2 = rng.random(n) < np.where(z1, 0.6, 0.25)
    v = z1 + rng.normal(0, 1, n)
    df = pd.DataFrame({"a": WARNER.privatize_many(z1, rng=rng).astype(int),
                       "b": FR.privatize_many(z2, rng=rng).astype(int), "v": v})
    return sv.correlation(df, designs={"a": WARNER, "b": FR}), df[["a", "b", "v"]].corr().to_numpy()


@pytest.mark.stat
def test_correlations(rng: np.random.Generator) -> None:
    # the latent truths' correlations: phi of (z1, z2), and z1's and z2's with v = z1 + N(0, 1)
    p1, p2 = 0.35, 0.35 * 0.6 + 0.65 * 0.25
    phi = (0.35 * 0.6 - p1 * p2) / np.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
    sd_v = np.sqrt(p1 * (1 - p1) + 1)
    truth = np.array([phi, np.sqrt(p1 * (1 - p1)) / sd_v, phi * np.sqrt(p1 * (1 - p1)) / sd_v])
    est, low, high, raw = [], [], [], []
    pairs = np.triu_indices(3, 1)
    for _ in range(150):
        cor, observed = _correlations(rng, 1000)
        ci = cor.confidence_interval()
        est.append(cor.matrix.to_numpy()[pairs])
        low.append(ci.low)
        high.append(ci.high)
        raw.append(observed[pairs])
    est_a, low_a, high_a = np.array(est), np.array(low), np.array(high)
    means = mean_check(est_a, truth, ALPHA, label="correlation")
    assert means, str(means)
    hits = np.sum((low_a <= truth) & (truth <= high_a), axis=0)
    for j in range(3):
        result = coverage_check(int(hits[j]), len(est_a), LEVEL, ALPHA, label=f"correlation pair {j}")
        assert result, str(result)
    # power: the raw answers' correlations are attenuated far outside the mean check
    raw_a = np.array(raw)
    assert np.all(np.abs(raw_a.mean(axis=0) - truth) / (raw_a.std(axis=0) / np.sqrt(len(raw_a))) > 10)
