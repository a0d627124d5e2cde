"""``survey.logit`` against RRreg's ``RRlog`` and rr's ``rrreg``, computed once in R (reference/README.md).

Deterministic comparisons, each to the digits the two implementations share:

- the polished RRlog optimum (RRreg's own log-likelihood maximized with
  tight tolerances) and its observed-information SEs (numDeriv's Hessian,
  accurate to about 1e-7): coefficients within 1e-5, SEs within 1e-5
  relative, log-likelihood within 1e-8 and never below it;
- RRlog's own output (optim L-BFGS-B, numerical Hessian with step 1e-3):
  coefficients within 1e-4, SEs within 1e-4 relative;
- RRlog's likelihood-ratio test of each term (the drop in log-likelihood
  when the term is left out) within 1e-7;
- on the Nigeria data (a flat optimum: coefficients within 3e-5, our
  log-likelihood the highest), rr's ``rrreg`` outer-product-of-scores SEs
  within 1e-5 relative (``cov_type="opg"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from reference_values import data_path, load

import deniable.survey as sv

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

FITS = load()["RRlog_simulated"]["fits"]
RENAME = {"(Intercept)": "Intercept", "pi": "piUQ"}  # RRlog calls UQTunknown's piUQ "pi"


def ours(names: list[str]) -> list[str]:
    """RRlog's term names in patsy's spelling."""
    return [RENAME.get(n, n.replace("/", " / ").replace("^", " ** ")) for n in names]


def reference(values: dict[str, float], terms: list[str]) -> np.ndarray:
    return np.array([values[t] for t in terms])


@pytest.fixture(scope="module")
def simulated() -> pd.DataFrame:
    return pd.read_csv(data_path(FITS["Warner"]["data"]))


def fit_case(entry: dict[str, Any], data: pd.DataFrame, formula: str | None = None) -> Any:
    design = sv.design(entry["model"], entry["p"])
    return sv.logit(formula or entry["formula"], data, design, group="group" if design.groups == 2 else None)


@pytest.mark.parametrize("model", list(FITS))
def test_rrlog_on_simulated_data(model: str, simulated: pd.DataFrame) -> None:
    entry = FITS[model]
    res = fit_case(entry, simulated)
    assert list(res.params.index) == ours(entry["terms"])
    assert res.nobs == entry["n"]
    polished = entry["polished"]
    np.testing.assert_allclose(res.params, reference(polished["coefficients"], entry["terms"]), rtol=0, atol=1e-5)
    np.testing.assert_allclose(res.bse, reference(polished["se_exact"], entry["terms"]), rtol=1e-5)
    assert polished["logLik"] - 1e-8 <= res.llf <= polished["logLik"] + 1e-8
    np.testing.assert_allclose(res.params, reference(entry["coefficients"], entry["terms"]), rtol=0, atol=1e-4)
    np.testing.assert_allclose(res.bse, reference(entry["se"], entry["terms"]), rtol=1e-4)


@pytest.mark.parametrize("model", ["Warner", "SLD", "UQTunknown"])
def test_rrlog_likelihood_ratio_tests(model: str, simulated: pd.DataFrame) -> None:
    """RRlog's LR test drops one term at a time (the intercept too); ours through lr_test."""
    entry = FITS[model]
    full = fit_case(entry, simulated)
    response = entry["formula"].split("~")[0].strip()
    covariates = [t for t in entry["terms"] if t not in ("(Intercept)", "t", "pi")]
    for term in covariates + ["(Intercept)"]:
        delta = entry["LR_deltaLogLik"][term]
        kept = [t for t in covariates if t != term]
        formula = f"{response} ~ {' + '.join(kept)}" + (" - 1" if term == "(Intercept)" else "")
        test = full.lr_test(fit_case(entry, simulated, formula))
        assert test.df == 1
        assert -test.statistic / 2 == pytest.approx(delta, abs=1e-7), term
        assert test.pvalue == pytest.approx(entry["LR_p"][term], rel=1e-5), term


def test_nigeria_against_rrlog_and_rrreg() -> None:
    shared = load()["nigeria"]
    from test_regression_nigeria import SHIPPED

    data = pd.read_csv(SHIPPED)
    design = sv.design("FR", p=["1/6", "1/6"])
    rrlog, rrreg = shared["RRlog"], shared["rrreg"]
    oim = sv.logit(rrlog["formula"], data, design)
    opg = sv.logit(rrlog["formula"], data, design, cov_type="opg")
    assert list(oim.params.index) == ours(rrlog["terms"])
    # a flat optimum: 1e-8 of log-likelihood moves cov.female by 1e-5, and ours is the highest of the three
    np.testing.assert_allclose(oim.params, reference(rrlog["polished"]["coefficients"], rrlog["terms"]), atol=3e-5)
    np.testing.assert_allclose(oim.params, reference(rrreg["coefficients"], rrreg["terms"]), atol=3e-5)
    assert oim.llf >= max(rrlog["polished"]["logLik"], rrreg["logLik"])
    np.testing.assert_allclose(oim.bse, reference(rrlog["polished"]["se_exact"], rrlog["terms"]), rtol=1e-5)
    # RRlog's own SEs come from a numerical Hessian (step 1e-3): 0.3% off on the age terms
    np.testing.assert_allclose(oim.bse, reference(rrlog["se"], rrlog["terms"]), rtol=3e-3)
    np.testing.assert_allclose(opg.bse, reference(rrreg["se"], rrreg["terms"]), rtol=1e-5)
    assert oim.llf == pytest.approx(rrlog["polished"]["logLik"], abs=1e-8)
