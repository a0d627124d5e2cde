"""Numeric mechanism configurations shared by the tests in this folder."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import deniable as dn

LOW, HIGH = -20.0, 80.0

PURE: dict[str, Callable[[float], Any]] = {
    "Laplace": lambda e: dn.Laplace(LOW, HIGH, epsilon=e),
    "Duchi": lambda e: dn.Duchi(LOW, HIGH, epsilon=e),
    "Piecewise": lambda e: dn.Piecewise(LOW, HIGH, epsilon=e),
    "Hybrid": lambda e: dn.Hybrid(LOW, HIGH, epsilon=e),
    "SquareWave": lambda e: dn.SquareWave(LOW, HIGH, epsilon=e),
}

ALL: dict[str, Callable[[float], Any]] = {
    **PURE,
    "Gaussian": lambda e: dn.Gaussian(LOW, HIGH, epsilon=e, delta=1e-5),
}

#: inputs used for exact and sampled checks: both ends, interior points, and
#: values outside the range (clamped).
VALUES = [LOW, LOW + 0.37, 0.0, 30.0, 51.3, HIGH - 1e-9, HIGH, LOW - 7.0, HIGH + 100.0]


def clamp(v: float) -> float:
    return min(HIGH, max(LOW, v))


def pmf_on(support: np.ndarray, probs: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Probabilities re-indexed onto a common sorted ``grid`` of report values."""
    out = np.zeros(grid.size)
    idx = np.searchsorted(grid, support)
    np.add.at(out, idx, probs)
    return out


class ClaimsLess:
    """A mechanism that claims ``claimed`` but samples like ``inner`` (a privacy bug).

    Used by power checks: ``inner`` is built with an epsilon 20% above the
    claim.
    """

    def __init__(self, inner: Any, claimed: float) -> None:
        self.inner = inner
        self.epsilon = claimed
        self.low, self.high = inner.low, inner.high

    def privatize_many(self, values: Any, rng: Any = None) -> np.ndarray:
        return self.inner.privatize_many(values, rng=rng)
