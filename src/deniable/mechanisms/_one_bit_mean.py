"""1BitMean (Ding, Kulkarni, Yekhanin 2017): counters in ``[low, high]``, one bit per report.

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

Memoization, the privacy of repeated collection and output perturbation:
:mod:`deniable.mechanisms._perturbation`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._aggregates import MeanStat
from deniable._client_state import StateLike
from deniable._randomness import TWO64, Source
from deniable.mechanisms import _perturbation as perturbation
from deniable.mechanisms._numeric.base import NumericMechanism, check_real
from deniable.mechanisms._permanent import PermanentClient
from deniable.mechanisms.registry import register

__all__ = ["OneBitMean", "OneBitMeanClient"]

_MAX_POINTS = 1 << 16


def _draws_fit(a: int, b: int, points: int) -> bool:
    """Whether 1BitMean's bit draw, uniform below ``(a + b)(points - 1)``, fits in 64 bits."""
    return (a + b) * (points - 1) <= TWO64


@register(kind="numeric", browser=True, required={"epsilon"}, optional={"points", "gamma"})
class OneBitMean(NumericMechanism):
    r"""1BitMean (Ding et al. 2017) for counters in ``[low, high]``, with alpha-point rounding.

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

    Parameters
    ----------
    low, high : float
        The range of the counters, ``low < high``; values outside are
        clamped.
    epsilon : float
        The privacy loss of one report, or of the memoized bits with
        ``gamma > 0``; ``> 0`` (keyword only).
    points : int, default 2
        The rounding points, equally spaced from ``low`` to ``high`` (at
        least 2).
    gamma : float, default 0.0
        Output perturbation: the probability of flipping the memoized bit
        afresh in every report, in ``[0, 1/2)``.

    Raises
    ------
    ValueError
        A bad range, ``epsilon``, ``points`` or ``gamma``.

    Notes
    -----
    With :math:`u = (x - \mathrm{low}) / (\mathrm{high} - \mathrm{low})` the bit is 1 with probability
    :math:`\pi(u) = \frac{1}{e^\varepsilon + 1} + u \frac{e^\varepsilon - 1}{e^\varepsilon + 1}`,
    so :math:`\hat u = (b (e^\varepsilon + 1) - 1) / (e^\varepsilon - 1)` is unbiased, with
    per-device variance :math:`\pi (1 - \pi) \bigl(\frac{e^\varepsilon + 1}{e^\varepsilon - 1}\bigr)^2`
    in units of the range squared.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.OneBitMean(0, 86400, epsilon=1.0)
    >>> m
    OneBitMean(low=0, high=86400, epsilon=1, points=2)
    >>> est = m.estimate(m.privatize_many(rng.uniform(0, 43200, 20_000), rng=rng))
    >>> bool(abs(est.mean - 21600) < 5 * est.std_error)
    True
    """

    wire_id = "one-bit-mean"
    report_kind = "bit"

    def __init__(self, low: float, high: float, *, epsilon: float, points: int = 2, gamma: float = 0.0) -> None:
        super().__init__(low, high)
        eps = privacy.check_epsilon(epsilon, owner="OneBitMean")
        a, b = privacy.exp_ratio(eps, 1)
        g = perturbation.flip_numerator(gamma, "OneBitMean")
        points = perturbation.check_int(points, "points", 2, _MAX_POINTS, "OneBitMean")
        if not _draws_fit(a, b, points):  # a + b of 63 bits: at most 3 points
            raise ValueError(
                f"points={points} is too many for OneBitMean at epsilon={epsilon!r}: its draws below "
                f"(a + b) * (points - 1) must fit in 64 bits (e^epsilon = a / b, a + b = {a + b}); "
                f"at most {TWO64 // (a + b) + 1} points"
            )
        self._set(a, b, points, g)
        perturbation.check_close("OneBitMean", self.epsilon_perm, eps)

    def _set(self, a: int, b: int, points: int, g: int = 0) -> None:
        self._a, self._b, self.points, self._g = a, b, points, g
        self.epsilon_perm = privacy.ln_up(Fraction(a, b))
        ra, rb = perturbation.perturbed(a, b, g)
        self._epsilon = privacy.ln_up(Fraction(ra, rb))
        # a report is 1 w.p. 1/2 + t b1 for t in [-1, 1]: t_hat = (bit - 1/2) / b1
        self._b0, self._b1 = 0.5, (ra - rb) / (2 * (ra + rb))

    @property
    def gamma(self) -> Fraction:
        """Output perturbation's flip probability (0: none)."""
        return Fraction(self._g, perturbation.FLIP_ONE)

    @property
    def time_epsilon(self) -> float:
        """``ln((1 - gamma) / gamma)``: the privacy of when a memoized bit changes, per round it is moved."""
        return perturbation.time_epsilon(self._g, 1)

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
        return perturbation.lifetime(distinct, self.points, self.epsilon_perm)

    def client(self, state: StateLike | None = None, *, secret: bytes | None = None) -> OneBitMeanClient:
        """A device-side client: a rounding offset fixed for life and one memoized bit per point.

        ``state`` (a file path or a store) keeps the device's secret across
        restarts (:mod:`deniable.mechanisms._permanent`).
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
        bits = (r < self._thresholds(points)).astype(np.uint8) ^ perturbation.flips(points.shape, self._g, source)
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
        points = perturbation.check_int(params["points"], "points", 2, _MAX_POINTS, "OneBitMean")
        g = perturbation.check_flip(params, "OneBitMean")
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
    the same memoized bit, hence the same report. ``OneBitMean.client``
    makes it.

    Parameters
    ----------
    mechanism : OneBitMean
        The mechanism configuration.
    state : str, os.PathLike or StateStore, optional
        Where the device keeps its secret across restarts
        (:mod:`deniable.mechanisms._permanent`).
    secret : bytes, optional
        The secret itself (at least 16 bytes), instead of ``state``; with
        neither, a fresh one for this process only.

    Raises
    ------
    TypeError
        Both ``state`` and ``secret``.
    StateError
        A ``state`` written for another configuration.

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.OneBitMean(0, 86400, epsilon=1.0)
    >>> device = m.client(dn.MemoryStore())
    >>> first = device.privatize(1000)
    >>> first in (0.0, 1.0), device.privatize(1000) == first
    (True, True)
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
        flip = int(perturbation.flips((1,), self.mechanism._g, randomness.SECURE)[0])
        return float(self.bit(self.point(value)) ^ flip)
