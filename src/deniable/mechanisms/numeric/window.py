"""The sliding-window mechanisms' shared part: a fixed-point window start, cell reports.

:class:`~deniable.Piecewise` and :class:`~deniable.SquareWave` report one of
``G`` output cells: with probability ``gamma`` a uniform cell, otherwise a
cell from a window of ``L`` cells whose start encodes the input. ``gamma`` is
set from the integers the sampler uses, so that the exact cell probabilities
of any two inputs have ratio at most ``e^eps``.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.mechanisms.numeric.base import NumericMechanism
from deniable.mechanisms.numeric_sampling import sliding_window
from deniable.randomness import Source

__all__ = ["WindowMechanism", "odd_window"]

def odd_window(x: float, cells: int) -> int:
    """The odd integer nearest ``x``, within ``[1, cells - 1]``."""
    L = 2 * int(math.floor(x / 2)) + 1
    if x - L > 1:
        L += 2
    return max(1, min(L, cells - 1 if (cells - 1) % 2 else cells - 2))


class WindowMechanism(NumericMechanism):
    """Shared part of Piecewise and SquareWave: fixed-point window start, cell reports."""

    _win: Any  # SlidingWindow
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
        return {"cells": w.G, "window": w.L, "bits": w.k, "uniform_numerator": w.gamma_num}

    def _set_window(self, params: dict[str, Any]) -> None:
        self._win = sliding_window(
            int(params["cells"]), int(params["window"]), int(params["bits"]),
            int(params["uniform_numerator"]),
        )
