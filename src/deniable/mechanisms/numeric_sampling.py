"""Exact finite-precision samplers behind the numeric mechanisms.

Nothing here turns a uniform float into noise. Every random choice is an
integer comparison whose probability is a known ratio of integers, so the
privacy loss of a numeric mechanism is computed from the integers it
actually samples with (MECHANISMS.md 7.1-7.3):

* :func:`below` -- ``U < T`` for a uniform 64-bit ``U`` and per-lane
  thresholds ``T``: ``P = T / 2**64`` exactly. The batch path compares one
  byte at a time, most significant first, and draws further bytes only for
  lanes still tied (1 in 256), so a lane costs about one random byte.
* :func:`randomized_round` -- ``floor(x) + Bernoulli(frac(x))`` with the
  fraction taken exactly from the float ``x``: ``E = x``, no rounding bias.
* :class:`AliasTable` -- Walker's alias method over integer weights that sum
  to exactly ``2**64``: ``P(z) = W[z] / 2**64``. Used for the lattice noise of
  :class:`~deniable.Laplace` and :class:`~deniable.Gaussian`.
* :class:`SlidingWindow` -- the discrete piecewise / square-wave sampler:
  a mixture of a uniform draw over ``G`` output cells and a draw over a
  window of ``L`` cells whose position encodes the input.

Timing: the one-report path (``lazy=False``) always reads the same number of
bytes. The batch path's extra bytes depend only on the random draws (a tie
has probability 1/256 whatever the threshold), and a batch reveals at most
how many lanes tied, not which.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from deniable import privacy, randomness
from deniable.randomness import Source

__all__ = [
    "below",
    "bits",
    "randomized_round",
    "AliasTable",
    "SlidingWindow",
    "sliding_window",
    "calibrate_window",
    "window_epsilon",
    "TWO64",
]

TWO64 = 1 << 64
_MSB = list(range(7, -1, -1)) if sys.byteorder == "little" else list(range(8))


def _u8(source: Source, n: int) -> NDArray[np.uint8]:
    return np.frombuffer(source.random_bytes(n), dtype=np.uint8)


def _u64(source: Source, n: int) -> NDArray[np.uint64]:
    return np.frombuffer(source.random_bytes(8 * n), dtype=np.uint64)


def below(thresholds: NDArray[np.uint64], source: Source, lazy: bool = True) -> NDArray[np.bool_]:
    """Booleans with ``P(True) = thresholds / 2**64`` exactly (``U < T``, U uniform 64-bit).

    ``lazy=True`` decides the comparison byte by byte (most significant
    first): lanes whose random byte differs from the threshold's byte are
    settled, tied lanes draw the next byte. ``lazy=False`` draws all 8 bytes
    for every lane (constant work, for a single device report).
    """
    t = np.ascontiguousarray(thresholds, dtype=np.uint64)
    n = t.size
    if not lazy:
        return _u64(source, n) < t
    octets = t.view(np.uint8).reshape(n, 8)  # byte j of a lane is octets[:, _MSB[j]]
    u = _u8(source, n)
    top = octets[:, _MSB[0]]
    out = u < top
    tied = np.flatnonzero(u == top)
    for j in range(1, 8):
        if tied.size == 0:
            break
        u = _u8(source, tied.size)
        tb = octets[tied, _MSB[j]]
        out[tied] = u < tb
        tied = tied[u == tb]
    return out  # lanes tied on all 8 bytes have U == T, i.e. not below


def bits(numerator: int, width: int, n: int, source: Source) -> NDArray[np.bool_]:
    """``n`` i.i.d. booleans with ``P(True) = numerator / 2**width`` (bit-sliced, exact)."""
    words = randomness.bernoulli_words(numerator, width, (n + 63) // 64, source)
    return np.unpackbits(words.view(np.uint8), count=n).view(np.bool_)


def fixed_point(x: NDArray[np.float64], out: NDArray[np.float64] | None = None) -> NDArray[np.uint64]:
    """Thresholds ``T = floor(x * 2**53) * 2**11`` for ``x`` in ``[0, 1]``, capped below ``2**64``.

    ``P(U < T) = floor(x * 2**53) / 2**53`` for a uniform 64-bit ``U``: exactly
    ``x`` whenever ``x`` has no binary digit beyond ``2**-53`` (the fraction
    of any float of magnitude at least 1 qualifies), and within ``2**-53``
    of it otherwise. ``out`` (may be ``x``) is float scratch space.
    """
    scaled = np.multiply(x, 2.0**53, out=out)
    np.minimum(scaled, 2.0**53 - 1, out=scaled)
    fixed = scaled.astype(np.int64).view(np.uint64)
    fixed <<= np.uint64(11)
    return fixed


def randomized_round(
    x: NDArray[np.float64], source: Source, lazy: bool = True, *, overwrite: bool = False
) -> NDArray[np.int64]:
    """``floor(x)`` plus one with probability ``x - floor(x)``; ``E[result] = x`` exactly.

    The fraction of a float of magnitude at least 1 has no binary digit
    beyond ``2**-53``, so :func:`fixed_point` makes it an exact threshold
    (for smaller ``x`` the bias is below ``2**-53``). ``overwrite=True`` lets
    the function use ``x`` as scratch space.
    """
    base = np.floor(x)
    frac = np.subtract(x, base, out=x if overwrite else None)
    up = below(fixed_point(frac, out=frac), source, lazy)
    result = base.astype(np.int64)
    result += up
    return result


# --------------------------------------------------------------------- alias
class AliasTable:
    """Walker/Vose alias table over integer weights summing to exactly ``2**64``.

    ``2**column_bits`` columns of height ``2**(64 - column_bits)``; a draw
    picks a column with ``column_bits`` uniform bits and keeps the column's
    own outcome when ``U < own * 2**column_bits`` (:func:`below`), else takes
    its alias. Outcome ``j`` then has probability exactly
    ``weights[j] / 2**64``. Samples are returned as ``j - offset``.
    """

    def __init__(self, weights: list[int], column_bits: int, offset: int = 0) -> None:
        if not 1 <= column_bits <= 16:
            raise ValueError(f"column_bits must be in [1, 16]; got {column_bits}")
        n = 1 << column_bits
        if len(weights) > n:
            raise ValueError(f"{len(weights)} outcomes do not fit {n} columns")
        if sum(weights) != TWO64 or min(weights) < 0:
            raise ValueError("alias weights must be non-negative integers summing to 2**64")
        height = TWO64 >> column_bits
        mass = list(weights) + [0] * (n - len(weights))
        own = [height] * n
        alias = list(range(n))
        small = [j for j in range(n) if mass[j] < height]
        large = [j for j in range(n) if mass[j] >= height]
        while small and large:
            s, g = small.pop(), large.pop()
            own[s], alias[s] = mass[s], g
            mass[g] -= height - mass[s]
            (small if mass[g] < height else large).append(g)
        # what remains is exactly full (integer arithmetic: no leftovers)
        # a full column keeps its own outcome: threshold 0 with itself as alias
        self.thresholds = np.array(
            [o << column_bits if o < height else 0 for o in own], dtype=np.uint64
        )
        alias = [a if o < height else j for j, (o, a) in enumerate(zip(own, alias, strict=True))]
        # outcomes[2c] is column c's alias, outcomes[2c + 1] its own outcome
        self.outcomes = (np.array([alias, range(n)]).T.ravel() - offset).astype(np.int32)
        self.column_bits = column_bits
        self._mask = np.uint16(n - 1)

    def sample(self, n: int, source: Source, lazy: bool = True) -> NDArray[np.int32]:
        """``n`` outcomes ``j - offset`` with ``P(j) = weights[j] / 2**64``."""
        columns = np.frombuffer(source.random_bytes(2 * n), dtype=np.uint16) & self._mask
        keep = below(self.thresholds[columns], source, lazy)
        index = columns.astype(np.int32)
        index <<= 1
        index += keep
        return self.outcomes[index]


def integer_weights(probs: NDArray[np.float64], centre: int) -> list[int]:
    """Integers ``floor(p * 2**64)`` adjusted at ``centre`` so they sum to exactly ``2**64``."""
    scaled = probs * 2.0**64
    weights = [int(w) for w in scaled.tolist()]
    weights[centre] += TWO64 - sum(weights)
    return weights


# ------------------------------------------------------------ sliding window
class SlidingWindow:
    """Discrete piecewise / square-wave sampler on ``G`` output cells.

    With probability ``gamma = gamma_num / 2**32`` the output cell is
    ``floor(G V / K)``, otherwise ``floor((S + L V) / K)``, where ``V`` is a
    uniform ``k``-bit integer (``K = 2**k``, the same ``V`` for both: the
    coin is independent of it) and ``S / K`` in ``[0, G - L]`` is the
    window's start, a fixed-point image of the input. So the window branch is
    (up to ``1/K``) uniform over ``L`` consecutive cells starting at the
    real position ``S / K``, with the fractional end cells carrying the
    rounding; its mean is exactly ``S/K + (L-1)(K-1)/(2K)`` because ``L`` is
    odd (coprime to ``K``).

    Privacy, exactly for this sampler: a cell ``j`` gets
    ``gamma u_j + (1-gamma) w_S(j)`` with ``u_j >= floor(K/G)/K`` and
    ``0 <= w_S(j) <= ceil(K/L)/K`` for every ``S``, so any two inputs have
    probability ratio at most
    ``1 + (1-gamma) ceil(K/L) / (gamma floor(K/G))`` =: ``e^epsilon``.
    ``gamma`` is chosen (rounded up) so that this is at most the requested
    epsilon.
    """

    def __init__(self, cells: int, window: int, k: int, gamma_num: int) -> None:
        if window % 2 == 0 or not 1 <= window < cells or cells > (1 << k) or k not in (16, 32):
            raise ValueError(f"bad sliding window: cells={cells}, window={window}, k={k}")
        if not 0 < gamma_num < 1 << 32:
            raise ValueError(f"uniform share must be in (0, 2**32); got {gamma_num}")
        self.G, self.L, self.k = cells, window, k
        self.K = 1 << k
        self.gamma_num = gamma_num
        self.gamma = Fraction(gamma_num, 1 << 32)
        self.epsilon = window_epsilon(cells, window, k, gamma_num)
        u = self._counts(np.zeros(1, dtype=np.int64), cells, np.arange(cells))[0] / self.K
        self.uniform_pmf = u
        self.uniform_mean = float(np.dot(np.arange(cells), u))

    def _counts(self, S: NDArray[np.int64], width: int, cells: NDArray[np.int64]) -> NDArray[np.float64]:
        """``#{V : floor((S + width V) / K) = j}`` for each row ``S`` and cell ``j``."""
        K = self.K
        edges = np.concatenate([cells, cells[-1:] + 1]).astype(np.int64)[None, :] * K
        below_edge = np.clip(-((S[:, None] - edges) // width), 0, K)
        return np.diff(below_edge, axis=1).astype(np.float64)

    def window_mean(self, S: NDArray[np.float64]) -> NDArray[np.float64]:
        """Exact mean cell of the window branch for fixed-point starts ``S``."""
        return S / self.K + (self.L - 1) * (self.K - 1) / (2 * self.K)

    def mean(self, S: NDArray[np.float64]) -> NDArray[np.float64]:
        g = float(self.gamma)
        return g * self.uniform_mean + (1 - g) * self.window_mean(S)

    def pmf(self, S: NDArray[np.int64]) -> NDArray[np.float64]:
        """Exact ``P(cell = j | S)`` as rows (one per ``S``) over all ``G`` cells."""
        w = self._counts(np.asarray(S, dtype=np.int64), self.L, np.arange(self.G)) / self.K
        g = float(self.gamma)
        return g * self.uniform_pmf[None, :] + (1 - g) * w

    def sample(self, S: NDArray[np.uint64], source: Source) -> NDArray[np.int64]:
        """Output cells for fixed-point window starts ``S`` (``0 <= S <= (G-L) K``)."""
        n = S.size
        narrow = np.uint16 if self.k == 16 else np.uint32
        V = np.frombuffer(source.random_bytes(n * np.dtype(narrow).itemsize), dtype=narrow)
        V64 = V.astype(np.uint64)
        shift = np.uint64(self.k)
        window: NDArray[np.uint64] = (S.astype(np.uint64) + np.uint64(self.L) * V64) >> shift
        uniform: NDArray[np.uint64] = (np.uint64(self.G) * V64) >> shift
        coin = bits(self.gamma_num, 32, n, source)
        return np.where(coin, uniform, window).astype(np.int64)


def window_epsilon(cells: int, window: int, k: int, gamma_num: int) -> float:
    """``ln(1 + (1-gamma) ceil(K/L) / (gamma floor(K/G)))``, rounded up (see :class:`SlidingWindow`)."""
    K = 1 << k
    gamma = Fraction(gamma_num, 1 << 32)
    return privacy.ln_up(1 + (1 - gamma) * (-(-K // window)) / (gamma * (K // cells)))


def calibrate_window(cells: int, window: int, k: int, epsilon: float) -> int:
    """The smallest uniform share ``gamma_num / 2**32`` whose window epsilon is <= ``epsilon``."""
    K = 1 << k
    growth = math.expm1(epsilon)
    gamma = 1.0 / (1.0 + growth * (K // cells) / (-(-K // window)))
    num = min((1 << 32) - 1, max(1, math.ceil(gamma * 2**32)))
    while num > 1 and window_epsilon(cells, window, k, num - 1) <= epsilon:
        num -= 1
    while window_epsilon(cells, window, k, num) > epsilon:
        if num == (1 << 32) - 1:
            raise ValueError(f"epsilon={epsilon} is too small for a {cells}-cell window")
        num += 1
    return num


@lru_cache(maxsize=64)
def sliding_window(cells: int, window: int, k: int, gamma_num: int) -> SlidingWindow:
    return SlidingWindow(cells, window, k, gamma_num)
