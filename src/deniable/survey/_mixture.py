"""Linear regression on a randomized-response predictor: the normal mixture likelihood of RRreg's ``RRlin``.

Respondent ``i`` has a latent state ``T_i`` (1 = carrier, with probability
``pi``), a randomized answer ``r_i`` about it (``P(r | T)`` from the design)
and a plain outcome

    y_i | T_i = t  ~  Normal(x_it' beta, sigma^2),

where ``x_it`` is the respondent's covariate row with the randomized
predictor's column set to ``t``. Summing over the unseen state:

    L_i = sum_t f_it,   f_it = w_t P(r_i | t) phi((y_i - x_it' beta) / sigma) / sigma,   w = (1 - pi, pi).

With ``tau_it = f_it / L_i`` (the posterior of the state), ``e_it = y_i - x_it' beta``
and ``u_it`` the gradient of ``log f_it`` in ``theta = (beta, sigma, pi)``:

    u_it = (e_it x_it / sigma^2, -1/sigma + e_it^2 / sigma^3, t / pi - (1 - t) / (1 - pi))
    score_i = sum_t tau_it u_it
    Hessian_i = sum_t tau_it (D_it + u_it u_it') - score_i score_i'

with ``D_it`` the Hessian of ``log f_it``: ``-x x' / sigma^2`` (beta, beta),
``-2 e x / sigma^3`` (beta, sigma), ``1/sigma^2 - 3 e^2 / sigma^4`` (sigma,
sigma), ``-t / pi^2 - (1 - t) / (1 - pi)^2`` (pi, pi). This module uses numpy only.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.survey._design_base import Design
from deniable.survey._likelihood import check_design

__all__ = ["MixtureLikelihood", "check_one_group"]


def check_one_group(design: Design) -> None:
    """Refuse what linear regression on a randomized predictor cannot take: two-group designs, FR with m > 2."""
    check_design(design)
    if design.groups != 1:
        raise ValueError(f"design {design.model} has two groups: linear regression on a randomized predictor "
                         "takes one-group designs")


class MixtureLikelihood:
    """``log L(beta, sigma, pi)`` of outcomes ``y`` on covariates ``exog`` whose column ``column`` is the latent state.

    ``answers`` are the randomized answers about the state (``design``'s
    responses; one-group designs only). The parameters are ``beta`` (one per
    column of ``exog``), ``sigma`` and ``pi`` (last, kept in [0, 1]).
    """

    k_extra = 1

    def __init__(self, design: Design, answers: Any, outcome: Any, exog: Any, column: int) -> None:
        check_one_group(design)
        self.exog = np.asarray(exog, dtype=np.float64)
        n, k = self.exog.shape
        self.y = np.asarray(outcome, dtype=np.float64)
        r = np.asarray(answers)
        allowed = np.asarray(design.responses)
        ok = np.isin(r, allowed) if r.dtype.kind in "biuf" else np.zeros(n, dtype=bool)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"the randomized predictor must be one of {', '.join(map(str, design.responses))} "
                             f"for {design.model}; got {r[i].item()!r} at row {i}")
        given = design.transition_matrix(1)  # [t, r] = P(answer r | state t)
        self.answer_index = np.searchsorted(allowed, r.astype(np.int64))
        self.answer_prob = given[:, self.answer_index].T  # (n, 2): P(r_i | t)
        self.design, self.groups = design, np.ones(n, dtype=np.int64)
        self.rows = []
        for t in (0.0, 1.0):
            x = self.exog.copy()
            x[:, column] = t
            self.rows.append(x)
        self.column = column
        self.k_params = k + 2
        self.nobs = n
        self.weights: NDArray[np.float64] | None = None  # survey weights of the rows

    def _parts(self, theta: Any) -> tuple[Any, ...]:
        t = np.asarray(theta, dtype=np.float64)
        k = self.exog.shape[1]
        beta, sigma, pi = t[:k], float(t[k]), float(t[k + 1])
        errors = [self.y - x @ beta for x in self.rows]
        weights = (1 - pi, pi)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_f = np.column_stack([
                np.log(weights[s] * self.answer_prob[:, s]) - np.log(sigma) - 0.5 * np.log(2 * np.pi)
                - errors[s] ** 2 / (2 * sigma**2) for s in (0, 1)
            ])
        top = np.max(log_f, axis=1, keepdims=True)
        log_lik = top[:, 0] + np.log(np.exp(log_f - top).sum(axis=1))
        tau = np.exp(log_f - log_lik[:, None])
        return beta, sigma, pi, errors, tau, log_lik

    def loglike_obs(self, theta: Any) -> NDArray[np.float64]:
        t = np.asarray(theta, dtype=np.float64)
        if t[-2] <= 0 or not 0 <= t[-1] <= 1:
            return np.full(self.nobs, -np.inf)
        return self._parts(t)[5]

    def with_answer(self, answer: int) -> MixtureLikelihood:
        """The same rows had every randomized answer been ``answer`` (for the randomization's variance)."""
        return MixtureLikelihood(self.design, np.full(self.nobs, answer), self.y, self.exog, self.column)

    def with_weights(self, weights: NDArray[np.float64] | None) -> MixtureLikelihood:
        """The same rows with other row weights (a survey replicate's)."""
        other = copy.copy(self)
        other.weights = weights
        return other

    def _sum(self, values: NDArray[np.float64]) -> Any:
        """``sum_i values_i`` along the first axis, row i counted ``weights_i`` times (survey weights)."""
        return values.sum(axis=0) if self.weights is None else self.weights @ values

    def loglike(self, theta: Any) -> float:
        return float(self._sum(self.loglike_obs(theta)))

    def _gradients(self, theta: Any) -> tuple[list[NDArray[np.float64]], Any]:
        beta, sigma, pi, errors, tau, _ = self._parts(theta)
        u = []
        for s in (0, 1):
            e = errors[s]
            dpi = np.full(self.nobs, 1 / pi if s else -1 / (1 - pi))
            u.append(np.column_stack([self.rows[s] * (e / sigma**2)[:, None], -1 / sigma + e**2 / sigma**3, dpi]))
        return u, (sigma, pi, errors, tau)

    def score_obs(self, theta: Any) -> NDArray[np.float64]:
        u, (_, _, _, tau) = self._gradients(theta)
        return np.nan_to_num(tau[:, :1] * u[0]) + np.nan_to_num(tau[:, 1:] * u[1])

    def score(self, theta: Any) -> NDArray[np.float64]:
        return np.asarray(self._sum(self.score_obs(theta)))

    def hessian(self, theta: Any) -> NDArray[np.float64]:
        u, (sigma, pi, errors, tau) = self._gradients(theta)
        k = self.exog.shape[1]
        out = np.zeros((self.k_params, self.k_params))
        rw = np.ones(self.nobs) if self.weights is None else self.weights
        for s in (0, 1):
            w, x, e = tau[:, s] * rw, self.rows[s], errors[s]
            if not np.any(w):
                continue
            d = np.zeros((self.k_params, self.k_params))
            d[:k, :k] = -(x * w[:, None]).T @ x / sigma**2
            d[:k, k] = d[k, :k] = -2 * (x * (w * e)[:, None]).sum(axis=0) / sigma**3
            d[k, k] = np.sum(w * (1 / sigma**2 - 3 * e**2 / sigma**4))
            d[k + 1, k + 1] = -np.sum(w) * (1 / pi**2 if s else 1 / (1 - pi) ** 2)
            out += d + (u[s] * w[:, None]).T @ u[s]
        s_obs = self.score_obs(theta)
        return out - (s_obs * rw[:, None]).T @ s_obs
