"""Power of the regression LR test by simulation: its size, its power, and RRreg's RRsimu.

Calibration: two stochastic assertions at alpha = 1e-6 each. The size check
(no effect: rejections at 5% fit Binomial(R, 0.05)) has its power check in
the same test: with a real effect the same check fails. RRsimu's figure is
compared within 5.3 combined Monte Carlo standard errors (two-sided 1e-7).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_values import load

import deniable.survey as sv
from deniable.testing import proportion_check

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

ALPHA = 1e-6
R = 400


def _normal(n: int, rng: np.random.Generator) -> pd.DataFrame:
    return pd.DataFrame({"x": rng.standard_normal(n)})


@pytest.mark.stat
def test_size_and_power(rng: np.random.Generator) -> None:
    d = sv.Warner(0.8)
    null = sv.logit_power(d, {"Intercept": -0.85, "x": 0.0}, _normal, 500, "x", replicates=R, rng=rng)
    assert proportion_check(round(null.power * R), R, 0.05, ALPHA, label="size")
    effect = sv.logit_power(d, {"Intercept": -0.85, "x": 0.5}, _normal, 500, "x", replicates=R, rng=rng)
    assert not proportion_check(round(effect.power * R), R, 0.05, ALPHA)
    assert effect.mc_se == pytest.approx(math.sqrt(effect.power * (1 - effect.power) / R))


@pytest.mark.stat
def test_matches_rrsimu(rng: np.random.Generator) -> None:
    """RRsimu(n = 500, pi = 0.3, Warner p = 0.8, b.log = 0.5, RRlog LR test): a standard normal covariate
    with intercept qlogis(0.3)."""
    ref = load()["power"]["RRsimu"]["RRlog_Warner"]
    ours = sv.logit_power(sv.Warner(0.8), {"Intercept": math.log(0.3 / 0.7), "x": 0.5}, _normal, 500, "x",
                          replicates=R, rng=rng)
    theirs, their_se = ref["power"]["RRlog(LR-test)"], ref["mc_se"]["RRlog(LR-test)"]
    assert abs(ours.power - theirs) <= 5.3 * math.hypot(ours.mc_se, their_se)


def test_bad_input() -> None:
    d = sv.Warner(0.8)
    with pytest.raises(ValueError, match="term must be one of the covariates"):
        sv.logit_power(d, {"Intercept": 0.0, "x": 0.5}, _normal, 100, "z")
    with pytest.raises(ValueError, match="replicates must be a positive integer"):
        sv.logit_power(d, {"Intercept": 0.0, "x": 0.5}, _normal, 100, "x", replicates=0)
    with pytest.raises(ValueError, match="missing"):
        sv.logit_power(d, {"Intercept": 0.0, "w": 0.5}, _normal, 100, "w", replicates=1)
