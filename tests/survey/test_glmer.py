"""The random-effects randomized-response logit (``dn.survey.glmer``) against lme4's ``glmer`` and GLMMRR.

Reference values (``reference/glmer.json``, made by ``reference/make_glmer.R``
on ``reference/glmer_data.csv``): direct questioning is ``glmer(family =
binomial)``; a randomized answer is ``glmer`` with GLMMRR's link ``mu = c + d
logistic(eta)`` (what ``GLMMRR::RRglmer`` runs, stored beside). Direct
questioning agrees to 1e-6 in the coefficients and 1e-8 in the
log-likelihood; with the randomized-response link lme4's own PIRLS solves
the modes only to about 1e-5 in the log-likelihood (it fails to converge at
tighter tolerances), so the agreement is that close.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable.survey import _glmer

REFERENCE_DIR = Path(__file__).parent / "reference"
DESIGNS = {"dq": dn.survey.Warner(p=1), "warner": dn.survey.Warner(p=0.8),
           "fr": dn.survey.design("FR", p=[0.1, 0.15])}


def _reference() -> dict[str, Any]:
    with (REFERENCE_DIR / "glmer.json").open(encoding="utf-8") as handle:
        out: dict[str, Any] = json.load(handle)
    return out


REF = _reference()
DATA = pd.read_csv(REFERENCE_DIR / "glmer_data.csv")


def _formula(key: str) -> str:
    name, kind = key.split("_")
    return f"y_{name} ~ x + z + " + ("(1 + x | school)" if kind == "slope" else "(1 | school)")


def _fit(key: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """The fit of a reference entry and its likelihood (kept by wrapping the maximizer)."""
    kept: dict[str, Any] = {}
    maximize = _glmer._maximize

    def keep(lik: Any, start: Any) -> Any:
        kept["lik"] = lik
        return maximize(lik, start)

    monkeypatch.setattr(_glmer, "_maximize", keep)
    r = REF["fits"][key]
    res = dn.survey.glmer(_formula(key), DATA, design=DESIGNS[key.split("_")[0]], nAGQ=r["nAGQ"])
    return res, kept["lik"]


@pytest.mark.parametrize("key", ["dq_laplace", "dq_agq10", "dq_slope"])
def test_direct_questioning_is_lme4_glmer(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    r = REF["fits"][key]
    res, lik = _fit(key, monkeypatch)
    for at, value in zip(r["points"]["at"], r["points"]["logLik"], strict=True):
        assert lik.loglike(np.array(at)) == pytest.approx(value, abs=1e-6)
    assert res.llf == pytest.approx(r["logLik"], abs=1e-6)
    assert res.aic == pytest.approx(r["AIC"], abs=1e-5)
    np.testing.assert_allclose(res.params, r["beta"], atol=2e-6)
    np.testing.assert_allclose(res.bse, r["se"], rtol=1e-4)
    np.testing.assert_allclose(res.theta, np.atleast_1d(r["theta"]), atol=2e-6)
    np.testing.assert_allclose(res.variance_components["variance"], np.atleast_1d(r["variance"]), atol=1e-5)
    if np.size(r["corr"]):
        assert res.correlation.iloc[1, 0] == pytest.approx(np.atleast_1d(r["corr"])[0], abs=1e-5)
    np.testing.assert_allclose(res.random_effects.iloc[:, 0], r["ranef"], atol=1e-5)
    assert res.converged and not res.singular


@pytest.mark.parametrize("key", ["warner_laplace", "warner_agq10", "fr_laplace", "fr_agq10"])
def test_randomized_answers_are_rrglmer(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    r = REF["fits"][key]
    res, lik = _fit(key, monkeypatch)
    table = DESIGNS[key.split("_")[0]].transition_matrix()
    assert (table[0, 1], table[1, 1] - table[0, 1]) == pytest.approx((r["c"], r["d"]))
    for at, value in zip(r["points"]["at"], r["points"]["logLik"], strict=True):
        assert lik.loglike(np.array(at)) == pytest.approx(value, abs=5e-5)
    assert res.llf == pytest.approx(r["logLik"], abs=5e-5)
    np.testing.assert_allclose(res.params, r["beta"], atol=1e-4)
    np.testing.assert_allclose(res.bse, r["se"], rtol=1e-3)
    np.testing.assert_allclose(res.theta, np.atleast_1d(r["theta"]), atol=2e-4)


def test_rrglmer_itself_agrees() -> None:
    """GLMMRR's RRglmer (Warner, p1 = 0.8) gives glmer's fit with the link written out."""
    g, r = REF["RRglmer"], REF["fits"]["warner_laplace"]
    if g is None:
        pytest.skip("GLMMRR was not installed when the reference was made")
    np.testing.assert_allclose(g["beta"], r["beta"], atol=1e-5)  # lme4's optimizer: about 4e-6 apart
    assert g["logLik"] == pytest.approx(r["logLik"], abs=1e-8)


def test_random_slope_with_randomized_answers_beats_lme4() -> None:
    """lme4's PIRLS does not converge tightly on this fit (its SEs are off by orders of magnitude); ours
    reaches a higher log-likelihood, and lme4's estimate is lower on our likelihood too."""
    r = REF["fits"]["warner_slope"]
    res = dn.survey.glmer(_formula("warner_slope"), DATA, design=DESIGNS["warner"])
    assert res.llf > r["logLik"] + 1e-3
    assert res.converged
    assert np.all(np.abs(res.params - r["beta"]) < 3 * res.bse)


def test_a_design_is_its_transition_matrix() -> None:
    """Kuk with one card and a custom matrix equal to Warner's give Warner's fit (the answers' model is
    the matrix)."""
    fits = [dn.survey.glmer("y_warner ~ x + (1 | school)", DATA, design=d)
            for d in (DESIGNS["warner"], dn.survey.Kuk(p=[0.8, 0.2]), dn.survey.Custom([[0.8, 0.2], [0.2, 0.8]]))]
    for res in fits[1:]:
        np.testing.assert_allclose(res.params, fits[0].params, atol=1e-8)
        assert res.llf == pytest.approx(fits[0].llf, abs=1e-9)


def test_summary_and_result_shape() -> None:
    res = dn.survey.glmer("y_warner ~ x + (1 | school)", DATA, design=DESIGNS["warner"], nAGQ=5)
    text = str(res.summary())
    assert "Warner" in text and "nAGQ = 5" in text and "school: Intercept" in text
    frame = res.to_frame()
    assert list(frame["parameter"]) == ["Intercept", "x"]
    low, high = res.confidence_interval(0.9)
    assert np.all(low < res.params.to_numpy()) and np.all(res.params.to_numpy() < high)
    out = res.to_dict()
    assert out["nAGQ"] == 5 and out["n_groups"] == 30 and out["n"] == len(DATA)
    assert res.aic == pytest.approx(-2 * res.llf + 2 * 3)
    assert res.bic == pytest.approx(-2 * res.llf + 3 * np.log(len(DATA)))
    assert res.random_effects.shape == (30, 1) and res.random_effects.index.name == "school"


def test_missing_values_are_dropped() -> None:
    df = DATA.copy()
    df.loc[:4, "x"] = np.nan
    df.loc[5:7, "school"] = np.nan
    res = dn.survey.glmer("y_dq ~ x + (1 | school)", df, design=DESIGNS["dq"])
    assert res.n_dropped == 8 and res.nobs == len(df) - 8


def test_singular_fit_without_cluster_variation(rng: np.random.Generator) -> None:
    """No variation between clusters: the SD is estimated on (or next to) its bound 0 and the fit says so."""
    n = 600
    df = pd.DataFrame({"y": rng.random(n) < 0.3, "g": np.repeat(np.arange(30), 20)})
    res = dn.survey.glmer("y ~ 1 + (1 | g)", df, design=DESIGNS["dq"])
    assert res.theta[0] < 0.3
    if res.singular:
        assert res.theta[0] == 0 and np.isnan(res.theta_bse[0]) and "Singular" in str(res.summary())


@pytest.mark.parametrize(
    ("formula", "kwargs", "message"),
    [
        ("y_dq ~ x", {}, "no random-effects term"),
        ("y_dq ~ x + (1 | school) + (1 | z)", {}, "2 random-effects terms"),
        ("y_dq ~ x + (1 | region)", {}, "'region' of (1 | region) is not a column of data"),
        ("y_dq ~ x + (1 || school)", {}, "column name as the cluster"),
        ("y_dq ~ x + (1 | school)", {"nAGQ": 0}, "nAGQ must be an integer in 1..100"),
        ("y_dq ~ x + (1 | school)", {"nAGQ": 2.5}, "nAGQ must be an integer"),
        ("y_dq ~ x + (1 + x | school)", {"nAGQ": 5}, "nAGQ must be 1"),
        ("y_dq ~ x + (1 | school)", {"design": dn.survey.design("CDM", p=[0.6, 0.2])}, "one-group design"),
        ("y_dq ~ x + (1 | school)", {"design": "Warner"}, "design must be a deniable.survey Design"),
        ("y_dq ~ x + (1 + w | school)", {}, "the random term (1 + w | school)"),
        ("school ~ x + (1 | school)", {}, "response must be one of 0, 1"),
        ("x + (1 | school)", {}, "formula must be a string"),
    ],
)
def test_bad_input_is_named(formula: str, kwargs: dict[str, Any], message: str) -> None:
    args = {"design": DESIGNS["dq"], **kwargs}
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        dn.survey.glmer(formula, DATA, **args)


def test_one_cluster_is_refused() -> None:
    df = DATA[DATA["school"] == 3]
    with pytest.raises(ValueError, match="'school' has 1 level in the rows used"):
        dn.survey.glmer("y_dq ~ x + (1 | school)", df, design=DESIGNS["dq"])
