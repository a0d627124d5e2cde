"""Randomized answers as predictors (rr's ``rrreg.predictor``, RRreg's ``RRlin``) and correlations (``RRcor``).

Deterministic: the joint likelihood's analytic score and Hessian against
central differences; the fits against R on the data of
``reference/rrpred.json`` (made by ``reference/make_rrpred.R``); bad input
named. Where the R packages stop short of the maximum likelihood, the test
shows it with their own log-likelihood:

- rr's EM (``rrreg.predictor``) fits the item's model and the outcome's on
  the answers weighted by the posterior of a *truthful* answer, ignoring what
  a forced answer's outcome says about the truth, so its fixed point is not
  the maximum of its own observed log-likelihood (``obs.llik``, written out
  below): its score there is far from 0, and ours is higher by 0.18.
- RRlin plugs in SLD's ``t`` from the answers alone; the joint maximum
  (``t`` estimated with the rest) has the higher log-likelihood.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from reference_values import REFERENCE_DIR
from test_regression_exact import numerical_gradient

import deniable.survey as sv
from deniable.errors import SeparationError
from deniable.survey._predictor_likelihood import PredictorLikelihood

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

FR = sv.design("FR", [0.1, 0.2])  # rr's forced-known with p = 0.7, p0 = 0.1, p1 = 0.2
WARNER = sv.design("Warner", 0.8)
UQT = sv.design("UQTknown", [0.7, 0.4])
SLD = sv.design("SLD", [0.3, 0.7])


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    import json

    with (REFERENCE_DIR / "rrpred.json").open(encoding="utf-8") as handle:
        values: dict[str, Any] = json.load(handle)
    return values


@pytest.fixture(scope="module")
def data() -> Any:
    return pd.read_csv(REFERENCE_DIR / "rrpred_data.csv")


@pytest.mark.parametrize("outcome", ["logit", "logit-rr", "linear"])
def test_score_and_hessian_are_exact(outcome: str, rng: np.random.Generator) -> None:
    """Two predictors (Warner, and SLD with its extra parameter), a covariate in the state model."""
    n = 80
    x = rng.normal(size=n)
    r1, r2, g = rng.integers(0, 2, n), rng.integers(0, 2, n), rng.integers(1, 3, n)
    y = rng.normal(size=n) if outcome == "linear" else rng.integers(0, 2, n).astype(float)
    lik = PredictorLikelihood(outcome[:6].rstrip("-"), y, np.column_stack([np.ones(n), x, r1, r2]), [2, 3],
                              np.column_stack([np.ones(n), x]), [(WARNER, r1, None), (SLD, r2, g)],
                              FR if outcome == "logit-rr" else None)
    theta = rng.normal(0, 0.5, lik.k_params)
    if outcome == "linear":
        theta[4] = 1.3
    theta[-1] = 0.4
    np.testing.assert_allclose(lik.score(theta), numerical_gradient(lik.loglike, theta), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(lik.hessian(theta), numerical_gradient(lik.score, theta), rtol=1e-6, atol=1e-6)


def _rr_obs_llik(par: np.ndarray, data: Any) -> float:
    """rr's ``obs.llik`` of ``rrreg.predictor`` (forced-known, no priors), on the unscaled covariates."""
    x = np.column_stack([np.ones(len(data)), data["x1"], data["x2"]])
    t, b = par[:4], par[4:]
    o, y = data["o"].to_numpy(), data["r_fr"].to_numpy()
    fx = 1 / (1 + np.exp(-x @ b))
    g1, g0 = (1 / (1 + np.exp(-(x @ t[:3] + t[3] * v))) for v in (1, 0))
    g1, g0 = np.where(o == 1, g1, 1 - g1), np.where(o == 1, g0, 1 - g0)
    p, p1, p0 = 0.7, 0.2, 0.1
    return float(np.sum(np.log(fx * g1 * np.where(y == 1, p + p1, p0) + (1 - fx) * g0 * np.where(y == 1, p1, 1 - p1))))


def test_rrreg_predictor_reference(reference: dict[str, Any], data: Any) -> None:
    ref = reference["rrreg_predictor"]
    res = sv.logit("o ~ x1 + x2 + r_fr", data, None, rr_predictors={"r_fr": FR})
    assert list(res.params.index) == ["Intercept", "x1", "x2", "r_fr", "r_fr:Intercept", "r_fr:x1", "r_fr:x2"]
    ours = np.asarray(res.params)
    theirs = np.array(ref["outcome"] + ref["sensitive"])
    # the same likelihood: rr's obs.llik at both points equals ours
    lik = res.model.likelihood
    assert lik.loglike(theirs) == pytest.approx(_rr_obs_llik(theirs, data), abs=1e-8)
    assert res.llf == pytest.approx(_rr_obs_llik(ours, data), abs=1e-8)
    # rr's EM point is not its maximum: its score there is large, ours is 0 and higher by 0.18
    assert np.max(np.abs(lik.score(theirs))) > 5 and np.max(np.abs(lik.score(ours))) < 1e-4
    assert res.llf - _rr_obs_llik(theirs, data) == pytest.approx(0.181, abs=0.001)
    # so the estimates differ, but by little against the SEs (at most 0.52 SE, the outcome's x1), and the SEs
    # (rr: optim's numerical Hessian at its point) agree to 1.1%
    assert np.max(np.abs(ours - theirs) / np.asarray(res.bse)) < 0.55
    np.testing.assert_allclose(res.bse, ref["outcome_se"] + ref["sensitive_se"], rtol=0.012)
    assert res.converged and "Logit on r_fr (FR" in str(res.summary())


def test_rrlin_three_predictors_reference(reference: dict[str, Any], data: Any) -> None:
    """FR, Warner and UQTknown predictors and a plain covariate, constant state probabilities (RRlin's model)."""
    ref = reference["RRlin_three"]
    res = sv.linear("y ~ r_fr + r_w + r_uqt + x1", data, rr_predictors={"r_fr": FR, "r_w": WARNER, "r_uqt": UQT},
                    rr_formula="1")
    names = list(res.params.index)
    assert names[:6] == ["Intercept", "r_fr", "r_w", "r_uqt", "x1", "sigma"]
    assert names[6] == "r_fr=0&r_w=0&r_uqt=1:Intercept" and len(names) == 13
    # RRlin's L-BFGS-B stops about 7e-4 short in the coefficients; our log-likelihood is higher by 4e-5
    np.testing.assert_allclose(res.params[:6], [*ref["beta"].values(), ref["sigma"]], atol=1e-3)
    np.testing.assert_allclose(res.bse[:6], [*ref["beta_se"], ref["sigma_se"]], rtol=5e-4)
    assert ref["logLik"] <= res.llf <= ref["logLik"] + 1e-4
    states = res.state_probabilities()
    assert list(states.index[:2]) == ["r_fr=0&r_w=0&r_uqt=0", "r_fr=0&r_w=0&r_uqt=1"]
    np.testing.assert_allclose(states["probability"], list(ref["pi"].values()), atol=2e-4)
    np.testing.assert_allclose(states["std_error"][:-1], ref["pi_se"], rtol=1e-3)


def test_rrlin_two_group_predictor(reference: dict[str, Any], data: Any) -> None:
    """SLD's t estimated jointly: a higher log-likelihood than RRlin's plug-in, coefficients within 0.3 SE."""
    ref = reference["RRlin_sld"]
    res = sv.linear("y ~ r_w + r_sld + x1", data, rr_predictors={"r_w": WARNER, "r_sld": SLD},
                    rr_groups={"r_sld": "g_sld"}, rr_formula="1")
    assert res.params.index[-1] == "r_sld:t" and 0 < res.params["r_sld:t"] < 1 and res.bse["r_sld:t"] > 0
    assert res.llf > ref["logLik"] + 0.1
    diff = (np.asarray(res.params[:4]) - list(ref["beta"].values())) / np.asarray(res.bse[:4])
    assert np.max(np.abs(diff)) < 0.3


def test_correlation_reference(reference: dict[str, Any], data: Any) -> None:
    """RRcor's estimate to rounding; the delta-method SEs within 10% of its bootstrap's (1000 resamples: Monte
    Carlo error 2.2% of an SE; the largest difference is 2.8%)."""
    ref = reference["RRcor"]
    cor = sv.correlation(data[ref["names"]], designs={"r_fr": FR, "r_w": WARNER, "r_uqt": UQT})
    assert list(cor.matrix.index) == ref["names"]
    np.testing.assert_allclose(cor.matrix, ref["r"], atol=1e-12)
    boot = np.array(ref["se_bootstrap"], dtype=float)
    off = ~np.eye(len(boot), dtype=bool)
    np.testing.assert_allclose(cor.std_errors.to_numpy()[off], boot[off], rtol=0.1)
    frame = cor.to_frame()
    assert list(frame["pair"][:2]) == ["r_fr ~ r_w", "r_fr ~ r_uqt"] and len(frame) == 10
    low, high = cor.confidence_interval(0.9, method="wald")
    r = frame["estimate"].to_numpy()
    np.testing.assert_allclose((low + high) / 2, r)
    fisher = cor.confidence_interval()
    assert np.all((fisher.low < r) & (r < fisher.high) & (fisher.low >= -1) & (fisher.high <= 1))
    assert cor.to_dict()["designs"] == {"r_fr": "FR", "r_w": "Warner", "r_uqt": "UQTknown"}


def test_correlation_of_plain_columns_is_pearson(rng: np.random.Generator) -> None:
    """Without randomized answers the estimate is Pearson's r and the SE its delta-method SE (for normal data
    about (1 - r^2) / sqrt(n))."""
    n = 4000
    x = rng.normal(size=n)
    df = pd.DataFrame({"a": x, "b": 0.6 * x + 0.8 * rng.normal(size=n)})
    cor = sv.correlation(df, designs={})
    assert cor.matrix.loc["a", "b"] == pytest.approx(np.corrcoef(df["a"], df["b"])[0, 1], abs=1e-12)
    assert cor.std_errors.loc["a", "b"] == pytest.approx((1 - 0.36) / np.sqrt(n), rel=0.1)


def test_one_rr_predictor_matches_linear_with_design(data: Any) -> None:
    """``rr_predictors`` with one one-group predictor and ``rr_formula="1"`` is the older ``linear(design=...)``."""
    old = sv.linear("y ~ r_w + x1", data, WARNER)
    new = sv.linear("y ~ r_w + x1", data, rr_predictors={"r_w": WARNER}, rr_formula="1")
    np.testing.assert_allclose(new.params[:4], old.params[:4], atol=1e-7)
    np.testing.assert_allclose(new.bse[:4], old.bse[:4], rtol=1e-6)
    assert new.llf == pytest.approx(old.llf, abs=1e-8)
    assert new.state_probabilities()["probability"].iloc[1] == pytest.approx(old.params["pi"], abs=1e-7)


def test_randomized_outcome_and_opg(data: Any) -> None:
    """A randomized outcome (the FR answers about z) on a Warner predictor; ``cov_type="opg"``."""
    res = sv.logit("r_fr ~ x1 + r_w", data, FR, rr_predictors={"r_w": WARNER})
    opg = sv.logit("r_fr ~ x1 + r_w", data, FR, rr_predictors={"r_w": WARNER}, cov_type="opg")
    np.testing.assert_allclose(opg.params, res.params)
    assert res.cov_type == "oim" and opg.cov_type == "opg"
    np.testing.assert_allclose(opg.bse, res.bse, rtol=0.25)
    assert res.to_dict()["design"] == "FR"


def test_weights_and_clusters(data: Any) -> None:
    """Equal weights give the unweighted fit; the sandwich (robust, clustered, weighted) has design effects near 1
    for a simple random sample and the same estimate."""
    plain = sv.logit("o ~ x1 + r_fr", data, None, rr_predictors={"r_fr": FR})
    equal = sv.logit("o ~ x1 + r_fr", data.assign(w=3.0), None, rr_predictors={"r_fr": FR}, weights="w")
    np.testing.assert_allclose(equal.params, plain.params, atol=1e-8)
    assert equal.sample is not None and equal.design_effect is not None
    np.testing.assert_allclose(equal.design_effect, 1.0, atol=0.2)
    robust = sv.logit("o ~ x1 + r_fr", data, None, rr_predictors={"r_fr": FR}, cov_type="robust")
    assert robust.cov_type == "robust"
    np.testing.assert_allclose(robust.bse, plain.bse, rtol=0.15)
    cluster = data.index // 3  # clusters of three respondents, formed at random: the same SEs, about
    clustered = sv.linear("y ~ r_w + x1", data.assign(psu=cluster), rr_predictors={"r_w": WARNER},
                          cluster="psu", cov_type="cluster")
    model = sv.linear("y ~ r_w + x1", data, rr_predictors={"r_w": WARNER})
    np.testing.assert_allclose(clustered.params, model.params, atol=1e-10)
    np.testing.assert_allclose(clustered.bse, model.bse, rtol=0.2)
    weighted = sv.linear("y ~ r_w + x1", data.assign(w=1 + data["x2"]), rr_predictors={"r_w": WARNER}, weights="w")
    assert np.all(np.abs(np.asarray(weighted.params[:3]) - np.asarray(model.params[:3]))
                  < 3 * np.asarray(weighted.bse[:3]))
    assert "Design effects" in str(weighted.summary())


def test_howto_runs() -> None:
    """The how-to's examples run as written and find the simulated effects."""
    import re

    text = (REFERENCE_DIR.parents[2] / "docs" / "howto" / "rr-predictors.md").read_text()
    namespace: dict[str, Any] = {}
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        exec(compile(block, "rr-predictors.md", "exec"), namespace)
    assert abs(namespace["res"].params["drugs"] - 0.9) < 3 * namespace["res"].bse["drugs"]
    assert abs(namespace["lin"].params["drugs"] + 4) < 3 * namespace["lin"].bse["drugs"]


def test_bad_input(data: Any) -> None:
    small = data.head(200)
    with pytest.raises(ValueError, match=r"rr_predictors must be a non-empty dict"):
        sv.logit("o ~ x1 + r_fr", small, None, rr_predictors={})
    with pytest.raises(TypeError, match=r"rr_predictors\['r_fr'\] must be a deniable.survey Design"):
        sv.logit("o ~ x1 + r_fr", small, None, rr_predictors={"r_fr": 0.7})
    with pytest.raises(ValueError, match=r"rr_predictors\['r_fr'\]: FR has no binary truth"):
        sv.logit("o ~ x1 + r_fr", small, None, rr_predictors={"r_fr": sv.design("FR", [0.1, 0.1, 0.1])})
    with pytest.raises(ValueError, match=r"rr_predictors names 'q', which is not a plain term"):
        sv.logit("o ~ x1 + r_fr", small, None, rr_predictors={"q": FR})
    with pytest.raises(ValueError, match=r"'r_fr' must enter the formula as a plain term only.*'x1:r_fr'"):
        sv.logit("o ~ x1 * r_fr", small, None, rr_predictors={"r_fr": FR})
    with pytest.raises(ValueError, match=r"answers must be one of 0, 1 for FR; got 0.5 at row 3"):
        sv.logit("o ~ x1 + r_fr", small.assign(r_fr=small["r_fr"].where(small.index != 3, 0.5)), None,
                 rr_predictors={"r_fr": FR})
    with pytest.raises(ValueError, match=r"the outcome must be one of 0, 1; got 1.5"):
        sv.logit("y ~ x1 + r_fr", small.assign(y=1.5), None, rr_predictors={"r_fr": FR})
    with pytest.raises(ValueError, match=r"weights must have one entry per respondent|weights.*200"):
        sv.logit("o ~ x1 + r_fr", small, None, rr_predictors={"r_fr": FR}, weights=np.ones(10))
    with pytest.raises(ValueError, match=r"cov_type must be one of"):
        sv.logit("o ~ x1 + r_fr", small, None, rr_predictors={"r_fr": FR}, cov_type="hc3")
    with pytest.raises(ValueError, match=r"rr_groups: 'r_sld' has the two-group design SLD; give its group"):
        sv.linear("y ~ r_sld", small, rr_predictors={"r_sld": SLD})
    with pytest.raises(ValueError, match=r"rr_groups names 'r_w', which is not in rr_predictors"):
        sv.linear("y ~ r_sld", small, rr_predictors={"r_sld": SLD}, rr_groups={"r_sld": "g_sld", "r_w": "g_sld"})
    with pytest.raises(ValueError, match=r"rr_groups\['r_sld'\] must have one entry per row of data \(200\)"):
        sv.linear("y ~ r_sld", small, rr_predictors={"r_sld": SLD}, rr_groups={"r_sld": [1, 2]})
    with pytest.raises(ValueError, match=r"at most one two-group design"):
        sv.linear("y ~ r_sld + r2", small.assign(r2=small["r_sld"]), rr_predictors={"r_sld": SLD, "r2": SLD},
                  rr_groups={"r_sld": "g_sld", "r2": "g_sld"})
    with pytest.raises(ValueError, match=r"linear takes design= and predictor= .* or rr_predictors=, not both"):
        sv.linear("y ~ r_w", small, WARNER, rr_predictors={"r_w": WARNER})
    with pytest.raises(TypeError, match=r"linear needs design="):
        sv.linear("y ~ r_w", small)
    with pytest.raises(ValueError, match=r"rr_formula must be a right-hand side"):
        sv.linear("y ~ r_w", small, rr_predictors={"r_w": WARNER}, rr_formula="y ~ 1")
    with pytest.raises(ValueError, match=r"design SLD has two groups: with rr_predictors the outcome's design"):
        sv.logit("r_sld ~ r_w", small, SLD, rr_predictors={"r_w": WARNER})
    with pytest.raises(SeparationError, match=r"rr_predictors"):
        sv.logit("o ~ x1 + r_fr", small.assign(o=(small["x1"] > 0).astype(int)), None, rr_predictors={"r_fr": FR})


def test_correlation_bad_input(data: Any) -> None:
    with pytest.raises(ValueError, match=r"'q' is not a column of data"):
        sv.correlation(data, designs={"q": WARNER})
    with pytest.raises(ValueError, match=r"designs names 'r_w', which columns leaves out"):
        sv.correlation(data, designs={"r_w": WARNER}, columns=["x1", "y"])
    with pytest.raises(ValueError, match=r"designs\['r_sld'\]: SLD has two groups"):
        sv.correlation(data, designs={"r_sld": SLD}, columns=["r_sld", "x1"])
    with pytest.raises(ValueError, match=r"column 'r_w': answers must be one of 0, 1 for Warner; got 3.0"):
        sv.correlation(data.assign(r_w=3), designs={"r_w": WARNER}, columns=["r_w", "x1"])
    with pytest.raises(ValueError, match=r"column 's' must be numeric"):
        sv.correlation(data.assign(s="a"), designs={}, columns=["s", "x1"])
    with pytest.raises(ValueError, match=r"at least two variables"):
        sv.correlation(data, designs={}, columns=["x1"])
    with pytest.raises(TypeError, match=r"designs\['r_w'\] must be a deniable.survey Design"):
        sv.correlation(data, designs={"r_w": "Warner"}, columns=["r_w", "x1"])
