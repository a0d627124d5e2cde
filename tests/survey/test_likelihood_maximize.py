"""The likelihood's optimizer and covariance, exactly: the Newton loop's bookkeeping, the bound, the inverses.

Deterministic: fixed answer tables and seeded covariates, no statistical
assertion. The bound case is SLD with group yes-rates 0.9 and 0.7, whose
moment solution is ``pi = 0.5``, ``t = 1.1``: the maximum sits on ``t = 1``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import deniable.survey as sv
from deniable.survey.likelihood import TOLERANCE, ResponseLikelihood, SeparationError, covariance, fit, maximize


def _exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


def _warner() -> ResponseLikelihood:
    rng = np.random.default_rng(3)
    n = 400
    z = rng.normal(size=n)
    d = sv.Warner(0.8)
    truth = rng.random(n) < 1 / (1 + np.exp(-(-0.5 + z)))
    return ResponseLikelihood(d, d.privatize_many(truth, rng=rng).astype(int), None, np.column_stack([np.ones(n), z]))


def _sld_on_bound() -> ResponseLikelihood:
    y = np.r_[np.ones(90), np.zeros(10), np.ones(70), np.zeros(30)].astype(int)
    g = np.r_[np.ones(100), np.full(100, 2)].astype(int)
    return ResponseLikelihood(sv.StochasticLieDetector((0.3, 0.7)), y, g, np.ones((200, 1)))


def test_newton_bookkeeping() -> None:
    lik = _warner()
    start = np.zeros(2)
    best = maximize(lik, start)
    assert best.converged and not best.at_bound and best.decrement < TOLERANCE
    assert best.llf == lik.loglike(best.params)
    again = maximize(lik, best.params)  # already at the maximum: one step, converged
    assert (again.iterations, again.converged, again.at_bound) == (1, True, False)
    np.testing.assert_array_equal(again.params, best.params)
    one = maximize(lik, start, max_iter=1)
    assert (one.iterations, one.converged, one.at_bound) == (1, False, False)
    assert lik.loglike(start) < one.llf == lik.loglike(one.params)
    two = maximize(lik, start, max_iter=2)
    np.testing.assert_array_equal(two.params, maximize(lik, one.params, max_iter=1).params)
    none = maximize(lik, start, max_iter=0)
    assert (none.iterations, none.converged, none.at_bound) == (0, False, False)
    np.testing.assert_array_equal(none.params, start)


def test_extra_parameter_held_on_its_bound() -> None:
    lik = _sld_on_bound()
    best = maximize(lik, [0.0, 0.5])
    assert best.converged and best.at_bound and best.params[-1] == 1.0
    score = lik.score(best.params)
    assert abs(score[0]) < 1e-6 and score[1] > 0  # stationary in beta; t pushes beyond 1
    for a in (1.5, -0.5):  # a start outside [0, 1] is clipped into it first
        np.testing.assert_allclose(maximize(lik, [0.0, a]).params, best.params, rtol=1e-6)
    cov = covariance(lik, best)
    assert np.isnan(cov[-1]).all() and np.isnan(cov[:, -1]).all()
    assert cov[0, 0] == pytest.approx(-1 / lik.hessian(best.params)[0, 0], rel=1e-12)
    s = lik.score_obs(best.params)[:, :1]
    assert covariance(lik, best, "opg")[0, 0] == pytest.approx(1 / float((s.T @ s)[0, 0]), rel=1e-12)


def test_covariance_is_the_inverse_information() -> None:
    lik = _warner()
    best = maximize(lik, np.zeros(2))
    np.testing.assert_allclose(covariance(lik, best), np.linalg.inv(-lik.hessian(best.params)), rtol=1e-12)
    s = lik.score_obs(best.params)
    np.testing.assert_allclose(covariance(lik, best, "opg"), np.linalg.inv(s.T @ s), rtol=1e-12)
    message = "cov_type must be 'oim' (observed information) or 'opg' (outer product of scores); got 'bhhh'"
    with pytest.raises(ValueError, match=_exact(message)):
        covariance(lik, best, "bhhh")


def test_start_and_exog_refusals() -> None:
    lik = _sld_on_bound()
    with pytest.raises(ValueError, match=_exact("start: the log-likelihood is not finite at the start values")):
        maximize(lik, [1000.0, 1.0])  # every respondent a carrier who always says yes: a "no" is impossible
    with pytest.raises(ValueError, match=_exact("exog must have 200 rows; got 3")):
        lik.with_exog(np.ones((3, 1)))
    warner = _warner()
    theta = np.array([0.2, -0.4])
    np.testing.assert_allclose(warner.prevalence(theta), 1 / (1 + np.exp(-(warner.exog @ theta))), rtol=1e-12)


def test_a_term_without_information_is_named() -> None:
    """A covariate that is 0 for everyone: its information is exactly 0, and the error names it."""
    rng = np.random.default_rng(5)
    n = 400
    d = sv.Mangat(0.6)
    y = d.privatize_many(rng.random(n) < 0.3, rng=rng).astype(int)
    lik = ResponseLikelihood(d, y, None, np.column_stack([np.ones(n), rng.normal(size=n), np.zeros(n)]))
    message = "singular information matrix: the data carry no information on 'z'"
    with pytest.raises(SeparationError, match=_exact(message)):
        fit(lik, ["Intercept", "w", "z"])


def _north_all_say(answer: int, design: sv.Design, n: int, north: int) -> ResponseLikelihood:
    """Cell-means coding ``[north, south]``: the first ``north`` of ``n`` respondents all give ``answer``, the
    others answer through ``design`` with prevalence 0.4."""
    rng = np.random.default_rng(5)
    is_north = np.arange(n) < north
    y = design.privatize_many(~is_north & (rng.random(n) < 0.4), rng=rng).astype(int)
    y[is_north] = answer
    return ResponseLikelihood(design, y, None, np.column_stack([is_north, ~is_north]).astype(float))


def test_a_diverging_coefficient_is_named() -> None:
    """20,000 northerners all say "no" under Mangat (a "no" proves a non-carrier): their prevalence runs to 0."""
    lik = _north_all_say(0, sv.Mangat(0.6), 30_000, 20_000)
    message = (
        "perfect separation: the coefficient of 'north' diverges (a fitted prevalence is 0 to within 1e-13); the "
        "answers in some covariate pattern are explained only by a prevalence of 0 or 1. Drop or merge that term."
    )
    with pytest.raises(SeparationError, match=_exact(message)):
        fit(lik, ["north", "south"])


def test_a_coefficient_diverging_in_a_small_cell_is_named() -> None:
    """200 northerners all say "no" under Mangat: Newton's decrement passes the tolerance near a north logit of
    -29 (the gain there is about 200 exp(eta)), before any fitted logit passes 30, but its step still moves the
    north's logit by -1: the log-likelihood rises along a ray. (Cell-means coding: the information scaled to
    unit diagonal is the identity, so the condition number does not see it either.)"""
    message = (
        "perfect separation: the coefficient of 'north' diverges (a fitted prevalence runs to 0: the log-likelihood "
        "still rises, ever more slowly, as its logit moves on); the answers in some covariate pattern are explained "
        "only by a prevalence of 0 or 1. Drop or merge that term."
    )
    with pytest.raises(SeparationError, match=_exact(message)):
        fit(_north_all_say(0, sv.Mangat(0.6), 10_200, 200), ["north", "south"])
    # never forced to "yes": a "yes" proves a carrier, the mirror image (the prevalence runs to 1)
    lik = _north_all_say(1, sv.ForcedResponse((0.2, 0)), 10_200, 200)
    with pytest.raises(SeparationError, match=re.escape("(a fitted prevalence runs to 1: the log-likelihood still")):
        fit(lik, ["north", "south"])


def test_interior_two_group_maximum_is_not_on_a_bound() -> None:
    y = np.r_[np.ones(70), np.zeros(30), np.ones(50), np.zeros(50)].astype(int)  # t = 0.6, pi = 0.5
    g = np.r_[np.ones(100), np.full(100, 2)].astype(int)
    lik = ResponseLikelihood(sv.StochasticLieDetector((0.3, 0.7)), y, g, np.ones((200, 1)))
    best = maximize(lik, [0.0, 0.5])
    assert best.converged and best.at_bound is False and 0 < best.params[-1] < 1
    assert lik.groups.tolist() == g.tolist() and lik.design == sv.StochasticLieDetector((0.3, 0.7))


def test_an_impossible_answer_is_minus_infinity_without_a_warning() -> None:
    import warnings

    d = sv.Mangat(0.6)
    lik = ResponseLikelihood(d, [0, 1], None, np.ones((2, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lik.loglike_obs([1000.0]).tolist() == [-np.inf, 0.0]  # everyone a carrier: a "no" is impossible


REFUSED = [
    (lambda: ResponseLikelihood(sv.Warner(0.7), [0, 1, 1], None, np.ones(3)),
     "exog must be a 2-D covariate matrix; got shape (3,)"),
    (lambda: ResponseLikelihood(sv.Warner(0.7), [0, 1], None, np.ones((3, 1))),
     "responses must have one answer per row of exog (3); got shape (2,)"),
    (lambda: ResponseLikelihood(sv.Warner(0.7), ["yes", "no"], None, np.ones((2, 1))),
     "response must be one of 0, 1 for Warner; got 'yes' at row 0"),
    (lambda: ResponseLikelihood(sv.Warner(0.7), np.array([1, 0], dtype=object), None, np.ones((2, 1))),
     "response must be one of 0, 1 for Warner; got 1 at row 0"),
    (lambda: ResponseLikelihood(sv.Warner(0.7), [0, 2], None, np.ones((2, 1)), labels=["r0", "r1"]),
     "response must be one of 0, 1 for Warner; got 2 at row 'r1'"),
    (lambda: ResponseLikelihood(sv.StochasticLieDetector((0.3, 0.7)), [0, 1], [1, 1], np.ones((2, 1))),
     "group: all respondents are in group 1; SLD's t is identified only by answers from both groups"),
    (lambda: ResponseLikelihood(sv.StochasticLieDetector((0.3, 0.7)), [0], [2], np.ones((1, 1))),
     "group: all respondents are in group 2; SLD's t is identified only by answers from both groups"),
    (lambda: ResponseLikelihood(sv.Warner(0.7), [0, 1], None, np.ones((2, 1))).loglike([0.0, 1.0, 2.0]),
     "params must have 1 values; got shape (3,)"),
    (lambda: ResponseLikelihood(sv.ForcedResponse((0.1, 0.2, 0.3)), [0, 1], None, np.ones((2, 1))),
     "design FR with 3 categories has no yes/no attribute: logistic regression models the prevalence of a binary "
     "attribute (use FR with two categories)"),
]


@pytest.mark.parametrize(("call", "message"), REFUSED, ids=range(len(REFUSED)))
def test_bad_likelihood_input_in_whole_messages(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=_exact(message)):
        call()  # type: ignore[operator]
