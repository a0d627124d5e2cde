"""Simulated surveys: an Estimate from a known truth, without real respondents.

This module is ``dn.simulate``; calling it calls :func:`simulate`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._callable_module import make_callable
from deniable._estimate import Estimate, SupportCounts, Target, check_target

__all__ = [
    "simulate", "population_counts", "simulate_support_counts",
    "decades", "convergence_sweep", "mse_sweep", "truth_vector",
]

_REPORTS_UP_TO = 2_000_000
_CHUNK = 1_000_000


def population_counts(true_frequencies: Any, n: int, k: int) -> NDArray[np.int64]:
    """Respondents per category for a population of ``n`` with the given shares.

    Largest-remainder rounding, so the counts sum to ``n`` exactly.
    """
    f = np.asarray(true_frequencies, dtype=float)
    if f.shape != (k,):
        raise ValueError(f"true_frequencies must have length k={k}; got shape {f.shape}")
    if not np.all(np.isfinite(f)) or (f < 0).any() or not np.isclose(f.sum(), 1.0, atol=1e-9):
        raise ValueError(f"true_frequencies must be non-negative and sum to 1; got sum {f.sum()!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive int; got {n!r}")
    raw = f * n
    counts = np.floor(raw).astype(np.int64)
    short = int(n - counts.sum())
    if short:
        counts[np.argsort(counts - raw, kind="stable")[:short]] += 1
    return counts


def simulate_support_counts(
    mechanism: Any, counts: NDArray[np.int64], rng: np.random.Generator
) -> NDArray[np.int64]:
    """Support counts of one simulated survey with ``counts[x]`` respondents holding ``x``.

    Exact joint draw where the mechanism offers one (binary, GRR, unary,
    Hadamard) and by privatizing real reports up to 2 million respondents;
    beyond that, each ``C_v`` is drawn from its exact marginal
    ``Bin(n_v, p*) + Bin(n - n_v, q*)`` (correlations between categories are
    not reproduced, which matters only for sums over categories).
    """
    direct = mechanism.simulate_support_counts(counts, rng)
    if direct is not None:
        return np.asarray(direct, dtype=np.int64)
    n = int(counts.sum())
    if n <= _REPORTS_UP_TO:
        positions = np.repeat(np.arange(mechanism.k), counts)
        values = mechanism.domain_obj.decode(positions)
        total = np.zeros(mechanism.k, dtype=np.int64)
        for start in range(0, n, _CHUNK):
            reports = mechanism.privatize_many(values[start : start + _CHUNK], rng=rng)
            total += mechanism.aggregate(reports).counts
        return total
    p, q = mechanism.support_rates()
    return rng.binomial(counts, p) + rng.binomial(n - counts, q)


def simulate(
    mechanism: Any,
    true_frequencies: Any,
    n: int,
    rng: Any = None,
    target: Target = "population",
) -> Estimate:
    """Run a simulated survey of ``n`` respondents and return its Estimate for ``target``.

    The sampling model follows the target:

    * ``"population"`` (the default): the respondents are a random sample of
      a population with shares ``true_frequencies``; their values are drawn
      ``Multinomial(n, true_frequencies)`` before they are randomized, and
      ``.truth`` is ``true_frequencies``.
    * ``"respondents"``: a fixed set of respondents holding category ``v`` in
      proportion ``true_frequencies[v]`` (rounded to whole respondents, see
      :func:`population_counts`); only the randomization is random, and
      ``.truth`` is their rounded shares.

    Support counts are drawn directly (binomial/multinomial) where possible,
    so 10^9 respondents take well under a second. ``rng`` is a seed or numpy
    Generator (simulation randomness, not secure).
    """
    target = check_target(target)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    rounded = population_counts(true_frequencies, n, mechanism.k)  # also checks the arguments
    if target == "population":
        truth = np.asarray(true_frequencies, dtype=float)
        counts = gen.multinomial(n, truth / truth.sum()).astype(np.int64)
    else:
        truth, counts = rounded / n, rounded
    support = simulate_support_counts(mechanism, counts, gen)
    est = mechanism.estimate_from(SupportCounts(mechanism.fingerprint, support, int(n)), target=target)
    return replace(est, truth=truth)


# -------------------------------------------------------------------- sweeps
def decades(n_min: int, n_max: int, per_decade: int = 2) -> list[int]:
    """Sample sizes from ``n_min`` to ``n_max``, ``per_decade`` log-spaced steps per decade."""
    if n_min < 1 or n_max < n_min:
        raise ValueError(f"need 1 <= n_min <= n_max; got {n_min} and {n_max}")
    if per_decade < 1:
        raise ValueError(f"per_decade must be >= 1; got {per_decade}")
    steps = max(1, round(math.log10(n_max / n_min) * per_decade))
    return sorted({int(round(x)) for x in np.geomspace(n_min, n_max, steps + 1)})


def convergence_sweep(
    mechanism: Any,
    true_frequencies: Any,
    sizes: Sequence[int],
    rng: np.random.Generator,
    target: Target = "population",
) -> list[Estimate]:
    """One simulated survey per sample size (independent draws, one shared generator)."""
    return [simulate(mechanism, true_frequencies, int(n), rng, target) for n in sizes]


def mse_sweep(
    mechanisms: Sequence[Any],
    true_frequencies: Any,
    n: int,
    reps: int,
    rng: np.random.Generator,
    target: Target = "population",
    post_processing: Sequence[str] = ("none",),
) -> list[dict[str, Any]]:
    """Simulated MSE per category against the variance formula, one record per mechanism and post-processing.

    ``mse`` averages ``(f_hat_v - f_v)^2`` over the ``k`` categories and
    ``reps`` independent surveys of :func:`simulate` for ``target``;
    ``variance`` averages ``mechanism.variance(n, f, target)`` over the
    categories (``f`` the truth :func:`simulate` sets). For an unbiased
    estimator they agree up to Monte Carlo error (``ratio`` near 1).
    ``post_processing`` names what is applied to each survey's estimate:
    ``"none"`` (the unbiased estimate), a :meth:`Estimate.consistent` method
    (``"norm-sub"``, ``"clip"``, ...) or ``"mle"`` (the maximum-likelihood
    frequencies, :mod:`deniable._mle`); every method sees the same surveys.
    """
    from deniable import _mle as mle

    if reps < 1:
        raise ValueError(f"reps must be >= 1; got {reps}")
    if not post_processing:
        raise ValueError("post_processing needs at least one method (e.g. 'none')")

    def apply(est: Estimate, method: str) -> NDArray[np.float64]:
        if method == "none":
            return est.frequencies
        if method == "mle":
            return mle.fit(est, bootstrap=0).frequencies
        return est.consistent(method).frequencies

    records = []
    for m in mechanisms:
        runs = [simulate(m, true_frequencies, n, rng, target) for _ in range(reps)]
        truth = np.asarray(runs[0].truth)  # the same in every run
        variance = float(np.mean(m.variance(n, truth, target)))
        for method in post_processing:
            mse = float(np.mean([np.square(apply(e, method) - truth) for e in runs]))
            records.append(
                {"mechanism": m.name, "k": m.k, "epsilon": m.epsilon, "n": n, "reps": reps, "target": target,
                 "post_processing": method, "mse": mse, "variance": variance, "ratio": mse / variance}
            )
    return records


def truth_vector(k: int, distribution: str) -> NDArray[np.float64]:
    """A true distribution over ``k`` categories: ``uniform`` or ``zipf`` (exponent 1.1)."""
    if distribution == "uniform":
        return np.full(k, 1.0 / k)
    if distribution == "zipf":
        w = 1.0 / np.arange(1, k + 1) ** 1.1
        return w / w.sum()
    raise ValueError(f"distribution must be 'uniform' or 'zipf'; got {distribution!r}")


make_callable(__name__)
