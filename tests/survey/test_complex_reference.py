"""Complex samples against R's survey package: svymean, svymle, svrepdesign and withReplicates.

The reference values were computed once by ``tests/survey/reference/make_complex.R`` on a
simulated stratified cluster sample (5 strata, 28 PSUs, about 900 respondents, unequal
weights) and are kept as numbers in ``complex.json``; no R is needed here. The prevalence of
Warner's design is a linear map of the weighted share of "yes" (svymean's mean), so its SE is
svymean's over ``2p - 1`` and its design effect svymean's. The regression is svymle with the
randomized-response likelihood, whose sandwich deniable computes with the exact Hessian
(``se_exact``: the same svyrecvar sandwich in R; svymle's own SEs use optim's numerical
Hessian, so they agree to about 1e-6 only).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest

import deniable.survey as sv
from tests.survey.reference_values import REFERENCE_DIR, data_path

P = 0.8  # Warner's p in the reference sample
WARNER = sv.Warner(p=P)


@cache
def ref() -> dict[str, Any]:
    with (REFERENCE_DIR / "complex.json").open(encoding="utf-8") as handle:
        out: dict[str, Any] = json.load(handle)
    return out


@cache
def sample() -> pd.DataFrame:
    return pd.read_csv(data_path("complex_data.csv"))


def _pi_se(entry: dict[str, Any]) -> tuple[float, float]:
    """svymean's mean and SE of the share of "yes" as the prevalence and its SE."""
    return (float(entry["mean"]) - (1 - P)) / (2 * P - 1), float(np.ravel(entry["se"])[0]) / (2 * P - 1)


def _psu_rows(d: pd.DataFrame) -> np.ndarray:
    """Each row's PSU as a position 0..27 in the order of the data (stratum, then PSU)."""
    key = d["stratum"] * 100 + d["psu"]
    return pd.factorize(key)[0]


def _jackknife(d: pd.DataFrame, strata: bool) -> np.ndarray:
    """svrepdesign's jackknife weights: delete one PSU, reweight the rest of its stratum (JKn) or of the
    sample (JK1) by n / (n - 1)."""
    psu = _psu_rows(d)
    stratum_of = d.groupby(psu)["stratum"].first().to_numpy()
    w = d["w"].to_numpy()
    cols = []
    for j in range(psu.max() + 1):
        inside = (d["stratum"].to_numpy() == stratum_of[j]) if strata else np.ones(len(d), dtype=bool)
        n = len(np.unique(psu[inside]))
        rep = np.where(inside, w * n / (n - 1), w)
        rep[psu == j] = 0.0
        cols.append(rep)
    return np.column_stack(cols)


def _from_multipliers(d: pd.DataFrame, name: str) -> np.ndarray:
    multipliers = np.array(ref()["replicates"][name]["multipliers"])
    return d["w"].to_numpy()[:, None] * multipliers[_psu_rows(d)]


DESIGNS = {
    "strata_cluster": {"weights": "w", "strata": "stratum", "cluster": "psu"},
    "fpc": {"weights": "w", "strata": "stratum", "cluster": "psu", "fpc": "pop_psus"},
    "weights_only": {"weights": "w"},
    "cluster_unweighted": {"strata": "stratum", "cluster": "psu"},
}


def _randomization_variance(d: pd.DataFrame) -> float:
    """Warner's randomization adds ``p (1 - p) / (2p - 1)^2`` per respondent to the variance of the state's
    estimate whatever the state, ``sum_i f_i (w_i / W)^2`` times that to the prevalence's: the part of the
    variance that an fpc must not remove (svymean, given the answers as data, removes it)."""
    n_h = d.groupby("stratum")["psu"].nunique()
    f = (n_h / d.groupby("stratum")["pop_psus"].first())[d["stratum"]].to_numpy()
    w = d["w"].to_numpy()
    return float(np.sum(f * (w / w.sum()) ** 2) * P * (1 - P) / (2 * P - 1) ** 2)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_prevalence_matches_svymean(name: str) -> None:
    d = sample()
    fit = sv.prevalence("warner", WARNER, data=d, **DESIGNS[name])
    entry = ref()["svymean"][name]
    pi, se = _pi_se(entry)
    assert fit.params["pi"] == pytest.approx(pi, rel=1e-12)
    added = _randomization_variance(d) if name == "fpc" else 0.0
    assert fit.bse["pi"] ** 2 == pytest.approx(se**2 + added, rel=1e-10)
    assert fit.design_effect["pi"] == pytest.approx(float(entry["deff"]) * (1 + added / se**2), rel=1e-10)


def test_forced_response_covariance_matches_svymean() -> None:
    """FR (two categories): pi is the share of "1" minus p1 over 1 - p0 - p1, with svymean's covariance."""
    d = sample()
    design = sv.ForcedResponse(p=["1/6", "1/6"])
    fit = sv.prevalence("fr", design, data=d, **DESIGNS["strata_cluster"])
    entry = ref()["svymean"]["fr"]
    assert fit.params["pi"] == pytest.approx((entry["mean"][1] - 1 / 6) / (2 / 3), rel=1e-12)
    assert fit.bse["pi"] == pytest.approx(entry["se"][1] / (2 / 3), rel=1e-10)


@pytest.mark.parametrize("option", ["remove", "certainty", "adjust", "average"])
def test_lonely_psu_options_match_survey_lonely_psu(option: str) -> None:
    d = sample()
    d = d[~((d["stratum"] == 2) & (d["psu"] > 1))]
    fit = sv.prevalence("warner", WARNER, data=d, lonely_psu=option, **DESIGNS["strata_cluster"])
    assert fit.bse["pi"] == pytest.approx(float(np.ravel(ref()["lonely"]["se"][option])[0]) / (2 * P - 1),
                                          rel=1e-10)


def test_lonely_psu_fails_by_default_naming_the_stratum() -> None:
    d = sample()
    d = d[~((d["stratum"] == 2) & (d["psu"] > 1))]
    with pytest.raises(ValueError, match=r"strata: stratum 2 has only one PSU.*lonely_psu="):
        sv.prevalence("warner", WARNER, data=d, **DESIGNS["strata_cluster"])


REPLICATES = {
    "JK1": lambda d: _jackknife(d, strata=False),
    "JKn": lambda d: _jackknife(d, strata=True),
    "bootstrap": lambda d: _from_multipliers(d, "bootstrap"),
    "BRR": lambda d: _from_multipliers(d, "BRR"),
}


@pytest.mark.parametrize("mse", [False, True])
@pytest.mark.parametrize("rep_type", list(REPLICATES))
def test_replicate_weights_match_svrepdesign(rep_type: str, mse: bool) -> None:
    d = sample()
    reps = REPLICATES[rep_type](d)
    extra = {"strata": "stratum", "cluster": "psu"} if rep_type == "JKn" else {}
    fit = sv.prevalence("warner", WARNER, data=d, weights="w", repweights=reps, rep_type=rep_type, mse=mse,
                        **extra)
    entry = ref()["replicates"][rep_type]
    se = float(np.ravel(entry["se_mse" if mse else "se"])[0]) / (2 * P - 1)
    assert fit.params["pi"] == pytest.approx(_pi_se(entry)[0], rel=1e-12)
    assert fit.bse["pi"] == pytest.approx(se, rel=1e-10)


@pytest.mark.parametrize("name", list(DESIGNS))
def test_logit_matches_svymle(name: str) -> None:
    d = sample()
    res = sv.logit("warner ~ x", d, WARNER, **DESIGNS[name])
    entry = ref()["svymle"][name]
    if name == "fpc":  # svymle lets the fpc shrink the randomization's variance too: compare that part alone
        sample_part = _sample_part(res, d)
        np.testing.assert_allclose(np.sqrt(np.diag(sample_part)), entry["se_exact"], rtol=1e-6)
        assert np.all(np.asarray(res.bse) > np.asarray(entry["se_exact"]))
        return
    # optim's BFGS (reltol 1e-15) stops within about 1e-7 of the maximum that Newton's method reaches
    np.testing.assert_allclose(res.params, entry["coef"], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(res.bse, entry["se_exact"], rtol=1e-6)
    np.testing.assert_allclose(res.bse, entry["se_svymle"], rtol=1e-5)
    np.testing.assert_allclose(res.cov_params(), entry["vcov_exact"], rtol=1e-6, atol=1e-12)


def _sample_part(res: Any, d: pd.DataFrame) -> np.ndarray:
    """The sandwich without the randomization's variance (what svymle computes), from the fitted likelihood."""
    from deniable._sample_design import sample_design

    lik = res.model.likelihood
    sample_ = sample_design(len(d), data=d, **DESIGNS["fpc"])
    assert sample_ is not None
    inverse = np.linalg.inv(-lik.hessian(np.asarray(res.params)))
    z = (lik.weights[:, None] * lik.score_obs(np.asarray(res.params))) @ inverse
    return np.asarray(sample_.variance(z))


@pytest.mark.parametrize("rep_type", ["JKn", "bootstrap"])
def test_logit_replicates_match_with_replicates(rep_type: str) -> None:
    d = sample()
    extra = {"strata": "stratum", "cluster": "psu"} if rep_type == "JKn" else {}
    res = sv.logit("warner ~ x", d, WARNER, weights="w", repweights=REPLICATES[rep_type](d), rep_type=rep_type,
                   **extra)
    entry = ref()["withReplicates"][rep_type]
    np.testing.assert_allclose(res.params, entry["coef"], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.bse, entry["se"], rtol=1e-6)
    assert res.cov_type == f"replicate ({rep_type})"


def test_cluster_cov_type_is_the_unweighted_design() -> None:
    """cov_type="cluster" (Stata's vce(cluster)) is svymle on the unweighted clustered design."""
    d = sample()
    res = sv.logit("warner ~ x", d, WARNER, cluster="psu", strata="stratum", cov_type="cluster")
    np.testing.assert_allclose(res.bse, ref()["svymle"]["cluster_unweighted"]["se_exact"], rtol=1e-6)


def test_prevalence_by_domains_match_svyby() -> None:
    """Each level is a domain of the whole design (svyby); the Wald test is svycontrast's of the difference."""
    d = sample().assign(positive=lambda f: f["x"] > 0)
    grouped = sv.prevalence_by("warner", WARNER, "positive", data=d, **DESIGNS["strata_cluster"])
    entry = ref()["domains"]
    for level, mean, se in zip((False, True), entry["mean"], entry["se"], strict=True):
        fit = grouped.fits[level]
        assert fit.params["pi"] == pytest.approx((mean - (1 - P)) / (2 * P - 1), rel=1e-12)
        assert fit.bse["pi"] == pytest.approx(se / (2 * P - 1), rel=1e-10)
    assert grouped.test == "wald" and grouped.df == 1
    assert grouped.lr_statistic == pytest.approx(float(np.ravel(entry["wald"])[0]), rel=1e-10)
