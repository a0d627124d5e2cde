"""Blair, Imai & Zhou (2015), Table 3: the Nigeria forced-response logistic regression, reproduced.

Data: the replication data of the rr package, as shipped with the example
and the tutorial in ``examples/data/nigeria.csv`` (its SHA-256 is the
replication file's, so every checkout checks the same bytes).
Design: forced response, 1/6 forced "no", 1/6 forced "yes" (RRreg's
``FR`` with ``p = (1/6, 1/6)``). Published (rr's ``rrreg``): intercept
-0.340, asset index 0.0790, married -0.267, female -0.554; 2,423 complete
cases; log-likelihood -1540.12; SEs from the outer product of scores.
Deterministic (no randomness): the digits are the published ones.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

import deniable.survey as sv  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "examples" / "data" / "nigeria.csv"
SHIPPED_SHA256 = "123f378138695903838cd55220de82f1f48767fad7448230344dc70e09f407e5"  # the rr replication file
FORMULA = ("rr.q1 ~ cov.asset.index + cov.married + I(cov.age/10) + I((cov.age/10)^2) + cov.education"
           " + cov.female")
TERMS = ["Intercept", "cov.asset.index", "cov.married", "I(cov.age / 10)", "I((cov.age / 10) ** 2)",
         "cov.education", "cov.female"]
# Table 3 of Blair, Imai & Zhou (2015) (rr's rrreg: EM, outer-product-of-scores SEs)
PUBLISHED = {"Intercept": "-0.340", "cov.asset.index": "0.0790", "cov.married": "-0.267", "cov.female": "-0.554",
             "I(cov.age / 10)": "-0.353", "I((cov.age / 10) ** 2)": "0.0410", "cov.education": "-0.0069"}
PUBLISHED_SE = {"Intercept": "0.509", "cov.asset.index": "0.0414", "cov.married": "0.255", "I(cov.age / 10)": "0.264",
                "I((cov.age / 10) ** 2)": "0.0260", "cov.education": "0.0456", "cov.female": "0.162"}
# RRreg 0.7.6's RRlog on the same data (numerical Hessian of optim, observed information): age terms
RRREG_SE = {"I(cov.age / 10)": 0.264228, "I((cov.age / 10) ** 2)": 0.027207}


@pytest.fixture(scope="module")
def nigeria() -> pd.DataFrame:
    return pd.read_csv(SHIPPED)


@pytest.fixture(scope="module")
def fits(nigeria: pd.DataFrame) -> dict[str, object]:
    design = sv.design("FR", p=["1/6", "1/6"])
    return {cov: sv.logit(FORMULA, nigeria, design, cov_type=cov) for cov in ("oim", "opg")}


def agrees(value: float, published: str) -> bool:
    """``value`` rounds to the published figure, to the decimals printed (3 for -0.340, 4 for 0.0790)."""
    return round(value, len(published.split(".")[1])) == pytest.approx(float(published), abs=1e-12)


def test_table3_coefficients(fits: dict[str, object]) -> None:
    res = fits["oim"]
    assert list(res.params.index) == TERMS
    for term, value in PUBLISHED.items():
        assert agrees(float(res.params[term]), value), (term, float(res.params[term]))
    assert res.nobs == 2423
    assert res.n_dropped == 2457 - 2423
    assert round(float(res.llf), 2) == -1540.12
    assert res.converged


def test_opg_standard_errors_are_rr_s(fits: dict[str, object]) -> None:
    """rr reports outer-product-of-scores SEs: the same to the published three significant digits."""
    res = fits["opg"]
    for term, se in PUBLISHED_SE.items():
        assert agrees(float(res.bse[term]), se), (term, float(res.bse[term]))
    assert res.params.equals(fits["oim"].params)


def test_observed_information_standard_errors(fits: dict[str, object]) -> None:
    """Exact observed information: within 6% of rr's OPG SEs (the largest gap, 5.2%, is cov.married's), and
    within 0.3% of RRreg's, whose numerical Hessian (optimhess, step 1e-3) is the remaining difference."""
    oim, opg = fits["oim"].bse, fits["opg"].bse
    assert np.all(np.abs(oim / opg - 1) < 0.06)
    assert not np.allclose(oim, opg, rtol=1e-3)  # they are different estimators
    for term, se in RRREG_SE.items():
        assert abs(float(oim[term]) / se - 1) < 0.003, term


def test_shipped_copy_is_the_data(nigeria: pd.DataFrame) -> None:
    """examples/data/nigeria.csv (the shipped copy) is the replication data, unchanged: its digest, for
    every checkout (it once compared with a copy outside the repository and skipped for every user)."""
    # line ends as a Windows checkout may write them count as the same bytes
    assert hashlib.sha256(SHIPPED.read_bytes().replace(b"\r\n", b"\n")).hexdigest() == SHIPPED_SHA256
    assert len(nigeria.dropna(subset=["rr.q1", "cov.asset.index", "cov.married", "cov.age", "cov.education",
                                      "cov.female"])) == 2423  # the published complete cases


def test_summary_and_predict(fits: dict[str, object], nigeria: pd.DataFrame) -> None:
    res = fits["oim"]
    text = str(res.summary())
    assert "FR design" in text and "cov.female" in text and "34 rows with missing values dropped" in text
    fitted = res.predict()
    assert len(fitted) == 2423 and fitted.between(0, 1).all()
    new = res.predict(nigeria.head(50))
    assert new.index.equals(nigeria.head(50).index)
    complete = nigeria.head(50).dropna(subset=["cov.asset.index", "cov.married", "cov.age", "cov.education",
                                               "cov.female"])
    np.testing.assert_allclose(new[complete.index], fitted[complete.index], rtol=1e-12)
    assert new.drop(complete.index).isna().all()


def test_example_script_prints_table3(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/nigeria.py (shipped data) prints the published coefficients and rr's standard errors."""
    import runpy

    runpy.run_path(str(ROOT / "examples" / "nigeria.py"), run_name="__main__")
    out = capsys.readouterr().out
    for figure in ("-0.3402", "0.0790", "-0.2674", "-0.5544", "0.509", "0.041", "0.162", "-1540.1", "2423"):
        assert figure in out, figure
    assert "Likelihood-ratio test of the other covariates" in out
