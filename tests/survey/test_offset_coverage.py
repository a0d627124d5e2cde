"""Simulation: with an offset, the randomized-response logit is unbiased with calibrated Wald intervals.

Each replicate draws ``n`` respondents with a covariate ``x ~ N(0, 1)``, an
exposure ``e ~ Uniform(0.1, 1)`` and a true state
``Bernoulli(logistic(-1 + 0.7 x + log e))``: ``log e`` is an offset (its
coefficient is 1, known). The answers come from the forced-response device
(``privatize_many``, exact sampling, seeded). Over R = 300 replicates of
n = 3000, the fit with ``offset = log e`` must have coefficient means equal to
the truth (``mean_check``) and 95% Wald intervals (observed information)
covering it at a rate within the two-sided binomial band (``coverage_check``).
Alpha: 1e-6 for the file, Bonferroni over its 3 assertions (the mean check
splits its share over the two coefficients), so a correct implementation
fails this file less than once in a million runs. Power: the same answers
fitted without the offset (the exposure ignored) must fail a check: the
intercept then averages about -1.65 (over 100 standard errors of the mean away; its intervals
cover -1 in 0 of 300).
"""

from __future__ import annotations

import numpy as np
import pytest

from deniable.survey import ForcedResponse
from deniable.survey._likelihood import ResponseLikelihood, covariance, fit
from deniable.testing import bonferroni, coverage_check, family, mean_check, z_for

ALPHA = bonferroni(1e-6, 3)
BETA = np.array([-1.0, 0.7])
LEVEL = 0.95
N, REPLICATES = 3000, 300
DESIGN = ForcedResponse(p=(0.1, 0.2))


def wald(y: np.ndarray, x: np.ndarray, offset: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Coefficient estimates and observed-information SEs, one row per replicate."""
    est, se = np.empty((len(y), 2)), np.empty((len(y), 2))
    for r in range(len(y)):
        exog = np.column_stack([np.ones(x.shape[1]), x[r]])
        lik = ResponseLikelihood(DESIGN, y[r], None, exog, offset=None if offset is None else offset[r])
        best = fit(lik, ["Intercept", "x"], restarts=0)
        est[r], se[r] = best.params, np.sqrt(np.diag(covariance(lik, best)))
    return est, se


def checks(est: np.ndarray, se: np.ndarray, label: str) -> list[object]:
    hits = np.sum(np.abs(est - BETA) <= z_for(1 - LEVEL) * se, axis=0)
    return [mean_check(est, BETA, ALPHA, label=label),
            *(coverage_check(int(hits[j]), len(est), LEVEL, ALPHA, label=f"{label} beta{j}") for j in range(2))]


@pytest.mark.stat
@pytest.mark.slow
def test_offset_fit_is_unbiased_with_calibrated_coverage(rng: np.random.Generator) -> None:
    size = N * REPLICATES
    x, e = rng.normal(size=size), rng.uniform(0.1, 1.0, size)
    carrier = rng.random(size) < 1 / (1 + np.exp(-(BETA[0] + BETA[1] * x + np.log(e))))
    y = np.asarray(DESIGN.privatize_many(carrier, rng=rng)).astype(np.int64).reshape(REPLICATES, N)
    x, offset = x.reshape(REPLICATES, N), np.log(e).reshape(REPLICATES, N)
    for result in checks(*wald(y, x, offset), "offset log e"):
        assert result, str(result)
    # power: ignoring the exposure must fail
    assert not family(checks(*wald(y, x, None), "exposure ignored")), "no power against a missing offset"
