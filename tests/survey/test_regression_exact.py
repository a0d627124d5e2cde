"""Exact properties of the randomized-response logistic likelihood and the checks of ``survey.logit``.

No statistical assertions: the likelihood against the design's own
response probabilities, the analytic score and Hessian against numerical
differentiation, the fit's first-order conditions, and bad input.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from survey_cases import CASES, IDS, build

import deniable.survey as sv
from deniable.survey._likelihood import ResponseLikelihood, SeparationError, check_design, fit

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

BINARY = [(c, i) for c, i in zip(CASES, IDS, strict=True) if not (c[0] == "FR" and len(c[1]) > 2)]


def random_problem(model: str, p: Any, cards: int, rng: np.random.Generator, n: int = 40) -> tuple[Any, ...]:
    """A design, random answers, groups, a 3-column covariate matrix and a random parameter point."""
    d = build(model, p, cards)
    x = np.column_stack([np.ones(n), rng.normal(size=n), rng.uniform(-1, 1, n)])
    y = rng.choice(d.responses, n)
    g = rng.integers(1, 3, n) if d.groups == 2 else None
    theta = rng.normal(0, 0.7, 3)
    if d.extra:
        theta = np.append(theta, rng.uniform(0.1, 0.9))
    return d, y, g, x, theta


@pytest.mark.parametrize(("case"), [c for c, _ in BINARY], ids=[i for _, i in BINARY])
def test_loglike_is_sum_of_log_response_probabilities(case: tuple[Any, ...], rng: np.random.Generator) -> None:
    """``log L`` at a random point = ``sum_i log response_probabilities(params_i, g_i)[y_i]`` (to 1e-12)."""
    model, p, cards, _ = case
    d, y, g, x, theta = random_problem(model, p, cards, rng)
    lik = ResponseLikelihood(d, y, g, x)
    pi = 1 / (1 + np.exp(-(x @ theta[:3])))
    groups = np.ones(len(y), dtype=int) if g is None else g
    expected = []
    for i in range(len(y)):
        if d.extra is None:
            params = {"pi": pi[i]}
        elif d.extra == "gamma":  # cheaters with probability gamma, carriers pi among the honest
            params = {"pi": (1 - theta[3]) * pi[i], "gamma": theta[3]}
        else:
            params = {"pi": pi[i], d.extra: theta[3]}
        expected.append(np.log(d.response_probabilities(params, int(groups[i]))[d.responses.index(int(y[i]))]))
    np.testing.assert_allclose(lik.loglike_obs(theta), expected, rtol=1e-12, atol=1e-13)
    assert lik.loglike(theta) == pytest.approx(float(np.sum(expected)), rel=1e-12)


def numerical_gradient(f: Any, theta: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Central differences (error O(h^2) ~ 1e-10 relative here)."""
    out = []
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = h
        out.append((f(theta + e) - f(theta - e)) / (2 * h))
    return np.array(out).T


@pytest.mark.parametrize(("case"), [c for c, _ in BINARY], ids=[i for _, i in BINARY])
def test_score_and_hessian_are_exact(case: tuple[Any, ...], rng: np.random.Generator) -> None:
    """Analytic score and Hessian against central differences of the log-likelihood and of the score.

    Central differences with h = 1e-5 have truncation error ~h^2 * (third
    derivative) and rounding ~1e-16 / h relative: 1e-6 relative is ample and
    far below any error in a formula (a dropped term changes entries by O(1)).
    """
    model, p, cards, _ = case
    d, y, g, x, theta = random_problem(model, p, cards, rng)
    lik = ResponseLikelihood(d, y, g, x)
    np.testing.assert_allclose(lik.score(theta), numerical_gradient(lik.loglike, theta), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lik.hessian(theta), numerical_gradient(lik.score, theta), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(lik.score_obs(theta).sum(axis=0), lik.score(theta), rtol=1e-12)
    # per-respondent scores: each row is the gradient of that respondent's log-likelihood
    i = int(rng.integers(len(y)))
    np.testing.assert_allclose(
        lik.score_obs(theta)[i], numerical_gradient(lambda t: lik.loglike_obs(t)[i], theta), rtol=1e-6, atol=1e-8
    )


@pytest.mark.parametrize(("case"), [c for c, _ in BINARY], ids=[i for _, i in BINARY])
def test_cells_are_the_intercept_only_likelihood(case: tuple[Any, ...], rng: np.random.Generator) -> None:
    """The likelihood on the distinct (group, answer) cells, weighted by their counts, has the intercept-only
    log-likelihood, score and Hessian (to 1e-12: sums in another order); its per-row values are the cells'."""
    model, p, cards, _ = case
    d, y, g, x, theta = random_problem(model, p, cards, rng, n=200)
    lik = ResponseLikelihood(d, y, g, x)
    one, cells = lik.with_exog(np.ones((len(y), 1))), lik.cells()
    assert cells.nobs < len(y) and cells.weights is not None and cells.weights.sum() == len(y)
    point = theta[[0, 3]] if d.extra else theta[:1]
    assert cells.loglike(point) == pytest.approx(one.loglike(point), rel=1e-12)
    np.testing.assert_allclose(cells.score(point), one.score(point), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cells.hessian(point), one.hessian(point), rtol=1e-12, atol=1e-12)
    fresh = ResponseLikelihood(d, cells.responses, None if g is None else cells.groups, cells.exog)
    np.testing.assert_allclose(cells.loglike_obs(point), fresh.loglike_obs(point), rtol=1e-15)
    assert lik.loglike(theta) == ResponseLikelihood(d, y, g, x).loglike(theta)  # its own values left alone


def test_fit_solves_the_score_equations(rng: np.random.Generator) -> None:
    """At the fit the score is zero and the Hessian negative definite (each binary design, one data set)."""
    for model, p, cards, _ in (c for c, _ in BINARY):
        d, _, g, x, theta = random_problem(model, p, cards, rng, n=3000)
        pi = 1 / (1 + np.exp(-(x @ theta[:3])))
        truth = rng.random(len(pi)) < pi
        y = np.asarray(d.privatize_many(truth, g, rng=rng, **unrelated(d, rng, len(pi)))).astype(int)
        lik = ResponseLikelihood(d, y, g, x)
        best = fit(lik, ["a", "b", "c", "extra"][: lik.k_params])
        assert best.converged and best.decrement < 1e-10
        free = slice(None) if not best.at_bound else slice(0, 3)
        assert np.max(np.abs(lik.score(best.params)[free])) < 1e-4, model
        assert np.all(np.linalg.eigvalsh(lik.hessian(best.params)[free, free]) < 0), model


def unrelated(d: sv.Design, rng: np.random.Generator, n: int) -> dict[str, Any]:
    """UQTunknown's device needs each respondent's unrelated answer (prevalence 0.4 here)."""
    return {"unrelated": rng.random(n) < 0.4} if d.model == "UQTunknown" else {}


# ------------------------------------------------------------------ bad input
@pytest.fixture
def frame(rng: np.random.Generator) -> pd.DataFrame:
    n = 400
    return pd.DataFrame({"y": rng.integers(0, 2, n), "age": rng.uniform(18, 80, n), "g": rng.integers(1, 3, n),
                         "region": rng.choice(["north", "south", "east"], n)})


def test_formula_results_match_the_likelihood(rng: np.random.Generator) -> None:
    """SLD answers from the design with ``t = 0.8`` (random answers would put SLD's prevalence on 1: no maximum)."""
    n = 3000
    frame = pd.DataFrame({"age": rng.uniform(18, 80, n), "g": rng.integers(1, 3, n),
                          "region": rng.choice(["north", "south", "east"], n)})
    d = sv.design("SLD", (0.3, 0.7))
    truth = rng.random(n) < 1 / (1 + np.exp(-(frame["age"].to_numpy() - 50) / 20))
    y = d.privatize_many(truth, frame["g"], rng=rng).astype(int)
    y[truth & (rng.random(n) < 0.2)] = 0  # a fifth of the carriers say "no" whatever the device says
    frame["y"] = y
    res = sv.logit("y ~ age + C(region)", frame, d, group="g")
    assert list(res.params.index) == ["Intercept", "C(region)[T.north]", "C(region)[T.south]", "age", "t"]
    assert res.params.index.equals(res.bse.index) and res.conf_int().shape == (5, 2)
    assert res.llf == pytest.approx(res.model.likelihood.loglike(np.asarray(res.params)), rel=1e-14)
    same = sv.logit("y ~ age + C(region)", frame, d, group=frame["g"].to_numpy())
    assert same.params.equals(res.params)
    booleans = frame.assign(y=frame["y"].astype(bool))
    assert sv.logit("y ~ age", booleans, d, group="g").params.equals(sv.logit("y ~ age", frame, d, group="g").params)


def test_missing_values_are_dropped_and_counted(frame: pd.DataFrame) -> None:
    d = sv.design("Warner", 0.7)
    holes = frame.astype({"age": float}).copy()
    holes.loc[[3, 7], "age"] = np.nan
    holes.loc[11, "y"] = np.nan
    res = sv.logit("y ~ age", holes, d)
    assert (res.nobs, res.n_dropped) == (397, 3)
    two = sv.design("CDM", (0.2, 0.6))
    gaps = frame.astype({"g": float}).copy()
    gaps.loc[[1, 2], "g"] = np.nan
    assert sv.logit("y ~ age", gaps, two, group="g").n_dropped == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"formula": "y ~ agee"}, r"names 'agee', which is not a column of the data"),
        ({"formula": "y + age"}, r"formula must be a string 'answer ~ terms'"),
        ({"data": "nope"}, r"data must be a DataFrame"),
        ({"design": sv.design("FR", (0.1, 0.1, 0.1))}, r"no yes/no attribute"),
        ({"design": sv.design("SLD", (0.3, 0.7))}, r"two-group design: group .* is required"),
        ({"design": sv.design("SLD", (0.3, 0.7)), "group": "gg"}, r"group 'gg' is not a column of data"),
        ({"design": sv.design("SLD", (0.3, 0.7)), "group": [1, 2]}, r"group must have one entry per row"),
        ({"group": "g"}, r"Warner has one group; group must be None"),
        ({"cov_type": "hc0"}, r"cov_type must be one of 'oim', 'opg', 'robust', 'cluster'"),
        ({"restarts": -1}, r"restarts must be a non-negative integer"),
        ({"formula": "y ~ age + I(2 * age)"}, r"collinear"),
    ],
)
def test_bad_input_names_the_argument(frame: pd.DataFrame, kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"formula": "y ~ age", "data": frame, "design": sv.design("Warner", 0.7)} | kwargs
    with pytest.raises(ValueError, match=message):
        sv.logit(**args)


def test_bad_responses_and_groups(frame: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match=r"response must be one of 0, 1 for Warner; got 2.0 at row 5 \(column 'y'"):
        sv.logit("y ~ age", frame.assign(y=frame["y"].where(frame.index != 5, 2)), sv.design("Warner", 0.7))
    with pytest.raises(ValueError, match=r"response must be one of 0, 1, 2, 3 for Kuk"):
        sv.logit("y ~ age", frame.assign(y=frame["y"] + 3), sv.design("Kuk", (0.7, 0.3), Kukrep=3))
    with pytest.raises(ValueError, match=r"the response must be one numeric column"):
        sv.logit("region ~ age", frame, sv.design("Warner", 0.7))
    with pytest.raises(ValueError, match=r"group must be 1 or 2 for CDM; got 3"):
        sv.logit("y ~ age", frame.assign(g=frame["g"] + 1), sv.design("CDM", (0.2, 0.6)), group="g")
    with pytest.raises(ValueError, match=r"group: all respondents are in group 2; CDM's gamma is identified only"):
        sv.logit("y ~ age", frame.assign(g=2), sv.design("CDM", (0.2, 0.6)), group="g")
    with pytest.raises(ValueError, match=r"data has 3 complete rows for 3 parameters"):
        sv.logit("y ~ age", frame.head(3), sv.design("SLD", (0.3, 0.7)), group="g")
    with pytest.raises(TypeError, match=r"design must be a deniable.survey Design"):
        check_design("Warner")  # type: ignore[arg-type]


def test_perfect_separation_is_named(rng: np.random.Generator) -> None:
    """Everyone in the north says "no" under Mangat (a "no" proves a non-carrier): the north's coefficient diverges."""
    n = 600
    region = np.where(np.arange(n) < 200, "north", "south")
    truth = (rng.random(n) < 0.4) & (region == "south")
    d = sv.design("Mangat", 0.6)
    y = d.privatize_many(truth, rng=rng).astype(int)
    y[region == "north"] = 0
    data = pd.DataFrame({"y": y, "region": region})
    with pytest.raises(SeparationError, match=r"coefficient of 'C\(region\)\[T.south\]' diverges \(a fitted prev"):
        sv.logit("y ~ C(region)", data, d)
    # the same data with the north's answers randomized as the design does: a finite fit
    y[region == "north"] = d.privatize_many(np.zeros(200, bool), rng=rng)
    assert np.isfinite(sv.logit("y ~ C(region)", data.assign(y=y), d).bse).all()


def test_lr_test(frame: pd.DataFrame, rng: np.random.Generator) -> None:
    d = sv.design("FR", ("1/6", "1/6"))
    full = sv.logit("y ~ age + C(region)", frame, d)
    small = sv.logit("y ~ age", frame, d)
    test = full.lr_test(small)
    assert test.df == 2 and test.statistic == pytest.approx(2 * (full.llf - small.llf)) and 0 <= test.pvalue <= 1
    assert sv.lr_test(full, small) == test
    with pytest.raises(ValueError, match=r"restricted must have fewer parameters"):
        small.lr_test(full)
    with pytest.raises(ValueError, match=r"other rows"):
        full.lr_test(sv.logit("y ~ age", frame.head(300), d))
    with pytest.raises(ValueError, match=r"design"):
        full.lr_test(sv.logit("y ~ age", frame, sv.design("Warner", 0.7)))
    with pytest.raises(TypeError, match=r"restricted must be a result of deniable.survey.logit"):
        sv.lr_test(full, object())  # type: ignore[arg-type]


def test_survey_imports_without_the_regression_extra() -> None:
    """``import deniable.survey`` loads none of pandas, statsmodels, patsy; ``survey.logit`` loads them."""
    import subprocess
    import sys

    code = ("import sys, deniable.survey as sv\n"
            "heavy = ('pandas', 'statsmodels', 'patsy')\n"
            "print(sorted(h for h in heavy if h in sys.modules)); sv.logit\n"
            "print(sorted(h for h in heavy if h in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:2] == ["[]", "['pandas', 'patsy', 'statsmodels']"]
