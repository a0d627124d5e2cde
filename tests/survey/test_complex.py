"""Survey weights and complex samples: equal weights change nothing, bad input is refused by name, the
design-based SEs reduce to the known special cases (robust, cluster, replicates vs linearization)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import deniable.survey as sv
from deniable._sample_design import design_variance, sample_design


def _data(n: int = 1200, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    carrier = rng.random(n) < 1 / (1 + np.exp(-(-0.4 + 0.9 * x)))
    group = rng.integers(1, 3, n)
    design = sv.UnrelatedQuestionUnknown(p=[0.7, 0.3])
    return pd.DataFrame({
        "x": x,
        "warner": np.asarray(sv.Warner(p=0.75).privatize_many(carrier, rng=rng)).astype(int),
        "uqt": np.asarray(design.privatize_many(carrier, group, rng=rng, unrelated=rng.random(n) < 0.4)).astype(int),
        "group": group,
        "w": rng.uniform(0.5, 3.0, n),
        "stratum": rng.integers(0, 3, n),
        "psu": rng.integers(0, 12, n),
    })


def test_equal_weights_give_the_unweighted_estimates() -> None:
    d = _data()
    plain = sv.prevalence(d["warner"].to_numpy(), sv.Warner(p=0.75))
    for c in (1.0, 7.5):
        fit = sv.prevalence("warner", sv.Warner(p=0.75), data=d, weights=np.full(len(d), c))
        assert fit.params["pi"] == pytest.approx(plain.params["pi"], rel=1e-13)
        # svymean's n/(n-1) times the sample variance is RRreg's lambda (1 - lambda) / (n - 1)
        assert fit.bse["pi"] == pytest.approx(plain.bse["pi"], rel=1e-12)
        assert fit.design_effect["pi"] == pytest.approx(1.0, rel=1e-12)
    res = sv.logit("warner ~ x", d, sv.Warner(p=0.75))
    weighted = sv.logit("warner ~ x", d, sv.Warner(p=0.75), weights=np.full(len(d), 3.0))
    robust = sv.logit("warner ~ x", d, sv.Warner(p=0.75), cov_type="robust")
    np.testing.assert_allclose(weighted.params, res.params, rtol=1e-9)
    np.testing.assert_allclose(weighted.bse, robust.bse, rtol=1e-9)
    np.testing.assert_allclose(weighted.design_effect, 1.0, rtol=1e-9)


def test_two_group_designs_take_weights() -> None:
    d = _data()
    design = sv.UnrelatedQuestionUnknown(p=[0.7, 0.3])
    plain = sv.prevalence(d["uqt"].to_numpy(), design, d["group"].to_numpy())
    fit = sv.prevalence("uqt", design, "group", data=d, weights=np.ones(len(d)))
    assert list(fit.params) == ["pi", "piUQ"]
    np.testing.assert_allclose(list(fit.params.values()), list(plain.params.values()), rtol=1e-12)
    # each group's share has svymean's variance n_g/(n_g - 1) x ... as a domain of the whole sample:
    # the domain estimator's variance differs from RRreg's per-group one by O(1/n) only
    np.testing.assert_allclose(list(fit.bse.values()), list(plain.bse.values()), rtol=2e-3)
    res = sv.logit("uqt ~ x", d, design, group="group", weights="w", strata="stratum", cluster="psu")
    assert res.params.index.tolist() == ["Intercept", "x", "piUQ"]
    assert np.all(np.isfinite(res.bse)) and res.design_effect.index.tolist() == ["Intercept", "x", "piUQ"]


def test_jackknife_replicates_agree_with_linearization() -> None:
    """JK1 replicate SEs of a smooth estimator approach the linearization SEs (here within 5%)."""
    d = _data(3000)
    psu = d["stratum"] * 100 + d["psu"]
    labels, psu_code = np.unique(psu, return_inverse=True)
    w = d["w"].to_numpy()
    reps = np.column_stack([np.where(psu_code == j, 0.0, w * labels.size / (labels.size - 1))
                            for j in range(labels.size)])
    lin = sv.prevalence("warner", sv.Warner(p=0.75), data=d, weights="w", cluster=psu.to_numpy())
    jk = sv.prevalence("warner", sv.Warner(p=0.75), data=d, weights="w", repweights=reps, rep_type="JK1")
    assert jk.bse["pi"] == pytest.approx(lin.bse["pi"], rel=0.05)
    res_lin = sv.logit("warner ~ x", d, sv.Warner(p=0.75), weights="w", cluster=psu.to_numpy())
    res_jk = sv.logit("warner ~ x", d, sv.Warner(p=0.75), weights="w", repweights=reps, rep_type="JK1")
    np.testing.assert_allclose(res_jk.bse, res_lin.bse, rtol=0.05)


def test_design_variance_of_a_total_by_hand() -> None:
    """Two strata: (2 PSUs with totals 1, 3) and (3 PSUs with totals 0, 0, 6), f = 0 and 0.5."""
    z = np.array([1.0, 3.0, 0.0, 0.0, 6.0])
    psu, strata = np.arange(5), np.array([0, 0, 1, 1, 1])
    expected = 2 / 1 * (1 + 1) + 3 / 2 * (4 + 4 + 16) * 0.5
    assert design_variance(z, psu, strata, np.array([0.0, 0.5]))[0, 0] == pytest.approx(expected)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"weights": np.ones(5)}, r"weights must have one entry per respondent \(1200\); got shape \(5,\)"),
    ({"weights": np.r_[-1.0, np.ones(1199)]}, r"weights must be finite and non-negative.*-1.0 at position 0"),
    ({"weights": np.r_[np.ones(3), np.nan, np.ones(1196)]}, r"weights must be finite.*nan at position 3"),
    ({"weights": np.zeros(1200)}, r"weights must have a positive entry"),
    ({"weights": "nope"}, r"weights 'nope' is not a column of data"),
    ({"strata": np.r_[np.nan, np.ones(1199)]}, r"strata must have a value for every respondent"),
    ({"cluster": [None] + [1] * 1199}, r"cluster must have a value for every respondent; missing at position 0"),
    ({"weights": "w", "lonely_psu": "drop"}, r"lonely_psu must be one of 'fail', 'remove'"),
    ({"repweights": np.ones((1200, 3))}, r"rep_type must be one of 'JK1', 'JKn', 'bootstrap', 'BRR'"),
    ({"repweights": np.ones((1200, 3)), "rep_type": "JKn"}, r"rep_type 'JKn': give rscales="),
    ({"repweights": np.ones((10, 3)), "rep_type": "JK1"}, r"repweights must be a 2-D array with one row per"),
    ({"rep_type": "JK1"}, r"rep_type, rscales and mse need repweights="),
    ({"strata": "stratum", "fpc": np.r_[0.1, np.full(1199, 0.2)]}, r"fpc must be constant within a stratum"),
])
def test_bad_input_names_the_argument(kwargs: dict[str, object], message: str) -> None:
    d = _data()
    with pytest.raises(ValueError, match=message):
        sv.prevalence("warner", sv.Warner(p=0.75), data=d, **kwargs)  # type: ignore[arg-type]


def test_logit_refuses_mixed_covariances() -> None:
    d = _data()
    with pytest.raises(ValueError, match=r"cov_type='oim' is model-based, but weights describe a complex sample"):
        sv.logit("warner ~ x", d, sv.Warner(p=0.75), weights="w", cov_type="oim")
    with pytest.raises(ValueError, match=r"cov_type='cluster' needs cluster="):
        sv.logit("warner ~ x", d, sv.Warner(p=0.75), cov_type="cluster")
    with pytest.raises(ValueError, match=r"cov_type='robust' treats each respondent as its own PSU"):
        sv.logit("warner ~ x", d, sv.Warner(p=0.75), cluster="psu", cov_type="robust")
    with pytest.raises(ValueError, match=r"cov_type must be one of"):
        sv.logit("warner ~ x", d, sv.Warner(p=0.75), cov_type="hc1")


def test_rows_with_missing_covariates_keep_their_psu() -> None:
    """A row dropped for a missing covariate contributes 0, as subset() of a survey design: its PSU still counts."""
    d = _data()
    d.loc[d["psu"] == 0, "x"] = np.nan  # PSU 0 of every stratum loses all its rows
    res = sv.logit("warner ~ x", d, sv.Warner(p=0.75), weights="w", strata="stratum", cluster="psu")
    kept = d.dropna()
    sample = sample_design(len(d), weights="w", strata="stratum", cluster="psu", data=d)
    assert sample is not None and sample.stratum_of_psu.size == 36
    ref = sv.logit("warner ~ x", kept, sv.Warner(p=0.75), weights="w", strata="stratum", cluster="psu")
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-10)
    # with 12 PSUs per stratum instead of 11 (the empty PSU's total is 0), the variance changes
    assert not np.allclose(res.bse, ref.bse, rtol=1e-6)
    assert res.n_dropped == int(d["x"].isna().sum())


def test_results_report_the_design() -> None:
    d = _data()
    fit = sv.prevalence("warner", sv.Warner(p=0.75), data=d, weights="w", strata="stratum", cluster="psu")
    assert "deff" in repr(fit) and "36 PSUs" in repr(fit)
    table = fit.to_dict()
    assert table["method"] == "wald" and "design_effect" in table and table["sample"].startswith("weighted, 3 strata")
    low, high = fit.ci(method="profile")["pi"]
    assert 0 <= low < fit.params["pi"] < high <= 1
    res = sv.logit("warner ~ x", d, sv.Warner(p=0.75), weights="w", strata="stratum", cluster="psu")
    text = str(res.summary())
    assert "cov_type='linearization'" in text and "Design effects: Intercept" in text
    assert res.to_dict()["design_effect"] == pytest.approx(res.design_effect.tolist())


def test_prevalence_by_with_equal_weights_keeps_the_estimates() -> None:
    d = _data(2000).assign(region=lambda f: np.where(f["x"] > 0, "a", "b"))
    plain = sv.prevalence_by(d["warner"].to_numpy(), sv.Warner(p=0.75), d["region"].to_numpy())
    weighted = sv.prevalence_by("warner", sv.Warner(p=0.75), "region", data=d, weights=np.ones(len(d)))
    for level in ("a", "b"):
        assert weighted.fits[level].params["pi"] == pytest.approx(plain.fits[level].params["pi"], rel=1e-12)
    assert weighted.test == "wald" and plain.test == "likelihood ratio"
    # the Wald and likelihood-ratio statistics agree to first order
    assert weighted.lr_statistic == pytest.approx(plain.lr_statistic, rel=0.1)
    with pytest.raises(ValueError, match=r"weights must have one entry per respondent"):
        sv.prevalence_by("warner", sv.Warner(p=0.75), "region", data=d, weights=np.ones(3))


def test_linear_regression_on_a_randomized_predictor_takes_weights() -> None:
    rng = np.random.default_rng(4)
    n = 1500
    carrier, x = rng.random(n) < 0.35, rng.normal(size=n)
    d = pd.DataFrame({"y": 1 + 2 * carrier + 0.5 * x + rng.normal(0, 1, n),
                      "z": np.asarray(sv.Warner(p=0.8).privatize_many(carrier, rng=rng)).astype(int),
                      "x": x, "w": rng.uniform(1, 3, n), "psu": rng.integers(0, 40, n)})
    plain = sv.linear("y ~ z + x", d, sv.Warner(p=0.8))
    equal = sv.linear("y ~ z + x", d, sv.Warner(p=0.8), weights=np.full(n, 2.0))
    robust = sv.linear("y ~ z + x", d, sv.Warner(p=0.8), cov_type="robust")
    np.testing.assert_allclose(equal.params, plain.params, rtol=1e-8)
    np.testing.assert_allclose(equal.bse, robust.bse, rtol=1e-8)
    # the sandwich and the observed information agree when the model is right (here within 10%)
    np.testing.assert_allclose(robust.bse, plain.bse, rtol=0.1)
    res = sv.linear("y ~ z + x", d, sv.Warner(p=0.8), weights="w", cluster="psu")
    assert res.cov_type == "linearization" and list(res.design_effect.index) == ["Intercept", "z", "x", "sigma", "pi"]


def test_the_docs_page_runs_and_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "math" / "complex-samples.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 3
    printed = "".join(part.split("```text\n", 1)[1].split("```", 1)[0] for part in text.split("It prints")[1:])
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "complex-samples.md", "exec"), namespace)
    assert capsys.readouterr().out == printed
