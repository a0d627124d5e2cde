"""Duchi et al.'s one-bit mechanism, with an exactly accounted epsilon.

Reports ``±B`` (in ``t``-units) with ``B = 2**32 / c``: with probability
``beta = c / 2**32`` (an exact dyadic Bernoulli) the sign is ``+`` with
probability ``(1 + t) / 2`` (a 64-bit threshold with 53 significant bits, so
exact to ``2**-53``), otherwise it is a fair coin. So ``P(+ | t)`` lies in
``[(1-beta)/2, (1+beta)/2]`` for every threshold whatever its rounding:
``eps = ln((2**32 + c) / (2**32 - c))`` exactly, and ``E[report] = t``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._randomness import TWO64, Source
from deniable.mechanisms._numeric.base import NumericMechanism
from deniable.mechanisms.registry import register

__all__ = ["Duchi"]

_BETA_BITS = 32
DUCHI_MAX_EPSILON = 21.4  # every epsilon up to here is realised to within 1% with 32-bit beta


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
    >>> from deniable.mechanisms import Duchi
    >>> m = Duchi(0, 10, epsilon=1.0)
    >>> m.epsilon <= 1.0
    True
    >>> rng = np.random.default_rng(0)
    >>> values = rng.uniform(2, 6, size=50_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(abs(est.mean - values.mean()) < 5 * est.std_error)
    True
    """

    wire_id = "duchi"

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        eps = privacy.check_realisable(privacy.check_epsilon(epsilon, owner="Duchi"), DUCHI_MAX_EPSILON, "Duchi")
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
        follow = randomness.below(randomness.fixed_point(t, out=t), source, lazy)
        informative = randomness.bernoulli_bits(self._c, _BETA_BITS, n, source)
        fair = np.unpackbits(randomness.uniform_words((n + 7) // 8, np.uint8, source), count=n)
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
        lo, hi = self.report_range
        on: NDArray[np.bool_] = (y == lo) | (y == hi)
        return on

    @property
    def report_range(self) -> tuple[float, float]:
        lo, hi = self._from_unit(np.array([-self._B, self._B]))
        return float(lo), float(hi)

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        t = self._to_unit([value])
        follow = int(randomness.fixed_point((t + 1.0) * 0.5)[0]) / TWO64
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
