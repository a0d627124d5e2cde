"""The randomized-response logistic likelihood, its exact score and Hessian, and its maximization.

Respondent ``i`` (covariates ``x_i``, group ``g_i``, answer ``y_i``, offset ``o_i``, 0 without one) is a
carrier with probability ``pi_i = logistic(eta_i)``, ``eta_i = x_i' beta + o_i``: the offset is a term whose
coefficient is fixed at 1, so it enters every formula below only through ``pi_i``. The design gives
``P(y | state)``; the answer's probability is linear in ``pi_i``:

    L_i = P(y_i | non-carrier) (1 - pi_i) + P(y_i | carrier) pi_i

For a two-group design the extra parameter ``a`` (one scalar shared by both
groups, in [0, 1]) enters too, and ``L_i`` is *bilinear* in ``(pi_i, a)``:

    L_i = c00_i + c10_i pi_i + c01_i a + c11_i pi_i a

- SLD (``a = t``) and UQTunknown (``a = piUQ``): the design's own
  probabilities with ``t`` or ``piUQ`` = a.
- CDM and CDMsym (``a = gamma``): a respondent is a cheater (says "no"
  whatever the instruction) with probability ``gamma``, independently of
  ``x``; otherwise a carrier with probability ``pi_i``. So the latent state
  has probabilities ``((1-gamma)(1-pi_i), (1-gamma) pi_i, gamma)``, and
  ``pi_i`` is the carrier share among the *honest* respondents (the
  univariate CDM's ``pi`` is ``(1 - gamma) pi``). Gamma is identified by the
  two groups' different prompts, as in the univariate model.

The coefficients ``c`` come from the design's :meth:`response_probabilities
<deniable.survey._designs.Design.response_probabilities>` at the four corners
``(pi, a) in {0, 1}^2``, so the log-likelihood is exactly
``sum_i log design.response_probabilities(params_i, g_i)[y_i]``.

With ``v_i = pi_i (1 - pi_i)``, ``B_i = c10_i + c11_i a`` and ``D_i = c01_i + c11_i pi_i``:

    d l_i / d beta = B_i v_i / L_i x_i              d l_i / d a = D_i / L_i
    d2 l / d beta d beta' = sum [B_i v_i (1 - 2 pi_i) / L_i - (B_i v_i / L_i)^2] x_i x_i'
    d2 l / d beta d a     = sum [c11_i v_i / L_i - B_i v_i D_i / L_i^2] x_i
    d2 l / d a^2          = - sum (D_i / L_i)^2

This module uses numpy only; :mod:`deniable.survey._regression` adds the
formula interface and the statsmodels results.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from deniable.errors import SeparationError
from deniable.survey._design_base import Design

__all__ = ["Likelihood", "ResponseLikelihood", "Maximum", "SeparationError", "maximize", "fit", "in_doubt",
           "covariance"]

TOLERANCE = 1e-10
"""Convergence: the Newton decrement ``g' (-H)^{-1} g`` (twice the predicted gain of log-likelihood) below this."""

DIVERGED_ETA = 30.0
"""A fitted linear predictor beyond +-30 (a prevalence within 1e-13 of 0 or 1) means a coefficient diverges."""

DIVERGED_STEP = 0.5
"""A converged fit whose next Newton step still moves a fitted linear predictor by more than 0.5 runs along a ray.

At a finite maximum the step ``d`` moves ``eta_i`` by at most ``sqrt(g' d) se(eta_i)``, below
``1e-5 se(eta_i)``; where the log-likelihood rises ever more slowly toward a prevalence of 0 or 1
(``l ~ C - A exp(-|eta|)``), the step moves the separated logits by about 1, whatever the gain.
"""

SINGULAR_CONDITION = 1e12
"""An information matrix (scaled to unit diagonal) with a condition number above this is singular."""


def _carrier_params(design: Design, pi: float, a: float) -> dict[str, float]:
    """The design's parameters for a respondent who is a carrier with probability ``pi`` (extra value ``a``)."""
    if design.extra is None:
        return {"pi": pi}
    if design.extra == "gamma":
        return {"pi": (1 - a) * pi, "gamma": a}
    return {"pi": pi, design.extra: a}


def check_design(design: object) -> None:
    """Refuse designs logistic regression cannot take: FR with more than two categories (not a yes/no attribute)."""
    if not isinstance(design, Design):
        raise TypeError(f"design must be a deniable.survey Design (e.g. design('FR', p=...)); got {design!r}")
    if design.param_names[0] != "pi":
        raise ValueError(
            f"design {design.model} with {len(design.responses)} categories has no yes/no attribute: logistic "
            "regression models the prevalence of a binary attribute (use FR with two categories)"
        )


class ResponseLikelihood:
    """``log L(beta, a) = sum_i log L_i`` for answers ``y`` in groups ``g`` with covariate matrix ``X``.

    ``responses`` must be among ``design.responses`` and ``groups`` 1 or 2 for a
    two-group design (checked here; an error names the row by its position,
    or by ``labels[i]`` if given). The parameter vector is ``beta``
    (one per column of ``X``) followed by ``a`` for a two-group design.

    ``L_i`` depends on the row only through ``x_i`` and its cell (group,
    answer): the coefficients ``c`` are a table per cell. The pieces at a
    parameter vector (the prevalences and ``L_i``) are computed once and kept
    for the next call at the same vector, so the log-likelihood, score and
    Hessian at one point cost one pass over the rows between them.
    """

    def __init__(self, design: Design, responses: Any, groups: Any, exog: Any, labels: Any = None,
                 offset: Any = None) -> None:
        check_design(design)
        self.design = design
        exog = np.asarray(exog, dtype=np.float64)
        if exog.ndim != 2:
            raise ValueError(f"exog must be a 2-D covariate matrix; got shape {exog.shape}")
        n = exog.shape[0]
        y = np.asarray(responses)
        if y.shape != (n,):
            raise ValueError(f"responses must have one answer per row of exog ({n}); got shape {y.shape}")
        allowed = np.asarray(design.responses)
        numeric = y.dtype.kind in "biuf"
        ok = np.isin(y, allowed) if numeric else np.zeros(n, dtype=bool)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            bad = y[i].item() if isinstance(y[i], np.generic) else y[i]  # an object array holds Python values
            raise ValueError(
                f"response must be one of {', '.join(map(str, design.responses))} for {design.model}; "
                f"got {bad!r} at row {i if labels is None else labels[i]!r}"
            )
        g = design.check_groups(groups, n)
        if design.groups == 2 and n and not (np.any(g == 1) and np.any(g == 2)):
            raise ValueError(f"group: all respondents are in group {g[0]}; {design.model}'s {design.extra} is "
                             "identified only by answers from both groups")
        self.responses = y.astype(np.int64)
        self.groups = g
        corners = np.empty((design.groups, len(design.responses), 4))
        for k in range(design.groups):
            f = {
                (pi, a): design.response_probabilities(_carrier_params(design, pi, a), k + 1)
                for pi in (0.0, 1.0) for a in (0.0, 1.0)
            }
            corners[k] = np.column_stack([
                f[0, 0], f[1, 0] - f[0, 0], f[0, 1] - f[0, 0], f[1, 1] - f[1, 0] - f[0, 1] + f[0, 0],
            ])
        self._table = corners.reshape(-1, 4)  # per cell (group, answer): c00, c10, c01, c11
        self._cell = (g.astype(np.int64) - 1) * len(allowed) + np.searchsorted(allowed, self.responses)
        self.k_extra = 0 if design.extra is None else 1
        self.weights: NDArray[np.float64] | None = None  # row weights (survey weights; the cells' counts)
        self.offset = None if offset is None else np.asarray(offset, dtype=np.float64)
        if self.offset is not None and (self.offset.shape != (n,) or not np.all(np.isfinite(self.offset))):
            raise ValueError(f"offset must hold one finite number per row of exog ({n}); got {self.offset!r}")
        self._coefficients()
        self._set_exog(exog)

    def _coefficients(self) -> None:
        """The per-row coefficient columns, contiguous; for one group, ``L_i`` at ``pi = 0`` and ``pi = 1``."""
        self._c = np.stack([column[self._cell] for column in self._table.T])  # (4, n): c00, c10, c01, c11
        self._ends = None if self.k_extra else (self._c[0], self._c[0] + self._c[1])

    def _set_exog(self, exog: NDArray[np.float64]) -> None:
        self.exog = exog
        self.k_params = exog.shape[1] + self.k_extra
        self._memo: tuple[bytes, dict[str, Any]] | None = None

    @property
    def coef(self) -> NDArray[np.float64]:
        """The coefficients ``c00, c10, c01, c11`` of ``L_i``, one row per respondent."""
        return self._c.T

    def with_exog(self, exog: NDArray[np.float64]) -> ResponseLikelihood:
        """The same answers and groups with another covariate matrix (same rows)."""
        if exog.shape[0] != self.nobs:
            raise ValueError(f"exog must have {self.nobs} rows; got {exog.shape[0]}")
        other = copy.copy(self)
        other._set_exog(exog)
        return other

    @property
    def answer_index(self) -> NDArray[np.int64]:
        """Each row's answer as a position in ``design.responses``."""
        return np.asarray(np.searchsorted(np.asarray(self.design.responses), self.responses), dtype=np.int64)

    def with_answer(self, answer: int) -> ResponseLikelihood:
        """The same rows and groups had every respondent given ``answer`` (for the randomization's variance)."""
        return ResponseLikelihood(self.design, np.full(self.nobs, answer), self.groups, self.exog, offset=self.offset)

    def with_weights(self, weights: NDArray[np.float64] | None) -> ResponseLikelihood:
        """The same rows with other row weights (a survey replicate's)."""
        other = self.with_exog(self.exog)
        other.weights = weights
        return other

    def cells(self) -> ResponseLikelihood:
        """The intercept-only likelihood on the distinct (group, answer) cells, weighted by their counts
        (their total weight when the rows are weighted).

        Its log-likelihood, score and Hessian equal ``self.with_exog(ones)``'s at every ``(beta_0, a)``:
        with a constant prevalence, ``L_i`` depends on the row only through its cell (so not with an offset).
        """
        if self.offset is not None:
            raise ValueError("cells: with an offset the prevalence varies by row; use with_exog(ones)")
        cells, inverse = np.unique(self._cell, return_inverse=True)
        counts = np.bincount(inverse.ravel(), weights=self.weights)
        other = copy.copy(self)
        m = len(self.design.responses)
        other.responses = np.asarray(self.design.responses, dtype=np.int64)[cells % m]
        other.groups = (cells // m + 1).astype(self.groups.dtype)
        other._cell, other.weights = cells, counts.astype(np.float64)
        other._coefficients()
        other._set_exog(np.ones((cells.size, 1)))
        return other

    @property
    def nobs(self) -> int:
        return int(self.exog.shape[0])

    def _split(self, theta: Any) -> tuple[NDArray[np.float64], float]:
        t = np.asarray(theta, dtype=np.float64)
        if t.shape != (self.k_params,):
            raise ValueError(f"params must have {self.k_params} values; got shape {t.shape}")
        return t[: self.exog.shape[1]], float(t[-1]) if self.k_extra else 0.0

    def _pieces(self, theta: Any) -> dict[str, Any]:
        """At ``theta``: ``pi``, ``q = 1 - pi``, ``lik`` (``L_i``), ``b`` (``B_i``), and the extra value ``a``;
        kept for the next call at the same ``theta`` (with what is derived from them there)."""
        beta, a = self._split(theta)
        key = np.asarray(theta, dtype=np.float64).tobytes()
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        half = np.tanh(0.5 * self.linear_predictor(beta))  # logistic through tanh: no overflow
        pi = 0.5 * (1 + half)
        q = 0.5 * (1 - half)  # 1 - pi, without cancellation
        c00, c10, c01, c11 = self._c
        if self._ends is None:
            low = c00 + c01 * a  # L at pi = 0
            b = c10 + c11 * a
            high = low + b  # L at pi = 1
        else:
            (low, high), b = self._ends, c10
        with np.errstate(under="ignore"):
            lik = low * q + high * pi
        pieces = {"pi": pi, "q": q, "lik": lik, "b": b, "a": a}
        self._memo = (key, pieces)
        return pieces

    def linear_predictor(self, beta: NDArray[np.float64]) -> NDArray[np.float64]:
        """``eta_i = x_i' beta + o_i`` (``o_i`` the offset, 0 without one)."""
        eta = self.exog @ beta
        return eta if self.offset is None else eta + self.offset

    def _sum(self, values: NDArray[np.float64]) -> Any:
        """``sum_i values_i`` (along the first axis), each row counted ``weights_i`` times."""
        return values.sum(axis=0) if self.weights is None else self.weights @ values

    def loglike_obs(self, theta: Any) -> NDArray[np.float64]:
        """``log L_i`` per respondent (``-inf`` where the answer is impossible under ``theta``)."""
        lik = self._pieces(theta)["lik"]
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(lik, 0.0))

    def loglike(self, theta: Any) -> float:
        return float(self._sum(self.loglike_obs(theta)))

    def _ratios(self, theta: Any) -> tuple[dict[str, Any], NDArray[np.float64], NDArray[np.float64] | None]:
        """The pieces, ``s_i = B_i v_i / L_i`` and (two groups) ``D_i / L_i``: the score per row is
        ``(s_i x_i, D_i / L_i)``."""
        p = self._pieces(theta)
        if "s" not in p:
            p["s"] = p["b"] * (p["pi"] * p["q"]) / p["lik"]
            p["d"] = (self._c[2] + self._c[3] * p["pi"]) / p["lik"] if self.k_extra else None
        return p, p["s"], p["d"]

    def score_obs(self, theta: Any) -> NDArray[np.float64]:
        """``d log L_i / d theta``, one row per respondent."""
        _, s, d = self._ratios(theta)
        out = s[:, None] * self.exog
        return np.column_stack([out, d]) if d is not None else out

    def score(self, theta: Any) -> NDArray[np.float64]:
        p, s, d = self._ratios(theta)
        if "score" not in p:
            g = self._sum(s[:, None] * self.exog) if self.weights is not None else self.exog.T @ s
            p["score"] = np.append(g, self._sum(d)) if d is not None else g
        return np.array(p["score"])

    def hessian(self, theta: Any) -> NDArray[np.float64]:
        """The exact ``d2 log L / d theta d theta'`` (minus the observed information)."""
        p, s, d = self._ratios(theta)
        if "hessian" not in p:
            pi, q, lik = p["pi"], p["q"], p["lik"]
            w = s * (q - pi) - s**2
            x = self.exog
            if self.weights is not None:
                w = w * self.weights
            h_bb = (x * w[:, None]).T @ x
            if d is None:
                p["hessian"] = h_bb
            else:
                cross = self._c[3] * (pi * q) / lik - s * d
                h_ba = x.T @ (cross if self.weights is None else cross * self.weights)
                h_aa = -self._sum(d**2)
                p["hessian"] = np.block([[h_bb, h_ba[:, None]], [h_ba[None, :], np.array([[h_aa]])]])
        return np.array(p["hessian"])

    def prevalence(self, theta: Any) -> NDArray[np.float64]:
        """``pi_i = logistic(x_i' beta + o_i)`` per respondent."""
        return np.array(self._pieces(theta)["pi"])


@dataclass(frozen=True)
class Maximum:
    """A local maximum: ``params``, log-likelihood ``llf``, Newton ``iterations``, ``decrement`` at the end,
    and whether the extra parameter sits on a bound of [0, 1] (``at_bound``)."""

    params: NDArray[np.float64]
    llf: float
    iterations: int
    decrement: float
    converged: bool
    at_bound: bool


class Likelihood(Protocol):
    """What :func:`maximize` needs: a log-likelihood with exact score and Hessian; when ``k_extra`` is 1,
    the last of the ``k_params`` parameters is a probability, kept in [0, 1]."""

    k_params: int
    k_extra: int

    def loglike(self, theta: Any) -> float: ...

    def loglike_obs(self, theta: Any) -> NDArray[np.float64]: ...

    def score(self, theta: Any) -> NDArray[np.float64]: ...

    def score_obs(self, theta: Any) -> NDArray[np.float64]: ...

    def hessian(self, theta: Any) -> NDArray[np.float64]: ...


def maximize(lik: Likelihood, start: Any, tol: float = TOLERANCE, max_iter: int = 500) -> Maximum:
    """Damped Newton ascent from ``start`` with the exact Hessian; ``a`` (the last parameter) kept in [0, 1].

    Each step solves ``(-H + mu I) d = g`` with the smallest ``mu >= 0`` (0 or
    ``1e-8`` times the largest diagonal entry of ``-H`` times a power of ten)
    that makes the matrix positive definite with its smallest eigenvalue at
    least ``mu / 10``, halves the step until the
    log-likelihood rises (Armijo), clips ``a`` to [0, 1] and holds it on a
    bound while the score pushes outward. It stops when the Newton decrement
    ``g' d`` is below ``tol``.
    """
    theta = np.array(start, dtype=np.float64)
    k = lik.k_params
    extra = k - 1 if lik.k_extra else None
    if extra is not None:
        theta[extra] = min(max(theta[extra], 0.0), 1.0)
    llf = lik.loglike(theta)
    if not np.isfinite(llf):
        raise ValueError("start: the log-likelihood is not finite at the start values")
    decrement, held = np.inf, False
    for iteration in range(1, max_iter + 1):
        step, decrement, held = _newton_step(lik, theta, extra)
        if decrement < tol:
            return Maximum(theta, llf, iteration, decrement, True, held or _on_bound(theta, extra))
        size = 1.0
        while size > 1e-12:
            trial = theta + size * step
            if extra is not None:
                trial[extra] = min(max(trial[extra], 0.0), 1.0)
            new = lik.loglike(trial)
            if np.isfinite(new) and new >= llf + 1e-4 * size * decrement:
                break
            size /= 2
        else:
            return Maximum(theta, llf, iteration, decrement, decrement < np.sqrt(tol), held)
        theta, llf = trial, new
    return Maximum(theta, llf, max_iter, decrement, False, held)


def _newton_step(
    lik: Likelihood, theta: NDArray[np.float64], extra: int | None
) -> tuple[NDArray[np.float64], float, bool]:
    """The damped Newton step ``d = (-H + mu I)^{-1} g`` at ``theta``, the decrement ``g' d``, and whether ``a``
    is held on its bound (its step 0) because it sits on 0 or 1 and the score pushes it outward."""
    g = lik.score(theta)
    h = -lik.hessian(theta)
    free = np.ones(lik.k_params, dtype=bool)
    if extra is not None and ((theta[extra] <= 0.0 and g[extra] < 0) or (theta[extra] >= 1.0 and g[extra] > 0)):
        free[extra] = False
    step = np.zeros(lik.k_params)
    step[free] = _regularized_solve(h[np.ix_(free, free)], g[free])
    return step, float(g @ step), not free.all()


def _on_bound(theta: NDArray[np.float64], extra: int | None) -> bool:
    return extra is not None and theta[extra] in (0.0, 1.0)


def _regularized_solve(h: NDArray[np.float64], g: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(h + mu I)^{-1} g``, ``mu`` the smallest of 0, 1e-8 * scale, ... that makes ``h + 0.9 mu I`` positive
    definite, so that the smallest eigenvalue of ``h + mu I`` is at least ``mu / 10``.

    The margin matters where ``h`` has an eigenvalue ``-lambda`` with ``lambda`` a power of ten times
    ``1e-8 * scale``, as in one dimension (``lambda = scale``): ``mu`` lands on ``lambda`` to within rounding, and
    a matrix positive definite only by rounding gives a step of about ``1e15``."""
    if not np.all(np.isfinite(h)):
        raise FloatingPointError("the Hessian is not finite: a fitted prevalence reached 0 or 1")
    scale = max(float(np.max(np.abs(np.diag(h)))), 1e-300)
    mu = 0.0
    eye = np.eye(h.shape[0])
    while True:
        try:
            np.linalg.cholesky(h + 0.9 * mu * eye)
            factor = np.linalg.cholesky(h + mu * eye)
        except np.linalg.LinAlgError:
            mu = max(mu * 10, 1e-8 * scale)
            continue
        return np.linalg.solve(factor.T, np.linalg.solve(factor, g))


def fit(lik: ResponseLikelihood, names: list[str], restarts: int = 4, seed: int = 0) -> Maximum:
    """The maximum-likelihood estimate: a Newton ascent from an intercept-only start, and ``restarts`` more
    from seeded random starts when that first maximum is in doubt.

    The first start is the intercept-only fit (the prevalence and ``a``
    constant; with an offset, the logit ``beta_0 + o_i``) spread over the covariates that span the constant. Its
    maximum is in doubt (:func:`in_doubt`) when the search failed, did not
    converge to a Newton decrement below ``TOLERANCE``, left ``a`` on a bound
    of [0, 1], ended where the Hessian is not negative definite, or ended
    with a coefficient diverging. Then the restarts add seeded random
    deviations to the first start, and the maximum with the highest
    log-likelihood (the first found of equal ones) is the fit. ``names``
    (one per parameter) name the term in a :class:`SeparationError`: a
    fitted linear predictor beyond +-30 (a diverging coefficient) or a
    singular information matrix.
    """
    base = _intercept_start(lik)
    best = _search(lik, base)
    if in_doubt(lik, best) is not None:
        rng = np.random.default_rng(seed)
        spread = lik.exog.std(axis=0)
        spread[spread == 0] = 1.0
        for _ in range(restarts):
            trial = base.copy()
            trial[: lik.exog.shape[1]] += rng.normal(0.0, 0.5, lik.exog.shape[1]) / spread
            if lik.k_extra:
                trial[-1] = rng.uniform(0.05, 0.95)
            found = _search(lik, trial)
            if found is not None and (best is None or found.llf > best.llf):
                best = found
    if best is None:
        raise SeparationError("no start value reached a finite maximum: the fitted prevalence runs to 0 or 1")
    _check_separation(lik, best, names)
    return best


def _search(lik: ResponseLikelihood, start: NDArray[np.float64]) -> Maximum | None:
    """The Newton ascent from ``start``, or None where some answer is impossible at the start or the search
    ran to a prevalence of 0 or 1."""
    try:
        return maximize(lik, start)
    except (ValueError, FloatingPointError):
        return None


def in_doubt(lik: ResponseLikelihood, found: Maximum | None) -> str | None:
    """Why a search's maximum ``found`` may not be the fit (so that :func:`fit` restarts), or None.

    In doubt: no maximum (the search failed); not converged, or converged
    only with the line search stuck at a decrement above ``TOLERANCE``; the
    extra parameter on a bound of [0, 1]; a Hessian that is not negative
    definite (a saddle or a flat ridge, not a strict maximum); a coefficient
    diverging (:func:`_diverging`). A converged interior maximum with a
    negative definite Hessian is a strict local maximum, and is kept.
    """
    if found is None:
        return "the search failed"
    if not found.converged or not found.decrement < TOLERANCE:
        return f"the search did not converge (Newton decrement {found.decrement:.3g})"
    if found.at_bound:
        return "the extra parameter is on a bound of [0, 1]"
    h = lik.hessian(found.params)
    try:
        np.linalg.cholesky(-h)
    except np.linalg.LinAlgError:
        return "the Hessian is not negative definite"
    if not np.all(np.isfinite(h)):
        return "the Hessian is not finite"
    return _diverging(lik, found)


def _intercept_start(lik: ResponseLikelihood) -> NDArray[np.float64]:
    """Start values: the fit with a constant prevalence, expressed through the columns that span the constant.

    The constant-prevalence fit runs on the distinct (group, answer) cells (:meth:`ResponseLikelihood.cells`):
    a handful of rows whatever the number of respondents; with an offset, on the rows (``eta_i = beta_0 + o_i``).
    """
    x = lik.exog
    direction, constant = _constant_direction(x)
    start = np.zeros(lik.k_params)
    if lik.k_extra:
        start[-1] = 0.5
    if not constant:
        return start
    null = lik.cells() if lik.offset is None else lik.with_exog(np.ones((lik.nobs, 1)))
    found = maximize(null, np.array([0.0, 0.5][: null.k_params]))
    level = float(np.clip(found.params[0], -5.0, 5.0))
    start[: x.shape[1]] = level * direction
    if lik.k_extra:
        start[-1] = min(max(found.params[-1], 0.02), 0.98)
    return start


def _constant_direction(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], bool]:
    """``d`` with ``x d = 1`` (a column of ones, else least squares) and whether the columns span the constant."""
    for j in np.flatnonzero(x[0] == 1.0) if len(x) else ():
        if np.all(x[:, j] == 1.0):
            return np.eye(x.shape[1])[j], True
    ones = np.ones(len(x))
    direction = np.asarray(np.linalg.lstsq(x, ones, rcond=None)[0], dtype=np.float64)
    return direction, bool(np.allclose(x @ direction, ones, atol=1e-8))


def _diverging(lik: ResponseLikelihood, best: Maximum) -> str | None:
    """Why a coefficient diverges (the fit did not converge, a fitted prevalence is 0 or 1 to within 1e-13,
    or the log-likelihood still rises along a ray), or None for a finite maximum."""
    if not best.converged:
        return f"the fit did not converge in {best.iterations} Newton steps"
    k = lik.exog.shape[1]
    eta = lik.linear_predictor(best.params[:k])
    i = int(np.argmax(np.abs(eta)))
    if abs(eta[i]) > DIVERGED_ETA:
        return f"a fitted prevalence is {'0' if eta[i] < 0 else '1'} to within 1e-13"
    drift = lik.exog @ _newton_step(lik, best.params, k if lik.k_extra else None)[0][:k]
    i = int(np.argmax(np.abs(drift)))
    if abs(drift[i]) > DIVERGED_STEP:
        return (f"a fitted prevalence runs to {'0' if drift[i] < 0 else '1'}: the log-likelihood still rises, "
                "ever more slowly, as its logit moves on")
    return None


def _check_separation(lik: ResponseLikelihood, best: Maximum, names: list[str]) -> None:
    why = _diverging(lik, best)
    if why is not None:
        beta = best.params[: lik.exog.shape[1]]
        spread = lik.exog.std(axis=0)
        varying = spread > 0
        size = np.abs(beta) * np.where(varying, spread, 1.0)
        j = int(np.argmax(np.where(varying, size, -1.0))) if varying.any() else int(np.argmax(size))
        raise SeparationError(
            f"perfect separation: the coefficient of {names[j]!r} diverges ({why}); the answers in some "
            "covariate pattern are explained only by a prevalence of 0 or 1. Drop or merge that term."
        )
    info = -lik.hessian(best.params)
    keep = np.ones(lik.k_params, dtype=bool)
    if best.at_bound:
        keep[-1] = False
    sub = info[np.ix_(keep, keep)]
    diag = np.sqrt(np.abs(np.diag(sub)))
    if np.any(diag == 0):
        j = int(np.flatnonzero(diag == 0)[0])
        raise SeparationError(f"singular information matrix: the data carry no information on {names[j]!r}")
    scaled = sub / np.outer(diag, diag)
    values, vectors = np.linalg.eigh(scaled)
    if values[0] <= 0 or values[-1] / values[0] > SINGULAR_CONDITION:
        weight = np.abs(vectors[:, 0])
        involved = [names[int(np.flatnonzero(keep)[j])] for j in np.flatnonzero(weight >= 0.3 * weight.max())]
        pi = lik.prevalence(best.params)
        raise SeparationError(
            f"singular information matrix (condition number {values[-1] / max(values[0], 1e-300):.3g}): "
            f"{', '.join(map(repr, involved))} not identified: perfect separation (the fitted prevalence runs "
            f"from {pi.min():.3g} to {pi.max():.3g}) or terms collinear in the rows used"
        )


def covariance(lik: Likelihood, best: Maximum, cov_type: str = "oim") -> NDArray[np.float64]:
    """The estimates' covariance: the inverse of the exact observed information (``"oim"``), or of the
    outer product of the per-respondent scores (``"opg"``, BHHH: what rr's ``rrreg`` reports).

    With the extra parameter on a bound of [0, 1] its row and column are NaN
    and the coefficients' covariance is conditional on it.
    """
    if cov_type == "oim":
        info = -lik.hessian(best.params)
    elif cov_type == "opg":
        s = lik.score_obs(best.params)
        info = s.T @ s
    else:
        raise ValueError(f"cov_type must be 'oim' (observed information) or 'opg' (outer product of scores); "
                         f"got {cov_type!r}")
    keep = np.ones(lik.k_params, dtype=bool)
    if best.at_bound:
        keep[-1] = False
    cov = np.full((lik.k_params, lik.k_params), np.nan)
    cov[np.ix_(keep, keep)] = np.linalg.inv(info[np.ix_(keep, keep)])
    return cov
