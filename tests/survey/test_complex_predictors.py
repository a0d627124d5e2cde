"""Randomized predictors (``rr_predictors``) from a complex sample: weights, strata, clusters, fpc, replicates.

Deterministic checks on ``reference/rrpred_data.csv`` with a made-up design
(4 strata, PSUs of 10 rows, weights 1 to 2, sampling fractions 0.3 to 0.6):
one predictor with constant truths is the older ``linear(design=...)`` to
1e-8 under the whole design (fpc included: the randomization's term that the
fpc must not remove is the same); the randomized answers taken together (a
randomized outcome and two predictors, one of them two-group) are numbered
consistently in the answers, the likelihoods and the Kronecker transition
matrix; an fpc of a huge population is no fpc; replicates agree with
linearization; bad input names the argument. Coverage by simulation is in
``test_complex_predictors_coverage``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from reference_values import REFERENCE_DIR

import deniable.survey as sv
from deniable.survey._predictor_likelihood import PredictorLikelihood

pd = pytest.importorskip("pandas", reason="the survey extra (pandas, statsmodels, patsy) is not installed")
pytest.importorskip("statsmodels", reason="the survey extra (pandas, statsmodels, patsy) is not installed")

FR = sv.design("FR", [0.1, 0.2])
WARNER = sv.design("Warner", 0.8)
SLD = sv.design("SLD", [0.3, 0.7])
SAMPLE = {"weights": "w", "strata": "st", "cluster": "psu", "fpc": "f"}


@pytest.fixture(scope="module")
def data() -> Any:
    d = pd.read_csv(REFERENCE_DIR / "rrpred_data.csv")
    n = len(d)
    rng = np.random.default_rng(3)
    return d.assign(st=np.arange(n) % 4, psu=np.arange(n) // 10, w=1 + rng.random(n),
                    f=0.3 + 0.1 * (np.arange(n) % 4))


def test_one_predictor_is_linear_with_design(data: Any) -> None:
    """The same beta and sigma, the same design-based SEs and design effects under weights, strata, clusters
    and fpc (the truth's share ``pi`` is a logit intercept in the ``rr_predictors`` fit)."""
    old = sv.linear("y ~ r_w + x1", data, WARNER, **SAMPLE)
    new = sv.linear("y ~ r_w + x1", data, rr_predictors={"r_w": WARNER}, rr_formula="1", **SAMPLE)
    np.testing.assert_allclose(new.params[:4], old.params[:4], rtol=1e-8)
    np.testing.assert_allclose(new.bse[:4], old.bse[:4], rtol=1e-7)
    np.testing.assert_allclose(new.design_effect, old.design_effect, rtol=1e-6)
    assert "fpc" in new.sample and np.all(np.isfinite(new.design_effect))
    without = sv.linear("y ~ r_w + x1", data, rr_predictors={"r_w": WARNER}, rr_formula="1",
                        weights="w", strata="st", cluster="psu")
    assert np.all(new.bse < without.bse)  # sampling fractions of 0.3 to 0.6 shrink the variance


def test_fpc_of_a_huge_population_is_no_fpc(data: Any) -> None:
    """``1 - f`` -> 1 and the randomization's term -> 0: the SEs of the fit without fpc."""
    kw = {"rr_predictors": {"r_w": WARNER, "r_sld": SLD}, "rr_groups": {"r_sld": "g_sld"}}
    huge = sv.logit("r_fr ~ x1 + r_w + r_sld", data.assign(f=1e-9), FR, **kw, **SAMPLE)
    none = sv.logit("r_fr ~ x1 + r_w + r_sld", data, FR, **kw, weights="w", strata="st", cluster="psu")
    np.testing.assert_allclose(huge.params, none.params, rtol=1e-10)
    np.testing.assert_allclose(huge.bse, none.bse, rtol=1e-6)


def test_joint_randomization_is_numbered_consistently(rng: np.random.Generator) -> None:
    """A randomized outcome (FR) and the predictors Warner and SLD (two groups): each row's joint answer picks
    the likelihood that reproduces its own scores, and the joint matrix of each joint group is the product of
    the designs' probabilities, truths and answers counted with the outcome's most significant."""
    n = 60
    x = rng.normal(size=n)
    r1, r2, g, y = rng.integers(0, 2, n), rng.integers(0, 2, n), rng.integers(1, 3, n), rng.integers(0, 2, n)
    lik = PredictorLikelihood("logit", y.astype(float), np.column_stack([np.ones(n), x, r1, r2]), [2, 3],
                              np.column_stack([np.ones(n), x]), [(WARNER, r1, None), (SLD, r2, g)], FR)
    theta = rng.normal(0, 0.5, lik.k_params)
    theta[-1] = 0.4
    answers, groups, matrix_of, others, model = lik.randomization(theta)
    assert model == "FR and Warner and SLD" and len(others) == 8
    np.testing.assert_array_equal(answers, 4 * y + 2 * r1 + r2)
    np.testing.assert_array_equal(groups, g)
    own = np.array([others[a].score_obs(theta)[i] for i, a in enumerate(answers)])
    np.testing.assert_allclose(own, lik.score_obs(theta), rtol=1e-12, atol=1e-12)
    for group in (1, 2):
        tables = [FR.transition_matrix(1), WARNER.transition_matrix(1), SLD.transition_matrix(group, 0.4)]
        states = list(itertools.product((0, 1), repeat=3))  # truths, and answers, outcome's first
        expected = np.empty((8, 8))
        for (s, truth), (a, answer) in itertools.product(enumerate(states), repeat=2):
            expected[s, a] = np.prod([t[u, v] for t, u, v in zip(tables, truth, answer, strict=True)])
        np.testing.assert_allclose(matrix_of(group), expected, rtol=1e-14)


def test_replicates_agree_with_linearization(data: Any) -> None:
    """JK1 replicates deleting one PSU at a time (50 PSUs of 30 rows) against linearization with the clusters."""
    psu = data["psu"].to_numpy() // 3
    reps = np.array([(psu != k) * len(np.unique(psu)) / (len(np.unique(psu)) - 1) for k in np.unique(psu)]).T
    kw = {"rr_predictors": {"r_fr": FR}}
    lin = sv.logit("o ~ x1 + r_fr", data, None, **kw, cluster=psu)
    jk = sv.logit("o ~ x1 + r_fr", data, None, **kw, repweights=reps, rep_type="JK1")
    np.testing.assert_allclose(jk.params, lin.params, rtol=1e-10)
    np.testing.assert_allclose(jk.bse, lin.bse, rtol=0.1)
    assert "50 JK1 replicates" in jk.sample


@pytest.mark.parametrize(("change", "message"), [
    ({"weights": np.ones(10)}, r"weights must have one entry per respondent \(200\)"),
    ({"weights": np.r_[-1.0, np.ones(199)]}, r"weights must be finite and non-negative .* got -1.0 at position 0"),
    ({"weights": np.r_[np.ones(5), np.nan, np.ones(194)]}, r"weights must be finite .* got nan at position 5"),
    ({"strata": np.r_[0, np.ones(199, dtype=int)], "cluster": np.arange(200)},
     r"strata: stratum 0 has only one PSU, so no variance within it; pass lonely_psu="),
    ({"fpc": np.full(10, 0.5)}, r"fpc must have one entry per respondent \(200\)"),
])
def test_bad_input_is_named(data: Any, change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sv.logit("o ~ x1 + r_fr", data.head(200), None, rr_predictors={"r_fr": FR}, **change)


def test_lonely_psu_options(data: Any) -> None:
    """R's ``survey.lonely.psu``: ``"remove"`` fits, and the lonely stratum adds nothing to the variance."""
    small = data.head(200)
    strata = np.r_[0, np.ones(199, dtype=int)]
    res = sv.logit("o ~ x1 + r_fr", small, None, rr_predictors={"r_fr": FR}, strata=strata,
                   cluster=np.arange(200), lonely_psu="remove")
    assert np.all(np.isfinite(res.bse))
