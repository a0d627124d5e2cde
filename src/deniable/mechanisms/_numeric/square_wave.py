"""The Square Wave mechanism (Z. Li et al., SIGMOD 2020) on the sliding-window sampler.

Built for estimating the whole distribution (by EM or EMS,
:func:`~deniable.mechanisms._numeric.em.em_reconstruct`); its mean is
estimated by inverting the (affine) report mean.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable._aggregates import MeanStat
from deniable._estimate import HistogramEstimate
from deniable.mechanisms._numeric.base import NumericMechanism
from deniable.mechanisms._numeric.em import em_influence, em_reconstruct
from deniable.mechanisms._numeric.window import WindowMechanism, calibrate_window, odd_window
from deniable.mechanisms._ranges import RangeEstimate
from deniable.mechanisms.registry import register

__all__ = ["SquareWave", "square_wave_b"]

SQUARE_WAVE_MAX_EPSILON = 28.0  # every epsilon up to here is realised to within 1% (40-bit windows)


def square_wave_b(epsilon: float) -> float:
    """Li et al.'s half-width ``b = (eps e^eps - e^eps + 1) / (2 e^eps (e^eps - 1 - eps))``.

    Both parts are of order ``eps^2`` for small epsilon (``b -> 1/2``), so the
    numerator is taken as ``eps e^eps - (e^eps - 1)`` with ``expm1``: its
    rounding is then relative to ``eps`` (``b`` to about ``1e-15 / eps``), not
    to 1 (which left ``b = 1.11`` at ``eps = 1e-8`` and ``0`` at ``3e-9``).
    """
    e = math.exp(epsilon)
    growth = math.expm1(epsilon)
    return (epsilon * e - growth) / (2 * e * (growth - epsilon))


@register(kind="numeric", required={"epsilon"}, optional={"bins"})
class SquareWave(WindowMechanism):
    r"""The Square Wave mechanism (Z. Li et al., SIGMOD 2020), discretized: ``epsilon``-LDP.

    Input ``v = (x - low) / (high - low)`` in ``[0, 1]``; the report lies in
    ``[-b, 1 + b]`` (mapped back to original units), ``e^eps`` times more
    likely within ``b`` of ``v`` than elsewhere. Here: ``1024`` input cells,
    a window of ``L`` (odd, about ``2 b 1024``) cells and ``1024 + L``
    output cells, sampled with 32-bit precision by :class:`SlidingWindow`.

    It is built for the *distribution*: :meth:`distribution` reconstructs a
    histogram by EM or EMS (EM with binomial smoothing); ``estimate``
    returns the mean (by inverting the affine report mean, unbiased) with a
    ``bins``-bin EMS histogram attached (``bins=None``: no histogram, for
    a quick mean).

    Parameters
    ----------
    low, high : float
        The range of the values, ``low < high``; values outside are clamped.
    epsilon : float
        The privacy loss of one report, ``> 0`` and at most 28 (realised to
        within 1%, never above).
    bins : int or None, default 1024
        The bins of the EMS histogram that ``estimate`` attaches; None for
        the mean alone.

    Raises
    ------
    ValueError
        A bad range, ``epsilon`` or ``bins``.

    Notes
    -----
    With :math:`v = (x - \mathrm{low}) / (\mathrm{high} - \mathrm{low})`, the
    report's density on :math:`[-b, 1 + b]` is :math:`e^\varepsilon` times
    higher within :math:`b` of :math:`v` than elsewhere, with
    :math:`b = \frac{\varepsilon e^\varepsilon - e^\varepsilon + 1}{2 e^\varepsilon (e^\varepsilon - 1 - \varepsilon)}`
    (:func:`square_wave_b`). The report's mean is affine in :math:`v`, so
    inverting it gives an unbiased mean.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.SquareWave(0, 1, epsilon=1.0, bins=32)
    >>> est = m.estimate(m.privatize_many(rng.beta(2, 5, 5000), rng=rng))
    >>> bool(abs(est.mean - 2 / 7) < 5 * est.std_error)  # the mean of Beta(2, 5)
    True
    >>> est.histogram.method, len(est.histogram.probabilities)
    ('ems', 32)
    """

    wire_id = "square-wave"
    INPUT_CELLS = 1024
    BITS = 32

    def __init__(self, low: float, high: float, *, epsilon: float, bins: int | None = 1024) -> None:
        super().__init__(low, high)
        eps = privacy.check_realisable(
            privacy.check_epsilon(epsilon, owner="SquareWave"), SQUARE_WAVE_MAX_EPSILON, "SquareWave"
        )
        R = self.INPUT_CELLS
        L = odd_window(2 * square_wave_b(eps) * R, 4 * R)
        G = R + L
        self._set_window({
            "cells": G, "window": L, "bits": self.BITS,
            "uniform_numerator": calibrate_window(G, L, self.BITS, eps),
        })
        self._bins = self._check_bins(bins)
        self._finish()

    def _check_bins(self, bins: object, allow_none: bool = True) -> int | None:
        R = self.INPUT_CELLS
        if bins is None and allow_none:
            return None
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1 or R % int(bins):
            raise ValueError(f"bins must be a divisor of {R} for SquareWave; got {bins!r}")
        return int(bins)

    def _finish(self) -> None:
        w = self._win
        R = w.G - w.L
        g = float(w.gamma)
        v_tilde = (np.arange(w.G) + 0.5 - w.L / 2) / R  # cell centres in v-units
        self._cell_values = 2 * v_tilde - 1
        # E[v_tilde | v] = A + (1 - gamma) v
        A = (g * w.uniform_mean + (1 - g) * (w.L - 1) * (w.K - 1) / (2 * w.K) + 0.5 - w.L / 2) / R
        self._b0 = 2 * A - g
        self._b1 = 1 - g

    def _cell_counts(self, y: NDArray[np.float64]) -> NDArray[np.int64]:
        cells = np.searchsorted(self._report_values, y)  # exact: validated reports are cells
        return np.bincount(cells, minlength=self._win.G).astype(np.int64)

    @property
    def bins(self) -> int | None:
        """Bins of the EMS histogram that ``estimate`` attaches (None: no histogram)."""
        return self._bins

    def _histogram(self, stat: MeanStat) -> HistogramEstimate | None:
        return None if self.bins is None else self.distribution(stat, bins=self.bins)

    def distribution(
        self, data: Any, bins: int | None = None, *, method: str = "ems",
        tolerance: float = 1e-7, max_iterations: int = 10_000,
    ) -> HistogramEstimate:
        """Estimate the distribution of the clamped values on ``bins`` equal bins.

        ``data`` is reports or a :class:`MeanStat`. ``method="ems"`` (the
        default) smooths each EM step with the binomial kernel (1/4, 1/2,
        1/4); ``"em"`` is plain EM (the maximum-likelihood histogram, noisier).
        Iterates until the log-likelihood per report changes by less than
        ``tolerance``.
        """
        stat = data if isinstance(data, MeanStat) else self.aggregate(data)
        if (
            stat.cell_counts is None
            or stat.fingerprint != self.fingerprint
            or stat.cell_counts.shape != (self._win.G,)
            or (stat.cell_counts < 0).any()
        ):
            raise ValueError(
                f"distribution needs an aggregate made by this SquareWave "
                f"({self._win.G} non-negative cell counts)"
            )
        if bins is None:
            bins = self.bins if self.bins is not None else self.INPUT_CELLS
        d = int(bins)
        self._check_bins(d, allow_none=False)
        w = self._win
        theta, iterations, converged = em_reconstruct(
            stat.cell_counts, window=w.L, input_cells=w.G - w.L, bins=d,
            uniform_share=float(w.gamma), uniform_pmf=w.uniform_pmf,
            smooth=_check_method(method), tolerance=tolerance, max_iterations=max_iterations,
        )
        edges = self.low + (self.high - self.low) * np.linspace(0.0, 1.0, d + 1)
        return HistogramEstimate(edges, theta, method, iterations, converged)

    def range_estimate(
        self, data: Any, bins: int | None = None, *, method: str = "ems", tolerance: float = 1e-9,
        max_iterations: int = 100_000,
    ) -> RangeEstimate:
        """The :meth:`distribution` as a :class:`~deniable.RangeEstimate`: bins, ``cdf``, ``range`` and
        ``quantile`` with standard errors by the **delta method**.

        The reconstruction ``theta^`` is a smooth function of the output cell counts ``c`` at its fixed
        point, so ``Cov(theta^) = K Cov(c) K^T`` with ``K = d theta^ / d c`` by the implicit function
        theorem (:func:`~deniable.mechanisms._numeric.em.em_influence`) and the multinomial
        ``Cov(c) = n (diag(c/n) - (c/n)(c/n)^T)`` of a population sample. These are the standard errors of
        the EM or EMS estimate around what it estimates: EMS's smoothing bias is not in them (plain
        ``method="em"``, the maximum-likelihood histogram, has none at large ``n``), so use ``"em"`` with
        few bins for intervals that must cover the truth. Iterates to a tighter ``tolerance`` than
        :meth:`distribution`, as the delta method needs the fixed point.
        """
        stat = data if isinstance(data, MeanStat) else self.aggregate(data)
        hist = self.distribution(stat, bins, method=method, tolerance=tolerance, max_iterations=max_iterations)
        w = self._win
        counts = np.asarray(stat.cell_counts, dtype=np.int64)
        influence = em_influence(
            hist.probabilities, counts, window=w.L, input_cells=w.G - w.L, uniform_share=float(w.gamma),
            uniform_pmf=w.uniform_pmf, smooth=method == "ems",
        )
        share = counts / stat.n
        theta = hist.probabilities

        def moments(weights: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
            b = influence.T @ weights
            var = stat.n * (share @ (b * b) - (share @ b) ** 2)
            return weights.T @ theta, np.sqrt(np.maximum(var, 0.0))

        return RangeEstimate(self.name, self.epsilon, hist.edges, theta, stat.n, moments,
                             f"{method.upper()} ({hist.iterations} iterations), delta-method errors")

    def _params(self) -> dict[str, Any]:
        return {**self._window_params(), "bins": self.bins}

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> SquareWave:
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._set_window(params)
        if self._win.bits != cls.BITS or self._win.G - self._win.L != cls.INPUT_CELLS:
            raise ValueError(f"SquareWave params need bits=32 and cells - window = 1024; got {params!r}")
        self._bins = self._check_bins(params.get("bins", 1024))
        self._finish()
        return self


def _check_method(method: str) -> bool:
    if method not in ("ems", "em"):
        raise ValueError(f"method must be 'ems' or 'em'; got {method!r}")
    return method == "ems"
