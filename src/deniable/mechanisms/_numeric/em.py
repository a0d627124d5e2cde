"""EM and EMS reconstruction of a distribution from sliding-window reports."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["em_reconstruct"]

def em_reconstruct(
    counts: NDArray[np.int64], *, window: int, input_cells: int, bins: int,
    uniform_share: float, uniform_pmf: NDArray[np.float64], smooth: bool = True,
    tolerance: float = 1e-7, max_iterations: int = 10_000,
) -> tuple[NDArray[np.float64], int, bool]:
    """EM / EMS histogram of inputs from sliding-window output cell counts.

    The channel from input cell ``i`` (inputs uniform within it) to output
    cell ``j`` is ``gamma u_j + (1 - gamma) M_w[j, i]`` with the trapezoid
    ``M_w[j, i] = 1/L`` for ``i < j < i + L`` and ``1/(2L)`` for
    ``j in {i, i + L}``; ``bins`` groups ``input_cells / bins`` input cells.
    Each step is ``theta <- theta * M^T (c / M theta) / n`` (then, for EMS,
    ``theta <- S theta`` with the (1/4, 1/2, 1/4) kernel and renormalized),
    applied in ``O(cells)`` with cumulative sums rather than the dense matrix.
    Returns ``(theta, iterations, converged)``.
    """
    c = np.asarray(counts, dtype=np.float64)
    n = c.sum()
    R, L = input_cells, window
    r = R // bins
    G = R + L
    if n <= 0:
        raise ValueError("no reports to reconstruct from")
    g = uniform_share
    lower = np.clip(np.arange(G) - L + 1, 0, R)
    upper = np.minimum(np.arange(G), R)
    lower = np.minimum(lower, upper)
    idx = np.arange(R)

    def forward(cells: NDArray[np.float64]) -> NDArray[np.float64]:
        cum = np.concatenate([[0.0], np.cumsum(cells)])
        out = cum[upper] - cum[lower]
        out[:R] += cells / 2
        out[L:] += cells / 2
        return g * uniform_pmf * cells.sum() + (1 - g) / L * out

    def adjoint(x: NDArray[np.float64]) -> NDArray[np.float64]:
        cum = np.concatenate([[0.0], np.cumsum(x)])
        inner = cum[idx + L] - cum[idx + 1] + (x[idx] + x[idx + L]) / 2
        return g * float(np.dot(uniform_pmf, x)) + (1 - g) / L * inner

    theta = np.full(bins, 1.0 / bins)
    previous = -math.inf
    positive = c > 0
    for iteration in range(1, max_iterations + 1):
        q = forward(np.repeat(theta / r, r))
        loglik = float(np.dot(c[positive], np.log(q[positive]))) / n
        if abs(loglik - previous) < tolerance:
            return theta, iteration, True
        previous = loglik
        ratio = np.where(positive, c / np.maximum(q, 1e-300), 0.0)
        theta = theta * adjoint(ratio).reshape(bins, r).mean(axis=1) / n
        if smooth:
            padded = np.concatenate([theta[:1], theta, theta[-1:]])
            theta = 0.25 * padded[:-2] + 0.5 * padded[1:-1] + 0.25 * padded[2:]
        theta /= theta.sum()
    return theta, max_iterations, False
