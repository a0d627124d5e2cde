"""``survey.linear`` (RRreg's RRlin): the mixture likelihood's exact derivatives, RRlin's reference fit, bad input.

Deterministic: the analytic score and Hessian against central differences
of the log-likelihood; the fit against RRlin 0.7.6 on its reference data
(RRlin's optim stops at about 2e-5 in the coefficients, and our
log-likelihood is never below RRlin's); bad input named.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference_values import data_path, load
from test_regression_exact import numerical_gradient

import deniable.survey as sv
from deniable.survey._mixture import MixtureLikelihood

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

RRLIN = load()["RRlin"]


@pytest.mark.parametrize(("model", "p", "cards"), [("Warner", 0.8, 1), ("Mangat", 0.6, 1), ("Kuk", (0.7, 0.3), 3)])
def test_mixture_score_and_hessian_are_exact(model: str, p: object, cards: int, rng: np.random.Generator) -> None:
    """Central differences (h = 1e-5) agree with the analytic derivatives to 1e-6 relative."""
    d = sv.design(model, p, Kukrep=cards)
    n = 60
    answers = rng.choice(d.responses, n)
    x = np.column_stack([np.ones(n), answers, rng.normal(size=n)])
    lik = MixtureLikelihood(d, answers, rng.normal(1, 2, n), x, column=1)
    theta = np.array([0.5, 1.5, -0.4, 1.7, 0.35])
    np.testing.assert_allclose(lik.score(theta), numerical_gradient(lik.loglike, theta), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lik.hessian(theta), numerical_gradient(lik.score, theta), rtol=1e-6, atol=1e-7)
    # the likelihood: sum over the state of P(state) P(answer | state) N(y; x_state' beta, sigma)
    from scipy import stats

    m = d.matrix(1)
    idx = np.searchsorted(d.responses, answers)
    mix = sum(w * m[idx, t] * stats.norm.pdf(lik.y, lik.rows[t] @ theta[:3], theta[3])
              for t, w in ((0, 1 - theta[4]), (1, theta[4])))
    assert lik.loglike(theta) == pytest.approx(float(np.log(mix).sum()), rel=1e-12)


def test_rrlin_reference() -> None:
    data = pd.read_csv(data_path(RRLIN["data"]))
    res = sv.linear("depvar ~ response + z", data, sv.design(RRLIN["model"], RRLIN["p"]))
    assert list(res.params.index) == ["Intercept", "response", "z", "sigma", "pi"]
    ref = [*RRLIN["coefficients"].values(), RRLIN["sigma"], RRLIN["pi"]["1"]]
    np.testing.assert_allclose(res.params, ref, atol=3e-5)
    ref_se = [*RRLIN["se"].values(), RRLIN["sigma_se"], np.sqrt(RRLIN["vcov"][4][4])]
    np.testing.assert_allclose(res.bse, ref_se, rtol=3e-5)
    assert RRLIN["logLik"] <= res.llf <= RRLIN["logLik"] + 1e-6
    assert res.predictor == "response" and res.converged
    assert "Linear regression on a randomized predictor: Warner" in str(res.summary())
    assert sv.linear("depvar ~ z + response", data, sv.design("Warner", 0.8), predictor="response").llf == \
        pytest.approx(res.llf, abs=1e-9)


def test_linear_bad_input(rng: np.random.Generator) -> None:
    data = pd.DataFrame({"y": rng.normal(size=50), "r": rng.integers(0, 2, 50), "z": rng.normal(size=50)})
    warner = sv.design("Warner", 0.8)
    with pytest.raises(ValueError, match=r"one-group designs"):
        sv.linear("y ~ r + z", data, sv.design("SLD", (0.3, 0.7)))
    with pytest.raises(ValueError, match=r"predictor must name a plain term of the formula .*; got 'w'"):
        sv.linear("y ~ r + z", data, warner, predictor="w")
    with pytest.raises(ValueError, match=r"randomized predictor must be one of 0, 1 for Warner; got 2.0 at row 3 "
                                         r"\(column 'r' of data\)"):
        sv.linear("y ~ r + z", data.assign(r=data["r"].where(data.index != 3, 2)), warner)
    with pytest.raises(ValueError, match=r"names 'q', which is not a column"):
        sv.linear("y ~ q", data, warner)
