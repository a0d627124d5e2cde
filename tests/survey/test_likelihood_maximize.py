"""The likelihood's optimizer and covariance, exactly: the Newton loop's bookkeeping, the bound, the inverses,
the start values and the separation and collinearity messages.

Deterministic: fixed answer tables and seeded covariates, no statistical
assertion. The bound case is SLD with group yes-rates 0.9 and 0.7, whose
moment solution is ``pi = 0.5``, ``t = 1.1``: the maximum sits on ``t = 1``.
The line search and the damping are checked on one- and two-parameter
problems with given derivatives (``Toy``), where each step is known by hand.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import deniable.survey as sv
from deniable.survey import _likelihood as likelihood
from deniable.survey._likelihood import (
    TOLERANCE,
    Maximum,
    ResponseLikelihood,
    SeparationError,
    _check_separation,
    _intercept_start,
    _newton_step,
    covariance,
    fit,
    maximize,
)


def _exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


def _warner() -> ResponseLikelihood:
    rng = np.random.default_rng(3)
    n = 400
    z = rng.normal(size=n)
    d = sv.Warner(0.8)
    truth = rng.random(n) < 1 / (1 + np.exp(-(-0.5 + z)))
    return ResponseLikelihood(d, d.privatize_many(truth, rng=rng).astype(int), None, np.column_stack([np.ones(n), z]))


def _sld(yes1: int, yes2: int, n: int = 100) -> ResponseLikelihood:
    """SLD (group "no" probabilities 0.3 and 0.7), ``n`` per group, intercept only: ``yes1`` and ``yes2`` "yes"."""
    y = np.r_[np.ones(yes1), np.zeros(n - yes1), np.ones(yes2), np.zeros(n - yes2)].astype(int)
    g = np.r_[np.ones(n), np.full(n, 2)].astype(int)
    return ResponseLikelihood(sv.StochasticLieDetector((0.3, 0.7)), y, g, np.ones((2 * n, 1)))


def _sld_on_bound() -> ResponseLikelihood:
    return _sld(90, 70)


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
    """Cell-means coding ``[north, south]``: the last ``north`` of ``n`` respondents all give ``answer``, the
    others answer through ``design`` with prevalence 0.4."""
    rng = np.random.default_rng(5)
    is_north = np.arange(n) >= n - north
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
    unit diagonal is the identity, so the condition number does not see it either.) From the intercept start
    alone: a restart may run on past 30, which the first check names."""
    message = (
        "perfect separation: the coefficient of 'north' diverges (a fitted prevalence runs to 0: the log-likelihood "
        "still rises, ever more slowly, as its logit moves on); the answers in some covariate pattern are explained "
        "only by a prevalence of 0 or 1. Drop or merge that term."
    )
    with pytest.raises(SeparationError, match=_exact(message)):
        fit(_north_all_say(0, sv.Mangat(0.6), 10_200, 200), ["north", "south"], restarts=0)
    # never forced to "yes": a "yes" proves a carrier, the mirror image (the prevalence runs to 1)
    lik = _north_all_say(1, sv.ForcedResponse((0.2, 0)), 10_200, 200)
    with pytest.raises(SeparationError, match=re.escape("(a fitted prevalence runs to 1: the log-likelihood still")):
        fit(lik, ["north", "south"])


def test_interior_two_group_maximum_is_not_on_a_bound() -> None:
    lik = _sld(70, 50)  # t = 0.7, pi = 0.5
    g = np.r_[np.ones(100), np.full(100, 2)].astype(int)
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


# ------------------------------------------------------------------ the bound of the extra parameter
def test_extra_parameter_held_on_either_bound() -> None:
    """Yes-rates 0.3 and 0.1 have the moment solution ``t = -0.1``: the maximum sits on ``t = 0``, the score
    pushing below it. Ten per group at 0.9 and 0.7 (the bound case above, scaled down): on ``t = 1`` the
    score pushes outward by less than 1. Either way ``t`` is held, so the decrement reaches the tolerance."""
    low = _sld(30, 10)
    best = maximize(low, [0.0, 0.5])
    assert (best.converged, best.at_bound, best.params[-1]) == (True, True, 0.0)
    assert low.score(best.params)[-1] < -1
    small = _sld(9, 7, n=10)
    best = maximize(small, [0.0, 0.5])
    assert (best.converged, best.at_bound, best.params[-1]) == (True, True, 1.0)
    assert 0 < small.score(best.params)[-1] < 1


def test_extra_parameter_leaves_a_bound_the_score_points_away_from() -> None:
    """Interior data (``t = 0.7``) from ``t = 0`` with a low prevalence, where the score on ``t`` is below 1: one
    step moves ``t`` into (0, 1). A start on a bound counts as on the bound when it is accepted at once."""
    lik = _sld(70, 50)
    assert 0 < lik.score([-6.0, 0.0])[-1] < 1
    assert 0 < maximize(lik, [-6.0, 0.0], max_iter=1).params[-1] < 1
    for a in (0.0, 1.0):  # tol = inf: the start is the answer; the score points inward, so nothing is held
        found = maximize(lik, [0.5, a], tol=np.inf)
        assert (found.iterations, found.converged, found.at_bound) == (1, True, True)
        assert found.params.tolist() == [0.5, a]
    assert maximize(lik, [0.5, 0.5], tol=np.inf).at_bound is False


def test_parameters_are_floats() -> None:
    """Integer start values and an object parameter vector work as floats."""
    lik = _sld(70, 50)
    assert maximize(lik, [0, 1], max_iter=0).params.dtype == np.float64
    assert lik.loglike(np.array([0.25, 0.5], dtype=object)) == lik.loglike([0.25, 0.5])
    warner = _warner()
    mixed = warner.exog.astype(object)  # as pandas hands over columns of mixed types
    theta = [0.2, -0.4]
    assert ResponseLikelihood(warner.design, warner.responses, None, mixed).loglike(theta) == warner.loglike(theta)
    assert warner.responses.dtype == np.int64


def test_no_underflow_error_under_strict_floating_point_settings() -> None:
    """``t = 1e-300`` and a prevalence of about 2e-16: a carrier's "yes" has probability below the smallest normal
    float, which the likelihood takes as it comes even where the caller has underflow raise."""
    lik = _sld(70, 50)
    with np.errstate(under="raise"):
        assert np.isfinite(lik.loglike([-36.0, 1e-300]))


def test_an_infinite_coefficient_is_the_limit() -> None:
    """``beta = +-inf``: every prevalence exactly 1 (or 0); a one-group design has no extra parameter to mix in."""
    lik = ResponseLikelihood(sv.Mangat(0.6), [0, 1], None, np.ones((2, 1)))
    assert lik.loglike_obs([np.inf]).tolist() == [-np.inf, 0.0]
    assert lik.loglike_obs([-np.inf]).tolist() == pytest.approx([np.log(0.6), np.log(0.4)], rel=1e-15)


# ------------------------------------------------------------------ Newton's loop on small problems
class Toy:
    """A one-parameter log-likelihood with given derivatives (they need not agree with it)."""

    k_params, k_extra = 1, 0

    def __init__(self, loglike: object, score: object, hessian: object) -> None:
        self._l, self._g, self._h = loglike, score, hessian

    def loglike(self, theta: object) -> float:
        return float(self._l(float(np.asarray(theta)[0])))  # type: ignore[operator]

    def loglike_obs(self, theta: object) -> np.ndarray:
        return np.array([self.loglike(theta)])

    def score(self, theta: object) -> np.ndarray:
        return np.array([float(self._g(float(np.asarray(theta)[0])))])  # type: ignore[operator]

    def score_obs(self, theta: object) -> np.ndarray:
        return self.score(theta)[None, :]

    def hessian(self, theta: object) -> np.ndarray:
        return np.array([[float(self._h(float(np.asarray(theta)[0])))]])  # type: ignore[operator]


def test_newton_stops_after_500_steps_by_default() -> None:
    """``-exp(-theta)`` rises forever; each Newton step is exactly 1, so with ``tol = 0`` it runs to the cap."""
    tail = Toy(lambda t: -np.exp(-t), lambda t: np.exp(-t), lambda t: -np.exp(-t))
    found = maximize(tail, [0.0], tol=0.0)
    assert (found.iterations, found.converged, found.params.tolist()) == (500, False, [500.0])
    assert found.decrement == pytest.approx(np.exp(-499.0), rel=1e-9)


def test_decrement_equal_to_the_tolerance_is_not_converged() -> None:
    """``theta - theta^2 / 2`` from 0: the first decrement is exactly 1; with ``tol = 1`` a second step is taken."""
    quadratic = Toy(lambda t: t - t * t / 2, lambda t: 1 - t, lambda t: -1.0)
    found = maximize(quadratic, [0.0], tol=1.0)
    assert (found.iterations, found.params.tolist(), found.decrement) == (2, [1.0], 0.0)


def test_line_search_gives_up_where_no_step_rises() -> None:
    """A score that points uphill where the log-likelihood falls (``-theta^2`` at 0, claimed score 1, Hessian
    -4): no halving of the step rises by the Armijo margin, so the start comes back, not converged; it counts
    as converged only when the decrement (0.25) is below the square root of the tolerance."""
    wrong = Toy(lambda t: -t * t, lambda t: 1.0, lambda t: -4.0)
    found = maximize(wrong, [0.0])
    assert found.params.tolist() == [0.0] and found.llf == 0.0
    assert (found.iterations, found.decrement, found.converged, found.at_bound) == (1, 0.25, False, False)
    assert not maximize(wrong, [0.0], tol=0.0625).converged  # sqrt(0.0625) = 0.25: not below
    assert maximize(wrong, [0.0], tol=0.07).converged
    flat = Toy(lambda t: 0.0, lambda t: 0.0, lambda t: -1.0)  # at the maximum with tol = 0: a zero step is kept
    assert (maximize(flat, [0.0], tol=0.0, max_iter=3).iterations) == 3


def test_an_indefinite_hessian_is_damped_by_the_smallest_power_of_ten() -> None:
    """``-H = diag(2e-3, -1e-3)``: ``mu`` runs 2e-11, 2e-10, ... (1e-8 times the largest diagonal entry) to the
    first value making ``-H + mu I`` positive definite, 2e-3; the step is ``g / (2e-3 + diag)``."""
    quadratic = Toy(lambda t: t, lambda t: 1.0, lambda t: -2e-3)  # one dimension: check two with a 2x2 problem
    assert maximize(quadratic, [0.0], max_iter=1).params[0] == pytest.approx(500.0, rel=1e-12)

    class Saddle:
        k_params, k_extra = 2, 0
        h = np.diag([-2e-3, 1e-3])  # the Hessian: -H = diag(2e-3, -1e-3)

        def loglike(self, theta: object) -> float:
            t = np.asarray(theta, dtype=float)
            return float(t.sum() + t @ self.h @ t / 2)

        def loglike_obs(self, theta: object) -> np.ndarray:
            return np.array([self.loglike(theta)])

        def score(self, theta: object) -> np.ndarray:
            return 1 + self.h @ np.asarray(theta, dtype=float)

        def score_obs(self, theta: object) -> np.ndarray:
            return self.score(theta)[None, :]

        def hessian(self, theta: object) -> np.ndarray:
            return self.h

    step = maximize(Saddle(), [0.0, 0.0], max_iter=1).params
    np.testing.assert_allclose(step, [1 / 4e-3, 1 / 1e-3], rtol=1e-12)


def test_the_damping_leaves_a_margin_of_a_tenth_of_itself() -> None:
    """``theta + 5e-4 theta^2``: ``-H = -1e-3``, so ``mu`` runs 1e-11, 1e-10, ... up to 1e-3, which makes
    ``-H + mu I`` positive only by rounding (about 1e-19); the first ``mu`` leaving ``mu / 10`` is 1e-2, and the
    step ``1 / 9e-3``. Regression: the step was about 1e18. The SLD case where this showed (100 and 30 "yes"
    of 100, from ``t = 0.5``): the search stopped at an intercept of -3.07, not converged, its step there 6e15;
    it now reaches the maximum on ``t = 1``."""
    convex = Toy(lambda t: t + 5e-4 * t * t, lambda t: 1 + 1e-3 * t, lambda t: 1e-3)
    assert maximize(convex, [0.0], max_iter=1).params[0] == pytest.approx(1 / 9e-3, rel=1e-12)
    lik = _sld(100, 30)
    best = maximize(lik, [0.0, 0.5])
    assert (best.converged, best.at_bound, best.params[-1]) == (True, True, 1.0)
    assert best.params[0] == pytest.approx(-1.3956, abs=1e-4)


def test_a_hessian_that_is_not_finite_is_refused() -> None:
    broken = Toy(lambda t: -t * t, lambda t: -2 * t, lambda t: np.nan)
    message = "the Hessian is not finite: a fitted prevalence reached 0 or 1"
    with pytest.raises(FloatingPointError, match=_exact(message)):
        maximize(broken, [1.0])


# ------------------------------------------------------------------ start values, separation and collinearity messages
def test_intercept_start_is_the_constant_prevalence_fit() -> None:
    """The start spreads the intercept-only fit (Warner: ``pi = (lambda + p - 1) / (2p - 1)`` in closed form)
    over the columns that span the constant, its logit clipped to [-5, 5] and ``a`` to [0.02, 0.98]; columns
    that do not span the constant start at 0 and ``a`` at 0.5."""
    lik = _warner()
    pi = (lik.responses.mean() + 0.8 - 1) / 0.6
    level = np.log(pi / (1 - pi))
    north = lik.exog[:, 1] > 0
    np.testing.assert_allclose(_intercept_start(lik.with_exog(np.column_stack([north, ~north]).astype(float))),
                               [level, level], rtol=1e-9)
    np.testing.assert_allclose(_intercept_start(lik), [level, 0.0], rtol=1e-9, atol=1e-12)
    assert _intercept_start(lik.with_exog(lik.exog[:, 1:])).tolist() == [0.0]
    for yes, clipped in ((1003, -5.0), (3997, 5.0)):  # pi = 0.001 and 0.999: logits -6.9 and 6.9
        y = (np.arange(5000) < yes).astype(int)
        start = _intercept_start(ResponseLikelihood(sv.Warner(0.8), y, None, np.ones((5000, 1))))
        assert start == pytest.approx([clipped], rel=1e-12)
    assert _intercept_start(_sld_on_bound())[-1] == 0.98  # t = 1, clipped
    interior = _intercept_start(_sld(70, 50))  # pi = 0.5, t = 0.7
    np.testing.assert_allclose(interior, [0.0, 0.7], atol=1e-9)
    trend = np.arange(200.0)
    assert _intercept_start(_sld(70, 50).with_exog(np.column_stack([trend, trend**2]))).tolist() == [0.0, 0.0, 0.5]
    cells = _intercept_start(_sld(70, 50).with_exog(np.column_stack([trend < 50, trend >= 50]).astype(float)))
    np.testing.assert_allclose(cells, [0.0, 0.0, 0.7], atol=1e-9)


def test_the_diverging_term_named() -> None:
    """Ten northerners of 10,000 all say "no", with an intercept, a covariate of spread 2 and one of spread 1e-4:
    the north dummy's coefficient runs to -inf, though its spread (0.03) times 26 is below 1, and the small-unit
    covariate's coefficient (about -600) is larger; the term named is the one whose coefficient moves the fitted
    logits most. A model with the intercept alone names the intercept, one with two constant columns the one
    with the larger coefficient; "yes" from 200 northerners under Mangat run their prevalence to 1."""
    rng = np.random.default_rng(11)
    n = 10_000
    d = sv.Mangat(0.6)
    north = np.arange(n) >= n - 10  # the last rows: the extreme row is not the first
    y = d.privatize_many(~north & (rng.random(n) < 0.4), rng=rng).astype(int)
    y[north] = 0
    x = np.column_stack([np.ones(n), north, rng.normal(0, 2, n), rng.normal(0, 1e-4, n)])
    lik = ResponseLikelihood(d, y, None, x)
    with pytest.raises(SeparationError, match="^perfect separation: the coefficient of 'north' diverges"):
        fit(lik, ["Intercept", "north", "z", "w"])
    with pytest.raises(SeparationError, match="^perfect separation: the coefficient of 'Intercept' diverges"):
        fit(ResponseLikelihood(d, np.zeros(200, dtype=int), None, np.ones((200, 1))), ["Intercept"])
    twice = np.column_stack([np.ones(200), np.full(200, 2.0)])
    constants = ResponseLikelihood(d, np.zeros(200, dtype=int), None, twice)
    with pytest.raises(SeparationError, match="^perfect separation: the coefficient of 'two' diverges"):
        fit(constants, ["one", "two"])  # the coefficients move along (1, 2)
    message = (
        "perfect separation: the coefficient of 'north' diverges (a fitted prevalence runs to 1: the log-likelihood "
        "still rises, ever more slowly, as its logit moves on); the answers in some covariate pattern are explained "
        "only by a prevalence of 0 or 1. Drop or merge that term."
    )
    with pytest.raises(SeparationError, match=_exact(message)):
        fit(_north_all_say(1, d, 10_200, 200), ["north", "south"])


def test_a_fit_that_did_not_converge_is_named() -> None:
    lik = _warner()
    stuck = Maximum(np.zeros(2), lik.loglike(np.zeros(2)), 7, 1.0, False, False)
    message = (
        "perfect separation: the coefficient of 'z' diverges (the fit did not converge in 7 Newton steps); the "
        "answers in some covariate pattern are explained only by a prevalence of 0 or 1. Drop or merge that term."
    )
    with pytest.raises(SeparationError, match=_exact(message)):
        _check_separation(lik, stuck, ["Intercept", "z"])


def test_collinear_terms_are_named_with_the_fitted_range() -> None:
    """``z`` and ``2 z``: the information is singular along ``(0, 2, -1)``; the fitted prevalences are those of
    the model without ``2 z`` (the same column space)."""
    lik = _warner()
    two = fit(lik, ["Intercept", "z"])
    pi = lik.prevalence(two.params)
    collinear = lik.with_exog(np.column_stack([lik.exog, 2 * lik.exog[:, 1]]))
    with pytest.raises(SeparationError) as raised:
        fit(collinear, ["Intercept", "z", "z2"])
    pattern = (r"singular information matrix \(condition number ([0-9.e+]+)\): 'z', 'z2' not identified: perfect "
               rf"separation \(the fitted prevalence runs from {pi.min():.3g} to {pi.max():.3g}\) or terms collinear "
               r"in the rows used")
    found = re.fullmatch(pattern, str(raised.value))
    assert found is not None, str(raised.value)
    assert float(found.group(1)) > 1e12
    # x3 = x1 + 0.45 x2: the null direction weighs x2 about 0.4 times as much as x3, above the cut of 0.3
    x1, x2 = lik.exog[:, 1], np.random.default_rng(4).normal(size=lik.nobs)
    three = lik.with_exog(np.column_stack([lik.exog, x2, x1 + 0.45 * x2]))
    with pytest.raises(SeparationError, match=r"\): 'z', 'x2', 'x3' not identified: perfect separation"):
        fit(three, ["Intercept", "z", "x2", "x3"])
    # the same with the extra parameter held on its bound: the information is taken without it
    bound = _sld_on_bound()
    z = np.random.default_rng(2).normal(size=200)
    with pytest.raises(SeparationError, match=r"\): 'z', 'z2' not identified: perfect separation"):
        fit(bound.with_exog(np.column_stack([np.ones(200), z, 2 * z])), ["Intercept", "z", "z2", "t"])


def test_covariance_on_the_bound_drops_only_the_extra_parameter() -> None:
    bound = _sld_on_bound()
    z = np.random.default_rng(2).normal(size=200)
    lik = bound.with_exog(np.column_stack([np.ones(200), z]))
    best = maximize(lik, [0.0, 0.0, 0.5])
    assert best.at_bound and best.params[-1] == 1.0
    cov = covariance(lik, best)
    np.testing.assert_allclose(cov[:2, :2], np.linalg.inv(-lik.hessian(best.params)[:2, :2]), rtol=1e-12)
    assert np.isnan(cov[-1]).all() and np.isnan(cov[:, -1]).all()


def test_nearly_collinear_terms_past_the_condition_limit() -> None:
    """``2 z + 2e-6 w`` beside ``z``: a finite maximum whose information, scaled to unit diagonal, has condition
    number about 2.1e12 (above 1e12: refused), while its middle eigenvalue over its smallest is below 1e12."""
    lik = _warner()
    w = np.random.default_rng(4).normal(size=lik.nobs)
    near = lik.with_exog(np.column_stack([lik.exog, 2 * lik.exog[:, 1] + 2e-6 * w]))
    info = -near.hessian(maximize(near, _intercept_start(near)).params)
    scaled = info / np.sqrt(np.outer(np.diag(info), np.diag(info)))
    values = np.linalg.eigvalsh(scaled)
    assert values[1] / values[0] < 1e12 < values[2] / values[0]
    with pytest.raises(SeparationError) as raised:
        fit(near, ["Intercept", "z", "z2"])
    found = re.match(r"singular information matrix \(condition number ([0-9.e+]+)\): 'z', 'z2' not", str(raised.value))
    assert found is not None, str(raised.value)
    assert float(found.group(1)) == pytest.approx(np.linalg.cond(scaled), rel=1e-2)


def test_a_halved_step_needs_the_armijo_gain_of_its_own_length() -> None:
    """Score 1 and Hessian -1 at 0: the step is 1 and the decrement 1. The full step falls; half of it is taken
    when it gains at least ``1e-4 * 0.5 * 1`` (6e-5 does; 4e-5 does not, and no shorter step rises)."""
    for gain, params in ((6e-5, [0.5]), (4e-5, [0.0])):
        halved = Toy(lambda t, gain=gain: {0.0: 0.0, 0.5: gain}.get(t, -1.0), lambda t: 1.0, lambda t: -1.0)
        assert maximize(halved, [0.0], max_iter=1).params.tolist() == params


# ------------------------------------------------------------------ the extra parameter on its bound, in fit
def test_fit_on_the_bound_judges_the_coefficients_with_the_extra_parameter_held() -> None:
    """SLD with 19 and 5 "yes" of 20: the maximum sits on ``t = 1`` (the score pushing beyond it) with an
    intercept of -2.34. There the information of both parameters is indefinite and the Newton step that also
    moves ``t`` moves the intercept by 9: neither is asked. Holding ``t``, the step is below 1e-6 and the
    intercept's information positive, so the fit stands."""
    lik = _sld(19, 5, n=20)
    best = fit(lik, ["Intercept", "t"])
    assert (best.converged, best.at_bound, best.params[-1]) == (True, True, 1.0)
    assert best.params[0] == pytest.approx(-2.3437, abs=1e-4) and lik.score(best.params)[-1] > 1
    info = -lik.hessian(best.params)
    assert np.linalg.eigvalsh(info)[0] < 0 < info[0, 0]
    assert _newton_step(lik, best.params, None)[0][0] > 9  # the (damped) step with t free


def test_the_direction_a_diverging_fit_runs_to_is_the_sign_of_its_step() -> None:
    """A fit said to have converged half a logit below Warner's maximum (150 of 400 "yes"): the next Newton
    step moves the logit by +0.77 (more than 0.5, less than 1), so the prevalence is said to run to 1; 0.75
    above it the step is -0.68, toward 0. A fit said to end at a logit of +31 has a prevalence of 1."""
    lik = ResponseLikelihood(sv.Warner(0.8), (np.arange(400) < 150).astype(int), None, np.ones((400, 1)))
    top = maximize(lik, [0.0]).params
    for offset, end in ((-0.5, "1"), (0.75, "0")):
        params = top + offset
        claimed = Maximum(params, lik.loglike(params), 3, 0.0, True, False)
        with pytest.raises(SeparationError, match=re.escape(f"(a fitted prevalence runs to {end}: the log-")):
            _check_separation(lik, claimed, ["Intercept"])
    far = Maximum(np.array([31.0]), lik.loglike([31.0]), 3, 0.0, True, False)
    with pytest.raises(SeparationError, match=re.escape("(a fitted prevalence is 1 to within 1e-13); the")):
        _check_separation(lik, far, ["Intercept"])


# ------------------------------------------------------------------ the random restarts
def _searches(monkeypatch: pytest.MonkeyPatch, lik: ResponseLikelihood, outcome: object) -> list[np.ndarray]:
    """The starts ``fit`` searches from on ``lik``, in order, as it calls them (the intercept-only fit inside
    the first start is left alone); the ``j``-th search gives ``outcome(j, start)``, which may raise."""
    starts: list[np.ndarray] = []
    real = likelihood.maximize

    def search(target: object, start: object, *args: object, **kwargs: object) -> Maximum:
        if target is not lik:
            return real(target, start, *args, **kwargs)  # type: ignore[arg-type]
        starts.append(np.array(start, dtype=np.float64))
        return outcome(len(starts) - 1, starts[-1])  # type: ignore[operator,no-any-return]

    monkeypatch.setattr(likelihood, "maximize", search)
    return starts


def _two_group_with_covariate() -> ResponseLikelihood:
    """SLD at ``pi = 0.75``, ``t = 0.8`` (78 and 68 "yes" of 100: the intercept start is ``(ln 3, 0, 0.81)``) with
    an intercept and a covariate of spread 3."""
    z = np.random.default_rng(8).normal(0.0, 3.0, 200)
    return _sld(78, 68).with_exog(np.column_stack([np.ones(200), z]))


def _stuck(found: Maximum) -> Maximum:
    """``found`` as a search would report it whose line search stuck at a decrement of twice the tolerance:
    converged by :func:`maximize`'s looser test, and in doubt."""
    return Maximum(found.params, found.llf, found.iterations, 2 * TOLERANCE, True, False)


def test_fit_keeps_a_confident_first_maximum_without_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A first maximum that is converged, interior, strict (negative definite Hessian) and finite is the fit:
    ``fit`` searches once, whatever ``restarts``."""
    lik = _two_group_with_covariate()
    first = maximize(lik, _intercept_start(lik))
    assert likelihood.in_doubt(lik, first) is None
    starts = _searches(monkeypatch, lik, lambda j, start: first)
    assert fit(lik, ["Intercept", "z", "t"], restarts=400) is first and len(starts) == 1


def test_a_confident_first_maximum_is_the_best_of_the_restarts() -> None:
    """Where the first maximum is kept, the four restarts (searched here by hand) reach no higher
    log-likelihood and the same estimates (to 1e-4 standard errors: a Newton decrement below 1e-10 puts each
    search within about 1e-5 standard errors of the maximum): keeping it changes nothing."""
    for lik in (_two_group_with_covariate(), _warner()):
        best = fit(lik, ["a", "b", "c"][: lik.k_params])
        se = np.sqrt(np.diag(covariance(lik, best)))
        rng = np.random.default_rng(0)
        spread = lik.exog.std(axis=0)
        spread[spread == 0] = 1.0
        for _ in range(4):
            start = _intercept_start(lik)
            start[:2] += rng.normal(0.0, 0.5, 2) / spread
            if lik.k_extra:
                start[-1] = rng.uniform(0.05, 0.95)
            other = maximize(lik, start)
            assert other.llf <= best.llf + 1e-9
            assert np.all(np.abs(other.params - best.params) <= 1e-4 * se)


def test_in_doubt_names_each_reason_to_restart() -> None:
    """The restart rule: no maximum, not converged, a decrement at or above the tolerance, the extra parameter
    on a bound, a Hessian not negative definite (Warner at ``beta = (-10, 0)``: with 56% "yes", the curvature
    of the intercept is positive where ``pi`` is near 0), a diverging coefficient."""
    lik = _warner()
    good = maximize(lik, np.zeros(2))
    assert likelihood.in_doubt(lik, good) is None
    assert likelihood.in_doubt(lik, None) == "the search failed"
    slow = Maximum(good.params, good.llf, 500, 1e-3, False, False)
    assert likelihood.in_doubt(lik, slow) == "the search did not converge (Newton decrement 0.001)"
    assert likelihood.in_doubt(lik, _stuck(good)) == "the search did not converge (Newton decrement 2e-10)"
    sld = _sld_on_bound()
    on_bound = maximize(sld, _intercept_start(sld))
    assert on_bound.at_bound and likelihood.in_doubt(sld, on_bound) == "the extra parameter is on a bound of [0, 1]"
    saddle = np.array([-10.0, 0.0])
    assert lik.hessian(saddle)[0, 0] > 0
    flat = Maximum(saddle, lik.loglike(saddle), 3, 0.0, True, False)
    assert likelihood.in_doubt(lik, flat) == "the Hessian is not negative definite"
    one = lik.with_exog(np.ones((lik.nobs, 1)))
    far = Maximum(np.array([-31.0]), one.loglike([-31.0]), 3, 0.0, True, False)
    assert likelihood.in_doubt(one, far) == "the Hessian is not negative definite"
    tiny = _north_all_say(0, sv.Mangat(0.6), 10_200, 200)
    ray = maximize(tiny, np.zeros(2))
    assert likelihood.in_doubt(tiny, ray) == likelihood._diverging(tiny, ray) is not None


def test_fit_restarts_from_four_seeded_starts_when_in_doubt(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the first maximum in doubt ``fit`` searches five times: from the intercept start, then from four
    restarts seeded by 0 (the same for the same seed). Over 400 restarts each coefficient moves from the
    intercept start by its own normal deviation of standard deviation 0.5 divided by its column's spread (1 for
    the constant column), and ``a`` is drawn uniformly from [0.05, 0.95]. Here every restart fails, so the
    intercept start's maximum is the fit."""
    lik = _two_group_with_covariate()
    first = _stuck(maximize(lik, _intercept_start(lik)))

    def only_first(j: int, start: np.ndarray) -> Maximum:
        if j:
            raise ValueError("start: the log-likelihood is not finite at the start values")
        return first

    starts = _searches(monkeypatch, lik, only_first)
    assert fit(lik, ["Intercept", "z", "t"]) is first
    assert len(starts) == 5
    np.testing.assert_array_equal(starts[0], _intercept_start(lik))
    again = _searches(monkeypatch, lik, only_first)
    fit(lik, ["Intercept", "z", "t"], seed=0)
    np.testing.assert_array_equal(np.array(again), np.array(starts))
    other = _searches(monkeypatch, lik, only_first)
    fit(lik, ["Intercept", "z", "t"], seed=1)
    assert not np.any(np.array(other[1:]) == np.array(starts[1:]))
    many = _searches(monkeypatch, lik, only_first)
    fit(lik, ["Intercept", "z", "t"], restarts=400, seed=1)
    moves = np.array(many[1:]) - many[0]
    assert moves.shape == (400, 3)
    spread = lik.exog[:, 1].std()
    assert moves[:, 0].std() == pytest.approx(0.5, rel=0.1) and abs(moves[:, 0].mean()) < 0.1
    assert moves[:, 1].std() * spread == pytest.approx(0.5, rel=0.1) and abs(moves[:, 1].mean() * spread) < 0.1
    assert abs(np.corrcoef(moves[:, 0], moves[:, 1])[0, 1]) < 0.2
    a = np.array(many[1:])[:, 2]
    assert 0.05 <= a.min() < 0.1 and 0.9 < a.max() <= 0.95
    assert 0.45 < np.mean(a) < 0.55


def test_fit_keeps_the_first_best_maximum_past_failed_restarts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restart whose search fails (ValueError: an answer impossible at its start; FloatingPointError: it ran
    to a prevalence of 0 or 1) is skipped, and the later ones still searched; of maxima with equal
    log-likelihood the first found is kept (the first maximum in doubt: its line search stuck)."""
    lik = _two_group_with_covariate()
    first = _stuck(maximize(lik, _intercept_start(lik)))
    better = Maximum(first.params, first.llf + 1.0, 11, first.decrement, True, False)
    tied = Maximum(first.params, first.llf + 1.0, 12, first.decrement, True, False)

    def outcome(j: int, start: np.ndarray) -> Maximum:
        if j == 1:
            raise ValueError("start: the log-likelihood is not finite at the start values")
        if j == 2:
            raise FloatingPointError("the Hessian is not finite: a fitted prevalence reached 0 or 1")
        return [first, None, None, better, tied][j]  # type: ignore[return-value]

    starts = _searches(monkeypatch, lik, outcome)
    assert fit(lik, ["Intercept", "z", "t"]) is better and len(starts) == 5


def test_fit_refuses_when_every_search_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """No start reaching a maximum (every search refused) is a separation error in whole words."""
    lik = _two_group_with_covariate()

    def refused(j: int, start: np.ndarray) -> Maximum:
        raise FloatingPointError("the Hessian is not finite: a fitted prevalence reached 0 or 1")

    starts = _searches(monkeypatch, lik, refused)
    message = "no start value reached a finite maximum: the fitted prevalence runs to 0 or 1"
    with pytest.raises(SeparationError, match=_exact(message)):
        fit(lik, ["Intercept", "z", "t"], restarts=2)
    assert len(starts) == 3
