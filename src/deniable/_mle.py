"""Maximum-likelihood frequencies on the simplex: the iterative Bayesian update (EM).

Every frequency oracle's estimate keeps the support counts ``C_v`` and the
support probabilities ``p*_v``, ``q*_v``. On the simplex (``f >= 0``,
``sum f = 1``) the expected share of reports supporting ``v`` is

    ``lambda_v(f) = q*_v + (p*_v - q*_v) f_v``

and the maximum-likelihood estimate maximizes the support-count log-likelihood

    ``l(f) = sum_v C_v log lambda_v(f)``.

For GRR and BinaryRR every report supports exactly one category, the counts
are multinomial with these cell probabilities and ``l`` is the exact
log-likelihood of the reports. For the unary encodings, local hashing,
Hadamard response and subset selection a report supports several categories
(or a hash bucket's worth of them), the counts are not a sufficient statistic
of the reports, and ``l`` is the support-count model that the iterative
Bayesian update of Agrawal & Aggarwal (2001), as used for these oracles by
Arcolezi et al. (multi-freq-ldpy), maximizes: it treats the ``N = sum C_v``
support events as draws from the channel ``A[v, x] = p*_v if v == x else q*_v``
normalised.

The update (EM for that model) is ``f_x <- f_x g_x(f) / N`` with
``g_x = dl/df_x = sum_v q*_v C_v / lambda_v + (p*_x - q*_x) C_x / lambda_x``;
it stays on the simplex because ``sum_x f_x g_x = N``. ``l`` is concave, so
the Frank-Wolfe gap ``max_x g_x - N`` bounds ``l(f_hat) - l(f)`` from above:
iteration stops when ``(max_x g_x - N) / N <= tol``, i.e. when the
log-likelihood per support event is within ``tol`` of its maximum. Near the
boundary of the simplex EM converges slowly (thousands to tens of thousands
of iterations at k = 8, n = 500), so the default solver is exact instead:
the KKT conditions reduce to water-filling (:func:`solve`), whose result the
EM converges to (the tests check both, and the certificate).

Standard errors come from a parametric bootstrap at the fitted frequencies,
for the estimate's target: for ``"respondents"`` the same respondents, ``n f_hat``
rounded to whole respondents (largest remainders), randomized again; for
``"population"`` a fresh ``Multinomial(n, f_hat)`` sample of respondents in every
replicate, randomized; the MLE is refitted on every replicate. For a
channel whose supports partition the reports (GRR, BinaryRR) the replicate
counts are the exact multinomial sums; otherwise ``C_v`` is drawn as
``Binomial(m_v, p*_v) + Binomial(n - m_v, q*_v)`` independently across ``v``,
exact for the unary encodings and the right marginals (without the weak
dependence across categories) for local hashing, Hadamard and subset selection.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from deniable.errors import ConvergenceWarning

__all__ = ["MLEFit", "ConvergenceWarning", "support_loglik", "solve", "ibu", "fit", "SupportModel"]

Array = NDArray[np.float64]

DEFAULT_TOL = 1e-10
DEFAULT_MAX_ITER = 100_000
DEFAULT_BOOTSTRAP = 200
DEFAULT_SEED = 0


class SupportModel(Protocol):
    """What :func:`fit` reads of an estimate (an :class:`~deniable._estimate.Estimate` has it all):
    the support counts ``C_v``, the support probabilities ``p*_v`` and ``q*_v``, the number of
    reports ``n``, the inference ``target`` and the ``mechanism``'s name (for messages)."""

    @property
    def support_counts(self) -> NDArray[np.int64]: ...

    @property
    def p_star(self) -> NDArray[np.float64]: ...

    @property
    def q_star(self) -> NDArray[np.float64]: ...

    @property
    def n(self) -> int: ...

    @property
    def target(self) -> str: ...

    @property
    def mechanism(self) -> str: ...


@dataclass(frozen=True, eq=False)
class MLEFit:
    """The maximum-likelihood frequencies and how they were found.

    ``loglik`` is ``l(f_hat)`` (see the module docstring), ``gap`` the
    certified bound ``(max_x g_x - N) / N`` on the remaining log-likelihood
    per support event, ``std_errors`` the bootstrap standard deviation of the
    refitted MLE over ``replicates`` parametric replicates (None if 0).
    """

    frequencies: Array
    loglik: float
    iterations: int
    converged: bool
    gap: float
    std_errors: Array | None
    replicates: int


def support_loglik(f: Array, counts: Array, p_star: Array, q_star: Array) -> Array:
    """``sum_v C_v log(q*_v + (p*_v - q*_v) f_v)`` over the last axis (0 log 0 = 0)."""
    lam = np.asarray(q_star) + (np.asarray(p_star) - np.asarray(q_star)) * np.asarray(f, dtype=float)
    c = np.asarray(counts, dtype=float)
    with np.errstate(divide="ignore"):
        terms = np.where(c > 0, c * np.log(lam), 0.0)
    return np.asarray(terms.sum(axis=-1), dtype=np.float64)


def _gradient(f: Array, counts: Array, p: Array, q: Array) -> Array:
    ratio = counts / (q + (p - q) * f)
    return np.asarray((ratio * q).sum(axis=-1, keepdims=True) + (p - q) * ratio, dtype=np.float64)


def ibu(
    counts: Array,
    p_star: Array,
    q_star: Array,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
) -> tuple[Array, int, NDArray[np.bool_], Array]:
    """Iterative Bayesian update from the uniform start, batched over leading axes of ``counts``.

    Returns ``(f_hat, iterations, converged, gap)``: ``converged[i]`` says
    whether row ``i`` reached ``gap <= tol``; rows stop updating once they do.
    """
    if not (isinstance(tol, float | int) and tol > 0):
        raise ValueError(f"tol must be a positive number; got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive int; got {max_iter!r}")
    c = np.asarray(counts, dtype=float)
    p = np.asarray(p_star, dtype=float)
    q = np.asarray(q_star, dtype=float)
    _check_channel(c, p, q)
    c2 = c.reshape(-1, c.shape[-1])
    total = c2.sum(axis=1, keepdims=True)
    f = np.full(c2.shape, 1.0 / c2.shape[1])
    gap = np.full(c2.shape[0], np.inf)
    active = np.ones(c2.shape[0], dtype=bool)
    iterations = 0
    while True:
        rows = np.flatnonzero(active)
        g = _gradient(f[rows], c2[rows], p, q)
        gap[rows] = g.max(axis=1) / total[rows, 0] - 1.0
        going = gap[rows] > tol
        active[rows] = going
        if not going.any() or iterations >= max_iter:
            break
        rows, g = rows[going], g[going]
        f[rows] = f[rows] * g / total[rows]
        iterations += 1
    shape = c.shape
    converged = ~active
    return f.reshape(shape), iterations, converged.reshape(shape[:-1]), gap.reshape(shape[:-1])


def solve(counts: Array, p_star: Array, q_star: Array) -> Array:
    """The exact maximizer of ``l`` on the simplex (water-filling), batched over leading axes.

    The KKT conditions of ``max l(f)`` s.t. ``f >= 0, sum f = 1`` give
    ``f_v = max(0, C_v / mu - r_v)`` with ``r_v = q*_v / (p*_v - q*_v)`` and
    ``mu`` fixing the sum. The active set is a prefix of the categories
    sorted by ``C_v / r_v`` (descending) and ``mu = sum_active C / (1 + sum_active r)``,
    as in the sort-based simplex projection: ``O(k log k)`` per row.
    """
    c = np.asarray(counts, dtype=float)
    p = np.asarray(p_star, dtype=float)
    q = np.asarray(q_star, dtype=float)
    _check_channel(c, p, q)
    c2 = c.reshape(-1, c.shape[-1])
    r = np.broadcast_to(q / (p - q), c2.shape)
    order = np.argsort(-c2 / r, axis=1, kind="stable")
    cs = np.take_along_axis(c2, order, axis=1)
    rs = np.take_along_axis(r, order, axis=1)
    mu = np.cumsum(cs, axis=1) / (1.0 + np.cumsum(rs, axis=1))
    valid = cs > mu * rs
    last = valid.shape[1] - 1 - np.argmax(valid[:, ::-1], axis=1)
    mu_star = mu[np.arange(c2.shape[0]), last][:, None]
    f = np.maximum(c2 / mu_star - r, 0.0)
    f /= f.sum(axis=1, keepdims=True)  # exact up to rounding; keep the sum at 1
    return f.reshape(c.shape)


def _check_channel(c: Array, p: Array, q: Array) -> None:
    if not (np.all(q > 0) and np.all(p > q) and np.all(p <= 1)):
        raise ValueError("the MLE needs support probabilities with 0 < q* < p* <= 1 for every category")
    if np.any(c < 0):
        raise ValueError("support counts must be >= 0")
    if np.any(c.sum(axis=-1) <= 0):
        raise ValueError("the MLE needs at least one supported report (all support counts are 0)")


def _round_counts(f: Array, n: int) -> NDArray[np.int64]:
    """``n f`` rounded to integers summing to ``n`` (largest remainders)."""
    raw = np.asarray(f) * n
    base = np.floor(raw).astype(np.int64)
    short = n - int(base.sum())
    if short > 0:
        base[np.argsort(-(raw - base), kind="stable")[:short]] += 1
    return base


def _replicate_counts(
    m: NDArray[np.int64], p: Array, q: Array, partition: bool, rng: np.random.Generator
) -> NDArray[np.int64]:
    """Support counts of surveys whose respondents hold ``m[b, x]`` of category ``x`` (one row per survey)."""
    n = m.sum(axis=1, keepdims=True)
    size, k = m.shape
    if partition:
        out = np.zeros((size, k), dtype=np.int64)
        for x in range(k):
            row = np.full(k, q[x])
            row[x] = p[x]
            out += rng.multinomial(m[:, x], row / row.sum())
        return out
    return np.asarray(rng.binomial(m, p) + rng.binomial(n - m, q), dtype=np.int64)


def fit(
    est: SupportModel,
    *,
    method: Literal["exact", "ibu"] = "exact",
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int | np.random.Generator = DEFAULT_SEED,
) -> MLEFit:
    """The maximum-likelihood frequencies of ``est`` with bootstrap standard errors.

    ``method="exact"`` (default) solves the KKT conditions (:func:`solve`);
    ``"ibu"`` runs the iterative Bayesian update (:func:`ibu`) to the
    certified gap ``tol`` and warns (:class:`ConvergenceWarning`) if it stops
    at ``max_iter`` first. ``bootstrap`` replicates (0 for none) are drawn
    from ``seed`` (a fixed default, so results are reproducible) and refitted
    by the same method.
    """
    p = np.asarray(est.p_star, dtype=float)
    q = np.asarray(est.q_star, dtype=float)
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(q))):
        raise ValueError(
            f"the MLE needs the estimate's support counts and p*, q*; {est.mechanism} does not keep them"
        )
    if est.n < 1:
        raise ValueError("the MLE needs n >= 1 reports")
    if method not in ("exact", "ibu"):
        raise ValueError(f"method must be 'exact' or 'ibu'; got {method!r}")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise ValueError(f"bootstrap must be an int >= 0; got {bootstrap!r}")

    def run(c: Array) -> tuple[Array, int, NDArray[np.bool_]]:
        if method == "exact":
            return solve(c, p, q), 0, np.ones(c.shape[:-1], dtype=bool)
        f, iterations, converged, _ = ibu(c, p, q, tol=tol, max_iter=max_iter)
        return f, iterations, converged

    counts = np.asarray(est.support_counts, dtype=float)
    f, iterations, converged = run(counts)
    gap = float(_gradient(f, counts, p, q).max() / counts.sum() - 1.0)
    se: Array | None = None
    if bootstrap:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        k = f.size
        partition = bool(np.all(p == p[0]) and np.all(q == q[0]) and abs(p[0] + (k - 1) * q[0] - 1) < 1e-12)
        if est.target == "respondents":
            held = np.tile(_round_counts(f, est.n), (bootstrap, 1))
        else:  # the respondents are a fresh sample of the population in every replicate
            held = rng.multinomial(est.n, f / f.sum(), size=bootstrap)
        sims = _replicate_counts(held, p, q, partition, rng)
        refits, _, refit_converged = run(sims.astype(float))
        converged = converged & refit_converged.all()
        se = np.asarray(refits.std(axis=0, ddof=1), dtype=np.float64) if bootstrap > 1 else None
    if not bool(converged):
        warnings.warn(
            f"the iterative Bayesian update stopped at max_iter={max_iter} before the "
            f"log-likelihood gap per support event reached tol={tol:g}; raise max_iter",
            ConvergenceWarning,
            stacklevel=2,
        )
    return MLEFit(
        frequencies=f,
        loglik=float(support_loglik(f, counts, p, q)),
        iterations=iterations,
        converged=bool(converged),
        gap=gap,
        std_errors=se,
        replicates=bootstrap,
    )
