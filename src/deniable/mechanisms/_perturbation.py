"""What 1BitMean and dBitFlip share: memoized draws, their privacy over repeated collection, and
output perturbation (:mod:`deniable.mechanisms._telemetry`).

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
:func:`deniable._privacy.exp_ratio`), sampled exactly; epsilon is computed from
the integers and rounded up.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._randomness import Source

__all__ = [
    "CLOSE", "FLIP_BITS", "FLIP_ONE", "check_int", "check_close", "flip_numerator", "check_flip", "perturbed",
    "flips", "time_epsilon", "lifetime",
]

CLOSE = 1e-2
"""A realised epsilon within 1% below the request, or the request is refused."""
FLIP_BITS = 32
FLIP_ONE = 1 << FLIP_BITS
"""Output perturbation's denominator: ``gamma = flip_numerator / 2**32``."""


def check_int(value: object, name: str, low: int, high: int, owner: str) -> int:
    """``value`` as an int if it is one in ``low..high`` (not a bool), else ValueError naming ``owner``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"{name} must be an int in {low}..{high} for {owner}; got {value!r}")
    return int(value)


def check_close(owner: str, realised: float, requested: float) -> None:
    """ValueError unless the integer probabilities realise ``epsilon`` within ``CLOSE`` (1%) below the request."""
    if realised < requested * (1 - CLOSE):
        raise ValueError(
            f"epsilon={requested!r} cannot be realised by {owner} with its integer probabilities "
            f"(it would give {realised:.4g})"
        )


def flip_numerator(gamma: object, owner: str) -> int:
    """``floor(gamma 2**32)``: output perturbation's flip probability as an exact numerator (0: none)."""
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 <= gamma < 0.5:
        raise ValueError(f"gamma must be a number in [0, 0.5) for {owner}; got {gamma!r}")
    g = math.floor(gamma * FLIP_ONE)
    if gamma > 0 and g == 0:
        raise ValueError(f"gamma={gamma!r} is below 2**-32, the smallest flip probability of {owner}")
    return g


def check_flip(params: dict[str, Any], owner: str) -> int:
    """A configuration's ``flip_numerator`` (0 if absent), checked to be an int in ``0..2**31-1``."""
    g = params.get("flip_numerator", 0)
    if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g < FLIP_ONE // 2:
        raise ValueError(f"{owner} params: flip_numerator must be an int in 0..2**31-1; got {g!r}")
    return g


def perturbed(a: int, b: int, g: int) -> tuple[int, int]:
    """``(a', b')``: a bit that is 1 w.p. ``a/(a+b)`` (or ``b/(a+b)``), then flipped w.p. ``g / 2**32``."""
    return a * FLIP_ONE - g * (a - b), b * FLIP_ONE + g * (a - b)


def flips(shape: tuple[int, ...], g: int, source: Source) -> NDArray[np.uint8]:
    """Fresh output-perturbation flips: 1 w.p. ``g / 2**32`` each (zeros without perturbation)."""
    if not g:
        return np.zeros(shape, dtype=np.uint8)
    size = int(np.prod(shape))
    return (randomness.uniform_below(FLIP_ONE, size, source) < np.uint64(g)).astype(np.uint8).reshape(shape)


def time_epsilon(g: int, bits: int) -> float:
    """``bits ln((1 - gamma) / gamma)``: how private the time a memoized draw changes is (inf without perturbation)."""
    return math.inf if not g else bits * privacy.ln_up(Fraction(FLIP_ONE - g, g))


def lifetime(distinct: object, cap: int, epsilon: float) -> float:
    """``min(distinct, cap) epsilon``: the privacy loss of ``distinct`` memoized draws (at most ``cap``)."""
    if isinstance(distinct, bool) or not isinstance(distinct, int) or distinct < 1:
        raise ValueError(f"distinct must be an int >= 1; got {distinct!r}")
    return min(distinct, cap) * epsilon
