"""The sliding-window sampler and the mechanisms' shared part built on it.

:class:`~deniable.Piecewise` and :class:`~deniable.SquareWave` report one of
``G`` output cells: with probability ``gamma`` a uniform cell, otherwise a
cell from a window of ``L`` cells whose start encodes the input
(:class:`SlidingWindow`). ``gamma`` is set from the integers the sampler
uses, so that the exact cell probabilities of any two inputs have ratio at
most ``e^eps`` (:func:`calibrate_window`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._randomness import Source
from deniable.mechanisms._numeric.base import NumericMechanism

__all__ = [
    "SlidingWindow",
    "sliding_window",
    "window_epsilon",
    "calibrate_window",
    "WindowMechanism",
    "odd_window",
]


class SlidingWindow:
    """Discrete piecewise / square-wave sampler on ``G`` output cells.

    With probability ``gamma = gamma_num / 2**32`` the output cell is
    ``floor(G V / K)``, otherwise ``floor((S + L V) / K)``, where ``V`` is a
    uniform ``bits``-bit integer (``K = 2**bits``, the same ``V`` for both: the
    coin is independent of it) and ``S / K`` in ``[0, G - L]`` is the
    window's start, a fixed-point image of the input. So the window branch is
    (up to ``1/K``) uniform over ``L`` consecutive cells starting at the
    real position ``S / K``, with the fractional end cells carrying the
    rounding; its mean is exactly ``S/K + (L-1)(K-1)/(2K)`` because ``L`` is
    odd (coprime to ``K``).

    Privacy, exactly for this sampler: a cell ``j`` gets
    ``gamma u_j + (1-gamma) w_S(j)`` with ``u_j >= floor(K/G)/K`` and
    ``0 <= w_S(j) <= ceil(K/L)/K`` for every ``S``, so any two inputs have
    probability ratio at most
    ``1 + (1-gamma) ceil(K/L) / (gamma floor(K/G))`` =: ``e^epsilon``.
    ``gamma`` is chosen (rounded up) so that this is at most the requested
    epsilon.
    """

    def __init__(self, cells: int, window: int, bits: int, gamma_num: int) -> None:
        if window % 2 == 0 or not 1 <= window < cells or cells > (1 << bits) or bits not in (16, 32):
            raise ValueError(f"bad sliding window: cells={cells}, window={window}, bits={bits}")
        if not 0 < gamma_num < 1 << 32:
            raise ValueError(f"uniform share must be in (0, 2**32); got {gamma_num}")
        self.G, self.L, self.bits = cells, window, bits
        self.K = 1 << bits
        self.gamma_num = gamma_num
        self.gamma = Fraction(gamma_num, 1 << 32)
        self.epsilon = window_epsilon(cells, window, bits, gamma_num)
        u = self._counts(np.zeros(1, dtype=np.int64), cells, np.arange(cells))[0] / self.K
        self.uniform_pmf = u
        self.uniform_mean = float(np.dot(np.arange(cells), u))

    def _counts(self, S: NDArray[np.int64], width: int, cells: NDArray[np.int64]) -> NDArray[np.float64]:
        """``#{V : floor((S + width V) / K) = j}`` for each row ``S`` and cell ``j``."""
        K = self.K
        edges = np.concatenate([cells, cells[-1:] + 1]).astype(np.int64)[None, :] * K
        below_edge = np.clip(-((S[:, None] - edges) // width), 0, K)
        return np.diff(below_edge, axis=1).astype(np.float64)

    def window_mean(self, S: NDArray[np.float64]) -> NDArray[np.float64]:
        """Exact mean cell of the window branch for fixed-point starts ``S``."""
        return S / self.K + (self.L - 1) * (self.K - 1) / (2 * self.K)

    def pmf(self, S: NDArray[np.int64]) -> NDArray[np.float64]:
        """Exact ``P(cell = j | S)`` as rows (one per ``S``) over all ``G`` cells."""
        w = self._counts(np.asarray(S, dtype=np.int64), self.L, np.arange(self.G)) / self.K
        g = float(self.gamma)
        return g * self.uniform_pmf[None, :] + (1 - g) * w

    def sample(self, S: NDArray[np.uint64], source: Source) -> NDArray[np.int64]:
        """Output cells for fixed-point window starts ``S`` (``0 <= S <= (G-L) K``)."""
        n = S.size
        narrow = np.uint16 if self.bits == 16 else np.uint32
        V64 = randomness.uniform_words(n, narrow, source).astype(np.uint64)
        shift = np.uint64(self.bits)
        window: NDArray[np.uint64] = (S.astype(np.uint64) + np.uint64(self.L) * V64) >> shift
        uniform: NDArray[np.uint64] = (np.uint64(self.G) * V64) >> shift
        coin = randomness.bernoulli_bits(self.gamma_num, 32, n, source)
        return np.where(coin, uniform, window).astype(np.int64)


def window_epsilon(cells: int, window: int, bits: int, gamma_num: int) -> float:
    """``ln(1 + (1-gamma) ceil(K/L) / (gamma floor(K/G)))`` with ``K = 2**bits``, rounded up.

    The exact epsilon of a :class:`SlidingWindow` with these parameters.
    """
    K = 1 << bits
    gamma = Fraction(gamma_num, 1 << 32)
    return privacy.ln_up(1 + (1 - gamma) * (-(-K // window)) / (gamma * (K // cells)))


def calibrate_window(cells: int, window: int, bits: int, epsilon: float) -> int:
    """The smallest uniform share ``gamma_num / 2**32`` whose window epsilon is <= ``epsilon``."""
    K = 1 << bits
    growth = math.expm1(epsilon)
    gamma = 1.0 / (1.0 + growth * (K // cells) / (-(-K // window)))
    num = min((1 << 32) - 1, max(1, math.ceil(gamma * 2**32)))
    while num > 1 and window_epsilon(cells, window, bits, num - 1) <= epsilon:
        num -= 1
    while window_epsilon(cells, window, bits, num) > epsilon:
        if num == (1 << 32) - 1:
            raise ValueError(f"epsilon={epsilon} is too small for a {cells}-cell window")
        num += 1
    return num


@lru_cache(maxsize=64)
def sliding_window(cells: int, window: int, bits: int, gamma_num: int) -> SlidingWindow:
    """The (cached) :class:`SlidingWindow` for these parameters."""
    return SlidingWindow(cells, window, bits, gamma_num)


# ------------------------------------------------------------ the mechanisms
def odd_window(x: float, cells: int) -> int:
    """The odd integer nearest ``x`` (the larger on a tie), within ``[1, cells - 1]``.

    ``2 floor(x / 2) + 1`` is within 1 of ``x`` (``x`` minus it is in ``[-1, 1)``), so it is the nearest.
    """
    L = 2 * int(math.floor(x / 2)) + 1
    return max(1, min(L, cells - 1 if (cells - 1) % 2 else cells - 2))


class WindowMechanism(NumericMechanism):
    """Shared part of Piecewise and SquareWave: fixed-point window start, cell reports."""

    _win: SlidingWindow
    _cell_values: NDArray[np.float64]  # standardized report of each cell

    def _starts(self, t: NDArray[np.float64]) -> NDArray[np.uint64]:
        """Fixed-point window starts ``round((t + 1) / 2 (G - L) K)`` (overwrites ``t``)."""
        w = self._win
        t += 1.0
        t *= (w.G - w.L) * w.K / 2
        return np.rint(t, out=t).astype(np.uint64)

    @cached_property
    def _report_values(self) -> NDArray[np.float64]:
        return self._from_unit(self._cell_values)

    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        return self._report_values[self._win.sample(self._starts(t), source)]

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        return self._in_table(y, self._report_values)

    @property
    def epsilon(self) -> float:
        return float(self._win.epsilon)

    @property
    def cells(self) -> int:
        return int(self._win.G)

    @property
    def report_bits(self) -> int:
        return int(self._win.G - 1).bit_length()

    def _cell_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        S = self._starts(np.array(t, dtype=float)).astype(np.int64)
        p = self._win.pmf(S)
        v = self._cell_values
        mean = p @ v
        return np.maximum(p @ (v * v) - mean * mean, 0.0)

    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._cell_variance(t) / self._b1**2

    @property
    def report_range(self) -> tuple[float, float]:
        return float(self._report_values[0]), float(self._report_values[-1])

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        S = self._starts(self._to_unit([value])).astype(np.int64)
        return self._report_values, self._win.pmf(S)[0]

    def _window_params(self) -> dict[str, Any]:
        w = self._win
        return {"cells": w.G, "window": w.L, "bits": w.bits, "uniform_numerator": w.gamma_num}

    def _set_window(self, params: dict[str, Any]) -> None:
        self._win = sliding_window(
            int(params["cells"]), int(params["window"]), int(params["bits"]),
            int(params["uniform_numerator"]),
        )
