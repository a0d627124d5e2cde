"""The Piecewise Mechanism (N. Wang et al., ICDE 2019) on 1024 output cells."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from deniable import _privacy as privacy
from deniable.mechanisms._numeric.base import NumericMechanism
from deniable.mechanisms._numeric.window import WindowMechanism, calibrate_window, odd_window
from deniable.mechanisms.registry import register

__all__ = ["Piecewise", "PIECEWISE_MAX_EPSILON"]

PIECEWISE_MAX_EPSILON = 28.0  # every epsilon up to here is realised to within 1% (40-bit windows)


@register(kind="numeric", candidate=True, required={"epsilon"})
class Piecewise(WindowMechanism):
    """The Piecewise Mechanism (N. Wang et al., ICDE 2019), discretized: ``epsilon``-LDP.

    PM outputs uniformly from a window ``[l(t), r(t)]`` of width ``C - 1``
    inside ``[-C, C]`` with density ``e^eps`` times that outside,
    ``C = (e^(eps/2) + 1) / (e^(eps/2) - 1)``. Here the output is one of
    ``cells = 1024`` cells: with probability ``gamma`` a uniform cell, else
    a cell from a window of ``L`` (odd, about ``1024 / (e^(eps/2) + 1)``)
    cells whose fixed-point start (16 fractional bits) encodes ``t``. That is
    PM's shape (inside/outside ratio ``e^eps``, window share of the range
    ``(C-1)/(2C)``); ``gamma`` is set from the integers so the exact cell
    probabilities have ratio at most ``e^eps`` (:class:`SlidingWindow`).
    Cells are reported as ``(cell - E0) / slope``, unbiased for ``t`` (the
    start is rounded to ``2**-16`` of a cell, a bias under ``1e-7`` of the
    range). Per-user variance close to PM's ``t^2/(e^(eps/2)-1) +
    (e^(eps/2)+3)/(3(e^(eps/2)-1)^2)``; :meth:`variance` is exact for the
    discrete sampler.

    Parameters
    ----------
    low, high : float
        The declared range; each value is clamped into it before it is
        randomized (``low < high``, both finite), and every estimate is of
        the clamped values.
    epsilon : float
        The privacy loss of one report, ``> 0``; the realised
        ``m.epsilon`` never exceeds it.

    Raises
    ------
    ValueError
        A range that is not finite and increasing, or an epsilon out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import Piecewise
    >>> m = Piecewise(0, 10, epsilon=1.0)
    >>> m.epsilon <= 1.0
    True
    >>> rng = np.random.default_rng(0)
    >>> values = rng.uniform(2, 6, size=50_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(abs(est.mean - values.mean()) < 5 * est.std_error)
    True
    """

    wire_id = "piecewise"
    CELLS = 1024
    BITS = 16

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        eps = privacy.check_realisable(
            privacy.check_epsilon(epsilon, owner="Piecewise"), PIECEWISE_MAX_EPSILON, "Piecewise"
        )
        G = self.CELLS
        L = odd_window(G / (math.exp(eps / 2) + 1), G)
        self._set_window({
            "cells": G, "window": L, "bits": self.BITS,
            "uniform_numerator": calibrate_window(G, L, self.BITS, eps),
        })
        self._finish()

    def _finish(self) -> None:
        w = self._win
        g = float(w.gamma)
        slope = (1 - g) * (w.G - w.L) / 2
        centre = g * w.uniform_mean + (1 - g) * float(w.window_mean(np.array([(w.G - w.L) * w.K / 2]))[0])
        self._cell_values = (np.arange(w.G, dtype=np.float64) - centre) / slope

    def _params(self) -> dict[str, Any]:
        return self._window_params()

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Piecewise:
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._set_window(params)
        if self._win.bits != cls.BITS:
            raise ValueError(f"Piecewise params need bits={cls.BITS}; got {params!r}")
        self._finish()
        return self
