"""Range queries, CDFs and quantiles of an ordered value, with standard errors: what the range mechanisms share.

A range mechanism (:class:`~deniable.HierarchicalHistogram`, :class:`~deniable.HaarHRR`) cuts
``[low, high]`` into ``bins`` equal bins ``[e_i, e_{i+1})`` and estimates the share ``f_i`` of the
respondents in each. Every query is a linear functional of the bins: a value is spread uniformly within
its bin, so

* ``cdf(x) = sum_i f_i w_i(x)`` with ``w_i(x) = clip((x - e_i) / (e_{i+1} - e_i), 0, 1)``: the share of
  values below ``x`` (exact at the bin edges, linear in between);
* ``range(a, b) = cdf(b) - cdf(a)``: the share of values in ``[a, b)``.

The estimators of both mechanisms are linear in their reports' debiased statistics, so a query's estimate
``w^T f^`` is unbiased (for the binned values) and its variance has a closed form, plugged in at the
estimates (each mechanism's ``_moments``). Intervals are normal: ``estimate +- z SE``.

**Quantiles** (:meth:`RangeEstimate.quantile`) invert the CDF. The point estimate is where the running
maximum of the estimated CDF at the edges, linear in between, first reaches ``q``. The interval inverts
the pointwise test of ``F(x) = q``: it is the hull of the bins whose band ``F^ +- z SE`` may cross ``q``
(``min`` of the lower band at the bin's two edges ``<= q <=`` the ``max`` of the upper band). Within a bin
``F^(x)`` is linear and ``SE(x)`` at most the larger of the edges' (the triangle inequality), so the band at
any ``x`` lies within the bin's extremes: the true quantile ``x_q`` (``F(x_q) = q``) is in the interval
whenever its own pointwise test passes, with probability ``1 - alpha`` (normal approximation). Extra bins
(edges far away that pass by chance, in flat stretches of the CDF) only widen it. Its ``std_error`` is
half the width of the interval inverted from the ``+-1`` SE band.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deniable import _intervals as intervals
from deniable._aggregates import SupportCounts
from deniable._estimate import check_target
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.errors import CategoryError
from deniable.mechanisms._contract import Mechanism

__all__ = ["RangeMechanism", "RangeEstimate", "QueryEstimate", "QuantileEstimate", "Moments"]

Moments = Callable[[NDArray[np.float64]], tuple[NDArray[np.float64], NDArray[np.float64]]]
"""``W`` (bins x queries weights) -> (estimates ``W^T f^``, their standard errors)."""


def _out(x: NDArray[np.float64], shape: tuple[int, ...]) -> Any:
    return float(x.reshape(-1)[0]) if shape == () else x.reshape(shape)


@dataclass(frozen=True, eq=False)
class QueryEstimate(Result):
    r"""An estimated share (``cdf(x)``, ``range(a, b)``) with its standard error; arrays for array queries.

    :meth:`RangeEstimate.cdf` and :meth:`RangeEstimate.range` make it.

    Parameters
    ----------
    query : str
        The query's kind (``"cdf"``, ``"range"``).
    estimate : float or numpy.ndarray
        The estimated share(s), :math:`w^\top \hat f`.
    std_error : float or numpy.ndarray
        Their standard errors.
    n : int
        The number of reports.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.HaarHRR(0, 100, bins=16, epsilon=2.0)
    >>> est = m.estimate(m.privatize_many(rng.uniform(0, 100, 20_000), rng=rng))
    >>> below = est.cdf(50)
    >>> below.query, bool(abs(below.estimate - 0.5) < 5 * below.std_error)
    ('cdf', True)
    >>> est.cdf([25, 50, 75]).estimate.shape
    (3,)
    """

    query: str
    estimate: Any
    std_error: Any
    n: int

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Normal interval ``estimate +- z SE`` at ``confidence_level``."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.estimate, self.std_error, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"estimate": self.estimate, "std_error": self.std_error, "ci_low": low, "ci_high": high}
        if np.ndim(self.estimate) == 0:
            return ResultTable({"query": self.query, "n": self.n}, columns)
        size = int(np.size(self.estimate))
        flat = {k: np.ravel(v) for k, v in columns.items()}
        return ResultTable({"query": self.query, "n": self.n}, flat, "query", list(range(size)), "queries")

    def __float__(self) -> float:
        return float(self.estimate)

    def __repr__(self) -> str:
        return f"QueryEstimate({self.query}: {self.estimate!r}, std_error={self.std_error!r})"


@dataclass(frozen=True, eq=False)
class QuantileEstimate(Result):
    """An estimated quantile with the interval inverted from the CDF's band (module docstring).

    ``value`` is the point estimate; :meth:`confidence_interval` inverts the band at its level;
    ``std_error`` is half the width of the interval inverted from the ``+-1`` standard-error band.
    :meth:`RangeEstimate.quantile` makes it (with the band's inversion, a private field).

    Parameters
    ----------
    q : float or numpy.ndarray
        The quantile level(s), in ``[0, 1]``.
    value : float or numpy.ndarray
        The estimated quantile(s), in original units.
    std_error : float or numpy.ndarray
        Half the width of the interval inverted from the one-standard-error
        band.
    n : int
        The number of reports.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.HaarHRR(0, 100, bins=16, epsilon=2.0)
    >>> est = m.estimate(m.privatize_many(rng.uniform(0, 100, 20_000), rng=rng))
    >>> median = est.quantile(0.5)
    >>> median.q, bool(40 < median.value < 60)
    (0.5, True)
    >>> ci = median.confidence_interval()
    >>> bool(ci.low <= median.value <= ci.high)
    True
    """

    q: Any
    value: Any
    std_error: Any
    n: int
    _invert: Callable[[float], tuple[Any, Any]]

    ci_methods: ClassVar[tuple[str, ...]] = ("band",)

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """The edges between which the CDF's pointwise band at ``confidence_level`` crosses ``q``."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = self._invert(intervals.z_for(1 - level))
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"estimate": self.value, "std_error": self.std_error, "ci_low": low, "ci_high": high}
        if np.ndim(self.value) == 0:
            return ResultTable({"q": self.q, "n": self.n}, columns)
        flat = {k: np.ravel(v) for k, v in columns.items()}
        return ResultTable({"n": self.n}, flat, "q", list(np.ravel(self.q)), "levels")

    def __float__(self) -> float:
        return float(self.value)

    def __repr__(self) -> str:
        return f"QuantileEstimate(q={self.q!r}: {self.value!r}, std_error={self.std_error!r})"


@dataclass(frozen=True, eq=False)
class RangeEstimate(Result):
    r"""Estimated shares of ``bins`` equal bins of ``[low, high]``, and the range queries they answer.

    ``frequencies[i]`` is the share of respondents in ``[edges[i], edges[i+1])`` (unbiased; may be
    slightly negative where the truth is near 0). :meth:`cdf`, :meth:`range` and :meth:`quantile` answer
    queries with standard errors and intervals (module docstring). Its own table and intervals are the
    bins'. A range mechanism's ``estimate`` makes it (with the queries' moments, a private field).

    Parameters
    ----------
    mechanism : str
        The name of the mechanism.
    epsilon : float
        Its privacy loss per report.
    edges : numpy.ndarray
        The ``bins + 1`` bin edges.
    frequencies : numpy.ndarray
        The estimated share of each bin.
    n : int
        The number of reports.
    method : str, default ""
        How the bins were estimated, where the mechanism names it.

    Notes
    -----
    A value is spread uniformly within its bin, so
    :math:`\mathrm{cdf}(x) = \sum_i \hat f_i \, \mathrm{clip}((x - e_i) / (e_{i+1} - e_i), 0, 1)`
    and :math:`\mathrm{range}(a, b) = \mathrm{cdf}(b) - \mathrm{cdf}(a)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.HaarHRR(0, 100, bins=16, epsilon=2.0)
    >>> est = m.estimate(m.privatize_many(rng.uniform(0, 100, 20_000), rng=rng))
    >>> est.bins, est.edges[:3].tolist(), round(float(est.frequencies.sum()), 6)
    (16, [0.0, 6.25, 12.5], 1.0)
    >>> share = est.range(25, 75)
    >>> bool(abs(share.estimate - 0.5) < 5 * share.std_error)
    True
    """

    mechanism: str
    epsilon: float
    edges: NDArray[np.float64]
    frequencies: NDArray[np.float64]
    n: int
    _moments: Moments
    method: str = ""

    @property
    def bins(self) -> int:
        return int(self.frequencies.size)

    @property
    def low(self) -> float:
        return float(self.edges[0])

    @property
    def high(self) -> float:
        return float(self.edges[-1])

    @property
    def std_errors(self) -> NDArray[np.float64]:
        """Each bin's standard error."""
        cached = self.__dict__.get("_bin_se")
        if cached is None:
            cached = self._moments(np.eye(self.bins))[1]
            object.__setattr__(self, "_bin_se", cached)
        return cached

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-bin normal interval ``f +- z SE`` at ``confidence_level``."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"low": self.edges[:-1], "high": self.edges[1:], "estimate": self.frequencies,
                   "std_error": self.std_errors, "ci_low": low, "ci_high": high}
        fields = {"mechanism": self.mechanism, "epsilon": self.epsilon, "n": self.n, "target": "population"}
        return ResultTable(fields, columns, "bin", list(range(self.bins)), "bins")

    def _caption(self) -> str:
        return f"{self.mechanism}: {self.bins} bins of [{self.low:.6g}, {self.high:.6g}], n={self.n}"

    # ----------------------------------------------------------------- queries
    def _points(self, x: ArrayLike, name: str) -> NDArray[np.float64]:
        arr = np.asarray(x, dtype=float)
        bad = ~np.isfinite(arr) | (arr < self.low) | (arr > self.high)
        if bad.any():
            raise ValueError(
                f"{name} must be in the domain [{self.low:.6g}, {self.high:.6g}]; got {arr[bad].ravel()[0]!r}"
            )
        return arr

    def _cdf_weights(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``w_i(x)`` for each point (columns): bins x points."""
        t = (x.ravel() - self.low) / (self.high - self.low) * self.bins
        return np.clip(t[None, :] - np.arange(self.bins)[:, None], 0.0, 1.0)

    def cdf(self, x: ArrayLike) -> QueryEstimate:
        """The share of values below ``x`` (any point of ``[low, high]``; arrays give arrays)."""
        points = self._points(x, "x")
        est, se = self._moments(self._cdf_weights(points))
        return QueryEstimate("cdf", _out(est, points.shape), _out(se, points.shape), self.n)

    def range(self, a: ArrayLike, b: ArrayLike) -> QueryEstimate:
        """The share of values in ``[a, b)`` (``low <= a <= b <= high``; arrays give arrays)."""
        lo, hi = self._points(a, "a"), self._points(b, "b")
        lo, hi = np.broadcast_arrays(lo, hi)
        if (lo > hi).any():
            raise ValueError(f"a must not exceed b in range(a, b); got a={lo[lo > hi].ravel()[0]!r} > b")
        w = self._cdf_weights(hi) - self._cdf_weights(lo)
        est, se = self._moments(w)
        return QueryEstimate("range", _out(est, lo.shape), _out(se, lo.shape), self.n)

    def cdf_band(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(edges, F^(edges), SE)``: the estimated CDF at every edge with its standard errors."""
        cached = self.__dict__.get("_band")
        if cached is None:
            est, se = self._moments(self._cdf_weights(self.edges))
            est[0], se[0] = 0.0, 0.0  # exactly: nothing lies below low, everything below high
            est[-1], se[-1] = 1.0, 0.0
            cached = (self.edges, est, se)
            object.__setattr__(self, "_band", cached)
        return cached

    def quantile(self, q: ArrayLike) -> QuantileEstimate:
        """The ``q``-quantile (``0 < q < 1``; arrays give arrays), its interval by inverting the CDF's band."""
        levels = np.asarray(q, dtype=float)
        if (~np.isfinite(levels) | (levels <= 0) | (levels >= 1)).any():
            raise ValueError(f"q must be in (0, 1); got {q!r}")
        edges, est, se = self.cdf_band()
        envelope = np.maximum.accumulate(est)
        flat = levels.ravel()
        value = np.array([edges[np.searchsorted(envelope, v, "left")] if v in envelope
                          else np.interp(v, envelope, edges) for v in flat])

        def invert(z: float) -> tuple[Any, Any]:
            lower, upper = est - z * se, est + z * se
            low_end = np.minimum(lower[:-1], lower[1:])[None, :]  # each bin: its band's extremes
            high_end = np.maximum(upper[:-1], upper[1:])[None, :]
            crossed = (low_end <= flat[:, None]) & (flat[:, None] <= high_end)
            first = np.argmax(crossed, axis=1)
            last = edges.size - 2 - np.argmax(crossed[:, ::-1], axis=1)
            return _out(edges[first], levels.shape), _out(edges[last + 1], levels.shape)

        lo1, hi1 = invert(1.0)
        half = (np.asarray(hi1) - np.asarray(lo1)) / 2
        return QuantileEstimate(_out(flat, levels.shape), _out(value, levels.shape), _out(half, levels.shape),
                                self.n, invert)

    def __repr__(self) -> str:
        return f"RangeEstimate({self._caption()})"


class RangeMechanism(Mechanism):
    """Shared part of the range mechanisms: ``[low, high]`` cut into ``bins`` bins, values to bins.

    Aggregates are :class:`~deniable.SupportCounts` whose counts hold each level's number of reports
    first, then the level's statistics; every estimate is for the population target. Not built itself:
    :class:`~deniable.HaarHRR` and :class:`~deniable.HierarchicalHistogram` are its kinds.

    Examples
    --------
    >>> import deniable as dn
    >>> from deniable.mechanisms import RangeMechanism
    >>> m = dn.HierarchicalHistogram(0, 100, bins=16, epsilon=2.0, branching=4)
    >>> isinstance(m, RangeMechanism), isinstance(dn.HaarHRR(0, 100, bins=16, epsilon=2.0), RangeMechanism)
    (True, True)
    """

    stat_type = SupportCounts
    low: float
    high: float
    _bins: int

    def _set_bounds(self, low: Any, high: Any, bins: Any, owner: str) -> None:
        for name, v in (("low", low), ("high", high)):
            if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(float(v)):
                raise ValueError(f"{name} must be a finite number for {owner}; got {v!r}")
        if not float(low) < float(high):
            raise ValueError(f"low must be below high for {owner}; got low={low!r}, high={high!r}")
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
            raise ValueError(f"bins must be an integer >= 2 for {owner}; got {bins!r}")
        self.low, self.high, self._bins = float(low), float(high), int(bins)

    @property
    def bins(self) -> int:
        """The number of equal bins of ``[low, high]``."""
        return self._bins

    @property
    def bounds(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def edges(self) -> NDArray[np.float64]:
        return self.low + (self.high - self.low) * np.linspace(0.0, 1.0, self._bins + 1)

    def _domain_json(self) -> Any:
        return [self.low, self.high]

    def bin_of(self, values: Any) -> NDArray[np.int64]:
        """The bin of each value (``high`` is in the last bin); CategoryError naming a value outside the domain."""
        arr = np.asarray(values, dtype=float).reshape(-1)
        bad = ~np.isfinite(arr) | (arr < self.low) | (arr > self.high)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CategoryError(
                f"value {arr[i]!r} at index {i} is outside the domain [{self.low:.6g}, {self.high:.6g}] "
                f"of {self.name}", float(arr[i]), i,
            )
        t = (arr - self.low) / (self.high - self.low) * self._bins
        return np.minimum(t.astype(np.int64), self._bins - 1)

    def privatize(self, value: Any, rng: Any = None) -> Any:
        """Randomize one respondent's value (secure randomness unless ``rng`` is given)."""
        return self.privatize_many([value], rng=rng)[0]

    def _check_stat(self, stat: Any, size: int) -> SupportCounts:
        if not isinstance(stat, SupportCounts):
            raise TypeError(f"estimate_from needs a SupportCounts aggregate; got {type(stat).__name__}")
        stat.require(SupportCounts, self.fingerprint)
        if stat.counts.shape != (size,):
            raise ValueError(f"aggregate has {stat.counts.shape} counts; {self.name} needs {size}")
        return stat

    def _levels(self, stat: SupportCounts, levels: int) -> NDArray[np.int64]:
        """Each level's number of reports (ValueError when they do not add up to ``n``).

        A level without reports contributes nothing: its part of the estimate is the even split
        of the coarser levels, which is not unbiased, so the standard errors are then NaN.
        """
        per_level = np.asarray(stat.counts[:levels], dtype=np.int64)
        if int(per_level.sum()) != stat.n:
            raise ValueError(f"aggregate's level counts add up to {int(per_level.sum())}, not n={stat.n}")
        if stat.n == 0:
            raise ValueError(f"no reports: a {self.name} estimate needs n >= 1")
        return per_level

    def estimate(self, reports: Any, target: Any = "population", *, by: Any = None) -> Any:
        """The bins' estimate from reports (population target): ``estimate_from(aggregate(reports))``, a
        :class:`RangeEstimate`; with ``by``, one per slice (:class:`~deniable.SlicedEstimate`)."""
        if by is not None:
            return super().estimate(reports, target, by=by)
        return self.estimate_from(self.aggregate(reports), target=target)

    @staticmethod
    def _population(target: Any) -> None:
        if check_target(target) != "population":
            raise ValueError("a range estimate is for target 'population' only; got 'respondents'")

    def query_variance(self, n: int, queries: Any, frequencies: Any = None) -> NDArray[np.float64]:
        """Theoretical variance of each range query ``(a, b)`` in ``queries`` for ``n`` reports.

        Each level gets its expected ``n / levels`` reports; ``frequencies`` are the bins' true shares
        (None: uniform).
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer; got {n!r}")
        f = np.full(self._bins, 1.0 / self._bins) if frequencies is None else np.asarray(frequencies, dtype=float)
        if f.shape != (self._bins,):
            raise ValueError(f"frequencies must have length bins={self._bins}; got shape {f.shape}")
        pairs = np.asarray(queries, dtype=float).reshape(-1, 2)
        shell = RangeEstimate(self.name, self.epsilon, self.edges, f, n, lambda w: (w.T @ f, 0 * w[0]))
        weights = shell._cdf_weights(shell._points(pairs[:, 1], "b")) - shell._cdf_weights(
            shell._points(pairs[:, 0], "a"))
        return self._theory_variance(n, f, weights)

    def _theory_variance(self, n: int, f: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def simulate_aggregate(self, frequencies: Any, n: int, rng: np.random.Generator) -> SupportCounts:
        """The aggregate of ``n`` respondents drawn from the bins' shares ``frequencies`` (simulation only).

        Drawn from the aggregate's exact law where the mechanism has one (``_draw_levels``), else from
        real reports of values spread uniformly within their bins.
        """
        f = np.asarray(frequencies, dtype=float)
        if f.shape != (self._bins,) or (f < 0).any() or not np.isclose(f.sum(), 1.0):
            raise ValueError(f"frequencies must be {self._bins} non-negative shares adding up to 1")
        drawn = self._draw_levels(f, n, rng)
        if drawn is None:
            bins = rng.choice(self._bins, size=n, p=f / f.sum())
            values = self.low + (bins + rng.random(n)) * (self.high - self.low) / self._bins
            stat: SupportCounts = self.aggregate(self.privatize_many(np.minimum(values, self.high), rng=rng))
            return stat
        return SupportCounts(self.fingerprint, np.concatenate(drawn).astype(np.int64), n)

    def _draw_levels(self, f: NDArray[np.float64], n: int, rng: np.random.Generator) -> list[Any] | None:
        """The aggregate's counts drawn from their exact law, or None where none is implemented."""
        return None
