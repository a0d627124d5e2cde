"""The joint likelihood of an outcome regressed on randomized answers' latent truths (rr's ``rrreg.predictor``, RRlin).

Respondent ``i`` has plain covariates, ``M`` randomized answers ``r_im`` about
latent binary truths ``s_im`` (together the latent state ``s``, one of
``K = 2^M``), and an outcome ``y_i``. Three parts make the joint model:

- the latent state given the covariates ``w_i`` (a multinomial logit, state 0
  the reference): ``P(s | w_i) = exp(w_i' alpha_s) / sum_k exp(w_i' alpha_k)``.
  With one predictor this is rr's logistic "sensitive item" model; with
  ``w_i = 1`` the state's probabilities are constant, as in RRlin;
- the randomization, each answer through its design:
  ``A_is = prod_m P_m(r_im | s_m)``; a two-group design (SLD's ``t``,
  UQTunknown's ``piUQ``) has its extra parameter ``a`` in ``P_m``, linear in it;
- the outcome given the state, with ``x_is`` the outcome's covariate row whose
  randomized columns hold the state's truths: for ``"logit"``
  ``f_is = c0_i + c1_i p_is`` with ``p_is = logistic(x_is' beta)`` (a plain
  0/1 outcome has ``c0 = 1 - y``, ``c1 = 2y - 1``; a randomized outcome its
  design's ``P(y | 0)`` and ``P(y | 1) - P(y | 0)``), for ``"linear"`` the
  normal density of ``y_i - x_is' beta`` with standard deviation ``sigma``.

The likelihood sums over the unseen state: ``L_i = sum_s P(s | w_i) A_is f_is``.
With the posterior ``tau_is = P(s | w_i) A_is f_is / L_i`` and ``u_is`` the
gradient of ``log(P(s | w_i) A_is f_is)``, the score and the exact Hessian
(Louis's identity) are

    score_i = sum_s tau_is u_is,
    H = sum_i [ sum_s tau_is (D_is + u_is u_is') - score_i score_i' ],

``D_is`` the Hessian of the complete-data term: ``(s_is (1 - 2 p_is) - s_is^2) x x'``
with ``s_is = c1 p (1 - p) / f`` (logit); ``-x x' / sigma^2``, ``-2 e x / sigma^3``,
``1 / sigma^2 - 3 e^2 / sigma^4`` (linear); ``-(diag(P) - P P') (x) w w'`` (the
state model); ``-(dP / da / P)^2`` (the extra parameter). The parameters, in
order: ``beta``, ``sigma`` (linear), the ``K - 1`` vectors ``alpha_s``, and ``a``
(at most one two-group design among the predictors), kept in [0, 1] by the
Newton search of :func:`~deniable.survey._likelihood.maximize`. This module
uses numpy only. Survey weights (``weights``) count each row's terms that many times.
:meth:`PredictorLikelihood.randomization` gives the randomized answers (the
outcome's and the predictors') as one design, their transition matrices'
Kronecker product, for the variance an fpc must not remove
(:func:`~deniable.survey._weighted.randomization_variance`).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.survey._design_base import Design

__all__ = ["PredictorLikelihood", "check_predictor_design", "unbiased_truth"]

OUTCOMES = ("logit", "linear")


def check_predictor_design(name: str, design: Any) -> Design:
    """A design a randomized predictor can have: a binary truth, one group or SLD / UQTunknown's two."""
    if not isinstance(design, Design):
        raise TypeError(f"rr_predictors[{name!r}] must be a deniable.survey Design (e.g. design('Warner', p=0.8)); "
                        f"got {design!r}")
    if design.param_names[0] != "pi" or len(design.transition_matrix(1, 0.5 if design.extra else None)) != 2:
        raise ValueError(f"rr_predictors[{name!r}]: {design.model} has no binary truth to enter a regression "
                         f"(its latent states: {len(design.states)}); use a design of a yes/no attribute")
    return design


def unbiased_truth(design: Design, answers: NDArray[np.float64], groups: NDArray[np.int64] | None,
                   extra: float | None) -> NDArray[np.float64]:
    """``(r - m0) / (m1 - m0)`` per row, ``m_t = E[answer | truth t]`` in the row's group: unbiased for the truth."""
    out = np.empty(len(answers))
    values = np.asarray(design.responses, dtype=np.float64)
    g = np.ones(len(answers), dtype=np.int64) if groups is None else groups
    for k in np.unique(g):
        m0, m1 = design.transition_matrix(int(k), extra) @ values
        out[g == k] = (answers[g == k] - m0) / (m1 - m0)
    return out


class PredictorLikelihood:
    """``log L(theta) = sum_i log sum_s P(s | w_i) A_is f_is`` (see the module docstring).

    ``outcome``: ``"logit"`` or ``"linear"``; ``y``: the outcome; ``exog``: the
    outcome's covariate matrix, whose columns ``columns`` (one per predictor)
    are replaced by the state's truths; ``state_exog``: the state model's
    covariates ``w``; ``predictors``: per predictor ``(design, answer index,
    groups)`` (the answers as positions in ``design.responses``, groups 1/2 or
    None); ``outcome_design``: the randomized outcome's one-group design (logit
    only; None for a plain 0/1 outcome).
    """

    def __init__(self, outcome: str, y: Any, exog: Any, columns: list[int], state_exog: Any,
                 predictors: list[tuple[Design, NDArray[np.int64], NDArray[np.int64] | None]],
                 outcome_design: Design | None = None) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}; got {outcome!r}")
        self.outcome = outcome
        self._randomized = list(predictors)  # the randomized answers: the outcome's first (below), if randomized
        self._args = (y, exog, columns, state_exog, predictors, outcome_design)  # for with_answers
        self.exog = np.asarray(exog, dtype=np.float64)
        self.state_exog = np.asarray(state_exog, dtype=np.float64)
        self.y = np.asarray(y, dtype=np.float64)
        n, p = self.exog.shape
        m = len(predictors)
        self.states = self.state_list(m)  # (K, M)
        self.rows = []
        for s in self.states:
            x = self.exog.copy()
            x[:, columns] = s
            self.rows.append(x)
        self.n_states = len(self.states)
        # the randomization: log A at a = 0 per state, and per state P and dP/da of the two-group predictor
        self._log_fixed = np.zeros((n, self.n_states))
        self._extra: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
        for j, (design, index, groups) in enumerate(predictors):
            g = np.ones(n, dtype=np.int64) if groups is None else groups
            base, slope = np.empty((n, 2)), np.zeros((n, 2))
            for k in np.unique(g):
                here = g == k
                low = design.transition_matrix(int(k), 0.0 if design.extra else None)
                base[here] = low[:, index[here]].T
                if design.extra:
                    slope[here] = (design.transition_matrix(int(k), 1.0) - low)[:, index[here]].T
            truth = self.states[:, j].astype(np.int64)
            if design.extra:
                if self._extra is not None:
                    raise ValueError("rr_predictors: at most one two-group design (SLD, UQTunknown) among the "
                                     "randomized predictors")
                self._extra = (base[:, truth], slope[:, truth])
            else:
                with np.errstate(divide="ignore"):
                    self._log_fixed += np.log(base[:, truth])
        if outcome == "logit":
            if outcome_design is None:
                self._c0, self._c1 = 1 - self.y, 2 * self.y - 1
            else:
                t = outcome_design.transition_matrix(1)
                idx = np.searchsorted(np.asarray(outcome_design.responses), self.y.astype(np.int64))
                self._c0, self._c1 = t[0, idx], t[1, idx] - t[0, idx]
                self._randomized.insert(0, (outcome_design, idx, None))
        self.k_beta = p
        self.k_sigma = int(outcome == "linear")
        self.k_alpha = (self.n_states - 1) * self.state_exog.shape[1]
        self.k_extra = int(self._extra is not None)
        self.k_params = p + self.k_sigma + self.k_alpha + self.k_extra
        self.nobs = n
        self.weights: NDArray[np.float64] | None = None  # row weights (survey weights)
        self._memo: tuple[bytes, dict[str, Any]] | None = None

    def with_weights(self, weights: NDArray[np.float64] | None) -> PredictorLikelihood:
        """The same rows with other row weights (a survey replicate's)."""
        other = copy.copy(self)
        other.weights, other._memo = weights, None
        return other

    def _rows(self) -> NDArray[np.float64]:
        """Each row's weight (1 without survey weights)."""
        return np.ones(self.nobs) if self.weights is None else self.weights

    def with_answers(self, answers: tuple[int, ...]) -> PredictorLikelihood:
        """The same rows had every respondent given the answers at positions ``answers`` of the designs'
        responses (the randomized outcome's first, if randomized, then each predictor's): for the
        randomization's variance."""
        y, exog, columns, state_exog, predictors, outcome_design = self._args
        if outcome_design is not None:
            y, answers = np.full(self.nobs, float(outcome_design.responses[answers[0]])), answers[1:]
        given = [(d, np.full(self.nobs, a, dtype=np.int64), g)
                 for (d, _, g), a in zip(predictors, answers, strict=True)]
        return PredictorLikelihood(self.outcome, y, exog, columns, state_exog, given, outcome_design)

    def randomization(self, theta: Any) -> tuple[NDArray[np.int64], NDArray[np.int64], Any,
                                                   list[PredictorLikelihood], str]:
        """The randomized answers taken together, as :func:`~deniable.survey._weighted.randomization_variance`
        takes them: given independently given the truths, so their joint transition matrix is the Kronecker
        product of the designs' (the outcome's first), the answers and the groups numbered in the same mixed
        radix. Returns the joint answers, joint groups (from 1), the matrix of a joint group, the likelihoods
        had every respondent given each joint answer, and the designs' names."""
        extra = self.split(theta)[3] if self.k_extra else None
        parts = self._randomized
        answers, groups = np.zeros(self.nobs, dtype=np.int64), np.zeros(self.nobs, dtype=np.int64)
        for design, index, g in parts:
            answers = answers * len(design.responses) + index
            groups = groups * design.groups + (0 if g is None else g - 1)

        def matrix_of(group: int) -> NDArray[np.float64]:
            digits: list[int] = []
            rest = group - 1
            for design, _, _ in reversed(parts):
                digits.insert(0, rest % design.groups + 1)
                rest //= design.groups
            out: NDArray[np.float64] = np.ones((1, 1))
            for (design, _, _), g in zip(parts, digits, strict=True):
                out = np.asarray(np.kron(out, design.transition_matrix(g, extra if design.extra else None)),
                                 dtype=np.float64)
            return out

        others = [self.with_answers(a) for a in itertools.product(*(range(len(d.responses)) for d, _, _ in parts))]
        return answers, groups + 1, matrix_of, others, " and ".join(d.model for d, _, _ in parts)

    @staticmethod
    def state_list(m: int) -> NDArray[np.float64]:
        """The ``2^m`` latent states of ``m`` binary truths, one row each, all-zero first (the reference)."""
        return np.array(list(itertools.product((0, 1), repeat=m)), dtype=np.float64)

    def split(self, theta: Any) -> tuple[NDArray[np.float64], float, NDArray[np.float64], float]:
        """``beta``, ``sigma`` (1 for logit), ``alpha`` (``K - 1`` rows) and ``a`` (0 without one)."""
        t = np.asarray(theta, dtype=np.float64)
        if t.shape != (self.k_params,):
            raise ValueError(f"params must have {self.k_params} values; got shape {t.shape}")
        p, q = self.k_beta, self.state_exog.shape[1]
        sigma = float(t[p]) if self.k_sigma else 1.0
        start = p + self.k_sigma
        alpha = t[start: start + self.k_alpha].reshape(self.n_states - 1, q)
        return t[:p], sigma, alpha, float(t[-1]) if self.k_extra else 0.0

    def state_probabilities(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
        """``P(s | w_i)``, one row per respondent, one column per state (the multinomial logit)."""
        eta = np.column_stack([np.zeros(self.nobs), self.state_exog @ alpha.T])
        eta -= eta.max(axis=1, keepdims=True)
        e = np.exp(eta)
        return np.asarray(e / e.sum(axis=1, keepdims=True))

    def _parts(self, theta: Any) -> dict[str, Any]:
        key = np.asarray(theta, dtype=np.float64).tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        beta, sigma, alpha, a = self.split(theta)
        prob = self.state_probabilities(alpha)
        with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
            log_a = self._log_fixed.copy()
            if self._extra is not None:
                base, slope = self._extra
                log_a += np.log(base + a * slope)
            parts: dict[str, Any] = {"prob": prob}
            if self.outcome == "logit":
                half = np.column_stack([np.tanh(0.5 * (x @ beta)) for x in self.rows])
                pi, q = 0.5 * (1 + half), 0.5 * (1 - half)
                f = self._c0[:, None] + self._c1[:, None] * pi
                log_f = np.log(np.maximum(f, 0.0))
                parts.update(pi=pi, q=q, f=f)
            else:
                e = np.column_stack([self.y - x @ beta for x in self.rows])
                log_f = -np.log(sigma) - 0.5 * np.log(2 * np.pi) - e**2 / (2 * sigma**2)
                parts["e"] = e
            joint = np.log(prob) + log_a + log_f
        top = np.max(joint, axis=1, keepdims=True)
        with np.errstate(invalid="ignore", under="ignore"):
            log_lik = top[:, 0] + np.log(np.exp(joint - top).sum(axis=1))
            parts["tau"] = np.exp(joint - log_lik[:, None])
        parts.update(log_lik=log_lik, beta=beta, sigma=sigma, a=a)
        self._memo = (key, parts)
        return parts

    def loglike_obs(self, theta: Any) -> NDArray[np.float64]:
        _, sigma, _, a = self.split(theta)
        if sigma <= 0 or not 0 <= a <= 1:
            return np.full(self.nobs, -np.inf)
        return np.asarray(self._parts(theta)["log_lik"])

    def loglike(self, theta: Any) -> float:
        return float(self._rows() @ self.loglike_obs(theta))

    def _gradients(self, theta: Any) -> tuple[dict[str, Any], NDArray[np.float64]]:
        """The parts and ``u`` (n, K, k_params): the complete-data gradient per respondent and state."""
        p = self._parts(theta)
        if "u" in p:
            return p, p["u"]
        n, k = self.nobs, self.n_states
        blocks = []
        if self.outcome == "logit":
            p["s"] = self._c1[:, None] * p["pi"] * p["q"] / p["f"]
            blocks.append(np.stack([x * p["s"][:, j, None] for j, x in enumerate(self.rows)], axis=1))
        else:
            e, sigma = p["e"], p["sigma"]
            blocks.append(np.stack([x * (e[:, j] / sigma**2)[:, None] for j, x in enumerate(self.rows)], axis=1))
            blocks.append((-1 / sigma + e**2 / sigma**3)[:, :, None])
        indicator = np.eye(k)[None, :, 1:] - p["prob"][:, None, 1:]  # (n, K, K-1): 1[s = l] - P_il
        blocks.append((indicator[:, :, :, None] * self.state_exog[:, None, None, :]).reshape(n, k, self.k_alpha))
        if self._extra is not None:
            base, slope = self._extra
            prob_a = base + p["a"] * slope
            p["da"] = np.divide(slope, prob_a, out=np.zeros_like(slope), where=prob_a > 0)
            blocks.append(p["da"][:, :, None])
        p["u"] = np.concatenate(blocks, axis=2)
        return p, p["u"]

    def score_obs(self, theta: Any) -> NDArray[np.float64]:
        p, u = self._gradients(theta)
        return np.asarray(np.einsum("is,isj->ij", p["tau"], u))

    def score(self, theta: Any) -> NDArray[np.float64]:
        return np.asarray(self._rows() @ self.score_obs(theta))

    def hessian(self, theta: Any) -> NDArray[np.float64]:
        """The exact ``d2 log L / d theta d theta'`` (Louis's identity; see the module docstring)."""
        p, u = self._gradients(theta)
        rw = self._rows()
        s_obs = np.einsum("is,isj->ij", p["tau"], u)
        tau = p["tau"] * rw[:, None]  # each row counted with its weight from here on
        out = np.einsum("is,isj,isk->jk", tau, u, u) - (s_obs * rw[:, None]).T @ s_obs
        kb = self.k_beta
        for j, x in enumerate(self.rows):
            if self.outcome == "logit":
                c = tau[:, j] * (p["s"][:, j] * (p["q"][:, j] - p["pi"][:, j]) - p["s"][:, j] ** 2)
                out[:kb, :kb] += (x * c[:, None]).T @ x
            else:
                e, sigma = p["e"][:, j], p["sigma"]
                out[:kb, :kb] -= (x * tau[:, j, None]).T @ x / sigma**2
                cross = -2 * x.T @ (tau[:, j] * e) / sigma**3
                out[:kb, kb] += cross
                out[kb, :kb] += cross
                out[kb, kb] += float(np.sum(tau[:, j] * (1 / sigma**2 - 3 * e**2 / sigma**4)))
        start = kb + self.k_sigma
        prob, w, q = p["prob"][:, 1:], self.state_exog, self.state_exog.shape[1]
        for a in range(self.n_states - 1):
            for b in range(self.n_states - 1):
                c = rw * prob[:, a] * ((a == b) - prob[:, b])
                out[start + a * q: start + (a + 1) * q, start + b * q: start + (b + 1) * q] -= (w * c[:, None]).T @ w
        if self._extra is not None:
            out[-1, -1] -= float(np.sum(tau * p["da"] ** 2))
        return np.asarray(out)
