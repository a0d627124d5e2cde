"""``dn.survey.glmer(..., weights=)``: each respondent's conditional log-likelihood counted ``w_i`` times.

Reference: lme4 1.1.31 (R 4.2.2) on ``reference/glmer_data.csv`` with the integer weights
``w = 1 + z + (x > 0)``, the numbers kept below (``LME4``). The R code used::

    library(lme4)
    df <- read.csv("tests/survey/reference/glmer_data.csv")
    df$school <- factor(df$school)
    df$w <- 1 + df$z + (df$x > 0)
    df$mu0 <- 0.5
    rr_link <- function(c, d) structure(list(linkfun = function(mu) log((mu - c) / (c + d - mu)),
      linkinv = function(eta) c + d * plogis(eta), mu.eta = function(eta) d * dlogis(eta),
      valideta = function(eta) TRUE, name = "RRlogit"), class = "link-glm")  # GLMMRR's link
    ctl <- function(tol) glmerControl(optimizer = "bobyqa", optCtrl = list(rhoend = 1e-10, maxfun = 1e5),
                                      tolPwrss = tol)  # tol = 1e-12, the tightest PIRLS converges at (all four)
    glmer(y_dq ~ x + z + (1 | school), df, binomial, weights = w, control = ctl(tol))              # dq_laplace
    glmer(y_dq ~ x + z + (1 | school), df, binomial, weights = w, nAGQ = 10, control = ctl(tol))  # dq_agq10
    glmer(y_dq ~ x + z + (1 + x | school), df, binomial, weights = w, control = ctl(tol))         # dq_slope
    glmer(y_warner ~ x + z + (1 | school), df, binomial(link = rr_link(0.2, 0.6)), weights = w,
          mustart = mu0, control = ctl(tol))                                                      # warner_laplace
    # fixef(m), sqrt(diag(vcov(m))), getME(m, "theta"), logLik(m)

For a 0/1 answer lme4's binomial log-likelihood with prior weights is ``sum_i w_i log P(y_i)``
(its ``aic`` rounds the weights, so non-integer weights are compared to nothing but the
definition). Agreement measured, direct questioning: fixed effects within 5e-7, theta within
2e-7, log-likelihood within 3e-8, SEs within 2.3e-5 relative (lme4's finite-difference Hessian);
GLMMRR's link (Warner): 2.3e-5, 2.5e-5, 2.1e-5 and 1.2e-4, as far as lme4's PIRLS solves the
modes with that link (unweighted the same, ``test_glmer``).

Calibration (``test_aggregated_answers_cover_the_truth``): respondents simulated with known
truth (40 schools of 50, ``x`` in {-1, 0, 1}, school effects of SD 0.8) and Warner answers
(p = 0.85), aggregated to one row per (school, x, answer) with its count as the weight (about
240 rows for 2,000 respondents); the intercept's and slope's 95% intervals must cover the truth
within the two-sided binomial band (``coverage_check``), alpha 1e-6 Bonferroni over these 2
checks and the power check. Measured once (seed 1, R = 150): coverage 0.933 and 0.947, mean
estimates -0.583 and 0.783 for -0.6 and 0.8 (Laplace's and ML's small bias toward 0, 0.17 of
an SE: no mean check, it would fail at a large enough R), SEs 0.145 and 0.101 against the
estimates' SDs 0.143 and 0.099. Power: the same cells unweighted (each once) give a slope of
0.009 (SD 0.013), so their intervals cover 0.8 in none of every fifth replicate's fits, and
must fail the band.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable.testing import bonferroni, coverage_check, z_for

from test_glmer import DATA, DESIGNS  # isort: skip

WEIGHTS = (1 + DATA["z"] + (DATA["x"] > 0)).to_numpy()
LME4 = {
    "dq_laplace": {"beta": [-1.02734698124, 0.638770449224, -0.42281145916],
                   "se": [0.2656786821, 0.06059802973, 0.1076179472], "theta": [1.36850835597],
                   "logLik": -1175.56474538},
    "dq_agq10": {"beta": [-1.02767043413, 0.63874634613, -0.422812085262],
                 "se": [0.2661183241, 0.06059665377, 0.1076137076], "theta": [1.37106285221],
                 "logLik": -1175.40901484},
    "dq_slope": {"beta": [-1.07408945294, 0.6954221421, -0.439883693213],
                 "se": [0.2749254549, 0.1114095587, 0.1098033725],
                 "theta": [1.40918827484, -0.0444826258804, 0.45304998352], "logLik": -1165.08368975},
    "warner_laplace": {"beta": [-1.6971836394, 0.851488053713, -0.342262489606],
                       "se": [0.4209590624, 0.1553390114, 0.2417798651], "theta": [1.67039405243],
                       "logLik": -1468.73966211},
}


def _fit(key: str, data: Any = DATA, **kwargs: Any) -> Any:
    name, kind = key.split("_")
    formula = f"y_{name} ~ x + z + " + ("(1 + x | school)" if kind == "slope" else "(1 | school)")
    return dn.survey.glmer(formula, data, design=DESIGNS[name], nAGQ=10 if kind == "agq10" else 1, **kwargs)


@pytest.mark.parametrize("key", list(LME4))
def test_weighted_fit_is_lme4(key: str) -> None:
    """Direct questioning to lme4's own precision; GLMMRR's link as closely as lme4's PIRLS solves it (as
    unweighted, ``test_glmer.test_randomized_answers_are_rrglmer``)."""
    r = LME4[key]
    res = _fit(key, DATA.assign(w=WEIGHTS), weights="w")
    loose = key.startswith("warner")
    np.testing.assert_allclose(res.params, r["beta"], atol=1e-4 if loose else 2e-6)
    np.testing.assert_allclose(res.theta, r["theta"], atol=2e-4 if loose else 1e-6)
    assert res.llf == pytest.approx(r["logLik"], abs=5e-5 if loose else 1e-6)
    np.testing.assert_allclose(res.bse, r["se"], rtol=1e-3 if loose else 1e-4)
    assert res.converged


def test_weights_of_one_are_the_unweighted_fit() -> None:
    plain = _fit("warner_laplace")
    ones = _fit("warner_laplace", weights=np.ones(len(DATA)))
    np.testing.assert_array_equal(ones.params, plain.params)
    np.testing.assert_array_equal(ones.bse, plain.bse)
    assert ones.llf == plain.llf and np.array_equal(ones.theta, plain.theta)


@pytest.mark.parametrize("key", ["dq_laplace", "warner_laplace"])
def test_integer_weights_are_copies_of_the_rows(key: str) -> None:
    weighted = _fit(key, DATA.assign(w=WEIGHTS), weights="w")
    copies = _fit(key, DATA.loc[DATA.index.repeat(WEIGHTS)])
    np.testing.assert_allclose(weighted.params, copies.params, atol=1e-7)
    np.testing.assert_allclose(weighted.theta, copies.theta, atol=1e-7)
    assert weighted.llf == pytest.approx(copies.llf, abs=1e-8)
    np.testing.assert_allclose(weighted.bse, copies.bse, rtol=1e-5)
    np.testing.assert_allclose(weighted.random_effects, copies.random_effects, atol=1e-6)
    assert weighted.nobs == len(DATA) and weighted.weights == WEIGHTS.sum()
    assert re.search(rf"Weights \(sum\): +{WEIGHTS.sum()}\b", str(weighted.summary()))
    assert weighted.to_dict()["weights"] == WEIGHTS.sum() and copies.weights is None


def test_zero_weights_drop_the_rows() -> None:
    keep = DATA["school"] != 4
    zero = _fit("dq_laplace", DATA.assign(w=keep.astype(float)), weights="w")
    dropped = _fit("dq_laplace", DATA[keep])
    np.testing.assert_allclose(zero.params, dropped.params, atol=1e-7)
    assert zero.llf == pytest.approx(dropped.llf, abs=1e-8)


@pytest.mark.parametrize(("weights", "message"), [
    (np.ones(10), "weights must have one entry per respondent (1232); got shape (10,)"),
    (np.r_[-1.0, np.ones(1231)], "weights must be finite and non-negative"),
    (np.r_[np.ones(7), np.nan, np.ones(1224)], "got nan at position 7"),
    (np.r_[np.ones(7), np.inf, np.ones(1224)], "got inf at position 7"),
    ("wt", "weights 'wt' is not a column of data"),
    (np.zeros(1232), "weights must have a positive entry; all are 0"),
    (np.array(["a"] * 1232), "weights must be numbers"),
])
def test_bad_weights_are_named(weights: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        _fit("dq_laplace", weights=weights)


ALPHA = bonferroni(1e-6, 3)
BETA = np.array([-0.6, 0.8])


def aggregated(rng: np.random.Generator, design: Any, schools: int = 40, size: int = 50) -> pd.DataFrame:
    """Respondents with ``x`` in {-1, 0, 1}, truth ``logistic(-0.6 + 0.8 x + b)``, ``b ~ N(0, 0.8^2)`` per school,
    answered through ``design``; one row per (school, x, answer) with its count ``n``."""
    school = np.repeat(np.arange(schools), size)
    x = rng.integers(-1, 2, school.size).astype(float)
    eta = BETA[0] + BETA[1] * x + rng.normal(0, 0.8, schools)[school]
    truth = rng.random(school.size) < 1 / (1 + np.exp(-eta))
    df = pd.DataFrame({"school": school, "x": x, "y": design.privatize_many(truth, rng=rng).astype(int)})
    return df.groupby(["school", "x", "y"]).size().rename("n").reset_index()


@pytest.mark.stat
@pytest.mark.slow
def test_aggregated_answers_cover_the_truth(rng: np.random.Generator) -> None:
    design = dn.survey.Warner(p=0.85)
    replicates = 150
    est, se, naive = np.empty((replicates, 2)), np.empty((replicates, 2)), []
    for r in range(replicates):
        cells = aggregated(rng, design)
        res = dn.survey.glmer("y ~ x + (1 | school)", cells, design=design, weights="n")
        est[r], se[r] = res.params, res.bse
        if r % 5 == 0:
            unweighted = dn.survey.glmer("y ~ x + (1 | school)", cells, design=design)
            naive.append(abs(unweighted.params["x"] - BETA[1]) <= z_for(0.05) * unweighted.bse["x"])
    for j, name in enumerate(["Intercept", "x"]):
        hits = int(np.sum(np.abs(est[:, j] - BETA[j]) <= z_for(0.05) * se[:, j]))
        check = coverage_check(hits, replicates, 0.95, ALPHA, label=f"weighted glmer {name}")
        assert check, str(check)
    assert not coverage_check(int(np.sum(naive)), len(naive), 0.95, ALPHA), "no power: the cells unweighted"


@pytest.mark.parametrize("key", ["dq_laplace", "warner_laplace"])
def test_weights_and_an_offset_together_are_copies_with_the_offset(key: str) -> None:
    """Both arguments at once: the integer-weighted fit with an offset is the fit to that many copies of each row
    with its offset, and a constant offset moves the intercept alone."""
    offset = 0.3 * DATA["z"].to_numpy() - 0.2
    weighted = _fit(key, DATA.assign(w=WEIGHTS, o=offset), weights="w", offset="o")
    copies = _fit(key, DATA.assign(o=offset).loc[DATA.index.repeat(WEIGHTS)], offset="o")
    np.testing.assert_allclose(weighted.params, copies.params, atol=1e-7)
    assert weighted.llf == pytest.approx(copies.llf, abs=1e-8)
    np.testing.assert_allclose(weighted.bse, copies.bse, rtol=1e-5)
    plain = _fit(key, DATA.assign(w=WEIGHTS), weights="w")
    shifted = _fit(key, DATA.assign(w=WEIGHTS), weights="w", offset=np.full(len(DATA), 0.5))
    np.testing.assert_allclose(shifted.params.to_numpy() - plain.params.to_numpy(), [-0.5, 0, 0], atol=1e-6)
    assert shifted.llf == pytest.approx(plain.llf, abs=1e-8)
