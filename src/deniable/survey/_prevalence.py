"""Prevalence of the sensitive attribute from randomized answers, as RRreg's ``RRuni`` reports it.

Data: the count ``n_gr`` of answer ``r`` in group ``g``; ``lambda_g`` the
share of "yes" in group g. Every design is *saturated* (as many free answer
probabilities as parameters), except Kuk with several cards, so the moment
estimate solves ``P_g(yes | theta) = lambda_g`` exactly:

* one group: ``pi = (lambda - a0) / (b - a0)``, with ``b = P(yes | carrier)``
  and ``a0 = P(yes | non-carrier)``; Warner's ``(lambda + p - 1) / (2p - 1)``;
* two groups (UQTunknown, CDM, CDMsym): ``P_g(yes)`` is affine in
  ``(pi, extra)``, ``lambda = c + A theta``, so ``theta = A^-1 (lambda - c)``;
  SLD is affine in ``(pi, u = t pi)``, and ``t = u / pi``;
* FR with m categories: ``pi_r = (lambda_r - p_r) / (1 - sum p)``;
* Kuk with k cards: ``lambda`` = red cards / (n k), ``pi = (lambda - p2) / (p1 - p2)``.

Standard errors (the sampling model: respondents drawn from a population)
are the delta method with ``Var(lambda_g) = lambda_g (1 - lambda_g) / (n_g -
1)``, as RRreg computes them: ``Cov(theta) = A^-1 V A^-T``; for Kuk,
``SE^2 = phi(1-phi) / ((k n - 1)(p1 - p2)^2) + (1 - 1/k) pi(1-pi) / (n-1)``.
For a saturated design the moment estimate in the interior is the maximum
likelihood estimate, and this SE is the observed-information SE times
``sqrt(n_g / (n_g - 1))``.

When a moment estimate falls outside [0, 1], the estimate is the maximum of
the multinomial likelihood ``sum_g sum_r n_gr ln P_g(r | theta)`` over the
parameter space (``fit.method == "ml"``); its standard error is then that of
the unbounded moment estimate (an estimate on the boundary has no
meaningful Wald SE, which is why RRreg's is near 0). The default interval
is the profile-likelihood interval, which stays in [0, 1] and covers at the
boundary too; ``method="wald"`` gives ``estimate +- z SE``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable._intervals import z_for
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.survey._design_base import Design

__all__ = [
    "PrevalenceFit",
    "prevalence_from_counts",
    "answer_counts",
    "answer_cells",
    "loglik",
    "maximum_likelihood",
    "moment_estimate",
    "moment_jacobian",
]

_FLOOR = -1e300  # a log-likelihood of -inf, kept finite for root finding


def answer_counts(responses: Any, design: Design, group: Any = None) -> NDArray[np.int64]:
    """``n[g - 1, r]``: how many respondents of group g gave answer r, after checking both."""
    cells = answer_cells(responses, design, group)
    shape = (design.groups, len(design.responses))
    return np.bincount(cells, minlength=shape[0] * shape[1]).astype(np.int64).reshape(shape)


def answer_cells(responses: Any, design: Design, group: Any = None) -> NDArray[np.int64]:
    """Each respondent's cell ``(g - 1) * R + r`` (group g, answer r of R), after checking both."""
    arr = np.asarray(responses)
    if arr.ndim != 1:
        raise ValueError(f"responses must be a 1-D array; got shape {arr.shape}")
    allowed = design.responses
    if arr.dtype == np.bool_:
        codes = arr.astype(np.int64)
    else:
        ok = np.zeros(arr.size, dtype=bool)
        if arr.dtype.kind in "iuf":
            with np.errstate(invalid="ignore"):
                ok = np.isin(arr, allowed)
        elif arr.dtype == object:
            ok = np.array([type(v) in (bool, int) and v in allowed for v in arr.tolist()], dtype=bool)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise ValueError(
                f"responses must be answers of {design.model} ({', '.join(map(str, allowed))}); "
                f"got {arr[i].item()!r} at position {i}"
            )
        codes = arr.astype(np.int64)
    groups = design.check_groups(group, codes.size)
    return np.asarray((groups - 1) * len(allowed) + codes, dtype=np.int64)


def loglik(design: Design, counts: NDArray[Any], params: dict[str, float]) -> float:
    """``sum_g sum_r n_gr ln P_g(r | params)`` (RRreg's multinomial log-likelihood, no constant)."""
    total = 0.0
    for g in range(design.groups):
        probs = design.response_probabilities(params, g + 1)
        used = counts[g] > 0
        if np.any(probs[used] <= 0):
            return -math.inf
        total += float(np.dot(counts[g][used], np.log(probs[used])))
    return total


@dataclass(frozen=True)
class PrevalenceFit(Result):
    """The prevalence (and a two-group design's extra parameter) estimated from randomized answers.

    ``params`` and ``bse`` map ``"pi"`` (and ``"t"``, ``"piUQ"`` or
    ``"gamma"``; ``"pi0".."pi{m-1}"`` for FR with m categories) to the
    estimate and its standard error under the sampling model. ``llf`` is the
    log-likelihood at the estimate, ``n`` the number of respondents
    (``n_by_group`` per group) and ``method`` ``"moment"`` (interior, equal
    to the MLE for saturated designs) or ``"ml"`` (the bounded MLE).
    The result shape of :mod:`deniable._results`: ``confidence_interval``
    (``ci`` gives it by name), ``to_dict``, ``to_frame``.
    """

    design: Design
    params: dict[str, float]
    bse: dict[str, float]
    cov: NDArray[np.float64]
    llf: float
    n: int
    n_by_group: tuple[int, ...]
    method: str
    counts: NDArray[Any] = field(repr=False)  # weighted counts (floats) for a complex sample

    ci_methods: ClassVar[tuple[str, ...]] = ("profile", "wald")

    @property
    def std_errors(self) -> NDArray[np.float64]:
        """The standard errors, aligned with :attr:`params` (:attr:`bse` by name)."""
        return np.array([self.bse[k] for k in self.params])

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per parameter (arrays aligned with :attr:`params`), at ``confidence_level``.

        ``"profile"`` (the default): ``{v : 2 (llf - max_{others} ll(v, others)) <= chi2_1(level)}``,
        inside the parameter space; ``"wald"``: ``estimate +- z_{(1+level)/2} SE``.
        """
        level = check_level(confidence_level)
        if self._method(method) == "wald":
            z = z_for(1 - level)
            values, se = np.array(list(self.params.values())), self.std_errors
            return ConfidenceInterval(values - z * se, values + z * se)
        cut = z_for(1 - level) ** 2 / 2  # chi2_1(level) / 2
        bounds = np.array([_profile_interval(self, k, cut) for k in self.params]).reshape(-1, 2)
        return ConfidenceInterval(bounds[:, 0], bounds[:, 1])

    def ci(self, level: float = 0.95, method: str | None = None) -> dict[str, tuple[float, float]]:
        """:meth:`confidence_interval` by parameter name: ``{name: (low, high)}``."""
        low, high = self.confidence_interval(level, method)
        return {k: (float(lo), float(hi)) for k, lo, hi in zip(self.params, low, high, strict=True)}

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per parameter: ``estimate``, ``std_error``, ``ci_low``, ``ci_high``; the design and how it was
        estimated (``estimator``: moment or ml) in the fields."""
        low, high = self.confidence_interval(confidence_level, method)
        fields = {"design": self.design.model, "epsilon": self.design.epsilon, "n": self.n,
                  "n_by_group": list(self.n_by_group), "estimator": self.method, "llf": self.llf}
        columns = {"estimate": list(self.params.values()), "std_error": self.std_errors, "ci_low": low,
                   "ci_high": high}
        return ResultTable(fields, columns, "parameter", list(self.params), "parameters")

    def _caption(self) -> str:
        eps = self.design.epsilon
        privacy = "infinite: an answer reveals the truth" if math.isinf(eps) else f"{eps:.4g}"
        return f"{self.design.model} design, n = {self.n:,}, \u03b5 = {privacy}"

    def _note(self, more: int) -> str:
        return f"profile-likelihood intervals; {self.method} estimate"

    def __repr__(self) -> str:
        ci = self.ci()
        rows = ", ".join(
            f"{k}={v:.4f} (SE {self.bse[k]:.4f}, 95% CI {ci[k][0]:.4f}..{ci[k][1]:.4f})" for k, v in self.params.items()
        )
        return f"PrevalenceFit({self.design.model}, n={self.n}, {rows}, method={self.method!r})"


def prevalence_from_counts(counts: Any, design: Design) -> PrevalenceFit:
    """:func:`prevalence` from the answer counts ``counts[g - 1, r]`` (a mergeable summary of the answers)."""
    counts = np.asarray(counts)
    shape = (design.groups, len(design.responses))
    if counts.shape != shape or counts.dtype.kind not in "iu" or np.any(counts < 0):
        raise ValueError(
            f"counts must be non-negative integers of shape {shape} for {design.model}; "
            f"got {counts.dtype} of shape {counts.shape}"
        )
    for g, row in enumerate(counts, start=1):
        if row.sum() < 2:
            where = f" in group {g}" if design.groups > 1 else ""
            raise ValueError(f"responses need at least 2 answers{where} for {design.model}; got {row.sum()}")
    counts = counts.astype(np.int64)
    params, cov = moment_estimate(design, counts)
    method = "moment"
    if not _inside(design, params):
        params = maximum_likelihood(design, counts, start=params)
        method = "ml"
    bse = {k: float(math.sqrt(max(cov[i, i], 0.0))) for i, k in enumerate(params)}
    return PrevalenceFit(
        design=design,
        params=params,
        bse=bse,
        cov=cov,
        llf=loglik(design, counts, params),
        n=int(counts.sum()),
        n_by_group=tuple(int(c) for c in counts.sum(axis=1)),
        method=method,
        counts=counts,
    )


# ------------------------------------------------------------ moment estimates
def moment_estimate(
    design: Design, counts: NDArray[Any], ddof: int = 1
) -> tuple[dict[str, float], NDArray[np.float64]]:
    """The moment estimate and its delta-method covariance (``Var(lambda_g) = lambda_g(1-lambda_g)/(n_g - ddof)``).

    ``ddof=1`` is RRreg's convention; ``ddof=0`` with expected counts gives the large-sample variance.
    """
    params, jac, lam = _moments(design, counts)
    n_g = counts.sum(axis=1).astype(float)
    if design.model == "Custom" or design.m > 2:  # the shares of one multinomial
        return params, jac @ (np.diag(lam) - np.outer(lam, lam)) @ jac.T / (n_g[0] - ddof)
    if design.cards > 1:
        k, n = design.cards, n_g[0]
        p1, p2 = float(design.p[0]), float(design.p[1])
        pi = params["pi"]
        phi = pi * p1 + (1 - pi) * p2
        var = phi * (1 - phi) / ((k * n - ddof) * (p1 - p2) ** 2) + (1 - 1 / k) * pi * (1 - pi) / (n - ddof)
        return params, np.array([[var]])
    return params, jac @ np.diag(lam * (1 - lam) / (n_g - ddof)) @ jac.T


def moment_jacobian(design: Design, counts: NDArray[Any]) -> tuple[dict[str, float], NDArray[np.float64]]:
    """The moment estimate from (weighted) answer counts and its derivative in the counts.

    ``jac[:, g * R + r] = d theta / d counts[g, r]``: a respondent of weight
    ``w`` in cell ``(g, r)`` moves the estimate by ``w jac[:, g R + r]`` to first
    order, its linearization (influence) contribution.
    """
    params, jac, lam = _moments(design, counts)
    n_g = counts.sum(axis=1).astype(float)
    answers = counts.shape[1]
    if design.model == "Custom" or design.m > 2:  # lambda_r = N_r / N
        d_lam = (np.eye(answers) - lam[:, None]) / n_g[0]
    elif design.cards > 1:  # lambda = sum_r r N_r / (k N)
        d_lam = ((np.arange(answers) / design.cards - lam[0]) / n_g[0])[None, :]
    else:  # lambda_g = N_g1 / N_g
        d_lam = np.zeros((design.groups, design.groups * answers))
        for g in range(design.groups):
            d_lam[g, g * answers: (g + 1) * answers] = (np.array([0.0, 1.0]) - lam[g]) / n_g[g]
    return params, jac @ d_lam


def _moments(design: Design, counts: NDArray[Any]) -> tuple[dict[str, float], NDArray[np.float64], NDArray[Any]]:
    """The moment estimate ``theta = F(lambda)`` of the answer shares ``lambda``, ``dF / d lambda`` and ``lambda``."""
    n_g = counts.sum(axis=1).astype(float)
    if design.model == "Custom":  # any matrix: the pseudo-inverse of its transpose
        lam = counts[0] / n_g[0]
        inverse = np.linalg.pinv(design._float.T)  # type: ignore[attr-defined]  # (m, R)
        jac = inverse[1:] if design.m == 2 else inverse
        labels = ["pi"] if design.m == 2 else [f"pi{j}" for j in range(design.m)]
        return dict(zip(labels, (float(v) for v in jac @ lam), strict=True)), jac, lam
    if design.m > 2:
        lam = counts[0] / n_g[0]
        scale = float(design.truthful)  # type: ignore[attr-defined]  # forced response with m categories
        p = np.array([float(v) for v in design.p])
        pi = (lam - p) / scale
        return {f"pi{j}": float(v) for j, v in enumerate(pi)}, np.eye(lam.size) / scale, lam
    if design.cards > 1:
        k = design.cards
        p1, p2 = float(design.p[0]), float(design.p[1])
        lam = np.array([float(np.dot(np.arange(k + 1), counts[0])) / (n_g[0] * k)])
        return {"pi": float((lam[0] - p2) / (p1 - p2))}, np.array([[1 / (p1 - p2)]]), lam
    lam = counts[:, 1] / n_g
    if design.model == "SLD":
        params, jac = _sld(design, lam)
        return params, jac, lam
    names = design.param_names
    zero = dict.fromkeys(names, 0.0)
    c = np.array([design.response_probabilities(zero, g + 1)[1] for g in range(design.groups)])
    a = np.column_stack(
        [
            [design.response_probabilities({**zero, name: 1.0}, g + 1)[1] - c[g] for g in range(design.groups)]
            for name in names
        ]
    )
    inv = np.linalg.inv(a)
    theta = inv @ (lam - c)
    return dict(zip(names, (float(x) for x in theta), strict=True)), inv, lam


def _sld(design: Design, lam: NDArray[np.float64]) -> tuple[dict[str, float], NDArray[np.float64]]:
    """SLD: ``P_g(yes) = (1 - p_g)(1 - pi) + u`` with ``u = t pi``, then ``t = u / pi``, and ``d(pi, t) / d lambda``."""
    q = np.array([1 - float(x) for x in design.p])
    a = np.column_stack([-q, np.ones(2)])
    inv = np.linalg.inv(a)
    pi, u = inv @ (lam - q)
    t = u / pi if pi != 0 else math.nan
    jac = np.array([[1.0, 0.0], [-u / pi**2 if pi else math.nan, 1 / pi if pi else math.nan]]) @ inv
    return {"pi": float(pi), "t": float(t)}, jac


# --------------------------------------------------------- maximum likelihood
def _inside(design: Design, params: dict[str, float]) -> bool:
    values = np.array(list(params.values()))
    if not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values > 1):
        return False
    return not (design.extra == "gamma" and params["pi"] + params["gamma"] > 1)


def _constraints(design: Design) -> tuple[list[Callable[[NDArray[np.float64]], float]], bool]:
    """Inequality constraints (``>= 0``) besides the box [0, 1], and whether the parameters sum to 1."""
    if design.m > 2:
        return [], True
    return ([lambda x: 1 - x[0] - x[1]] if design.extra == "gamma" else []), False


def maximum_likelihood(
    design: Design, counts: NDArray[Any], start: dict[str, float], fixed: tuple[str, float] | None = None
) -> dict[str, float]:
    """The maximum of the log-likelihood over the parameter space (with one parameter ``fixed``)."""
    from scipy.optimize import minimize, minimize_scalar

    names = list(design.param_names)
    inequalities, simplex = _constraints(design)
    free = [i for i, k in enumerate(names) if fixed is None or k != fixed[0]]
    x0 = np.array([start.get(k, 0.5) for k in names], dtype=float)
    x0 = np.clip(np.where(np.isfinite(x0), x0, 0.5), 0, 1)
    if fixed is not None:
        x0[names.index(fixed[0])] = fixed[1]

    def full(z: NDArray[np.float64]) -> NDArray[np.float64]:
        x = x0.copy()
        x[free] = z
        return x

    def params(z: NDArray[np.float64]) -> dict[str, float]:
        return dict(zip(names, map(float, full(z)), strict=True))

    def objective(z: NDArray[np.float64]) -> float:
        return -max(loglik(design, counts, params(z)), _FLOOR)

    if not free:
        return params(np.array([]))
    if len(free) == 1 and not simplex:
        upper = float(max(0.0, 1 - x0.sum() + x0[free[0]])) if inequalities else 1.0
        candidates = [0.0, upper]
        if upper > 0:
            best = minimize_scalar(
                lambda z: objective(np.array([z])), bounds=(0.0, upper), method="bounded", options={"xatol": 1e-10}
            )
            candidates.append(float(best.x))
        z = min(candidates, key=lambda c: objective(np.array([c])))
        return params(np.array([z]))
    cons: list[dict[str, Any]] = [{"type": "ineq", "fun": (lambda z, f=f: f(full(z)))} for f in inequalities]
    if simplex:
        cons.append({"type": "eq", "fun": lambda z: full(z).sum() - 1})
    starts = [x0[free], np.full(len(free), 1 / len(names))]
    results = [
        minimize(
            objective,
            s,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * len(free),
            constraints=cons,
            options={"ftol": 1e-14, "maxiter": 500},
        )
        for s in starts
    ]
    best = min(results, key=lambda r: r.fun)
    x = full(np.clip(best.x, 0, 1))
    if simplex:
        x = x / x.sum()
    elif inequalities and x[0] + x[1] > 1:  # SLSQP may end a rounding error outside pi + gamma <= 1
        x[1] = 1 - x[0]
    return dict(zip(names, map(float, x), strict=True))


def _profile_interval(fit: PrevalenceFit, name: str, cut: float) -> tuple[float, float]:
    """Where the profile log-likelihood of ``name`` drops ``cut`` below its maximum, within [0, 1]."""
    from scipy.optimize import brentq

    design, counts = fit.design, fit.counts
    names = list(fit.params)
    if len(names) == 1:

        def profile(v: float) -> float:
            return max(loglik(design, counts, {name: v}), _FLOOR)
    else:

        def profile(v: float) -> float:
            best = maximum_likelihood(design, counts, fit.params, fixed=(name, v))
            return max(loglik(design, counts, best), _FLOOR)

    top = max(fit.llf, _FLOOR)
    at = min(max(fit.params[name], 0.0), 1.0)

    def gap(v: float) -> float:
        return profile(v) - (top - cut)

    lo = 0.0 if gap(0.0) >= 0 else brentq(gap, 0.0, at, xtol=1e-9)
    hi = 1.0 if gap(1.0) >= 0 else brentq(gap, at, 1.0, xtol=1e-9)
    return float(lo), float(hi)


