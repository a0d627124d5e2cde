"""Numeric mechanisms: local DP for bounded real values (means and distributions).

Every mechanism takes a declared range ``(low, high)`` and **clamps** each
value into it before randomizing; clamping is part of the mechanism (it is
what bounds the sensitivity), so estimates are of the clamped values. The
clamped value is mapped to ``t = 2 (x - low) / (high - low) - 1`` in
``[-1, 1]`` (the units of MECHANISMS.md 1.11); reports are returned in the
original units.

How each mechanism samples, and why the stated epsilon holds for the actual
finite-precision sampler (see also :mod:`numeric_sampling`):

* :class:`Laplace` -- discrete Laplace on a lattice. The range is cut into
  ``N`` lattice steps (``32767 / (24 + eps)`` steps per noise scale
  ``(high-low)/eps``: over 1000 for ``eps <= 8``),
  the value is randomly rounded to a lattice point (unbiased), and integer
  noise ``Z`` with ``P(Z = z) = W[z] / 2**64`` is added, where ``W`` are the
  integers nearest a two-sided geometric with ratio ``r = exp(-eps/N)``;
  the output is clamped to ``24`` noise scales beyond the range (the
  table's two end entries hold the tail mass). Epsilon is the exact maximum
  over outputs and lattice inputs of the probability ratio of these
  integers, rounded up; no float is ever inverted (Mironov 2012). The clamp
  moves the mean by less than ``exp(-24)`` noise scales.
* :class:`Gaussian` -- the same lattice with discrete-Gaussian integer
  weights; ``sigma`` from the analytic Gaussian calibration (Balle & Wang
  2018) and ``delta`` recomputed from the integer table as the largest
  hockey-stick divergence ``sum_z max(0, P(z) - e^eps P(z - d))`` over
  lattice shifts ``d``.
* :class:`Duchi` -- reports ``±B`` with ``B = 2**32 / c``: with probability
  ``beta = c / 2**32`` (bit-sliced Bernoulli) the sign is ``+`` with
  probability ``(1 + t) / 2`` (a 64-bit threshold with 53 significant
  bits, so this is exact to ``2**-53``), otherwise it is a fair
  coin. So ``P(+ | t)`` lies in ``[(1-beta)/2, (1+beta)/2]`` for every
  threshold whatever its rounding: ``eps = ln((2**32 + c) / (2**32 - c))``
  exactly, and ``E[report] = t``.
* :class:`Piecewise` -- a discrete Piecewise Mechanism (Wang et al. 2019) on
  1024 output cells: a mixture of a uniform cell and a window of ``L`` cells
  whose start encodes ``t``, with the window's share chosen so the ratio of
  the integer probabilities is at most ``e^eps`` (:class:`SlidingWindow`).
  Reports are the cells mapped affinely so that ``E[report] = t``.
* :class:`Hybrid` -- Piecewise with probability ``1 - e^(-eps/2)``, else
  Duchi; pure Duchi for ``eps <= eps* = 0.6094``.
* :class:`SquareWave` -- the Square Wave mechanism (Li et al. 2020) on the
  same sliding-window sampler, for estimating the whole distribution by EM
  or EMS; its mean is estimated by inverting the (affine) report mean.

Randomness: ``rng=None`` (the default) reads ``os.urandom`` through
:mod:`deniable.randomness`; a seed or Generator is for simulation only. In
``privatize_many`` a comparison with a threshold reads one random byte and
more only on a tie (1 in 256 whatever the threshold), so a batch costs about
1.5-4 random bytes per value; ``privatize`` (one device report) does a fixed
amount of work. In Duchi and the window mechanisms every input-dependent
draw sits inside an input-independent mixture, so even the number of bytes
read reveals nothing beyond the bound above.

Estimates are :class:`~deniable.MeanEstimate`; aggregates are
:class:`MeanStat` (n, sum and sum of squares of the standardized reports,
plus cell counts for SquareWave), mergeable with ``+``.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

from deniable import privacy, randomness
from deniable.aggregates import MeanStat, Mergeable
from deniable.estimate import HistogramEstimate, MeanEstimate
from deniable.mechanisms.contract import Mechanism
from deniable.mechanisms.numeric_sampling import (
    TWO64,
    AliasTable,
    below,
    bits,
    calibrate_window,
    fixed_point,
    integer_weights,
    randomized_round,
    sliding_window,
)
from deniable.mechanisms.registry import register
from deniable.randomness import Source

__all__ = [
    "NumericMechanism",
    "MeanStat",
    "Laplace",
    "Gaussian",
    "Duchi",
    "Piecewise",
    "Hybrid",
    "SquareWave",
    "EPSILON_STAR",
    "analytic_gaussian_sigma",
    "gaussian_epsilon",
    "two_level_gaussian_mean",
    "em_reconstruct",
]

#: Hybrid mechanism threshold (Wang et al. 2019): pure Duchi at or below it.
EPSILON_STAR = math.log(
    (-5 + 2 * (6353 - 405 * math.sqrt(241)) ** (1 / 3) + 2 * (6353 + 405 * math.sqrt(241)) ** (1 / 3))
    / 27
)


# ----------------------------------------------------------------- validation
def _check_bound(value: object, name: str, owner: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a finite real number for {owner}; got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite real number for {owner}; got {value!r}")
    return v


def check_range(low: object, high: object, owner: str) -> tuple[float, float]:
    """Validate a declared range: finite reals with ``low < high``."""
    lo = _check_bound(low, "low", owner)
    hi = _check_bound(high, "high", owner)
    if not lo < hi:
        raise ValueError(f"low must be < high for {owner}; got low={low!r}, high={high!r}")
    if not math.isfinite(hi - lo):
        raise ValueError(f"high - low must be finite for {owner}; got low={low!r}, high={high!r}")
    return lo, hi


def _as_floats(values: Any, what: str, owner: str) -> NDArray[np.float64]:
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{what} for {owner} must be numbers; got {values!r}")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        items = list(values) if not np.isscalar(values) else [values]
        bad = next((v for v in items if not _is_number(v)), values)
        raise ValueError(f"{what} for {owner} must be real numbers; got {bad!r}") from None
    if arr.dtype != np.float64 or arr.ndim != 1:
        raise ValueError(f"{what} for {owner} must be a 1-D sequence of numbers; got shape {arr.shape}")
    return arr


def _is_number(v: object) -> bool:
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, float, np.integer, np.floating))


def _finite(values: Any, owner: str) -> NDArray[np.float64]:
    """Input values as floats; ValueError naming the first that is NaN or infinite.

    A finite sum proves every value finite in one pass without a temporary;
    only when it is not are the values checked one by one (the sum may also
    overflow).
    """
    x = _as_floats(values, "values", owner)
    if not math.isfinite(float(np.add.reduce(x))):
        finite = np.isfinite(x)
        if not finite.all():
            i, v = _first_bad(x, finite)
            raise ValueError(f"values for {owner} must be finite numbers; got {v!r} at index {i}")
    return x


def _clamped(values: Any, low: float, high: float, owner: str) -> NDArray[np.float64]:
    """Finite input values clamped to the range."""
    return np.clip(_finite(values, owner), low, high)


def _first_bad(arr: NDArray[np.float64], ok: NDArray[np.bool_]) -> tuple[int, float]:
    i = int(np.argmin(ok))
    return i, float(arr[i])


# --------------------------------------------------------------------- base
_CHUNK = 1 << 16  # values randomized per vectorized step of privatize_many

class NumericMechanism(Mechanism):
    """A randomizer for values in ``[low, high]`` and its unbiased mean estimator.

    Subclasses sample in ``t``-units (``[-1, 1]``) and supply the per-user
    variance of the debiased report for a given ``t``. A report ``y`` is in
    original units; its standardized form is ``y_t = (y - mid) / half``, and
    the debiased estimate of ``t`` is ``(y_t - b0) / b1`` (``b0 = 0, b1 = 1``
    for the mechanisms whose reports are unbiased).
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
        return self._unit(_finite(values, self.name))

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
        x = _finite(values, self.name)
        source = randomness.resolve(rng)
        out = np.empty(x.size)
        # Chunks keep every temporary in cache and let the allocator reuse it.
        for start in range(0, x.size, _CHUNK):
            stop = start + _CHUNK
            out[start:stop] = self._sample(self._unit(x[start:stop]), source, True)
        return out

    # ------------------------------------------------------------ reports
    def _validate(self, reports: Any) -> NDArray[np.float64]:
        """Reports as a float64 array; ValueError naming the first that cannot occur."""
        y = _as_floats(reports, "reports", self.name)
        lo, hi = self.report_range
        slack = 1e-9 * (hi - lo)
        ok = np.isfinite(y) & (y >= lo - slack) & (y <= hi + slack)
        if not ok.all():
            i, v = _first_bad(y, ok)
            raise ValueError(
                f"report {v!r} at index {i} is not a possible {self.name} report "
                f"(finite, in [{lo:.17g}, {hi:.17g}])"
            )
        on = self._possible(y)
        if not on.all():
            i, v = _first_bad(y, on)
            raise ValueError(
                f"report {v!r} at index {i} is not a possible {self.name} report "
                f"(not one of its output values)"
            )
        return y

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Whether each in-range report is one of the mechanism's output values."""
        return np.ones(y.shape, dtype=np.bool_)

    @staticmethod
    def _in_table(y: NDArray[np.float64], table: NDArray[np.float64]) -> NDArray[np.bool_]:
        at = np.clip(np.searchsorted(table, y), 0, table.size - 1)
        found: NDArray[np.bool_] = table[at] == y
        return found

    def _checked_to_json(self, checked: NDArray[np.float64]) -> list[Any]:
        return [float(v) for v in checked]

    def _reports_from_json(self, items: list[Any]) -> NDArray[np.float64]:
        for i, v in enumerate(items):
            if not _is_number(v):
                raise ValueError(f"report {v!r} at index {i} is not a number ({self.name})")
        return self._validate(items)

    # ---------------------------------------------------------- aggregate
    def _counts(self, y: NDArray[np.float64]) -> NDArray[np.int64] | None:
        """Per-output-cell counts of validated reports, where the mechanism keeps them."""
        return None

    def aggregate(self, reports: Any) -> MeanStat:
        """Mergeable sufficient statistic of a batch of reports."""
        stat: MeanStat = self._aggregate_checked(self._checked(reports))
        return stat

    def _aggregate_checked(self, y: NDArray[np.float64]) -> MeanStat:
        yt = (y - self._mid) / self._half
        return MeanStat(
            self.fingerprint, int(y.size), float(yt.sum()), float(np.dot(yt, yt)), self._counts(y)
        )

    # ----------------------------------------------------------- estimate
    @cached_property
    def _coefficients(self) -> tuple[float, float, float]:
        """``(v0, v1, v2)`` with unit variance ``v0 + v1 t + v2 t^2`` through t = -1, 0, 1."""
        vm, v0, vp = self._unit_variance(np.array([-1.0, 0.0, 1.0]))
        return float(v0), float((vp - vm) / 2), float((vp + vm) / 2 - v0)

    def estimate(self, reports: Any) -> MeanEstimate:
        """Unbiased mean of the clamped values from reports (a :class:`~deniable.MeanEstimate`)."""
        est: MeanEstimate = self.estimate_from(self.aggregate(reports))
        return est

    def estimate_from(self, stat: MeanStat) -> MeanEstimate:
        """Mean estimate from a (merged) aggregate.

        ``mean = mid + half (mean(y_t) - b0) / b1``. The formula standard
        error averages the per-user variance ``v0 + v1 t + v2 t^2`` over the
        respondents: the mean of ``t`` is the estimate itself and the mean of
        ``t^2`` is taken as ``mean^2`` when ``v2 <= 0`` (an upper bound by
        Jensen) and, when ``v2 > 0``, from the reports' second moment
        ``E[t_hat^2] = v(t) + t^2``, kept within ``[mean^2, 1]``.
        """
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
        return MeanEstimate(
            mechanism=self.name,
            epsilon=self.epsilon,
            delta=self.delta,
            mean=self._mid + self._half * t_bar,
            std_error=self._half * math.sqrt(unit_var / n),
            sample_std_error=self._half * math.sqrt(sample_var / n),
            n=n,
            low=self.low,
            high=self.high,
            histogram=self._histogram(stat),
        )

    def _histogram(self, stat: MeanStat) -> HistogramEstimate | None:
        return None

    def variance(self, n: int, value: float | None = None) -> float:
        """Variance of the mean estimate from ``n`` reports (original units squared).

        ``value`` is every respondent's value; ``None`` gives the worst case
        over the range.
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
    def domain(self) -> tuple[float, float]:
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
        return (self.low, self.high)

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> NumericMechanism:
        if not isinstance(domain, (list, tuple)) or len(domain) != 2:
            raise ValueError(f"config field 'domain' must be [low, high] for {cls.__name__}; got {domain!r}")
        low, high = check_range(domain[0], domain[1], cls.__name__)
        return cls._build(low, high, params)

    def __repr__(self) -> str:
        return f"{self.name}(low={self.low:.6g}, high={self.high:.6g}, epsilon={self.epsilon:.6g})"


def _requested(params: dict[str, Any], key: str, owner: str) -> float:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"config params.{key} must be a number for {owner}; got {value!r}")
    return float(value)


# ------------------------------------------------------------- lattice noise
_LatticeT = TypeVar("_LatticeT", bound="_LatticeMechanism")
_TABLE_BITS = 16
_LAPLACE_TAIL = 24.0  # noise scales kept beyond the range before clamping
_GAUSS_BITS = 14
_GAUSS_TAIL = 8.0  # standard deviations


@dataclass(frozen=True)
class _Lattice:
    """Integer noise ``Z`` on ``[-K, K]`` for a range of ``N`` lattice steps."""

    steps: int  # N
    K: int
    weights: tuple[int, ...]  # 2K + 1 integers summing to 2**64
    table: AliasTable
    epsilon: float
    delta: float | None
    noise_variance: float  # Var Z in steps^2

    @property
    def probabilities(self) -> NDArray[np.float64]:
        return _probabilities(self.weights)

    def sample(self, n: int, source: Source, lazy: bool) -> NDArray[np.int32]:
        return self.table.sample(n, source, lazy)

    def pmf(self, position: int) -> NDArray[np.float64]:
        """``P(y = j)`` for ``j`` in ``[N - K, K]`` (outputs of ``clamp(i + Z)``), input ``i``."""
        lo_y, hi_y = self.steps - self.K, self.K
        y = np.clip(position + np.arange(-self.K, self.K + 1), lo_y, hi_y)
        pmf: NDArray[np.float64] = np.bincount(
            y - lo_y, weights=self.probabilities, minlength=hi_y - lo_y + 1
        ).astype(np.float64)
        return pmf


@lru_cache(maxsize=8)
def _probabilities(weights: tuple[int, ...]) -> NDArray[np.float64]:
    return np.array([w / TWO64 for w in weights])


def _finish(weights: list[int], K: int) -> tuple[AliasTable, float]:
    """Alias table over ``z = -K..K`` and ``Var Z``."""
    z = np.arange(-K, K + 1, dtype=np.float64)
    p = np.array(weights, dtype=np.float64) / 2.0**64
    bits_needed = _TABLE_BITS if 2 * K + 1 > 1 << _GAUSS_BITS else _GAUSS_BITS
    return AliasTable(weights, bits_needed, offset=K), float(np.dot(p, z * z))


def _pure_epsilon(weights: list[int], N: int, K: int) -> float:
    """Exact max over outputs ``y`` and lattice inputs ``i, i'`` of ``P(y|i) / P(y|i')``.

    Interior outputs see ``W[y - i]`` for ``i`` in ``[0, N]``; ``W`` is
    unimodal on ``(-K, K)`` (checked), so the largest is the entry nearest 0
    and the smallest an end of the window. The clamped end outputs see tail
    sums, monotone in ``i``. Candidates are ranked in floats and the top
    ones evaluated exactly as integer fractions.
    """
    w = np.array([float(v) for v in weights])
    inner = w[1:-1]
    half = inner.size // 2
    if not (np.all(np.diff(inner[: half + 1]) >= 0) and np.all(np.diff(inner[half:]) <= 0)):
        raise AssertionError("lattice weights are not unimodal")
    tail_steps = K - N
    y = np.arange(-tail_steps + 1, N + tail_steps)
    peak = np.clip(0, y - N, y) + K
    low_end = np.minimum(w[y - N + K], w[y + K])
    ratio = w[peak] / low_end
    best = Fraction(0)
    for j in np.flatnonzero(ratio >= ratio.max() * (1 - 1e-9)):
        yy = int(y[j])
        lo_idx = yy - N + K if w[yy - N + K] <= w[yy + K] else yy + K
        best = max(best, Fraction(weights[int(peak[j])], weights[lo_idx]))
    edge = Fraction(sum(weights[: K - tail_steps + 1]), weights[0])  # y = -tail: i = 0 vs i = N
    return privacy.ln_up(max(best, edge))


@lru_cache(maxsize=8)
def _laplace_lattice(epsilon: float) -> _Lattice:
    """Discrete Laplace on ``N`` steps per range, realising at most ``epsilon`` exactly."""
    N = max(1, int(((1 << (_TABLE_BITS - 1)) - 1) / (1 + _LAPLACE_TAIL / epsilon)))
    target = epsilon
    for _ in range(20):
        r = math.exp(-target / N)
        K = N + math.ceil(_LAPLACE_TAIL * N / epsilon)
        z = np.abs(np.arange(-K, K + 1, dtype=np.float64))
        p = (1 - r) / (1 + r) * np.exp(-target / N * z)
        p[0] = p[-1] = math.exp(-target / N * K) / (1 + r)  # tails |z| >= K lumped at the ends
        weights = integer_weights(p, K)
        realised = _pure_epsilon(weights, N, K)
        if realised <= epsilon:
            table, var = _finish(weights, K)
            return _Lattice(N, K, tuple(weights), table, realised, None, var)
        target -= (realised - epsilon) + 1e-12 * epsilon
    raise ValueError(f"could not realise epsilon={epsilon} on the Laplace lattice")


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest ``sigma`` with ``Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D) <= delta``.

    The analytic Gaussian mechanism of Balle & Wang (ICML 2018), valid for
    every ``epsilon > 0``; ``D`` is the L2 sensitivity.
    """
    eps = privacy.check_epsilon(epsilon, owner="analytic_gaussian_sigma")
    d = _check_delta(delta, "analytic_gaussian_sigma")
    return sensitivity * _unit_sigma(eps, d)


def _gauss_delta(eps: float, sigma: float) -> float:
    a = 1 / (2 * sigma) - eps * sigma
    b = -1 / (2 * sigma) - eps * sigma
    return float(special.ndtr(a) - math.exp(eps + special.log_ndtr(b)))


def _unit_sigma(eps: float, delta: float) -> float:
    f = lambda log_s: _gauss_delta(eps, math.exp(log_s)) - delta  # noqa: E731
    return math.exp(optimize.brentq(f, math.log(1e-8), math.log(1e8), xtol=1e-14, rtol=1e-14))


def _check_delta(delta: object, owner: str) -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float, np.floating)):
        raise TypeError(f"delta must be a number in (0, 1) for {owner}; got {delta!r}")
    d = float(delta)
    if not 0 < d < 1:
        raise ValueError(f"delta must be in (0, 1) for {owner}; got {delta!r}")
    return d


def _approx_delta(weights: list[int], N: int, eps: float) -> float:
    """Largest hockey-stick divergence ``sum_z max(0, P(z) - e^eps P(z - d))`` over shifts.

    Computed for ``d = N`` (the worst case for Gaussian noise, whose privacy
    loss grows with the shift) and 63 other shifts as a check; the output
    clamp is post-processing and can only lower it. Rounded up by a relative
    1e-9 for float summation.
    """
    p = np.array([float(v) for v in weights]) / 2.0**64
    growth = math.exp(eps)
    shifts = sorted({N, *np.linspace(1, N, 64).astype(int).tolist()})
    worst = 0.0
    for d in shifts:
        excess = p.copy()
        excess[d:] -= growth * p[:-d]
        worst = max(worst, float(np.sum(np.maximum(excess, 0.0))))
    return worst * (1 + 1e-9)


@lru_cache(maxsize=8)
def _gaussian_lattice(unit_sigma: float, epsilon: float, delta: float) -> _Lattice:
    cap = (1 << (_GAUSS_BITS - 1)) - 1
    sigma = unit_sigma  # in units of the range (sensitivity 1)
    for _ in range(60):
        per_sigma = cap / (1 / sigma + _GAUSS_TAIL)
        N = max(1, round(per_sigma / sigma))
        s_steps = sigma * N
        K = N + math.ceil(_GAUSS_TAIL * s_steps)
        weights = _gaussian_weights(s_steps, K)
        realised = _approx_delta(weights, N, epsilon)
        if realised <= delta:
            table, var = _finish(weights, K)
            return _Lattice(N, K, tuple(weights), table, epsilon, realised, var)
        sigma *= 1.002
    raise ValueError(
        f"could not realise (epsilon={epsilon}, delta={delta}) on the Gaussian lattice; its "
        "64-bit weights reach about 9 sigma, which supports epsilon up to about 20"
    )


def _gaussian_weights(s_steps: float, K: int) -> list[int]:
    """Discrete Gaussian (sd ``s_steps``) on ``[-K, K]``, tails lumped at the ends, as integers."""
    extra = math.ceil(10 * s_steps)
    z = np.arange(-K - extra, K + extra + 1, dtype=np.float64)
    dens = np.exp(-0.5 * (z / s_steps) ** 2)
    dens /= dens.sum()
    p = dens[extra:-extra].copy()
    p[0] += dens[:extra].sum()
    p[-1] += dens[-extra:].sum()
    return integer_weights(p, K)


_NOISE_STEPS = 256  # lattice steps per standard deviation of the composition example


@lru_cache(maxsize=1)
def _unit_gaussian_noise() -> tuple[AliasTable, float]:
    """Discrete Gaussian with sd ``_NOISE_STEPS`` lattice steps: ``(table, variance)``."""
    K = math.ceil(_GAUSS_TAIL * _NOISE_STEPS)
    return _finish(_gaussian_weights(_NOISE_STEPS, K), K)


def gaussian_epsilon(unit_sigma: float, delta: float) -> float:
    """Analytic-Gaussian epsilon of noise ``unit_sigma`` (in units of the sensitivity) at ``delta``.

    ``math.inf`` when even epsilon = 700 leaves more than ``delta``.
    """
    if _gauss_delta(700.0, unit_sigma) > delta:
        return math.inf
    return float(optimize.brentq(lambda e: _gauss_delta(e, unit_sigma) - delta, 1e-12, 700.0, xtol=1e-13))


def _same_lattice(m: _LatticeT, params: dict[str, Any]) -> _LatticeT:
    """``m`` if its lattice has the configured number of steps (else the config is foreign)."""
    if params.get("lattice_steps") != m._lattice.steps:
        raise ValueError(
            f"config params.lattice_steps is {params.get('lattice_steps')!r} but this "
            f"{m.name} builds {m._lattice.steps} steps from the same parameters"
        )
    return m


class _LatticeMechanism(NumericMechanism):
    """Shared sampler of Laplace and Gaussian: random rounding, integer noise, clamp."""

    _lattice: _Lattice

    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        lat = self._lattice
        N = lat.steps
        t += 1.0
        t *= N / 2
        y = randomized_round(t, source, lazy, overwrite=True)
        y += lat.sample(t.size, source, lazy)
        np.clip(y, N - lat.K, lat.K, out=y)
        return self._values(y)

    def _values(self, y: NDArray[np.integer]) -> NDArray[np.float64]:
        """Reports for lattice outputs ``y``: ``low + y (high - low) / N``."""
        out = np.multiply(y, 2.0 * self._half / self._lattice.steps, dtype=np.float64)
        out += self.low
        return out

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        steps = (y - self.low) / self.step
        on: NDArray[np.bool_] = np.abs(steps - np.rint(steps)) <= 1e-3
        return on

    def sample_noise(self, n: int, rng: randomness.RNGLike = None) -> NDArray[np.float64]:
        """``n`` draws of the mechanism's lattice noise alone, in original units."""
        z = self._lattice.sample(int(n), randomness.resolve(rng), True)
        return np.multiply(z, self.step, dtype=np.float64)

    @property
    def report_range(self) -> tuple[float, float]:
        lat = self._lattice
        span = self._values(np.array([lat.steps - lat.K, lat.K]))
        return float(span[0]), float(span[1])

    @property
    def report_bits(self) -> int:
        return int(2 * self._lattice.K - self._lattice.steps).bit_length()

    @property
    def step(self) -> float:
        """Lattice step in original units."""
        return 2.0 * self._half / self._lattice.steps

    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        lat = self._lattice
        pos = (np.asarray(t, dtype=float) + 1.0) * (lat.steps / 2)
        frac = pos - np.floor(pos)
        return (lat.noise_variance + frac * (1 - frac)) * (2.0 / lat.steps) ** 2

    def _worst_unit_variance(self) -> float:
        lat = self._lattice
        return (lat.noise_variance + 0.25) * (2.0 / lat.steps) ** 2

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        lat = self._lattice
        pos = float((self._to_unit([value])[0] + 1.0) * (lat.steps / 2))
        base = math.floor(pos)
        frac = pos - base
        probs = (1 - frac) * lat.pmf(base)
        if frac > 0:
            probs = probs + frac * lat.pmf(base + 1)
        return self._values(np.arange(lat.steps - lat.K, lat.K + 1)), probs


@register(kind="numeric", candidate=True, required={"epsilon"})
class Laplace(_LatticeMechanism):
    """Laplace noise for values clamped to ``[low, high]``: ``epsilon``-LDP.

    Reports are ``x + Lap((high - low) / epsilon)`` realised on a lattice of
    over 1000 steps per noise scale for ``epsilon <= 8`` (see the module docstring): the clamped
    value is randomly rounded to the lattice (unbiased, variance at most a
    quarter step squared), integer noise from an exact table is added, and
    the result is clamped 24 noise scales beyond the range. ``epsilon`` is
    computed from the table's integers and never exceeds the request.
    Unbiased up to the far clamp (under ``exp(-24)`` noise scales); per-user
    variance ``2 ((high - low) / epsilon)^2`` plus the rounding term.

    >>> m = Laplace(0, 100, epsilon=1.0)
    >>> m.epsilon <= 1.0
    True
    """

    wire_id = "laplace"

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        self._requested = privacy.check_epsilon(epsilon, owner="Laplace")
        self._lattice = _laplace_lattice(self._requested)

    @property
    def epsilon(self) -> float:
        return self._lattice.epsilon

    @property
    def scale(self) -> float:
        """Noise scale ``(high - low) / epsilon`` in original units."""
        return 2 * self._half / self._requested

    def _params(self) -> dict[str, Any]:
        return {"requested_epsilon": self._requested, "lattice_steps": self._lattice.steps}

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Laplace:
        m = cls(low, high, epsilon=_requested(params, "requested_epsilon", cls.__name__))
        return _same_lattice(m, params)


@register(kind="numeric", required={"epsilon", "delta"})
class Gaussian(_LatticeMechanism):
    """Gaussian noise for values clamped to ``[low, high]``: ``(epsilon, delta)``-LDP.

    ``sigma`` is the analytic Gaussian calibration (Balle & Wang 2018) for
    sensitivity ``high - low``; the noise is a discrete Gaussian on a
    lattice of 700 or more steps per ``sigma`` with exact integer
    probabilities, and :attr:`delta` is recomputed from those integers (it
    never exceeds the request). Unbiased; per-user variance ``sigma^2`` plus
    the rounding term.
    """

    wire_id = "gaussian"

    def __init__(self, low: float, high: float, *, epsilon: float, delta: float) -> None:
        super().__init__(low, high)
        self._requested = privacy.check_epsilon(epsilon, owner="Gaussian")
        self._requested_delta = _check_delta(delta, "Gaussian")
        unit = _unit_sigma(self._requested, self._requested_delta)
        self._lattice = _gaussian_lattice(unit, self._requested, self._requested_delta)

    @classmethod
    def from_sigma(cls, low: float, high: float, *, sigma: float, delta: float) -> Gaussian:
        """The Gaussian mechanism whose noise has (about) standard deviation ``sigma``.

        ``epsilon`` is the analytic-Gaussian epsilon of ``sigma`` at ``delta``.
        """
        lo, hi = check_range(low, high, cls.__name__)
        s = _check_bound(sigma, "sigma", cls.__name__)
        d = _check_delta(delta, cls.__name__)
        if s <= 0:
            raise ValueError(f"sigma must be positive for Gaussian; got {sigma!r}")
        eps = gaussian_epsilon(s / (hi - lo), d)
        if not math.isfinite(eps):
            raise ValueError(f"sigma={sigma!r} is too small to give any epsilon at delta={delta!r}")
        return cls(lo, hi, epsilon=eps, delta=d)

    @property
    def epsilon(self) -> float:
        return self._lattice.epsilon

    @property
    def delta(self) -> float:
        assert self._lattice.delta is not None
        return self._lattice.delta

    @property
    def sigma(self) -> float:
        """Standard deviation of the noise in original units."""
        return math.sqrt(self._lattice.noise_variance) * self.step

    def _params(self) -> dict[str, Any]:
        return {
            "requested_epsilon": self._requested,
            "requested_delta": self._requested_delta,
            "lattice_steps": self._lattice.steps,
        }

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Gaussian:
        m = cls(
            low, high,
            epsilon=_requested(params, "requested_epsilon", cls.__name__),
            delta=_requested(params, "requested_delta", cls.__name__),
        )
        return _same_lattice(m, params)

    def __repr__(self) -> str:
        return (
            f"Gaussian(low={self.low:.6g}, high={self.high:.6g}, epsilon={self.epsilon:.6g}, "
            f"delta={self.delta:.3g}, sigma={self.sigma:.6g})"
        )


# ---------------------------------------------------------------------- Duchi
_BETA_BITS = 32


@register(kind="numeric", candidate=True, required={"epsilon"})
class Duchi(NumericMechanism):
    """Duchi et al.'s one-bit mechanism (FOCS 2013) for values in ``[low, high]``: ``epsilon``-LDP.

    Reports ``mid ± half B`` with ``B = (e^eps + 1) / (e^eps - 1)`` and
    ``P(+B) = 1/2 + t (e^eps - 1) / (2 (e^eps + 1))``, sampled as: with
    probability ``beta = c / 2**32`` (``beta = tanh(eps / 2)`` rounded down)
    the sign is ``+`` with probability ``(1 + t) / 2`` (a 64-bit threshold),
    otherwise a fair coin; ``B = 1 / beta``. ``epsilon = ln((2**32 + c) /
    (2**32 - c))`` holds exactly whatever the threshold's rounding, and
    ``E[report] = t`` (in ``t``-units). Per-user variance ``B^2 - t^2``.
    """

    wire_id = "duchi"

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        eps = privacy.check_epsilon(epsilon, owner="Duchi")
        c = min((1 << _BETA_BITS) - 1, int(math.tanh(eps / 2) * 2.0**_BETA_BITS))
        while c > 0 and _duchi_epsilon(c) > eps:
            c -= 1
        if c == 0:
            raise ValueError(f"epsilon={epsilon!r} is too small for Duchi (below 2**-31)")
        self._set(c)

    def _set(self, c: int) -> None:
        self._c = c
        self._epsilon = _duchi_epsilon(c)
        self._B = 2.0**_BETA_BITS / c

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def report_bits(self) -> int:
        return 1

    @property
    def beta(self) -> Fraction:
        return Fraction(self._c, 1 << _BETA_BITS)

    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        n = t.size
        t += 1.0
        t *= 0.5
        follow = below(fixed_point(t, out=t), source, lazy)
        informative = bits(self._c, _BETA_BITS, n, source)
        fair = np.unpackbits(np.frombuffer(source.random_bytes((n + 7) // 8), np.uint8), count=n)
        follow &= informative
        follow |= fair.view(np.bool_) & ~informative
        low, high = self.report_range
        return np.where(follow, high, low)

    def _sample_one(self, t: float, source: Source) -> float:
        # the same draws as the batch path, in Python integers
        threshold = min(int((t + 1.0) * 0.5 * 2.0**53), (1 << 53) - 1) << 11
        follow = randomness.scalar_below(TWO64, source) < threshold
        informative = randomness.scalar_below(1 << _BETA_BITS, source) < self._c
        fair = randomness.scalar_below(2, source) == 1
        low, high = self.report_range
        return high if (follow if informative else fair) else low

    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        return self._B**2 - np.asarray(t, dtype=float) ** 2

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        return self._in_table(y, np.array(self.report_range))

    @property
    def report_range(self) -> tuple[float, float]:
        lo, hi = self._from_unit(np.array([-self._B, self._B]))
        return float(lo), float(hi)

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        t = self._to_unit([value])
        follow = int(fixed_point((t + 1.0) * 0.5)[0]) / TWO64
        beta = float(self.beta)
        plus = beta * follow + (1 - beta) / 2
        return np.array(self.report_range), np.array([1 - plus, plus])

    def _params(self) -> dict[str, Any]:
        return {"beta_numerator": self._c, "beta_bits": _BETA_BITS}

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Duchi:
        c, width = int(params["beta_numerator"]), int(params["beta_bits"])
        if width != _BETA_BITS or not 0 < c < 1 << _BETA_BITS:
            raise ValueError(f"Duchi params need beta_bits=32 and 0 < beta_numerator < 2**32; got {params!r}")
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._set(c)
        return self


def _duchi_epsilon(c: int) -> float:
    return privacy.ln_up(Fraction((1 << _BETA_BITS) + c, (1 << _BETA_BITS) - c))


# ------------------------------------------------------------ sliding windows
def _odd(x: float, cells: int) -> int:
    """The odd integer nearest ``x``, within ``[1, cells - 1]``."""
    L = 2 * int(math.floor(x / 2)) + 1
    if x - L > 1:
        L += 2
    return max(1, min(L, cells - 1 if (cells - 1) % 2 else cells - 2))


class _WindowMechanism(NumericMechanism):
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


# ------------------------------------------------------------------ Piecewise
@register(kind="numeric", candidate=True, required={"epsilon"})
class Piecewise(_WindowMechanism):
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
    """

    wire_id = "piecewise"
    CELLS = 1024
    BITS = 16

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        eps = privacy.check_epsilon(epsilon, owner="Piecewise")
        G = self.CELLS
        L = _odd(G / (math.exp(eps / 2) + 1), G)
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
        self._cell_values = (np.arange(w.G) - centre) / slope

    def _params(self) -> dict[str, Any]:
        return self._window_params()

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Piecewise:
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._set_window(params)
        if self._win.k != cls.BITS:
            raise ValueError(f"Piecewise params need bits={cls.BITS}; got {params!r}")
        self._finish()
        return self


# ---------------------------------------------------------------- SquareWave
def square_wave_b(epsilon: float) -> float:
    """Li et al.'s half-width ``b = (eps e^eps - e^eps + 1) / (2 e^eps (e^eps - 1 - eps))``."""
    e = math.exp(epsilon)
    return (epsilon * e - e + 1) / (2 * e * (math.expm1(epsilon) - epsilon))


@register(kind="numeric", required={"epsilon"}, optional={"bins"})
class SquareWave(_WindowMechanism):
    """The Square Wave mechanism (Z. Li et al., SIGMOD 2020), discretized: ``epsilon``-LDP.

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
    """

    wire_id = "square-wave"
    INPUT_CELLS = 1024
    BITS = 32

    def __init__(self, low: float, high: float, *, epsilon: float, bins: int | None = 1024) -> None:
        super().__init__(low, high)
        eps = privacy.check_epsilon(epsilon, owner="SquareWave")
        R = self.INPUT_CELLS
        L = _odd(2 * square_wave_b(eps) * R, 4 * R)
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

    def _counts(self, y: NDArray[np.float64]) -> NDArray[np.int64]:
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
            stat.counts is None
            or stat.fingerprint != self.fingerprint
            or stat.counts.shape != (self._win.G,)
            or (stat.counts < 0).any()
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
            stat.counts, window=w.L, input_cells=w.G - w.L, bins=d,
            uniform_share=float(w.gamma), uniform_pmf=w.uniform_pmf,
            smooth=_check_method(method), tolerance=tolerance, max_iterations=max_iterations,
        )
        edges = self.low + (self.high - self.low) * np.linspace(0.0, 1.0, d + 1)
        return HistogramEstimate(edges, theta, method, iterations, converged)

    def _params(self) -> dict[str, Any]:
        return {**self._window_params(), "bins": self.bins}

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> SquareWave:
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._set_window(params)
        if self._win.k != cls.BITS or self._win.G - self._win.L != cls.INPUT_CELLS:
            raise ValueError(f"SquareWave params need bits=32 and cells - window = 1024; got {params!r}")
        self._bins = self._check_bins(params.get("bins", 1024))
        self._finish()
        return self


def _check_method(method: str) -> bool:
    if method not in ("ems", "em"):
        raise ValueError(f"method must be 'ems' or 'em'; got {method!r}")
    return method == "ems"


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


# -------------------------------------------------------------------- Hybrid
@register(kind="numeric", candidate=True, required={"epsilon"})
class Hybrid(NumericMechanism):
    """The Hybrid Mechanism (N. Wang et al., ICDE 2019): ``epsilon``-LDP.

    With probability ``alpha = 1 - e^(-eps/2)`` (a 32-bit dyadic rational)
    report through :class:`Piecewise`, otherwise through :class:`Duchi`, both
    at ``epsilon``; for ``epsilon <= EPSILON_STAR = 0.6094`` only Duchi.
    The coin does not depend on the value, so the mixture is
    ``max(eps_PM, eps_Duchi)``-LDP; both parts are unbiased, and the
    per-user variance is ``alpha Var_PM(t) + (1 - alpha) Var_Duchi(t)``
    (constant in ``t`` above ``eps*``, MECHANISMS.md 1.11).
    """

    wire_id = "hybrid"

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        eps = privacy.check_epsilon(epsilon, owner="Hybrid")
        self._duchi = Duchi(low, high, epsilon=eps)
        if eps > EPSILON_STAR:
            self._pm: Piecewise | None = Piecewise(low, high, epsilon=eps)
            self._alpha_num = min((1 << 32) - 1, round(-math.expm1(-eps / 2) * 2**32))
        else:
            self._pm, self._alpha_num = None, 0

    @property
    def alpha(self) -> Fraction:
        return Fraction(self._alpha_num, 1 << 32)

    @property
    def report_bits(self) -> int:
        return self._pm.report_bits + 1 if self._pm is not None else 1

    @property
    def epsilon(self) -> float:
        return max(self._duchi.epsilon, self._pm.epsilon if self._pm else 0.0)

    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        if self._pm is None:
            return self._duchi._sample(t, source, lazy)
        use_pm = bits(self._alpha_num, 32, t.size, source)
        out = np.empty(t.size)
        out[use_pm] = self._pm._sample(t[use_pm], source, lazy)
        out[~use_pm] = self._duchi._sample(t[~use_pm], source, lazy)
        return out

    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        a = float(self.alpha)
        v = (1 - a) * self._duchi._unit_variance(t)
        return v + a * self._pm._unit_variance(t) if self._pm is not None else v

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        on = self._duchi._possible(y)
        return on | self._pm._possible(y) if self._pm is not None else on

    @property
    def report_range(self) -> tuple[float, float]:
        lo, hi = self._duchi.report_range
        if self._pm is not None:
            plo, phi = self._pm.report_range
            lo, hi = min(lo, plo), max(hi, phi)
        return lo, hi

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        ds, dp = self._duchi.report_distribution(value)
        if self._pm is None:
            return ds, dp
        ps, pp = self._pm.report_distribution(value)
        a = float(self.alpha)
        support = np.concatenate([ds, ps])
        probs = np.concatenate([(1 - a) * dp, a * pp])
        order = np.argsort(support, kind="stable")
        return support[order], probs[order]

    def _params(self) -> dict[str, Any]:
        return {
            "duchi": self._duchi._params(),
            "piecewise": self._pm._params() if self._pm is not None else None,
            "piecewise_numerator": self._alpha_num,
        }

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Hybrid:
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._duchi = Duchi._build(low, high, params["duchi"])
        pm = params["piecewise"]
        self._pm = Piecewise._build(low, high, pm) if pm is not None else None
        self._alpha_num = int(params["piecewise_numerator"])
        if (self._pm is None) != (self._alpha_num == 0) or not 0 <= self._alpha_num < 1 << 32:
            raise ValueError(f"Hybrid params are inconsistent: {params!r}")
        return self


# --------------------------------------------------------- composing noise
def two_level_gaussian_mean(
    values: Any, low: float, high: float, *, sigma1: float = 1.0, sigma2: float = 1.0,
    delta: float = 1e-6, rng: randomness.RNGLike = None,
) -> MeanEstimate:
    """The seed's two-level construction: Gaussian noise added twice, then the mean.

    Level 1 (the device) clamps ``x`` to ``[low, high]``, randomly rounds it
    to a lattice of step ``c1 = sigma1 / 256`` and adds discrete Gaussian
    noise of standard deviation ``sigma1`` (exact integer sampling):
    ``y1 = c1 (round(x / c1) + Z1)``. Level 2 (e.g. a relay, before anything
    is stored) adds independent noise of standard deviation ``sigma2`` the
    same way: ``y2 = y1 + c2 Z2``. Both noises and the rounding have mean 0,
    so ``mean(y2)`` is unbiased for the mean of the clamped values, with
    fixed-population variance ``(sigma1^2 + sigma2^2 + rounding) / n``.

    Composing noise: ``y2`` alone is (for continuous noise) the Gaussian
    mechanism with ``sigma = sqrt(sigma1^2 + sigma2^2)``; the estimate's
    ``epsilon`` is that analytic-Gaussian epsilon at ``delta`` for
    sensitivity ``high - low`` (``inf`` when the noise is too small to give
    any). With small ``sigma`` this is an accuracy demonstration, not a
    privacy guarantee; use :class:`Gaussian` to calibrate noise to epsilon.

    With ``10**6`` values from N(42, 10), ``sigma1 = sigma2 = 1`` and the range
    ``[-60, 140]``, the mean is within 0.05 of 42.
    """
    owner = "two_level_gaussian_mean"
    lo, hi = check_range(low, high, owner)
    d = _check_delta(delta, owner)
    sigmas = [_check_bound(s, name, owner) for name, s in (("sigma1", sigma1), ("sigma2", sigma2))]
    if min(sigmas) <= 0:
        raise ValueError(f"sigma1 and sigma2 must be positive for {owner}; got {sigmas}")
    x = _clamped(values, lo, hi, owner)
    n = x.size
    if n < 2:
        raise ValueError(f"{owner} needs at least 2 values; got {n}")
    source = randomness.resolve(rng)
    table, unit_var = _unit_gaussian_noise()
    c1, c2 = (s / _NOISE_STEPS for s in sigmas)
    position = x / c1
    frac = position - np.floor(position)
    y1 = c1 * (randomized_round(position, source) + table.sample(n, source))
    y2 = y1 + c2 * table.sample(n, source)
    per_user = (c1 * c1 + c2 * c2) * unit_var + c1 * c1 * float(np.mean(frac * (1 - frac)))
    total = math.hypot(*sigmas)
    return MeanEstimate(
        mechanism="two-level Gaussian",
        epsilon=gaussian_epsilon(total / (hi - lo), d),
        delta=d,
        mean=float(y2.mean()),
        std_error=math.sqrt(per_user / n),
        sample_std_error=float(y2.std(ddof=1)) / math.sqrt(n),
        n=n,
        low=lo,
        high=hi,
    )
