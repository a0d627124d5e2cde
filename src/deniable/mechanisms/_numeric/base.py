"""The base of the numeric mechanisms, and the validation of their inputs and reports.

A numeric mechanism takes a declared range ``(low, high)`` and **clamps**
each value into it before randomizing; clamping is part of the mechanism (it
is what bounds the sensitivity), so estimates are of the clamped values. The
clamped value ``x`` is mapped to ``t = 2 (x - low) / (high - low) - 1`` in
``[-1, 1]``; subclasses sample in these ``t``-units and reports are returned
in the original units.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from functools import cached_property
from typing import Any, ClassVar, overload

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._aggregates import MeanStat, Mergeable
from deniable._estimate import HistogramEstimate, MeanEstimate, Target, check_target
from deniable._randomness import Source
from deniable._slices import SlicedEstimate, estimate_by
from deniable.mechanisms._contract import Mechanism
from deniable.wire import _codecs as codecs

__all__ = ["NumericMechanism", "check_range", "check_real", "check_delta", "finite_values"]


# ----------------------------------------------------------------- validation
def check_real(value: object, name: str, owner: str) -> float:
    """``value`` as a float; TypeError unless a real number, ValueError unless finite."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a finite real number for {owner}; got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite real number for {owner}; got {value!r}")
    return v


def check_range(low: object, high: object, owner: str) -> tuple[float, float]:
    """Validate a declared range: finite reals with ``low < high``."""
    lo = check_real(low, "low", owner)
    hi = check_real(high, "high", owner)
    if not lo < hi:
        raise ValueError(f"low must be < high for {owner}; got low={low!r}, high={high!r}")
    if not math.isfinite(hi - lo):
        raise ValueError(f"high - low must be finite for {owner}; got low={low!r}, high={high!r}")
    return lo, hi


def check_delta(delta: object, owner: str) -> float:
    """Validate a ``delta``: a number strictly between 0 and 1."""
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)):
        raise TypeError(f"delta must be a number in (0, 1) for {owner}; got {delta!r}")
    d = float(delta)
    if not 0 < d < 1:
        raise ValueError(f"delta must be in (0, 1) for {owner}; got {delta!r}")
    return d


def _as_floats(values: Any, what: str, owner: str) -> NDArray[np.float64]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} for {owner} must be numbers; got {values!r}")
    if _has_bools(values):  # numpy would read True as 1.0: a yes/no column is not a number
        i = next(i for i, v in enumerate(values) if isinstance(v, (bool, np.bool_)))
        raise ValueError(f"{what} for {owner} must be real numbers, not booleans; got {bool(values[i])} at index {i}")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        try:
            items = [values] if np.isscalar(values) else list(values)
        except TypeError:  # neither a number nor a sequence
            items = [values]
        bad = next((v for v in items if not _is_number(v)), values)
        raise ValueError(f"{what} for {owner} must be real numbers; got {bad!r}") from None
    if arr.dtype != np.float64 or arr.ndim != 1:
        raise ValueError(f"{what} for {owner} must be a 1-D sequence of numbers; got shape {arr.shape}")
    return arr


def _has_bools(values: Any) -> bool:
    """Whether a boolean array, or a list or tuple holding a boolean (one pass over the types)."""
    if isinstance(values, np.ndarray):
        return values.dtype == np.bool_ or (values.dtype == object and _has_bools(values.tolist()))
    return isinstance(values, (list, tuple)) and not {bool, np.bool_}.isdisjoint(map(type, values))


def _is_number(v: object) -> bool:
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, float, np.integer, np.floating))


def finite_values(values: Any, owner: str) -> NDArray[np.float64]:
    """Input values as floats; ValueError naming the first that is NaN or infinite.

    A finite sum proves every value finite in one pass without a temporary;
    only when it is not are the values checked one by one (the sum may also
    overflow).
    """
    x = _as_floats(values, "values", owner)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing sum is checked below, silently
        total = float(np.add.reduce(x))
    if not math.isfinite(total):
        finite = np.isfinite(x)
        if not finite.all():
            i, v = _first_bad(x, finite)
            raise ValueError(f"values for {owner} must be finite numbers; got {v!r} at index {i}")
    return x


def _first_bad(arr: NDArray[np.float64], ok: NDArray[np.bool_]) -> tuple[int, float]:
    i = int(np.argmin(ok))
    return i, float(arr[i])


# --------------------------------------------------------------------- base
_CHUNK = 1 << 16  # values randomized per vectorized step of privatize_many


class NumericMechanism(Mechanism):
    r"""A randomizer for values in ``[low, high]`` and its unbiased mean estimator.

    Subclasses sample in ``t``-units (``[-1, 1]``) and supply the per-user
    variance of the debiased report for a given ``t``. A report ``y`` is in
    original units; its standardized form is ``y_t = (y - mid) / half``, and
    the debiased estimate of ``t`` is ``(y_t - b0) / b1`` (``b0 = 0, b1 = 1``
    for the mechanisms whose reports are unbiased).

    The range is ``bounds == (low, high)``; a configuration stores it in its
    ``domain`` field as ``[low, high]`` (``domain`` in Python means a
    frequency oracle's categories). Laplace, Gaussian, Duchi, Piecewise,
    Hybrid, SquareWave and OneBitMean are its kinds.

    Parameters
    ----------
    low, high : float
        The range of the values, finite with ``low < high``; values outside
        are clamped to it.

    Raises
    ------
    ValueError
        A range that is not finite or not increasing.

    Notes
    -----
    With :math:`\mathrm{mid} = (\mathrm{low} + \mathrm{high}) / 2` and
    :math:`\mathrm{half} = (\mathrm{high} - \mathrm{low}) / 2`, a value
    :math:`x` is randomized as :math:`t = (x - \mathrm{mid}) / \mathrm{half}`
    in :math:`[-1, 1]`, and the mean is
    :math:`\mathrm{mid} + \mathrm{half} \cdot \overline{(y_t - b_0) / b_1}`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable.mechanisms import NumericMechanism
    >>> m = dn.Duchi(0, 10, epsilon=1.0)
    >>> isinstance(m, NumericMechanism), m.bounds
    (True, (0.0, 10.0))
    >>> rng = np.random.default_rng(0)
    >>> est = m.estimate(m.privatize_many(rng.uniform(2, 6, 5000), rng=rng))
    >>> bool(abs(est.mean - 4) < 5 * est.std_error)
    True
    """

    report_kind: ClassVar[str] = "float"
    stat_type: ClassVar[type[MeanStat]] = MeanStat
    _b0: float = 0.0
    _b1: float = 1.0

    def __init__(self, low: object, high: object) -> None:
        self.low, self.high = check_range(low, high, self.name)
        self._mid = (self.low + self.high) / 2
        self._half = (self.high - self.low) / 2

    # ------------------------------------------------------------ abstract
    @abstractmethod
    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        """Reports (original units) for clamped inputs ``t`` in ``[-1, 1]``."""

    @abstractmethod
    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        """Variance of one debiased report, in ``t``-units, for inputs ``t``."""

    @abstractmethod
    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Exact ``(support, probabilities)`` of one report for ``value`` (original units)."""

    @classmethod
    @abstractmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> NumericMechanism:
        """Inverse of ``_params``."""

    @property
    @abstractmethod
    def report_range(self) -> tuple[float, float]:
        """Smallest and largest possible report (original units)."""

    # ------------------------------------------------------------- helpers
    def _to_unit(self, values: Any) -> NDArray[np.float64]:
        return self._unit(finite_values(values, self.name))

    def _unit(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        t = x - self._mid
        t *= 1.0 / self._half
        return np.clip(t, -1.0, 1.0, out=t)

    def _from_unit(self, yt: NDArray[np.float64]) -> NDArray[np.float64]:
        return yt * self._half + self._mid

    # ----------------------------------------------------------- privatize
    def privatize(self, value: float, rng: randomness.RNGLike = None) -> float:
        """Randomize one value (constant-work secure sampling unless ``rng`` is given)."""
        if isinstance(value, bool) or not _is_number(value):
            raise TypeError(f"value for {self.name} must be a real number; got {value!r}")
        x = float(value)
        if not math.isfinite(x):
            raise ValueError(f"values for {self.name} must be finite numbers; got {value!r} at index 0")
        t = min(1.0, max(-1.0, (x - self._mid) * (1.0 / self._half)))
        return self._sample_one(t, randomness.resolve(rng))

    def _sample_one(self, t: float, source: Source) -> float:
        """One report for one clamped ``t``, with constant work (no byte-lazy comparisons)."""
        return float(self._sample(np.array([t]), source, False)[0])

    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[np.float64]:
        """Randomize many values; one float64 report per value (original units).

        ``rng=None`` uses the OS CSPRNG; a seed or numpy Generator is for
        simulation only (predictable, hence not private).
        """
        x = finite_values(values, self.name)
        source = randomness.resolve(rng)
        out = np.empty(x.size)
        # Chunks keep every temporary in cache and let the allocator reuse it.
        for start in range(0, x.size, _CHUNK):
            stop = start + _CHUNK
            out[start:stop] = self._sample(self._unit(x[start:stop]), source, True)
        return out

    # ------------------------------------------------------------ reports
    def _validate(self, reports: Any) -> NDArray[np.float64]:
        """Reports as a float64 array; ValueError naming the first that cannot occur.

        Checked ``_CHUNK`` reports at a time (the temporaries stay in cache):
        a chunk's minimum and maximum against the report range (NaN, a
        non-finite minimum or maximum, fails it), then :meth:`_possible`.
        """
        y = _as_floats(reports, "reports", self.name)
        lo, hi = self.report_range
        slack = 1e-9 * (hi - lo)
        for start in range(0, y.size, _CHUNK):
            part = y[start : start + _CHUNK]
            if not (part.min() >= lo - slack and part.max() <= hi + slack):
                ok = np.isfinite(part) & (part >= lo - slack) & (part <= hi + slack)
                i, v = _first_bad(part, ok)
                if self._possible(part[:i]).all():  # else a report before it is named below
                    raise ValueError(
                        f"report {v!r} at index {start + i} is not a possible {self.name} report "
                        f"(finite, in [{lo:.17g}, {hi:.17g}])"
                    )
                part = part[:i]
            on = self._possible(part)
            if not on.all():
                i, v = _first_bad(part, on)
                raise ValueError(
                    f"report {v!r} at index {start + i} is not a possible {self.name} report "
                    f"(not one of its output values)"
                )
        return y

    @abstractmethod
    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each in-range report is one of the mechanism's output values."""

    @staticmethod
    def _in_table(y: NDArray[np.float64], table: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each ``y`` is an entry of the sorted ``table``, exactly.

        The report tables are (nearly) evenly spaced, so the entry nearest
        ``y`` is first guessed in O(1), ``j = rint((y - t_0) / step)``; only the
        reports inside the table's range that the guess misses (none, for
        valid reports of an even table) are looked up by binary search.
        """
        last = table.size - 1
        step = (table[-1] - table[0]) / last if last else 1.0
        guess = np.rint((y - table[0]) / step) if step > 0 else np.zeros_like(y)
        at = np.clip(guess, 0, last, out=guess).astype(np.intp)  # y is finite: checked before
        found: NDArray[np.bool_] = table[at] == y
        missed = np.flatnonzero(~found & (y >= table[0]) & (y <= table[-1]))
        if missed.size:
            again = np.clip(np.searchsorted(table, y[missed]), 0, last)
            found[missed] = table[again] == y[missed]
        return found

    def _checked_to_json(self, checked: NDArray[np.float64]) -> list[Any]:
        return [float(v) for v in checked]

    def _reports_from_json(self, items: list[Any]) -> NDArray[np.float64]:
        codecs.check_numbers(items, self.name)
        return self._validate(items)

    # ---------------------------------------------------------- aggregate
    def _cell_counts(self, y: NDArray[np.float64]) -> NDArray[np.int64] | None:
        """Per-output-cell counts of validated reports, where the mechanism keeps them."""
        return None

    def aggregate(self, reports: Any) -> MeanStat:
        """Mergeable sufficient statistic of a batch of reports."""
        stat: MeanStat = self._aggregate_checked(self._checked(reports))
        return stat

    def _aggregate_checked(self, y: NDArray[np.float64]) -> MeanStat:
        """``n``, the sum and the sum of squares of ``y_t = (y - mid) / half``, ``_CHUNK`` reports at a time."""
        total = total_sq = 0.0
        scratch = np.empty(min(_CHUNK, y.size))
        for start in range(0, y.size, _CHUNK):
            part = y[start : start + _CHUNK]
            yt = np.subtract(part, self._mid, out=scratch[: part.size])
            yt /= self._half
            total += float(yt.sum())
            yt *= yt  # not np.dot: BLAS threads cost more than they save on a chunk
            total_sq += float(yt.sum())
        return MeanStat(self.fingerprint, int(y.size), total, total_sq, self._cell_counts(y))

    # ----------------------------------------------------------- estimate
    @cached_property
    def _coefficients(self) -> tuple[float, float, float]:
        """``(v0, v1, v2)`` with unit variance ``v0 + v1 t + v2 t^2`` through t = -1, 0, 1."""
        vm, v0, vp = self._unit_variance(np.array([-1.0, 0.0, 1.0]))
        return float(v0), float((vp - vm) / 2), float((vp + vm) / 2 - v0)

    @overload
    def estimate(self, reports: Any, target: Target = ..., *, by: None = None, **sample: Any) -> MeanEstimate: ...
    @overload
    def estimate(self, reports: Any, target: Target = ..., *, by: Any, **sample: Any) -> SlicedEstimate: ...

    def estimate(self, reports: Any, target: Target = "population", *, by: Any = None, **sample: Any) -> Any:
        """Unbiased mean of the clamped values from reports (a :class:`~deniable.MeanEstimate`).

        ``target`` is ``"population"`` (the default: the mean of the
        population the respondents were sampled from, sample standard
        error) or ``"respondents"`` (their own mean, formula standard error);
        see :class:`~deniable.MeanEstimate`. ``by`` (one plain label per
        report) estimates each slice on its own: a
        :class:`~deniable.SlicedEstimate` (:mod:`deniable._slices`).
        ``sample``: survey weights and a
        complex sample (``weights``, ``strata``, ``cluster``, ``fpc``,
        ``repweights``, ...): the weighted mean with a design-based standard
        error (:mod:`deniable._weighted_estimate`).
        """
        target = check_target(target)  # before any work on the reports
        if by is not None:
            if sample:
                raise ValueError(f"by: slices and survey weights ({', '.join(sample)}) are not supported together")
            return estimate_by(self, reports, by, target)
        if sample:
            from deniable._weighted_estimate import weighted_mean

            return weighted_mean(self, self._checked(reports), target, sample)
        est: MeanEstimate = self.estimate_from(self.aggregate(reports), target=target)
        return est

    def estimate_from(self, stat: MeanStat, target: Target = "population") -> MeanEstimate:
        """Mean estimate from a (merged) aggregate.

        ``mean = mid + half (mean(y_t) - b0) / b1``. For ``target="respondents"``
        the formula standard error averages the per-user variance
        ``v0 + v1 t + v2 t^2`` over the respondents: the mean of ``t`` is the
        estimate itself and the mean of ``t^2`` is taken as ``mean^2`` when
        ``v2 <= 0`` (an upper bound by Jensen) and, when ``v2 > 0``, from the
        reports' second moment ``E[t_hat^2] = v(t) + t^2``, kept within
        ``[mean^2, 1]``. For ``target="population"`` the debiased reports are
        i.i.d. and the standard error is their sample one, ``s / sqrt(n)``.
        """
        target = check_target(target)
        if not isinstance(stat, Mergeable):
            raise TypeError(f"estimate_from needs a MeanStat aggregate; got {type(stat).__name__}")
        stat.require(MeanStat, self.fingerprint)
        n = stat.n
        if n < 2:
            raise ValueError(f"an estimate needs at least 2 reports; got n={n}")
        m1 = stat.total / n
        m2 = stat.total_sq / n
        t_bar = (m1 - self._b0) / self._b1
        t2_hat = (m2 - 2 * self._b0 * m1 + self._b0**2) / self._b1**2  # mean of t_hat^2
        v0, v1, v2 = self._coefficients
        tc = min(1.0, max(-1.0, t_bar))
        mean_t2 = tc * tc
        if v2 > 0:
            mean_t2 = min(1.0, max(mean_t2, (t2_hat - v0 - v1 * tc) / (1 + v2)))
        unit_var = max(v0 + v1 * tc + v2 * mean_t2, 0.0)
        sample_var = max(t2_hat - t_bar * t_bar, 0.0) * n / (n - 1)
        sample_se = self._half * math.sqrt(sample_var / n)
        return MeanEstimate(
            mechanism=self.name,
            epsilon=self.epsilon,
            delta=self.delta,
            mean=self._mid + self._half * t_bar,
            std_error=self._half * math.sqrt(unit_var / n) if target == "respondents" else sample_se,
            sample_std_error=sample_se,
            n=n,
            low=self.low,
            high=self.high,
            histogram=self._histogram(stat),
            target=target,
            report_spread=float(self.manipulation().spread),
        )

    def manipulation(self) -> Any:
        """How far fake reports can move the mean (:class:`deniable.Manipulation`), per fake report over ``N``.

        ``spread``: the range of one debiased report, ``(report high - report low) / b1``
        in original units (infinite for unbounded noise); ``input``: ``high - low``
        (a fake true value); ``output``: the highest debiased report less ``low``.
        """
        from deniable._manipulation import manipulation

        return manipulation(self)

    def _histogram(self, stat: MeanStat) -> HistogramEstimate | None:
        return None

    def variance(self, n: int, value: float | None = None) -> float:
        """Variance of the mean estimate from ``n`` reports (original units squared).

        ``value`` is every respondent's value; ``None`` gives the worst case
        over the range. With one value for everyone the values have no
        spread, so the variance is the same for both targets (for a
        population with spread, add its variance over ``n``).
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
            raise ValueError(f"n must be a positive int; got {n!r}")
        if value is None:
            unit = self._worst_unit_variance()
        else:
            unit = float(self._unit_variance(self._to_unit([value]))[0])
        return self._half**2 * unit / int(n)

    def _worst_unit_variance(self) -> float:
        return float(np.max(self._unit_variance(np.linspace(-1.0, 1.0, 513))))

    # --------------------------------------------------------------- audit
    @property
    def bounds(self) -> tuple[float, float]:
        """The declared range ``(low, high)``; its endpoints are the audit's neighbouring pair."""
        return (self.low, self.high)

    def audit_events(self, reports: Any, x: Any, other: Any) -> NDArray[np.int64]:
        """Four audit cells for :func:`deniable.audit`: below ``low``, the two halves of the range, above ``high``.

        For every mechanism here the outer cells carry the full ratio
        ``e^eps`` between the range's endpoints.
        """
        edges = np.array([self.low, self._mid, self.high])
        return np.searchsorted(edges, np.asarray(reports, dtype=float), side="right").astype(np.int64)

    def binned_events(self, bins: int = 8) -> tuple[Callable[..., NDArray[np.int64]], int]:
        """``(events, n_events)`` for :func:`deniable.audit` with ``bins`` slices of the range.

        Events are ``y < low``, ``bins`` equal slices of ``[low, high]`` and
        ``y > high``.
        """
        edges = np.linspace(self.low, self.high, bins + 1)

        def events(mechanism: Any, reports: Any, x: Any, other: Any) -> NDArray[np.int64]:
            return np.searchsorted(edges, np.asarray(reports, dtype=float), side="right").astype(np.int64)

        return events, bins + 2

    # ---------------------------------------------------------------- wire
    def _domain_json(self) -> list[float]:
        return [self.low, self.high]

    def _domain_key(self) -> tuple[float, float]:
        return self.bounds

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> NumericMechanism:
        if not isinstance(domain, (list, tuple)) or len(domain) != 2:
            raise ValueError(f"config field 'domain' must be [low, high] for {cls.__name__}; got {domain!r}")
        low, high = check_range(domain[0], domain[1], cls.__name__)
        return cls._build(low, high, params)

    def __repr__(self) -> str:
        return f"{self.name}(low={self.low:.6g}, high={self.high:.6g}, epsilon={self.epsilon:.6g})"
