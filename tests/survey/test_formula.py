"""Formulas as R users write them (deniable.survey._formula): factor(), relevel(), log(), scale() and center()
on columns with missing values, ``y ~ .``, and the warning for integer codes entering as a number."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import deniable.survey as sv
from deniable.errors import DeniableWarning

WARNER = sv.Warner(p=0.8)


def _data(n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.normal(size=n)
    region = rng.integers(1, 4, n)
    carrier = rng.random(n) < 1 / (1 + np.exp(-(-0.5 + 0.7 * x + 0.3 * (region == 2))))
    d = pd.DataFrame({"y": np.asarray(WARNER.privatize_many(carrier, rng=rng)).astype(int), "x": x,
                      "region": region, "income": np.exp(rng.normal(size=n)), "w": rng.uniform(1, 2, n)})
    d.loc[[5, 17], "x"] = np.nan
    return d


def test_scale_and_log_on_a_column_with_missing_values() -> None:
    d = _data()
    res = sv.logit("y ~ scale(x) + log(income)", d, WARNER)
    kept = d.dropna()
    manual = kept.assign(zx=(kept["x"] - kept["x"].mean()) / kept["x"].std(ddof=1), li=np.log(kept["income"]))
    ref = sv.logit("y ~ zx + li", manual, WARNER)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-10)
    assert res.n_dropped == 2
    centred = sv.logit("y ~ center(x)", d, WARNER)
    np.testing.assert_allclose(centred.params.iloc[1], sv.logit("y ~ x", d, WARNER).params.iloc[1], rtol=1e-10)


def test_factor_and_relevel() -> None:
    d = _data()
    res = sv.logit("y ~ x + factor(region)", d, WARNER)
    assert res.params.index.tolist() == ["Intercept", "C(region)[T.2]", "C(region)[T.3]", "x"]
    other = sv.logit("y ~ x + relevel(factor(region), ref = 3)", d, WARNER)
    # the same model with level 3 as the reference: the fitted prevalences agree
    np.testing.assert_allclose(other.predict(), res.predict(), rtol=1e-8)
    assert "C(region, Treatment(reference=3))[T.1]" in other.params.index


def test_dot_means_every_other_column_but_the_design_arguments() -> None:
    d = _data().drop(columns="region")
    res = sv.logit("y ~ .", d, WARNER, weights="w")
    assert res.params.index.tolist() == ["Intercept", "x", "income"]


def test_integer_codes_entering_as_a_number_warn() -> None:
    d = _data()
    with pytest.warns(DeniableWarning, match=r"column 'region' has 3 integer codes \(1, 2, 3\).*factor\(region\)"):
        sv.logit("y ~ x + region", d, WARNER)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sv.logit("y ~ x + factor(region)", d, WARNER)


@pytest.mark.parametrize(("column", "want"), [
    (np.r_[np.tile([0.0, 1.0], 3000), 2.0], [0.0, 1.0, 2.0]),  # a third code after the first rows
    (np.tile([1, 2, 3], 3000), [1, 2, 3]),
    (np.r_[np.tile([1, 2, 3], 2000), np.arange(4, 8)], None),  # six values past the first rows
    (np.linspace(0.0, 1.0, 9000), None),
    (np.zeros(0), []),
])
def test_the_distinct_values_of_a_column_when_few(column: np.ndarray, want: list[float] | None) -> None:
    """What the warning reads: the distinct values of a column when there are at most five, else None,
    the same as ``np.unique`` of every row whichever rows hold them."""
    from deniable.survey._formula import _distinct_if_few

    got = _distinct_if_few(column, 5)
    assert (got is None) == (want is None)
    if want is not None:
        assert got.tolist() == want and np.array_equal(got, np.unique(column))


def test_drop1_is_the_likelihood_ratio_test_of_each_term() -> None:
    d = _data()
    full = sv.logit("y ~ x + factor(region) + log(income)", d, WARNER)
    table = full.drop1()
    assert table.index.tolist() == ["C(region)", "x", "log(income)"]
    for term, formula in (("C(region)", "y ~ x + log(income)"), ("log(income)", "y ~ x + factor(region)")):
        test = sv.lr_test(full, sv.logit(formula, d.dropna(subset=["x"]), WARNER))
        assert table.loc[term, "lr"] == pytest.approx(test.statistic, rel=1e-8)
        assert table.loc[term, "df"] == test.df
        assert table.loc[term, "pvalue"] == pytest.approx(test.pvalue, rel=1e-6)
    with pytest.raises(ValueError, match=r"drop1: likelihood-ratio tests need the model's likelihood"):
        sv.logit("y ~ x", d, WARNER, weights="w").drop1()


def test_predict_interval() -> None:
    d = _data()
    res = sv.logit("y ~ x + log(income)", d, WARNER)
    band = res.predict_interval()
    np.testing.assert_allclose(band["fit"], res.predict(), rtol=1e-12)
    assert np.all((band["ci_low"] < band["fit"]) & (band["fit"] < band["ci_high"]))
    assert np.all((band["ci_low"] > 0) & (band["ci_high"] < 1))
    # the delta method's SE against a finite difference of the fitted prevalence of the first respondent
    beta, cov = res.params.to_numpy(), res.cov_params().to_numpy()
    x0 = np.r_[1.0, d["x"].iloc[0], np.log(d["income"].iloc[0])]
    g = 1 / (1 + np.exp(-(x0 @ beta)))
    grad = g * (1 - g) * x0
    assert band["se"].iloc[0] == pytest.approx(float(np.sqrt(grad @ cov @ grad)), rel=1e-10)
    new = res.predict_interval(d.head(7))
    assert np.isnan(new["fit"].iloc[5]) and new.index.tolist() == list(range(7))


def test_poly_is_r_orthogonal_polynomial() -> None:
    """R: ``x <- c(0.3, 1.2, 2.5, 3.1, 4.8, 5.0, 6.7, 7.2); poly(x, 3)`` (rows 1 and 8) and
    ``predict(poly(x, 3), c(1, 2.2))``, R 4.2.2."""
    import patsy

    from deniable.survey._formula import namespace

    x = np.array([0.3, 1.2, 2.5, 3.1, 4.8, 5.0, 6.7, 7.2])
    env = patsy.EvalEnvironment.capture().with_outer_namespace(namespace())
    basis = patsy.dmatrix("poly(x, 3) - 1", {"x": x}, eval_env=env)
    np.testing.assert_allclose(np.asarray(basis)[[0, 7]], [[-0.537755350404327, 0.531482629895799, -0.425607045904390],
                                                          [0.507459274325210, 0.463107990297473, 0.363829353365793]],
                               rtol=1e-12)
    (new,) = patsy.build_design_matrices([basis.design_info], {"x": np.array([1.0, 2.2])})
    np.testing.assert_allclose(np.asarray(new), [[-0.431719084127418, 0.190339558666197, 0.195280847153043],
                                                 [-0.249942627652715, -0.218903206072256, 0.469891870973279]],
                               rtol=1e-12)
    raw = patsy.dmatrix("poly(x, 2, raw=True) - 1", {"x": x}, eval_env=env)
    np.testing.assert_allclose(np.asarray(raw), np.column_stack([x, x**2]))
    d = _data()
    res = sv.logit("y ~ poly(x, 2)", d, WARNER)
    assert len(res.params) == 3
