"""EM and EMS reconstruction of a distribution from sliding-window reports."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["em_reconstruct", "em_influence"]


def _channel(
    window: int, input_cells: int, uniform_share: float, uniform_pmf: NDArray[np.float64]
) -> tuple[Any, Any]:
    """The channel's ``forward`` (input cells -> output cells) and ``adjoint`` maps (see :func:`em_reconstruct`)."""
    R, L = input_cells, window
    G = R + L
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
        return np.asarray(g * uniform_pmf * cells.sum() + (1 - g) / L * out)

    def adjoint(x: NDArray[np.float64]) -> NDArray[np.float64]:
        cum = np.concatenate([[0.0], np.cumsum(x)])
        inner = cum[idx + L] - cum[idx + 1] + (x[idx] + x[idx + L]) / 2
        return np.asarray(g * float(np.dot(uniform_pmf, x)) + (1 - g) / L * inner)

    return forward, adjoint


def _smooth(theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """EMS's binomial kernel (1/4, 1/2, 1/4), the end bins reflected."""
    padded = np.concatenate([theta[:1], theta, theta[-1:]])
    return np.asarray(0.25 * padded[:-2] + 0.5 * padded[1:-1] + 0.25 * padded[2:])


def em_influence(
    theta: NDArray[np.float64], counts: NDArray[np.int64], *, window: int, input_cells: int,
    uniform_share: float, uniform_pmf: NDArray[np.float64], smooth: bool = True,
) -> NDArray[np.float64]:
    """``K = d theta^ / d c`` (bins x output cells) at the EM / EMS fixed point ``theta`` (delta method).

    The fixed point solves ``theta = T(theta, c)`` with ``T = N(S(theta * A^T (c / A theta) / n))``
    (``A`` the channel on the bins, ``S`` the smoothing or the identity, ``N`` the normalization), so by
    the implicit function theorem ``K = (I - T_theta)^-1 T_c``. For multinomial counts
    (``Cov(c) = n (diag(q) - q q^T)``) the covariance of ``theta^`` is ``K Cov(c) K^T``.
    """
    c = np.asarray(counts, dtype=np.float64)
    n = c.sum()
    bins = theta.size
    r = input_cells // bins
    forward, _ = _channel(window, input_cells, uniform_share, uniform_pmf)
    a = np.stack([forward(np.repeat(np.eye(bins)[k] / r, r)) for k in range(bins)], axis=1)  # cells x bins
    fitted = np.maximum(a @ theta, 1e-300)
    ratio = c / fitted
    u_theta = np.diag(a.T @ ratio / n) - theta[:, None] * (a.T * (ratio / fitted)) @ a / n
    u_c = theta[:, None] * a.T / fitted / n
    s = np.eye(bins) if not smooth else np.stack([_smooth(e) for e in np.eye(bins)], axis=1)
    v = s @ (theta * (a.T @ ratio) / n)
    total = v.sum()
    norm = (np.eye(bins) - np.outer(v / total, np.ones(bins))) / total
    t_theta, t_c = norm @ s @ u_theta, norm @ s @ u_c
    return np.asarray(np.linalg.lstsq(np.eye(bins) - t_theta, t_c, rcond=None)[0])


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
    r = input_cells // bins
    if n <= 0:
        raise ValueError("no reports to reconstruct from")
    forward, adjoint = _channel(window, input_cells, uniform_share, uniform_pmf)
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
            theta = _smooth(theta)
        theta /= theta.sum()
    return theta, max_iterations, False
