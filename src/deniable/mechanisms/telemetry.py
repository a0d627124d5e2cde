"""Microsoft's telemetry mechanisms: 1BitMean (counters) and dBitFlip (histograms).

Ding, Kulkarni, Yekhanin, "Collecting Telemetry Data Privately", NeurIPS
2017. Both are built for collecting the same counter every day from the same
devices: each device memoizes its randomness (:meth:`OneBitMean.client`,
:meth:`DBitFlip.client`), so reports repeat while the value stays put and the
lifetime privacy loss is that of one collection.

**1BitMean** (:class:`OneBitMean`), a value ``x`` in ``[low, high]`` with
``u = (x - low) / (high - low)``: one bit, 1 with probability

    pi(u) = 1/(e^eps + 1) + u (e^eps - 1)/(e^eps + 1),

so ``u_hat = (b (e^eps + 1) - 1) / (e^eps - 1)`` is unbiased and the mean
estimate is ``low + (high - low) mean(u_hat)``, with per-device variance
``pi (1 - pi) ((e^eps + 1)/(e^eps - 1))^2 <= (e^eps + 1)^2 / (4 (e^eps - 1)^2)``
(in units of the range squared). *alpha-point rounding*: the range is cut
into ``points - 1`` equal steps; ``u`` is rounded to the step end above it
with probability equal to its position within the step (a device fixes one
uniform offset ``alpha`` for life and rounds up when the position exceeds
it) and the bit is that of the rounded point. Since
``pi`` is affine, a single report is still exactly 1BitMean
(``E pi(rounded u) = pi(u)``) and ``epsilon = ln(e^eps)``. A device's client
memoizes one bit per rounding point, so its reports change only when its
value crosses its own rounding threshold.

**dBitFlip** (:class:`DBitFlip`), a value in one of ``k`` buckets: the device
samples ``d`` distinct buckets ``j_1 < ... < j_d`` uniformly and reports, for
each, a bit that is 1 with probability ``p = e^(eps/2) / (e^(eps/2) + 1)`` if
its value is in ``j_p`` and ``q = 1 - p`` otherwise (for ``d = 1`` the one bit
uses ``e^eps``: two bits never differ in one report). Between two values at
most two sampled bits change distribution, so a report is ``eps``-LDP. The
estimate of bucket ``v`` averages the debiased bits of the devices that
sampled it, scaled by the sampling rate ``d/k``:

    h_v = (k / (n d)) sum_{devices that sampled v} (b (e^(eps/2)+1) - 1) / (e^(eps/2) - 1),

unbiased, with variance (``e = e^(eps/2)``, respondents fixed)

    (k / (n d)) e / (e - 1)^2 + h_v (k/d - 1) / n,

and ``+ h_v (1 - h_v) / n`` for a population. A device's client samples its
buckets once and memoizes one answer vector per *slot* (its value's bucket
is ``j_p``, or none of them): at most ``d + 1`` distinct reports ever.

**Privacy over repeated collection** (the paper's statement). While a
device's memoized quantity (rounded point, dBitFlip slot) stays the same,
all its reports are one report: lifetime ``epsilon``. Each further distinct
memoized quantity reveals another independent memoized draw:
``lifetime_epsilon(distinct) = distinct * epsilon``, at most ``points`` or
``d + 1`` times ``epsilon``. That compares value histories whose memoized
quantity changes at the same reports.

**Output perturbation** (the paper's answer to *when* it changes;
``gamma=``): every report flips each memoized bit afresh with probability
``gamma = g / 2**32`` (``0 < gamma < 1/2``), so a change of the memoized bits
no longer shows as a sure change of the reports. Given its memoized bit a
report bit is ``b XOR Bernoulli(gamma)``: two histories whose memoized bits
change at different reports (one round apart) differ only in that round's
report, by a likelihood ratio of at most ``(1 - gamma) / gamma`` per
differing bit, so the time of a change is ``time_epsilon = ln((1 - gamma) /
gamma)``-private per round it is moved (1BitMean: one bit; dBitFlip: ``d``
bits, ``d ln((1 - gamma) / gamma)``). The memoized bits keep their
``epsilon_perm`` (the constructor's ``epsilon``: what all reports sharing one
memoized draw reveal, so ``lifetime_epsilon`` is unchanged), and one report
is the chained channel, a bit with ``1`` probability
``p' = gamma + (1 - 2 gamma) p``: in integers, ``a' = a 2**32 - g (a - b)``,
``b' = b 2**32 + g (a - b)``, ``epsilon = ln(a' / b')`` (times ``min(d, 2)``
for dBitFlip), below ``epsilon_perm``. The estimators use ``a', b'``: the
collector decodes one report's channel, as without perturbation.

Every probability is an integer ratio (``e^eps = a / b`` from
:func:`deniable.privacy.exp_ratio`), sampled exactly; epsilon is computed from
the integers and rounded up.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import privacy, randomness
from deniable.aggregates import MeanStat, Mergeable, SupportCounts
from deniable.client_state import StateLike
from deniable.estimate import Estimate, Target, check_target, sampling_variance
from deniable.mechanisms.domain import Domain
from deniable.mechanisms.frequency import FrequencyOracle
from deniable.mechanisms.numeric.base import NumericMechanism, check_real
from deniable.mechanisms.permanent import PermanentClient
from deniable.mechanisms.registry import register
from deniable.randomness import TWO64, Source

__all__ = ["OneBitMean", "DBitFlip", "OneBitMeanClient", "DBitFlipClient"]

_CLOSE = 1e-2  # realised epsilon within 1% of the request, or refused
_FLIP_BITS = 32
_FLIP_ONE = 1 << _FLIP_BITS  # output perturbation: gamma = flip_numerator / 2**32
_MAX_POINTS = 1 << 16
_SIMULATE_CHUNK = 1 << 20


def _check_int(value: object, name: str, low: int, high: int, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an int in {low}..{high} for {owner}; got {value!r}")
    return int(value)


def _check_close(owner: str, realised: float, requested: float) -> None:
    if realised < requested * (1 - _CLOSE):
        raise ValueError(
            f"epsilon={requested!r} cannot be realised by {owner} with its integer probabilities "
            f"(it would give {realised:.4g})"
        )


def _flip_numerator(gamma: object, owner: str) -> int:
    """``floor(gamma 2**32)``: output perturbation's flip probability as an exact numerator (0: none)."""
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 <= gamma < 0.5:
        raise ValueError(f"gamma must be a number in [0, 0.5) for {owner}; got {gamma!r}")
    g = math.floor(gamma * _FLIP_ONE)
    if gamma > 0 and g == 0:
        raise ValueError(f"gamma={gamma!r} is below 2**-32, the smallest flip probability of {owner}")
    return g


def _check_flip(params: dict[str, Any], owner: str) -> int:
    g = params.get("flip_numerator", 0)
    if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g < _FLIP_ONE // 2:
        raise ValueError(f"{owner} params: flip_numerator must be an int in 0..2**31-1; got {g!r}")
    return g


def _perturbed(a: int, b: int, g: int) -> tuple[int, int]:
    """``(a', b')``: a bit that is 1 w.p. ``a/(a+b)`` (or ``b/(a+b)``), then flipped w.p. ``g / 2**32``."""
    return a * _FLIP_ONE - g * (a - b), b * _FLIP_ONE + g * (a - b)


def _flips(shape: tuple[int, ...], g: int, source: Source) -> NDArray[np.uint8]:
    """Fresh output-perturbation flips: 1 w.p. ``g / 2**32`` each (zeros without perturbation)."""
    if not g:
        return np.zeros(shape, dtype=np.uint8)
    size = int(np.prod(shape))
    return (randomness.uniform_below(_FLIP_ONE, size, source) < np.uint64(g)).astype(np.uint8).reshape(shape)


def _time_epsilon(g: int, bits: int) -> float:
    """``bits ln((1 - gamma) / gamma)``: how private the time a memoized draw changes is (inf without perturbation)."""
    return math.inf if not g else bits * privacy.ln_up(Fraction(_FLIP_ONE - g, g))


def _draws_fit(a: int, b: int, points: int) -> bool:
    """Whether 1BitMean's bit draw, uniform below ``(a + b)(points - 1)``, fits in 64 bits."""
    return (a + b) * (points - 1) <= TWO64


def _lifetime(distinct: object, cap: int, epsilon: float) -> float:
    if isinstance(distinct, bool) or not isinstance(distinct, int) or distinct < 1:
        raise ValueError(f"distinct must be an int >= 1; got {distinct!r}")
    return min(distinct, cap) * epsilon


# ------------------------------------------------------------------ 1BitMean
@register(kind="numeric", browser=True, required={"epsilon"}, optional={"points", "gamma"})
class OneBitMean(NumericMechanism):
    """1BitMean (Ding et al. 2017) for counters in ``[low, high]``, with alpha-point rounding.

    ``OneBitMean(0, 86400, epsilon=1.0)`` (``points=2``: rounding to the
    range's ends; more points round more finely and give a device more
    memoized bits). Reports are one bit (``0.0`` / ``1.0``); ``estimate``
    returns a :class:`~deniable.MeanEstimate` (module docstring for the
    math). ``e^eps = a / b`` exactly; the bit of rounding point ``j`` (of
    ``s = points - 1`` steps) is 1 with probability
    ``(b s + j (a - b)) / ((a + b) s)``. ``gamma`` (default 0: none) adds
    output perturbation (module docstring): ``epsilon`` is then the memoized
    bits' (:attr:`epsilon_perm`) and one report's :attr:`epsilon` is smaller.
    A bit is drawn below ``(a + b) s``, which must fit in 64 bits: where
    ``a`` and ``b`` need 63 bits (epsilon above about 11.09, or below about
    ``2**-31``), at most 3 points.
    """

    wire_id = "one-bit-mean"
    report_kind = "bit"

    def __init__(self, low: float, high: float, *, epsilon: float, points: int = 2, gamma: float = 0.0) -> None:
        super().__init__(low, high)
        eps = privacy.check_epsilon(epsilon, owner="OneBitMean")
        a, b = privacy.exp_ratio(eps, 1)
        g = _flip_numerator(gamma, "OneBitMean")
        points = _check_int(points, "points", 2, _MAX_POINTS, "OneBitMean")
        if not _draws_fit(a, b, points):  # a + b of 63 bits: at most 3 points
            raise ValueError(
                f"points={points} is too many for OneBitMean at epsilon={epsilon!r}: its draws below "
                f"(a + b) * (points - 1) must fit in 64 bits (e^epsilon = a / b, a + b = {a + b}); "
                f"at most {TWO64 // (a + b) + 1} points"
            )
        self._set(a, b, points, g)
        _check_close("OneBitMean", self.epsilon_perm, eps)

    def _set(self, a: int, b: int, points: int, g: int = 0) -> None:
        self._a, self._b, self.points, self._g = a, b, points, g
        self.epsilon_perm = privacy.ln_up(Fraction(a, b))
        ra, rb = _perturbed(a, b, g)
        self._epsilon = privacy.ln_up(Fraction(ra, rb))
        # a report is 1 w.p. 1/2 + t b1 for t in [-1, 1]: t_hat = (bit - 1/2) / b1
        self._b0, self._b1 = 0.5, (ra - rb) / (2 * (ra + rb))

    @property
    def gamma(self) -> Fraction:
        """Output perturbation's flip probability (0: none)."""
        return Fraction(self._g, _FLIP_ONE)

    @property
    def time_epsilon(self) -> float:
        """``ln((1 - gamma) / gamma)``: the privacy of when a memoized bit changes, per round it is moved."""
        return _time_epsilon(self._g, 1)

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def report_bits(self) -> int:
        return 1

    def lifetime_epsilon(self, distinct: int = 1) -> float:
        """Privacy loss of all reports of a device whose rounded value took ``distinct`` points.

        ``min(distinct, points) * epsilon_perm`` (module docstring): one
        memoized bit per rounding point, each an ``epsilon_perm``-LDP 1BitMean
        report (``epsilon_perm == epsilon`` without output perturbation).
        """
        return _lifetime(distinct, self.points, self.epsilon_perm)

    def client(self, state: StateLike | None = None, *, secret: bytes | None = None) -> OneBitMeanClient:
        """A device-side client: a rounding offset fixed for life and one memoized bit per point.

        ``state`` (a file path or a store) keeps the device's secret across
        restarts (:mod:`deniable.mechanisms.permanent`).
        """
        return OneBitMeanClient(self, state, secret=secret)

    # ------------------------------------------------------------ sampling
    def _thresholds(self, points: NDArray[np.int64]) -> NDArray[np.uint64]:
        s = self.points - 1
        return (self._b * s + points * (self._a - self._b)).astype(np.uint64)

    def _steps(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        """``u (points - 1)`` for ``t`` in [-1, 1]: the position on the rounding grid."""
        u = t + 1.0
        u *= 0.5 * (self.points - 1)
        return np.clip(u, 0.0, float(self.points - 1), out=u)

    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        points = randomness.randomized_round(self._steps(t), source, lazy, overwrite=True)
        bound = (self._a + self._b) * (self.points - 1)
        r = randomness.uniform_below(bound, points.size, source)
        bits = (r < self._thresholds(points)).astype(np.uint8) ^ _flips(points.shape, self._g, source)
        return bits.astype(np.float64)

    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        one = 0.5 + np.asarray(t, dtype=float) * self._b1
        return one * (1 - one) / self._b1**2

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        steps = self._steps(self._to_unit([value]))
        low = np.floor(steps)
        up = int(randomness.fixed_point(steps - low)[0]) / TWO64
        j = int(low[0])
        s = self.points - 1
        pi = [Fraction(self._b * s + i * (self._a - self._b), (self._a + self._b) * s) for i in (j, min(j + 1, s))]
        one = (1 - up) * float(pi[0]) + up * float(pi[1])
        gamma = float(self.gamma)
        one = gamma + (1 - 2 * gamma) * one  # output perturbation
        return np.array([0.0, 1.0]), np.array([1 - one, one])

    @property
    def report_range(self) -> tuple[float, float]:
        return (0.0, 1.0)

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        return self._in_table(y, np.array([0.0, 1.0]))

    # ---------------------------------------------------------- aggregate
    def _aggregate_checked(self, y: NDArray[np.float64]) -> MeanStat:
        ones = float(y.sum())
        return MeanStat(self.fingerprint, int(y.size), ones, ones)  # bits: sum of squares = sum

    def audit_events(self, reports: Any, x: Any, other: Any) -> NDArray[np.int64]:
        """The report bit itself (two cells, each carrying the full ratio ``e^eps`` between the range's ends)."""
        return np.asarray(reports, dtype=float).astype(np.int64)

    # ---------------------------------------------------------------- wire
    def _params(self) -> dict[str, Any]:
        flip = {"flip_numerator": self._g} if self._g else {}  # written only when used
        return {"high_numerator": self._a, "low_numerator": self._b, "points": self.points, **flip}

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> OneBitMean:
        a, b = int(params["high_numerator"]), int(params["low_numerator"])
        points = _check_int(params["points"], "points", 2, _MAX_POINTS, "OneBitMean")
        g = _check_flip(params, "OneBitMean")
        if not 0 < b < a or not _draws_fit(a, b, points):
            raise ValueError(
                f"OneBitMean params need 0 < low_numerator < high_numerator and "
                f"(high + low) * (points - 1) <= 2**64; got {params!r}"
            )
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._set(a, b, points, g)
        return self

    def __repr__(self) -> str:
        flip = f", gamma={float(self.gamma):.6g}" if self._g else ""
        return (
            f"OneBitMean(low={self.low:.6g}, high={self.high:.6g}, epsilon={self.epsilon:.6g}, "
            f"points={self.points}{flip})"
        )


class OneBitMeanClient(PermanentClient):
    """One device of 1BitMean: a rounding offset ``alpha`` fixed for life, one memoized bit per rounding point.

    ``alpha`` is a uniform 64-bit integer; a value at fraction ``phi`` of its
    rounding step rounds up when ``alpha < floor(phi 2**53) 2**11`` (the
    same threshold the batch path draws against), so small changes of the
    value that do not cross that threshold give the same rounded point, hence
    the same memoized bit, hence the same report.
    """

    def __init__(self, mechanism: OneBitMean, state: StateLike | None = None, *, secret: bytes | None = None) -> None:
        super().__init__(mechanism, state, secret=secret)
        self._alpha = int(randomness.uniform_words(1, np.uint64, self._stream("alpha"))[0])

    def point(self, value: float) -> int:
        """The rounding point (``0 .. points - 1``) this device maps ``value`` to."""
        m: OneBitMean = self.mechanism
        x = check_real(value, "value", m.name)
        steps = m._steps(m._unit(np.array([x])))
        low = np.floor(steps)
        threshold = int(randomness.fixed_point(steps - low)[0])
        return int(low[0]) + (self._alpha < threshold)

    def bit(self, point: int) -> int:
        """The memoized bit of rounding point ``point``."""
        m: OneBitMean = self.mechanism
        bound = (m._a + m._b) * (m.points - 1)
        r = randomness.uniform_below(bound, 1, self._stream(f"point {point}"))
        return int(r[0] < m._thresholds(np.array([point]))[0])

    def privatize(self, value: float) -> float:
        """One report: the memoized bit of the point ``value`` rounds to (flipped w.p. ``gamma``, fresh)."""
        flip = int(_flips((1,), self.mechanism._g, randomness.SECURE)[0])
        return float(self.bit(self.point(value)) ^ flip)


# ------------------------------------------------------------------ dBitFlip
def sample_subsets(n: int, k: int, d: int, source: Source) -> NDArray[np.int64]:
    """``n`` uniformly random ``d``-subsets of ``0..k-1``, sorted, one per row (Floyd's algorithm).

    For ``j = k-d .. k-1``: draw ``t`` uniform in ``[0, j]`` and add ``t``,
    or ``j`` if ``t`` is already in; each ``d``-subset has probability
    ``1 / C(k, d)`` exactly. Vectorized over the rows, ``d`` draws each.
    """
    chosen = np.empty((n, d), dtype=np.int64)
    for i, j in enumerate(range(k - d, k)):
        t = randomness.uniform_below(j + 1, n, source).astype(np.int64)
        taken = (chosen[:, :i] == t[:, None]).any(axis=1)
        chosen[:, i] = np.where(taken, j, t)
    chosen.sort(axis=1)
    return chosen


def _build_dbitflip(domain: Any, params: Any) -> DBitFlip:
    d = params.get("d", 1)
    if isinstance(d, float) and d.is_integer():
        d = int(d)  # survey files write numbers
    return DBitFlip(domain, d=d, epsilon=params["epsilon"], gamma=params.get("gamma", 0.0))


@register(decode_cost="O(n d + k)", browser=True, required={"epsilon"}, optional={"d", "gamma"},
          build=_build_dbitflip)
class DBitFlip(FrequencyOracle):
    """dBitFlip (Ding et al. 2017): ``d`` sampled buckets, one randomized bit each.

    ``DBitFlip(buckets, d=4, epsilon=1.0)``: ``buckets`` are the categories
    (an int ``k`` or a list), ``1 <= d <= k``. Reports are structured:
    ``buckets`` (the ``d`` sampled bucket positions, increasing) and ``bits``.
    ``e^(eps / min(d, 2)) = a / b`` exactly; a bit is 1 with probability
    ``a / (a + b)`` for the value's bucket and ``b / (a + b)`` otherwise.
    ``estimate`` gives an :class:`~deniable.Estimate` with the paper's
    estimator (module docstring); its ``support_counts`` are the reports
    with ``v`` sampled and its bit 1, whose rate is ``q* + (p* - q*) h_v``
    with ``p* = (d/k) a/(a+b)``, ``q* = (d/k) b/(a+b)`` (what the Wilson and
    Clopper-Pearson intervals and the MLE use). The aggregate's counts are
    these ``k`` counts followed by the ``k`` numbers of reports that sampled
    each bucket. ``gamma`` (default 0: none) adds output perturbation
    (module docstring): every report flips each memoized bit w.p. ``gamma``;
    ``epsilon`` is then the memoized bits' (:attr:`epsilon_perm`), one
    report's :attr:`epsilon` is smaller, and the probabilities above are the
    perturbed ``a' / (a' + b')``.
    """

    wire_id = "dbitflip"
    report_kind = "structured"
    _FIELDS: ClassVar[frozenset[str]] = frozenset({"buckets", "bits"})

    def __init__(self, buckets: Any, *, d: int, epsilon: float, gamma: float = 0.0) -> None:
        domain = Domain(buckets, "DBitFlip")
        dd = _check_int(d, "d", 1, domain.k, "DBitFlip")
        eps = privacy.check_epsilon(epsilon, owner="DBitFlip")
        a, b = privacy.exp_ratio(eps / min(dd, 2), 1)
        self._setup(domain, dd, a, b, _flip_numerator(gamma, "DBitFlip"))
        _check_close("DBitFlip", self.epsilon_perm, eps)

    def _setup(self, domain: Domain, d: int, a: int, b: int, g: int = 0) -> None:
        self.domain_obj = domain
        self.d, self._a, self._b, self._g = d, a, b, g
        # one report's bits: the memoized channel a:b through the flips (a' : b')
        self._ra, self._rb = _perturbed(a, b, g)
        self.epsilon_perm = privacy.ln_up(Fraction(a, b) ** min(d, 2))
        self._epsilon = privacy.ln_up(Fraction(self._ra, self._rb) ** min(d, 2))
        self.report_dtype = np.dtype([("buckets", "<u4", (d,)), ("bits", "u1", (d,))])

    @property
    def gamma(self) -> Fraction:
        """Output perturbation's flip probability (0: none)."""
        return Fraction(self._g, _FLIP_ONE)

    @property
    def time_epsilon(self) -> float:
        """``d ln((1 - gamma) / gamma)``: the privacy of when the memoized answers change, per round moved."""
        return _time_epsilon(self._g, self.d)

    @property
    def report_bits(self) -> int:
        """``ceil(log2 C(k, d))`` bits for the sampled buckets plus ``d`` answer bits."""
        return max(1, (math.comb(self.k, self.d) - 1).bit_length()) + self.d

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        rate = Fraction(self.d, self.k)
        total = self._ra + self._rb
        return [rate * Fraction(self._ra, total)] * self.k, [rate * Fraction(self._rb, total)] * self.k

    def lifetime_epsilon(self, distinct: int = 1) -> float:
        """Privacy loss of all reports of a device whose slot took ``distinct`` values.

        The slot is which sampled bucket holds the value, or none of them;
        ``min(distinct, d + 1) * epsilon_perm`` (module docstring;
        ``epsilon_perm == epsilon`` without output perturbation).
        """
        return _lifetime(distinct, self.d + 1, self.epsilon_perm)

    def client(self, state: StateLike | None = None, *, secret: bytes | None = None) -> DBitFlipClient:
        """A device-side client: buckets sampled once, one memoized answer vector per slot.

        ``state`` (a file path or a store) keeps the device's secret across
        restarts (:mod:`deniable.mechanisms.permanent`).
        """
        return DBitFlipClient(self, state, secret=secret)

    # -------------------------------------------------------------- sampling
    def _answers(self, sampled: NDArray[np.int64], truth: NDArray[np.int64], source: Source) -> NDArray[np.uint8]:
        """The bits for rows of sampled buckets and each row's true bucket position (``-1``: none)."""
        n = sampled.shape[0]
        r = randomness.uniform_below(self._a + self._b, n * self.d, source).reshape(n, self.d)
        hit = sampled == truth[:, None]
        return (r < np.where(hit, self._a, self._b).astype(np.uint64)).astype(np.uint8)

    def _perturb(self, bits: NDArray[np.uint8], source: Source) -> NDArray[np.uint8]:
        """Output perturbation: each bit flipped w.p. ``gamma``, fresh (unchanged without it)."""
        return bits ^ _flips(bits.shape, self._g, source) if self._g else bits

    def _records(self, sampled: NDArray[np.int64], bits: NDArray[np.uint8]) -> NDArray[np.void]:
        out = np.empty(sampled.shape[0], dtype=self.report_dtype)
        out["buckets"], out["bits"] = sampled, bits
        return out

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.void]:
        sampled = sample_subsets(idx.size, self.k, self.d, source)
        return self._records(sampled, self._perturb(self._answers(sampled, idx, source), source))

    # --------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.void]:
        if not isinstance(reports, np.ndarray):
            reports = list(reports)
            if reports and all(isinstance(r, np.void) for r in reports):  # privatize's reports, listed
                reports = np.array(reports)
        if isinstance(reports, np.ndarray) and reports.dtype.names:
            if set(reports.dtype.names) != self._FIELDS or reports.ndim != 1:
                raise ValueError(f"DBitFlip reports need fields 'buckets' and 'bits'; got {reports.dtype}")
            try:
                arr = reports.astype(self.report_dtype, casting="same_kind")
            except (TypeError, ValueError):
                raise ValueError(
                    f"DBitFlip reports need d={self.d} buckets and bits each; got {reports.dtype}"
                ) from None
        else:
            items = list(reports)
            arr = np.empty(len(items), dtype=self.report_dtype)
            for i, item in enumerate(items):
                if not isinstance(item, dict) or set(item) != self._FIELDS:
                    raise ValueError(
                        f"DBitFlip report {i} must be {{'buckets': [{self.d} ints], 'bits': [{self.d} 0/1]}}; "
                        f"got {item!r:.60}"
                    )
                for key in ("buckets", "bits"):
                    value = item[key]
                    if (not isinstance(value, list) or len(value) != self.d
                            or any(type(v) is not int or v < 0 or v >= 1 << 32 for v in value)):
                        raise ValueError(f"DBitFlip report {i}: {key} must be a list of {self.d} non-negative ints")
                arr[i] = (item["buckets"], item["bits"])
        if arr.size:
            buckets = arr["buckets"].astype(np.int64).reshape(-1, self.d)
            bad = (buckets >= self.k).any(axis=1) | (np.diff(buckets, axis=1) <= 0).any(axis=1)
            bad |= (arr["bits"].reshape(-1, self.d) > 1).any(axis=1)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(
                    f"DBitFlip report {i}: buckets must be {self.d} increasing positions below k={self.k} "
                    f"and bits 0 or 1; got {self._report_to_json(arr[i])!r:.80}"
                )
        return arr

    def _support_counts(self, reports: NDArray[np.void]) -> NDArray[np.int64]:
        """``[C_0 .. C_(k-1), N_0 .. N_(k-1)]``: reports sampling each bucket with bit 1, and sampling it."""
        buckets = reports["buckets"].astype(np.int64).reshape(-1, self.d)
        ones = reports["bits"].reshape(-1, self.d).astype(bool)
        sampled = np.bincount(buckets.ravel(), minlength=self.k)
        return np.concatenate([np.bincount(buckets[ones], minlength=self.k), sampled])

    def _supports(self, reports: NDArray[np.void], position: int) -> NDArray[np.bool_]:
        buckets = reports["buckets"].reshape(-1, self.d)
        return ((buckets == position) & (reports["bits"].reshape(-1, self.d) == 1)).any(axis=1)

    def audit_events(self, reports: Any, x: Any, other: Any) -> NDArray[np.int64]:
        """Cells of (``x`` sampled with bit 1, ``x'`` sampled with bit 0): the corner carries the full ``e^eps``."""
        checked = self._checked(reports)
        buckets = checked["buckets"].reshape(-1, self.d)
        bits = checked["bits"].reshape(-1, self.d)
        px, po = self.domain_obj.encode_one(x), self.domain_obj.encode_one(other)
        hit_x = ((buckets == px) & (bits == 1)).any(axis=1)
        miss_o = ((buckets == po) & (bits == 0)).any(axis=1)
        return 2 * hit_x.astype(np.int64) + miss_o

    # -------------------------------------------------------------- estimate
    def _debiased_sums(self, stat: SupportCounts) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Per bucket, the sums over reports of ``Z`` and ``Z^2``, ``Z = [v sampled] (bit (a+b) - b) / (a - b)``."""
        counts = np.asarray(stat.counts, dtype=float)
        ones, sampled = counts[..., : self.k], counts[..., self.k :]
        a, b = float(self._ra), float(self._rb)
        total = ((a + b) * ones - b * sampled) / (a - b)
        squares = (a * a * ones + b * b * (sampled - ones)) / (a - b) ** 2
        return total, squares

    def estimate_from(self, stat: SupportCounts, target: Target = "population") -> Estimate:
        """The paper's estimate ``h_v = sum Z / (n d / k)`` from a (merged) aggregate.

        Standard errors: for ``"population"`` the devices' ``Z`` are i.i.d.,
        so ``(mean(Z^2) - mean(Z)^2) / (n (d/k)^2)`` from the aggregate; for
        ``"respondents"`` the formula of :meth:`variance` at ``clip(h_v, 0, 1)``.
        """
        target = check_target(target)
        if not isinstance(stat, Mergeable):
            raise TypeError(f"estimate_from needs a SupportCounts aggregate; got {type(stat).__name__}")
        stat.require(SupportCounts, self.fingerprint)
        if np.shape(stat.counts)[-1:] != (2 * self.k,):
            raise ValueError(f"aggregate has {np.shape(stat.counts)[-1:]} counts; DBitFlip needs 2k={2 * self.k}")
        p, q = self.support_rates()
        n, rate = stat.n, self.d / self.k
        ones = np.asarray(stat.counts, dtype=np.int64)[..., : self.k]
        with np.errstate(invalid="ignore", divide="ignore"):
            total, squares = self._debiased_sums(stat)
            freqs = total / (n * rate)
            if target == "population":
                var = (squares / n - (total / n) ** 2) / (n * rate**2)
            else:
                var = self._respondents_variance(n, np.clip(freqs, 0, 1))
            observed = ones / n
        if not n:
            freqs = observed = np.full(self.k, np.nan)
            var = np.full(self.k, np.nan)
        return Estimate(
            mechanism=self.name,
            epsilon=self.epsilon,
            domain=self.domain,
            frequencies=freqs,
            std_errors=np.sqrt(np.maximum(var, 0.0)),
            n=n,
            observed=observed,
            support_counts=ones,
            p_star=p,
            q_star=q,
            target=target,
        )

    def _respondents_variance(self, n: int, f: NDArray[np.float64]) -> NDArray[np.float64]:
        a, b, ratio = float(self._ra), float(self._rb), self.k / self.d
        return np.asarray(ratio * a * b / (a - b) ** 2 / n + f * (ratio - 1) / n, dtype=float)

    def variance(self, n: int, frequencies: Any = None, target: Target = "population") -> NDArray[np.float64]:
        """Per-bucket variance of the estimate from ``n`` reports.

        ``"respondents"``: ``(k/d) e / (n (e - 1)^2) + h (k/d - 1) / n`` with
        ``e = a / b`` (``e^(eps/2)`` for ``d >= 2``); ``"population"`` adds
        ``h (1 - h) / n``. ``frequencies=None`` evaluates it at ``h -> 0``.
        """
        target = check_target(target)
        f = self._variance_frequencies(n, frequencies)
        return self._respondents_variance(n, f) + sampling_variance(n, f, target)

    def simulate_support_counts(
        self, true_counts: NDArray[np.int64], rng: np.random.Generator
    ) -> NDArray[np.int64] | None:
        """The aggregate's ``2k`` counts for a simulated survey, from real reports (``O(n)``, in chunks)."""
        positions = np.repeat(np.arange(self.k), true_counts)
        source = randomness.resolve(rng)
        total = np.zeros(2 * self.k, dtype=np.int64)
        for start in range(0, positions.size, _SIMULATE_CHUNK):
            total += self._support_counts(self._sample(positions[start : start + _SIMULATE_CHUNK], source))
        return total

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        """Over outputs (sampled buckets, bits): ``P = prod_p P(bit_p) / C(k, d)``."""
        subsets = list(itertools.combinations(range(self.k), self.d))
        if len(subsets) << self.d > 1 << 12:
            raise NotImplementedError("transition_matrix enumerates C(k, d) 2**d outputs; too many")
        p = self._ra / (self._ra + self._rb)
        patterns = list(itertools.product((0, 1), repeat=self.d))
        outputs = [(s, bits) for s in subsets for bits in patterns]
        matrix = np.empty((self.k, len(outputs)))
        for x in range(self.k):
            for j, (s, bits) in enumerate(outputs):
                one = [p if v == x else 1 - p for v in s]
                matrix[x, j] = np.prod([o if bit else 1 - o for o, bit in zip(one, bits, strict=True)])
        return outputs, matrix / len(subsets)

    # ------------------------------------------------------------------ wire
    def _params(self) -> dict[str, Any]:
        flip = {"flip_numerator": self._g} if self._g else {}  # written only when used
        return {"d": self.d, "truth_numerator": self._a, "other_numerator": self._b, **flip}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> DBitFlip:
        dom = Domain(domain, "DBitFlip")
        d = _check_int(params["d"], "d", 1, dom.k, "DBitFlip")
        a, b = int(params["truth_numerator"]), int(params["other_numerator"])
        if not 0 < b < a or a + b > TWO64:
            raise ValueError(
                f"DBitFlip params need 0 < other_numerator < truth_numerator and a sum up to 2**64; got {params!r}"
            )
        self = cls.__new__(cls)
        self._setup(dom, d, a, b, _check_flip(params, "DBitFlip"))
        return self

    def _report_to_json(self, report: Any) -> dict[str, list[int]]:
        return {"buckets": [int(v) for v in report["buckets"]], "bits": [int(v) for v in report["bits"]]}

    def __repr__(self) -> str:
        flip = f", gamma={float(self.gamma):.6g}" if self._g else ""
        return f"DBitFlip(k={self.k}, d={self.d}, epsilon={self.epsilon:.6g}{flip})"


class DBitFlipClient(PermanentClient):
    """One device of dBitFlip: ``d`` buckets sampled for life, one memoized answer vector per slot.

    The slot is the position among the sampled buckets of the value's
    bucket, or ``d`` when none of them holds it; each slot's ``d`` bits are
    drawn once (from the client's keyed stream) and reused, so the device
    ever sends at most ``d + 1`` distinct reports (before output
    perturbation, which flips each bit afresh w.p. ``gamma``).
    """

    def __init__(self, mechanism: DBitFlip, state: StateLike | None = None, *, secret: bytes | None = None) -> None:
        super().__init__(mechanism, state, secret=secret)
        self.buckets = sample_subsets(1, mechanism.k, mechanism.d, self._stream("buckets"))[0]

    def slot(self, value: Any) -> int:
        """Which sampled bucket holds ``value`` (its index), or ``d`` for none."""
        position = self.mechanism.domain_obj.encode_one(value)
        where = np.flatnonzero(self.buckets == position)
        return int(where[0]) if where.size else self.mechanism.d

    def privatize(self, value: Any) -> Any:
        """One report: the sampled buckets and the memoized answers of ``value``'s slot."""
        m: DBitFlip = self.mechanism
        slot = self.slot(value)
        truth = np.array([self.buckets[slot] if slot < m.d else -1], dtype=np.int64)
        bits = m._answers(self.buckets[None, :], truth, self._stream(f"slot {slot}"))
        return m._records(self.buckets[None, :], m._perturb(bits, randomness.SECURE))[0]
