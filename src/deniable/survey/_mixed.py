"""The marginal likelihood of a randomized-response logistic model with random effects (GLMMRR's ``RRglmer``).

Respondent ``i`` in cluster ``j`` (covariates ``x_i`` and ``z_i``, offset ``o_i``, 0 without one) is a
carrier with probability ``pi_i = logistic(x_i' beta + o_i + z_i' b_j)``; the
cluster's random effects are ``b_j = Lambda u_j`` with ``u_j ~ N(0, I_q)``,
so ``b_j ~ N(0, Sigma)``, ``Sigma = Lambda Lambda'`` (``Lambda`` lower
triangular with a non-negative diagonal: lme4's ``theta`` is its lower
triangle, column by column). The design gives each answer's probability
linearly in ``pi_i`` (for a yes/no design ``P(yes) = c + d pi_i``, GLMMRR's
misclassification form):

    L_i(u) = T[0, y_i] + (T[1, y_i] - T[0, y_i]) pi_i        (T the design's transition matrix)

The log-likelihood is ``sum_j log integral prod_{i in j} L_i(u)^{a_i} phi_q(u) du``
with row weights ``a_i`` (1 without weights; lme4's ``weights=`` for a
binomial model, the pseudo-likelihood of a weighted sample: each
respondent's conditional log-likelihood counted ``a_i`` times, so an
integer weight is that many copies of the row). The integral is approximated around the mode ``u_j`` of
``h_j(u) = sum_{i in j} a_i log L_i(u) - |u|^2 / 2`` (found by damped Newton
steps for all clusters at once, no loop over clusters) as lme4 does it:

* Laplace: ``h_j(u_j) - log det(H_j) / 2`` with
  ``H_j = I + Lambda' (sum_{i in j} a_i w_i z_i z_i') Lambda``;
* adaptive Gauss-Hermite quadrature with ``K`` nodes (a random intercept
  only): ``log s_j + log sum_k omega_k exp(h_j(u_j + s_j t_k) + t_k^2 / 2)``
  with ``s_j = H_j^{-1/2}`` and the nodes ``t_k`` and weights ``omega_k``
  of the standard normal (``K = 1`` is the Laplace approximation).

``w_i`` is the Fisher information of ``eta_i`` at the mode,
``w_i = v_i^2 sum_r (T[1, r] - T[0, r])^2 / P_i(r)`` with
``v_i = pi_i (1 - pi_i)``: lme4's penalized IRLS weights, which GLMMRR's
``RRglmer`` uses with its randomized-response link. For direct questioning
(the logit link, canonical) it equals minus the second derivative, so the
approximation is the textbook Laplace one and matches ``lme4::glmer`` exactly.

This module uses numpy only; :mod:`deniable.survey._glmer` adds the formula
interface, the maximization over ``(theta, beta)`` and the results.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit, logsumexp

__all__ = ["MixedLikelihood"]

MODE_TOLERANCE = 1e-11
"""The clusters' modes are found when every Newton step moves ``u`` by less than this."""


class MixedLikelihood:
    """``log L(theta, beta)`` of answers with per-row design probabilities ``low`` and ``slope`` (see the module).

    ``low[i] = T[0, y_i]`` and ``slope[i] = T[1, y_i] - T[0, y_i]``;
    ``table`` is the design's ``T`` (states x answers) for the Fisher weights;
    ``exog`` (n x p), ``z`` (n x q) and ``cluster`` (n integers ``0..J-1``,
    every value present). ``nagq``: 1 (Laplace) or the number of
    quadrature nodes (``q = 1`` only); ``offset``: ``o_i``, added to ``x_i' beta`` (None: 0);
    ``weights``: the row weights ``a_i`` (None: all 1). The modes found at one parameter vector start
    the search at the next.
    """

    def __init__(self, low: NDArray[np.float64], slope: NDArray[np.float64], table: NDArray[np.float64],
                 exog: NDArray[np.float64], z: NDArray[np.float64], cluster: NDArray[np.int64],
                 nagq: int = 1, offset: NDArray[np.float64] | None = None,
                 weights: NDArray[np.float64] | None = None) -> None:
        self.low, self.slope, self.exog, self.z, self.cluster = low, slope, exog, z, cluster
        self.offset = np.zeros(len(exog)) if offset is None else np.asarray(offset, dtype=np.float64)
        self.weighted = weights  # as given (None: unweighted)
        self.weights = np.ones(low.size) if weights is None else weights
        self.n_clusters = int(cluster.max()) + 1
        self.q = z.shape[1]
        self.k_theta = self.q * (self.q + 1) // 2
        self.k_params = self.k_theta + exog.shape[1]
        keep = table[1] != table[0]  # the answers whose probability depends on the state
        self._diff, self._table0 = (table[1] - table[0])[keep], table[0][keep]
        cols, rows = np.triu_indices(self.q)  # the lower triangle column by column (lme4's order of theta)
        self._tril = (rows, cols)
        self.nagq = nagq
        nodes, weights = np.polynomial.hermite_e.hermegauss(nagq)
        self._nodes, self._log_weights = nodes, np.log(weights / weights.sum())
        self._u = np.zeros((self.n_clusters, self.q))
        self.mode_failures = 0  # searches for the modes that ran out of steps

    # ------------------------------------------------------------ pieces
    def lam(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Lambda``: the lower-triangular factor of ``Sigma`` from lme4's ``theta`` (column by column)."""
        out = np.zeros((self.q, self.q))
        out[self._tril] = theta
        return out

    def diagonal(self) -> NDArray[np.bool_]:
        """Which parameters are a diagonal entry of ``Lambda`` (the standard deviations' factors)."""
        rows, cols = self._tril
        return np.concatenate([rows == cols, np.zeros(self.exog.shape[1], dtype=bool)])

    def canonical(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """``params`` with each column of ``Lambda`` whose diagonal entry is negative negated (lme4's form).

        The likelihood does not change: ``Sigma = Lambda Lambda'`` stays, and ``u ~ N(0, I)`` is symmetric.
        So the maximization may run unconstrained over ``theta``.
        """
        lam = self.lam(params[: self.k_theta])
        lam = lam * np.where(np.diag(lam) < 0, -1.0, 1.0)[None, :]
        return np.concatenate([lam[self._tril], params[self.k_theta:]])

    def _rows_at(self, offset: NDArray[np.float64], zl: NDArray[np.float64], u: NDArray[np.float64]
                 ) -> NDArray[np.float64]:
        """``eta_i = x_i' beta + o_i + (z_i' Lambda) u_{j(i)}`` (``offset`` is ``x_i' beta + o_i``)."""
        if self.q == 1:
            return offset + zl[:, 0] * u[self.cluster, 0]
        return offset + np.einsum("ik,ik->i", zl, u[self.cluster])

    def _log_l(self, eta: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """``pi``, ``v = pi (1 - pi)``, ``log L_i`` and ``L_i``."""
        pi = expit(eta)
        lik = self.low + self.slope * pi
        with np.errstate(divide="ignore"):
            return pi, pi * (1 - pi), np.log(lik), lik

    def _by_cluster(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.bincount(self.cluster, weights=values, minlength=self.n_clusters).astype(np.float64)

    def _cross(self, w: NDArray[np.float64], zl: NDArray[np.float64]) -> NDArray[np.float64]:
        """``sum_{i in j} w_i (Lambda' z_i)(Lambda' z_i)'`` per cluster, shape (J, q, q)."""
        out = np.empty((self.n_clusters, self.q, self.q))
        for a in range(self.q):  # q is small (1 to 3): one sum per entry of the q x q matrix
            for b in range(a + 1):
                out[:, a, b] = out[:, b, a] = self._by_cluster(w * zl[:, a] * zl[:, b])
        return out

    def _fisher(self, pi: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
        """The Fisher information of ``eta_i``: ``v_i^2 sum_r D_r^2 / P_i(r)`` over the answers with ``D_r != 0``."""
        p = self._table0[None, :] + self._diff[None, :] * pi[:, None]
        return np.asarray(v**2 * np.sum(self._diff**2 / np.maximum(p, 1e-300), axis=1))

    # ------------------------------------------------------------ the modes
    def modes(self, theta: NDArray[np.float64], beta: NDArray[np.float64]) -> NDArray[np.float64]:
        """The mode ``u_j`` of ``h_j`` for every cluster: Newton steps (the Fisher scoring step where the
        observed curvature is not negative definite), halved per cluster until ``h_j`` does not fall."""
        offset, zl = self.exog @ beta + self.offset, self.z @ self.lam(theta)
        u = self._u.copy()
        if not np.all(np.isfinite(u)):
            u[:] = 0.0
        h = self._h(offset, zl, u)
        if not np.all(np.isfinite(h)):
            u[:] = 0.0
            h = self._h(offset, zl, u)
        eye = np.eye(self.q)
        for _ in range(100):
            eta = self._rows_at(offset, zl, u)
            pi, v, _, lik = self._log_l(eta)
            s = self.slope * v / lik  # d log L_i / d eta
            grad = np.stack([self._by_cluster(self.weights * s * zl[:, a]) for a in range(self.q)], axis=1) - u
            observed = self.slope * v * (1 - 2 * pi) / lik - s**2
            neg = eye - self._cross(self.weights * observed, zl)
            fisher = eye + self._cross(self.weights * self._fisher(pi, v), zl)
            definite = neg[:, 0, 0] > 1e-8 if self.q == 1 else np.all(np.linalg.eigvalsh(neg) > 1e-8, axis=1)
            curvature = np.where(definite[:, None, None], neg, fisher)
            if self.q == 1:
                step = np.asarray(grad / curvature[:, 0], dtype=np.float64)
            else:
                step = np.asarray(np.linalg.solve(curvature, grad[:, :, None])[:, :, 0], dtype=np.float64)
            size = np.max(np.abs(step), axis=1)
            if np.all(size < MODE_TOLERANCE):
                break
            t = np.ones(self.n_clusters)
            for _ in range(40):  # halve the step in the clusters where h fell
                trial = u + t[:, None] * step
                h_new = self._h(offset, zl, trial)
                bad = ~(h_new >= h - 1e-12 * np.abs(h)) & (size >= MODE_TOLERANCE)
                if not bad.any():
                    break
                t[bad] /= 2
            moved = size >= MODE_TOLERANCE
            u[moved] = trial[moved]
            h = np.where(moved, h_new, h)
        else:
            self.mode_failures += 1
        self._u = u
        return u

    def _h(self, offset: NDArray[np.float64], zl: NDArray[np.float64], u: NDArray[np.float64]
           ) -> NDArray[np.float64]:
        """``h_j(u_j) = sum_{i in j} a_i log L_i - |u_j|^2 / 2`` per cluster."""
        _, _, log_l, _ = self._log_l(self._rows_at(offset, zl, u))
        return self._by_cluster(self._weighted(log_l)) - 0.5 * np.sum(u**2, axis=1)

    def _weighted(self, log_l: NDArray[np.float64]) -> NDArray[np.float64]:
        """``a_i log L_i``, 0 where ``a_i = 0`` (also where ``L_i = 0``)."""
        with np.errstate(invalid="ignore"):
            return np.where(self.weights > 0, self.weights * log_l, 0.0)

    # ------------------------------------------------------------ the value
    def loglike(self, params: NDArray[np.float64]) -> float:
        """The Laplace (``nagq = 1``) or adaptive Gauss-Hermite approximation of the log-likelihood."""
        params = np.asarray(params, dtype=np.float64)
        theta, beta = params[: self.k_theta], params[self.k_theta:]
        u = self.modes(theta, beta)
        offset, zl = self.exog @ beta + self.offset, self.z @ self.lam(theta)
        pi, v, log_l, _ = self._log_l(self._rows_at(offset, zl, u))
        curvature = np.eye(self.q) + self._cross(self.weights * self._fisher(pi, v), zl)
        _, logdet = np.linalg.slogdet(curvature)
        if self.nagq == 1:
            return float(np.sum(self._by_cluster(self._weighted(log_l)) - 0.5 * np.sum(u**2, axis=1) - 0.5 * logdet))
        scale = np.exp(-0.5 * logdet)  # q = 1: s_j = H_j^{-1/2}
        terms = np.empty((self.nagq, self.n_clusters))
        for k, t in enumerate(self._nodes):  # K nodes, each a pass over all rows
            terms[k] = self._h(offset, zl, u + (scale * t)[:, None]) + 0.5 * t**2 + self._log_weights[k]
        return float(np.sum(np.log(scale) + logsumexp(terms, axis=0)))

    def random_effects(self, params: NDArray[np.float64]) -> NDArray[np.float64]:
        """The conditional modes ``b_j = Lambda u_j`` (lme4's ``ranef``), one row per cluster."""
        theta = np.asarray(params[: self.k_theta], dtype=np.float64)
        return self.modes(theta, np.asarray(params[self.k_theta:], dtype=np.float64)) @ self.lam(theta).T

    def covariance(self, theta: Any) -> NDArray[np.float64]:
        """``Sigma = Lambda Lambda'``."""
        lam = self.lam(np.asarray(theta, dtype=np.float64))
        return np.asarray(lam @ lam.T)
