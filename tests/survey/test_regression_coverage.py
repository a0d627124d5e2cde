"""Simulation: the randomized-response logit is unbiased with calibrated Wald intervals, for every yes/no design.

Each replicate draws ``n`` respondents with a covariate ``x ~ N(0, 1)``,
a true state ``Bernoulli(logistic(-0.8 + 0.7 x))`` and the answer from the
design's own device (``design.privatize_many``, exact sampling, seeded),
with the designs' non-compliance: SLD carriers answer truthfully with
probability ``t`` and say "no" otherwise; CDM/CDMsym respondents cheat
(say "no") with probability ``gamma`` independently of ``x``; UQTunknown's
unrelated answer is "yes" with probability ``piUQ``. Two-group designs
assign groups 1 and 2 at random.

Per design, over R = 300 replicates of n = 4000: the mean of each coefficient equals the
truth (``mean_check``) and each coefficient's 95% Wald interval (observed
information) covers the truth at a rate within the two-sided binomial band
(``coverage_check``). Alpha: 1e-6 for the file, Bonferroni over 3
assertions x 12 designs (the mean check splits its share over the two
coefficients). Power: the same data fitted with a misspecified ``p`` must
fail a coverage check. The MLE's O(1/n) bias (0.1 SD of the slope at
n = 1000 for Kuk with 3 cards, so about 0.05 SD here) stays far below the
mean check's resolution, z / sqrt(R) = 0.33 SD.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from survey_cases import CASES, IDS, build

from deniable.survey._likelihood import ResponseLikelihood, covariance, fit
from deniable.testing import bonferroni, coverage_check, family, mean_check, z_for

ALPHA = bonferroni(1e-6, 3 * 12)
BETA = np.array([-0.8, 0.7])
LEVEL = 0.95
N, REPLICATES = 4000, 300
WRONG_P: dict[str, Any] = {  # a misspecified p per design, for the power check
    "Warner": 0.8, "Crosswise": 0.15, "Triangular": 0.5, "Mangat": 0.8, "Kuk": (0.8, 0.3),
    "UQTknown": (0.7, 0.25), "UQTunknown": (0.9, 0.3), "FR": (0.1, 0.25), "SLD": (0.45, 0.8),
    "CDM": (0.3, 0.6), "CDMsym": (0.3, 0.3, 0.4, 0.1),
}
BINARY = [(c, i) for c, i in zip(CASES, IDS, strict=True) if not (c[0] == "FR" and len(c[1]) > 2)]
QUICK = {"FR"}  # the Nigeria design runs by default (about 7 s of CPU); the others are marked slow


def simulate(model: str, p: Any, cards: int, truth: dict[str, float], n: int, replicates: int,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Answers ``y``, covariate ``x`` (both ``(R, n)``) and groups (or None), drawn on the device path."""
    d = build(model, p, cards)
    size = n * replicates
    x = rng.normal(size=size)
    carrier = rng.random(size) < 1 / (1 + np.exp(-(BETA[0] + BETA[1] * x)))
    groups = rng.integers(1, 3, size) if d.groups == 2 else None
    extra = {"unrelated": rng.random(size) < truth["piUQ"]} if model == "UQTunknown" else {}
    y = np.asarray(d.privatize_many(carrier, groups, rng=rng, **extra)).astype(np.int64)
    if model == "SLD":  # non-compliant carriers say "no"
        y[carrier & (rng.random(size) >= truth["t"])] = 0
    if model in ("CDM", "CDMsym"):  # cheaters say "no"
        y[rng.random(size) < truth["gamma"]] = 0
    shape = (replicates, n)
    return y.reshape(shape), x.reshape(shape), None if groups is None else groups.reshape(shape)


def wald(model: str, p: Any, cards: int, y: np.ndarray, x: np.ndarray, g: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Coefficient estimates and their observed-information SEs, one row per replicate."""
    d = build(model, p, cards)
    est, se = np.empty((len(y), 2)), np.empty((len(y), 2))
    for r in range(len(y)):
        lik = ResponseLikelihood(d, y[r], None if g is None else g[r], np.column_stack([np.ones(len(x[r])), x[r]]))
        best = fit(lik, ["Intercept", "x", "extra"][: lik.k_params], restarts=0)
        est[r] = best.params[:2]
        se[r] = np.sqrt(np.diag(covariance(lik, best))[:2])
    return est, se


def coverage(est: np.ndarray, se: np.ndarray, label: str) -> list[Any]:
    z = z_for(1 - LEVEL)
    hits = np.sum(np.abs(est - BETA) <= z * se, axis=0)
    return [coverage_check(int(hits[j]), len(est), LEVEL, ALPHA, label=f"{label} beta{j}") for j in range(2)]


@pytest.mark.stat
@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=i, marks=() if c[0] in QUICK else pytest.mark.slow) for c, i in BINARY],
)
def test_unbiased_with_calibrated_coverage(case: tuple[Any, ...], rng: np.random.Generator) -> None:
    model, p, cards, truth = case
    y, x, g = simulate(model, p, cards, truth, N, REPLICATES, rng)
    est, se = wald(model, p, cards, y, x, g)
    check = mean_check(est, BETA, ALPHA, label=model)
    assert check, str(check)
    for result in coverage(est, se, model):
        assert result, str(result)
    # power: the same answers analysed with a wrong p must fail
    wrong_est, wrong_se = wald(model, WRONG_P[model], cards, y, x, g)
    assert not family(coverage(wrong_est, wrong_se, f"{model} with p={WRONG_P[model]}")), "no power against a wrong p"
