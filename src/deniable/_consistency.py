"""Consistency post-processing of frequency estimates (Wang et al., NDSS 2020).

All functions take the unbiased estimate ``f`` (length k) and return a new
array. They cost no privacy (post-processing) but trade bias for variance, so
they are applied only when asked for (:meth:`deniable.Estimate.consistent`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from deniable._intervals import z_for

__all__ = ["clip", "normalize", "norm_mul", "norm_sub", "project_simplex", "base_cut", "apply"]

Array = NDArray[np.float64]


def clip(f: Array) -> Array:
    """Base-Pos: negative estimates become 0 (no renormalisation)."""
    return np.maximum(np.asarray(f, dtype=float), 0.0)


def normalize(f: Array) -> Array:
    """Norm: add the same ``delta`` to every entry so that they sum to 1."""
    f = np.asarray(f, dtype=float)
    return f + (1.0 - f.sum()) / f.size


def norm_mul(f: Array) -> Array:
    """Norm-Mul: clip negatives, then scale to sum 1 (uniform if nothing is left)."""
    g = clip(f)
    total = g.sum()
    return g / total if total > 0 else np.full(g.size, 1.0 / g.size)


def project_simplex(f: Array) -> Array:
    r"""Euclidean projection onto the probability simplex (sort-based, O(k log k)).

    Returns ``max(f + delta, 0)`` with the unique ``delta`` making the sum 1;
    this is exactly Norm-Sub and the constrained least-squares solution.

    Parameters
    ----------
    f : array_like
        A 1-D vector of ``k`` estimated frequencies (any real values).

    Returns
    -------
    numpy.ndarray
        The closest vector (in Euclidean distance) with entries ``>= 0``
        that sum to 1.

    Notes
    -----
    The result is :math:`\max(f_v - \theta, 0)`, where, with :math:`u` the
    entries sorted in decreasing order and :math:`\rho` the largest index
    with :math:`u_\rho - (\sum_{j \le \rho} u_j - 1) / \rho > 0`,
    :math:`\theta = (\sum_{j \le \rho} u_j - 1) / \rho`.

    Examples
    --------
    >>> from deniable import project_simplex
    >>> project_simplex([0.5, 0.0]).tolist()
    [0.75, 0.25]
    >>> project_simplex([0.7, 0.4, -0.1]).round(6).tolist()
    [0.65, 0.35, 0.0]
    """
    f = np.asarray(f, dtype=float)
    u = np.sort(f)[::-1]
    cumulative = np.cumsum(u) - 1.0
    ranks = np.arange(1, f.size + 1)
    rho = np.nonzero(u - cumulative / ranks > 0)[0][-1]
    theta = cumulative[rho] / (rho + 1)
    return np.maximum(f - theta, 0.0)


def norm_sub(f: Array) -> Array:
    """Norm-Sub: ``max(f + delta, 0)`` with the ``delta`` making the sum 1.

    This is exactly the Euclidean projection onto the simplex, so it is
    computed by :func:`project_simplex`. (The NDSS 2020 reference iteration,
    which only shifts the currently positive entries, misses entries that
    ``delta > 0`` should lift above 0: it maps ``[0.5, 0]`` to ``[1, 0]``
    instead of ``[0.75, 0.25]``.)
    """
    return project_simplex(f)


def base_cut(f: Array, std_errors: Array | None, alpha: float = 0.05) -> Array:
    """Base-Cut: zero estimates below ``Phi^-1(1 - alpha/k) * SE`` (Bonferroni over k)."""
    if std_errors is None:
        raise ValueError("base-cut needs the unbiased estimate's standard errors")
    f = np.asarray(f, dtype=float)
    threshold = z_for(alpha / f.size, two_sided=False) * np.asarray(std_errors)
    return np.where(f >= threshold, f, 0.0)


_METHODS: dict[str, Callable[[Array, Array | None], Array]] = {
    "clip": lambda f, se: clip(f),
    "normalize": lambda f, se: normalize(f),
    "norm-mul": lambda f, se: norm_mul(f),
    "norm-sub": lambda f, se: norm_sub(f),
    "project": lambda f, se: project_simplex(f),
    "base-cut": base_cut,
}


def apply(method: str, f: Array, std_errors: Array | None = None) -> Array:
    """Apply a post-processing method by name (see module docstring)."""
    try:
        fn = _METHODS[method]
    except KeyError:
        raise ValueError(
            f"consistency method must be one of {sorted(_METHODS)}; got {method!r}"
        ) from None
    return np.asarray(fn(f, std_errors), dtype=np.float64)
