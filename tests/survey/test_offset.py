"""Offsets in the survey regressions: ``offset()`` terms and the ``offset=`` argument (R's and statsmodels').

The linear predictor is ``eta = X beta + o``. References: direct questioning
(``Warner(p=1)``) against statsmodels' ``Logit``/``OLS`` with an offset; a
forced-response fit against the likelihood coded by hand and maximized by
scipy; exact identities (a constant offset ``c`` moves the intercept by
``-c``; an offset ``b z`` at the full fit's ``b`` reproduces the other
coefficients). Every check here is deterministic (fixed seeds, tolerances
for floating point), so none fails by chance; the calibrated simulation is
in ``test_offset_coverage.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import deniable.survey as sv

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
sm = pytest.importorskip("statsmodels.api", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
optimize = pytest.importorskip("scipy.optimize")

DIRECT = sv.Warner(p=1)  # every answer is the truth: the plain logit
FR = sv.ForcedResponse(p=(0.1, 0.2))
CDM = sv.design("CDM", p=(0.6, 0.3))


def _data(design: sv.Design = DIRECT, n: int = 1200, seed: int = 5) -> pd.DataFrame:
    """Answers with prevalence ``logistic(-1 + 0.8 x - 0.5 z + log(e))``: the exposure ``e`` an offset."""
    rng = np.random.default_rng(seed)
    x, z, e = rng.normal(size=n), rng.normal(size=n), rng.uniform(0.3, 3.0, n)
    truth = rng.random(n) < 1 / (1 + np.exp(-(-1 + 0.8 * x - 0.5 * z + np.log(e))))
    groups = rng.integers(1, 3, n) if design.groups == 2 else None
    y = np.asarray(design.privatize_many(truth, groups, rng=rng)).astype(int)
    frame = pd.DataFrame({"y": y, "x": x, "z": z, "e": e, "g": groups if groups is not None else 1})
    return frame


def test_direct_questioning_equals_statsmodels_logit_with_offset() -> None:
    d = _data()
    res = sv.logit("y ~ x + z + offset(log(e))", d, DIRECT)
    exog = sm.add_constant(d[["x", "z"]].to_numpy())
    ref = sm.Logit(d["y"].to_numpy(), exog, offset=np.log(d["e"].to_numpy())).fit(method="newton", tol=1e-12,
                                                                                    disp=False)
    np.testing.assert_allclose(res.params, ref.params, rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.bse, ref.bse, rtol=1e-6)
    assert res.llf == pytest.approx(ref.llf, abs=1e-8)
    glm = sm.GLM(d["y"].to_numpy(), exog, family=sm.families.Binomial(), offset=np.log(d["e"].to_numpy())).fit(
        tol=1e-14)
    np.testing.assert_allclose(res.params, glm.params, atol=1e-6)
    np.testing.assert_allclose(res.bse, glm.bse, rtol=1e-6)
    # the fitted prevalences include the offset
    np.testing.assert_allclose(res.predict().to_numpy(), ref.predict(exog, offset=np.log(d["e"].to_numpy())),
                               rtol=1e-8)
    assert "Offset (coefficient fixed at 1): offset(log(e))." in str(res.summary())
    # the sandwich too: statsmodels' HC0 with the same offset, times Stata's n / (n - 1) (vce(robust))
    robust = sv.logit("y ~ x + z + offset(log(e))", d, DIRECT, cov_type="robust")
    hc0 = sm.Logit(d["y"].to_numpy(), exog, offset=np.log(d["e"].to_numpy())).fit(
        method="newton", tol=1e-12, disp=False, cov_type="HC0")
    n = len(d)
    np.testing.assert_allclose(robust.bse, hc0.bse * np.sqrt(n / (n - 1)), rtol=1e-6)


def test_linear_with_offset_equals_statsmodels_ols_on_the_shifted_outcome() -> None:
    rng = np.random.default_rng(8)
    n = 600
    r, x, o = (rng.random(n) < 0.4).astype(int), rng.normal(size=n), rng.normal(size=n)
    d = pd.DataFrame({"out": 1 + 2 * r - x + o + rng.normal(size=n), "r": r, "x": x, "o": o})
    res = sv.linear("out ~ r + x + offset(o)", d, DIRECT)
    exog = sm.add_constant(d[["r", "x"]].to_numpy())
    ols = sm.GLM(d["out"].to_numpy(), exog, offset=o).fit()
    np.testing.assert_allclose(res.params.iloc[:3], ols.params, atol=1e-8)
    # the MLE's SEs use sigma^2 = RSS / n, statsmodels' RSS / (n - k)
    np.testing.assert_allclose(res.bse.iloc[:3], ols.bse * np.sqrt((n - 3) / n), rtol=1e-6)
    same = sv.linear("shifted ~ r + x", d.assign(shifted=d["out"] - d["o"]), DIRECT)
    np.testing.assert_allclose(res.params, same.params, rtol=1e-10)
    np.testing.assert_allclose(sv.linear("out ~ r + x", d, DIRECT, offset="o").params, res.params, rtol=1e-10)


def _hand_loglike(beta: np.ndarray, y: np.ndarray, x: np.ndarray, o: np.ndarray, design: sv.Design) -> float:
    """``sum log(T[0, y] (1 - pi) + T[1, y] pi)``, ``pi = logistic(x beta + o)``: the model coded by hand."""
    table = design.transition_matrix(1)  # [state, answer]
    pi = 1 / (1 + np.exp(-(x @ beta + o)))
    return float(np.sum(np.log(table[0, y] * (1 - pi) + table[1, y] * pi)))


def test_forced_response_with_offset_equals_the_likelihood_maximized_by_scipy() -> None:
    d = _data(FR, n=400, seed=11)
    res = sv.logit("y ~ x + offset(log(e)) + offset(0.5 * z)", d, FR)
    x = sm.add_constant(d[["x"]].to_numpy())
    o = np.log(d["e"].to_numpy()) + 0.5 * d["z"].to_numpy()
    y = d["y"].to_numpy()
    found = optimize.minimize(lambda b: -_hand_loglike(b, y, x, o, FR), np.zeros(2), method="Nelder-Mead",
                              options={"xatol": 1e-9, "fatol": 1e-12, "maxiter": 20000})
    np.testing.assert_allclose(res.params, found.x, atol=1e-5)
    assert res.llf == pytest.approx(-found.fun, abs=1e-8)
    # the SEs: the inverse of minus the Hessian of the hand-coded log-likelihood (central differences)
    h, k = 1e-4, len(found.x)
    at = np.asarray(res.params)

    def ll(step: np.ndarray) -> float:
        return _hand_loglike(at + step, y, x, o, FR)

    hess = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            ei, ej = np.eye(k)[i] * h, np.eye(k)[j] * h
            hess[i, j] = (ll(ei + ej) - ll(ei - ej) - ll(ej - ei) + ll(-ei - ej)) / (4 * h * h)
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(np.linalg.inv(-hess))), rtol=1e-5)


@pytest.mark.parametrize("design", [DIRECT, FR, CDM], ids=["direct", "FR", "CDM"])
def test_a_constant_offset_moves_the_intercept_by_minus_c(design: sv.Design) -> None:
    d = _data(design, seed=12)
    group = "g" if design.groups == 2 else None
    base = sv.logit("y ~ x", d, design, group)
    c = 1.7
    shifted = sv.logit("y ~ x + offset(c)", d.assign(c=c), design, group)
    expected = np.asarray(base.params).copy()
    expected[0] -= c
    np.testing.assert_allclose(shifted.params, expected, atol=1e-7)
    np.testing.assert_allclose(shifted.bse, base.bse, rtol=1e-6)
    assert shifted.llf == pytest.approx(base.llf, abs=1e-8)
    np.testing.assert_allclose(shifted.predict(), base.predict(), rtol=1e-7)


@pytest.mark.parametrize("design", [FR, CDM], ids=["FR", "CDM"])
def test_an_offset_at_the_fitted_coefficient_reproduces_the_full_fit(design: sv.Design) -> None:
    """The maximum of the full model, profiled at ``b_z`` fixed at its estimate, is the full maximum."""
    d = _data(design, seed=13)
    group = "g" if design.groups == 2 else None
    full = sv.logit("y ~ x + z", d, design, group)
    b_z = float(full.params["z"])
    fixed = sv.logit("y ~ x", d, design, group, offset=b_z * d["z"].to_numpy())
    np.testing.assert_allclose(fixed.params, full.params.drop("z"), atol=1e-6)
    assert fixed.llf == pytest.approx(full.llf, abs=1e-8)


def test_offsets_add_up_however_they_are_given() -> None:
    d = _data(FR, seed=14)
    terms = sv.logit("y ~ x + offset(log(e)) + offset(z)", d, FR)
    one = sv.logit("y ~ x + offset(I(log(e) + z))", d, FR)
    keyword = sv.logit("y ~ x + offset(z)", d, FR, offset=np.log(d["e"].to_numpy()))
    column = sv.logit("y ~ x + offset(log(e))", d, FR, offset="z")
    for other in (one, keyword, column):
        np.testing.assert_allclose(other.params, terms.params, rtol=1e-10)
        np.testing.assert_allclose(other.bse, terms.bse, rtol=1e-10)


def test_predict_adds_the_offset_for_new_data() -> None:
    d = _data(FR, seed=15)
    res = sv.logit("y ~ x + offset(log(e))", d, FR)
    b = np.asarray(res.params)
    new = pd.DataFrame({"x": [0.0, 1.0, np.nan, 2.0], "e": [1.0, 2.0, 1.0, np.nan]}, index=list("abcd"))
    expected = 1 / (1 + np.exp(-(b[0] + b[1] * new["x"] + np.log(new["e"]))))
    pred = res.predict(new)
    np.testing.assert_allclose(pred.to_numpy(), expected.to_numpy(), rtol=1e-12)  # NaN where x or e is missing
    assert list(pred.index) == list("abcd") and pred.isna().tolist() == [False, False, True, True]
    interval = res.predict_interval(new)
    np.testing.assert_allclose(interval["fit"], pred, rtol=1e-12)
    x = np.array([1.0, 1.0])
    spread = np.sqrt(x @ np.asarray(res.cov_params()) @ x)
    eta = b[0] + b[1] + np.log(2.0)
    assert interval.loc["b", "ci_low"] == pytest.approx(1 / (1 + np.exp(-(eta - 1.959963984540054 * spread))),
                                                        rel=1e-9)
    # an offset= array: newdata's own comes with predict(offset=...), an array or a column of newdata
    arr = sv.logit("y ~ x", d, FR, offset=np.log(d["e"].to_numpy()))
    both = new.dropna()
    np.testing.assert_allclose(arr.predict(both[["x"]], offset=np.log(both["e"].to_numpy())), res.predict(both),
                               rtol=1e-9)
    np.testing.assert_allclose(arr.predict(both.assign(le=np.log(both["e"])), offset="le"), res.predict(both),
                               rtol=1e-9)
    # an offset= column name is read from newdata like a formula term
    col = sv.logit("y ~ x", d.assign(le=np.log(d["e"])), FR, offset="le")
    np.testing.assert_allclose(col.predict(both.assign(le=np.log(both["e"]))), res.predict(both), rtol=1e-9)


def test_drop1_keeps_the_offset_in_every_refit() -> None:
    d = _data(FR, seed=16)
    res = sv.logit("y ~ x + z + offset(log(e))", d, FR)
    table = res.drop1()
    assert list(table.index) == ["x", "z"]
    without_x = sv.logit("y ~ z + offset(log(e))", d, FR)
    assert table.loc["x", "llf"] == pytest.approx(without_x.llf, abs=1e-8)
    without_z = sv.logit("y ~ x + offset(log(e))", d, FR)
    assert table.loc["z", "lr"] == pytest.approx(2 * (res.llf - without_z.llf), abs=1e-7)
    assert sv.lr_test(res, without_z).statistic == pytest.approx(table.loc["z", "lr"], abs=1e-7)
    with pytest.raises(ValueError, match=r"^restricted has other offsets than full: not nested"):
        sv.lr_test(res, sv.logit("y ~ x", d, FR))


def test_weighted_and_glmer_fits_take_the_offset() -> None:
    d = _data(FR, n=800, seed=17)
    plain = sv.logit("y ~ x + offset(log(e))", d, FR)
    weighted = sv.logit("y ~ x + offset(log(e))", d.assign(w=3.0), FR, weights="w")
    np.testing.assert_allclose(weighted.params, plain.params, rtol=1e-8)
    rng = np.random.default_rng(18)
    school = rng.integers(0, 20, len(d))
    mixed = d.assign(school=school)
    base = sv.glmer("y ~ x + (1 | school)", mixed, FR)
    c = -0.6
    shifted = sv.glmer("y ~ x + offset(c) + (1 | school)", mixed.assign(c=c), FR)
    np.testing.assert_allclose(shifted.params, base.params - np.array([c, 0.0]), atol=2e-5)
    assert shifted.llf == pytest.approx(base.llf, abs=1e-6)
    keyword = sv.glmer("y ~ x + (1 | school)", mixed, FR, offset=np.full(len(d), c))
    np.testing.assert_allclose(keyword.params, shifted.params, atol=1e-6)


def test_an_offset_with_missing_values_drops_those_rows() -> None:
    d = _data(FR, seed=19)
    holes = d.assign(e=d["e"].where(d.index % 50 != 0))
    res = sv.logit("y ~ x + offset(log(e))", holes, FR)
    assert res.n_dropped == int((d.index % 50 == 0).sum())
    ref = sv.logit("y ~ x + offset(log(e))", d[d.index % 50 != 0], FR)
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-10)


@pytest.mark.parametrize(("call", "message"), [
    (lambda d: sv.logit("y ~ x", d, FR, offset="exposure"),
     "offset 'exposure' is not a column of data (columns: y, x, z, e, g)"),
    (lambda d: sv.logit("y ~ x", d, FR, offset=np.ones(5)),
     f"offset must be a column name or one number per row of data ({len(_data(FR))}); got shape (5,)"),
    (lambda d: sv.logit("y ~ x", d, FR, offset=np.array(["a"] * len(d))),
     "offset must be numbers (the fixed part of the linear predictor); got dtype <U1"),
    (lambda d: sv.logit("y ~ x + offset(log(e))", d.assign(e=d["e"].where(d.index != 7, 0.0)), FR),
     "offset: offset(log(e)) is -inf at row 7; an offset must be finite (drop the rows where it is not, e.g. a "
     "zero exposure under log)"),
    (lambda d: sv.logit("y ~ x", d, FR, offset=np.where(d.index == 3, np.inf, 0.0)),
     "offset: offset= is inf at row 3; an offset must be finite (drop the rows where it is not, e.g. a zero "
     "exposure under log)"),
    (lambda d: sv.logit("y ~ x + offset(z):x", d, FR),
     "formula 'y ~ x + offset(z):x': offset(z):x crosses an offset with another term; an offset enters alone "
     "(+ offset(z)), its coefficient fixed at 1"),
    (lambda d: sv.logit("y ~ 0 + offset(z)", d, FR),
     "formula 'y ~ 0 + offset(z)' has no coefficient to estimate (only offsets): keep the intercept or a term"),
    (lambda d: sv.logit("y ~ x", d, None, rr_predictors={"x": FR}, offset="z"),
     "offset: randomized predictors (rr_predictors=) take no offset; fit without one"),
    (lambda d: sv.logit("y ~ g + offset(z)", d, None, rr_predictors={"g": FR}),
     "formula 'y ~ g + offset(z)': randomized predictors (rr_predictors=) take no offset() term"),
])
@pytest.mark.filterwarnings("ignore:divide by zero encountered in log:RuntimeWarning")  # log(0), the bad input
def test_bad_offsets_are_refused_naming_the_argument(call: object, message: str) -> None:
    d = _data(FR)
    with pytest.raises(ValueError) as info:
        call(d)  # type: ignore[operator]
    assert str(info.value) == message


def test_bad_offsets_at_predict_are_refused() -> None:
    d = _data(FR, seed=20)
    arr = sv.logit("y ~ x", d, FR, offset=np.log(d["e"].to_numpy()))
    term = sv.logit("y ~ x + offset(log(e))", d, FR)
    new = pd.DataFrame({"x": [0.0, 1.0], "e": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"^offset: the model was fitted with an offset= array, so newdata needs one"):
        arr.predict(new)
    with pytest.raises(ValueError, match=r"^offset: the model was fitted without an offset= array; newdata's"):
        term.predict(new, offset=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"^offset must be a column name or one number per row of newdata \(2\)"):
        arr.predict(new, offset=[0.0])
    with pytest.raises(ValueError, match=r"^offset: pass it with newdata"):
        arr.predict(offset=np.zeros(len(d)))
    with pytest.raises(ValueError, match=r"^newdata: names 'e', which is not a column of the data"):
        term.predict(new[["x"]])


def test_the_offset_example_of_the_docs_runs_as_printed(capsys: pytest.CaptureFixture[str]) -> None:
    text = (Path(__file__).parents[2] / "docs" / "math" / "coming-from-r.md").read_text()
    section = text[text.index("### Offsets"):]
    code, printed = (re.search(rf"```{kind}\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
                     for kind in ("python", "text"))
    exec(compile(code, "coming-from-r.md", "exec"), {})
    assert capsys.readouterr().out == printed
