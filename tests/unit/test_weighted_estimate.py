"""Frequency oracles' and numeric mechanisms' estimates from a complex sample (deniable._weighted_estimate).

GRR with two categories and p* = 0.8 is Warner's design with p = 0.8, so its weighted estimate and
design-based SE equal deniable.survey.prevalence's on the same answers, which
tests/survey/test_complex_reference.py checks against R's svymean (with fpc: plus the randomization's
variance, here checked in closed form). Equal weights give the unweighted estimates, with the
with-replacement factor n / (n - 1) in the variance.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import deniable as dn
import deniable.survey as sv
from tests.survey.reference_values import data_path


def _sample() -> pd.DataFrame:
    return pd.read_csv(data_path("complex_data.csv"))


@pytest.mark.parametrize("fpc", [None, "pop_psus"])
def test_grr_with_two_categories_is_warner_prevalence(fpc: str | None) -> None:
    d = _sample()
    m = dn.GRR(2, epsilon=math.log(4))  # p* = 0.8, q* = 0.2
    args = {"weights": d["w"].to_numpy(), "strata": d["stratum"].to_numpy(), "cluster": d["psu"].to_numpy()}
    if fpc:
        args["fpc"] = d[fpc].to_numpy()
    est = m.estimate(d["warner"].to_numpy(), **args)
    fit = sv.prevalence(d["warner"].to_numpy(), sv.Warner(p=0.8), **args)
    # GRR's exact integer probabilities put p* within about 1e-11 of 0.8
    assert est.frequencies[1] == pytest.approx(fit.params["pi"], rel=1e-9)
    assert est.std_errors[1] == pytest.approx(fit.bse["pi"], rel=1e-9)
    assert est.design_effect[1] == pytest.approx(fit.design_effect["pi"], rel=1e-9)
    assert est.ci_methods == ("normal",)
    with pytest.raises(ValueError, match="binomial intervals need unweighted counts"):
        est.confidence_interval(method="wilson")


@pytest.mark.parametrize("name", ["GRR", "OUE", "OLH", "HadamardResponse", "SubsetSelection"])
def test_equal_weights_keep_the_frequencies(name: str) -> None:
    rng = np.random.default_rng(11)
    n = 3000
    m = getattr(dn, name)(5, epsilon=1.0)
    reports = m.privatize_many(rng.integers(0, 5, n), rng=rng)
    plain = m.estimate(reports)
    weighted = m.estimate(reports, weights=np.full(n, 4.0))
    np.testing.assert_allclose(weighted.frequencies, plain.frequencies, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(weighted.std_errors, plain.std_errors * math.sqrt(n / (n - 1)), rtol=1e-10)
    np.testing.assert_allclose(weighted.design_effect, 1.0, rtol=1e-10)


@pytest.mark.parametrize("name", ["Laplace", "Piecewise", "Duchi"])
def test_equal_weights_keep_the_mean(name: str) -> None:
    rng = np.random.default_rng(12)
    n = 3000
    m = getattr(dn, name)(0, 10, epsilon=1.0)
    reports = m.privatize_many(rng.uniform(0, 10, n), rng=rng)
    plain = m.estimate(reports)
    weighted = m.estimate(reports, weights=np.full(n, 0.5))
    assert weighted.mean == pytest.approx(plain.mean, rel=1e-12)
    assert weighted.std_error == pytest.approx(plain.std_error, rel=1e-10)
    assert weighted.design_effect == pytest.approx(1.0, rel=1e-10)


def test_fpc_adds_the_laplace_noise_back() -> None:
    """Laplace noise has the same variance for every value: with an fpc the mean's variance is the sampling
    part shrunk by (1 - f) plus ``sum f (half w / W)^2 v0``."""
    rng = np.random.default_rng(13)
    n = 2000
    m = dn.Laplace(0, 10, epsilon=1.0)
    reports = m.privatize_many(rng.uniform(0, 10, n), rng=rng)
    strata = rng.integers(0, 2, n)
    f = np.where(strata == 0, 0.3, 0.6)
    w = 1 / f
    without = m.estimate(reports, weights=w, strata=strata)
    with_fpc = m.estimate(reports, weights=w, strata=strata, fpc=f)
    # the stratum variances without fpc, each shrunk by (1 - f_h)
    t = (reports - 5.0) / 5.0
    z = 5.0 * w * (t - np.average(t, weights=w)) / w.sum()
    shrunk = sum((1 - f[strata == h][0]) * (strata == h).sum() / ((strata == h).sum() - 1)
                 * np.sum((z[strata == h] - z[strata == h].mean()) ** 2) for h in (0, 1))
    v0 = m._coefficients[0]
    added = float(np.sum(f * (5.0 * w / w.sum()) ** 2) * v0)
    assert with_fpc.std_error ** 2 == pytest.approx(shrunk + added, rel=1e-10)
    assert without.std_error > with_fpc.std_error


def test_refusals() -> None:
    rng = np.random.default_rng(14)
    m = dn.GRR(3, epsilon=1.0)
    reports = m.privatize_many(rng.integers(0, 3, 100), rng=rng)
    with pytest.raises(ValueError, match=r"target must be 'population' with weights"):
        m.estimate(reports, target="respondents", weights=np.ones(100))
    with pytest.raises(ValueError, match=r"weights must have one entry per respondent \(100\)"):
        m.estimate(reports, weights=np.ones(10))
    with pytest.raises(ValueError, match=r"weights must be finite and non-negative"):
        m.estimate(reports, weights=np.r_[np.nan, np.ones(99)])
    d = dn.DBitFlip(8, epsilon=1.0, d=2)
    with pytest.raises(ValueError, match=r"weights: DBitFlip has its own estimator"):
        d.estimate(d.privatize_many(rng.integers(0, 8, 50), rng=rng), weights=np.ones(50))
