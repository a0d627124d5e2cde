"""Randomness: exact integer sampling from a secure or a seeded source.

Every device-side call takes ``rng``:

* ``rng=None`` (the default) reads the operating system's CSPRNG
  (``os.urandom`` for batches, :mod:`secrets` for single reports). Nothing is
  buffered or kept between calls, so a ``fork()`` shares no random state.
* ``rng=<int>``, a :class:`numpy.random.SeedSequence` or a
  :class:`numpy.random.Generator` selects the fast, reproducible simulation
  path. Its output is **not private**: a seeded generator is predictable.

Sampling is exact. A probability is always a ratio of integers ``a / D`` and
is realised by drawing an integer uniformly below ``D`` (by rejection, never
by scaling a float) and comparing it with ``a``. Bernoulli bits with a dyadic
probability ``c / 2**w`` are produced 64 at a time by a bit-sliced comparison
of uniform bits with the binary expansion of ``c`` (most significant bit
first), so each bit costs a handful of random bits, not a float.

Per-value probabilities are 64-bit thresholds: :func:`below` returns
``U < T`` for a uniform 64-bit ``U``, so ``P = T / 2**64`` exactly. Its batch
path compares one byte at a time, most significant first, and draws further
bytes only for lanes still tied (1 in 256 whatever ``T``), so a lane costs
about one random byte and a batch's extra bytes reveal at most how many
lanes tied, not which; the one-report path (``lazy=False``) always reads 8
bytes per lane. :func:`randomized_round` rounds ``x`` up with probability
``x - floor(x)`` taken exactly from the float, so ``E = x``.
"""

from __future__ import annotations

import os
import secrets
import sys
from typing import Any, Protocol, TypeAlias

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "RNGLike",
    "Source",
    "SecureSource",
    "GeneratorSource",
    "resolve",
    "uniform_words",
    "uniform_below",
    "bernoulli_words",
    "bernoulli_bits",
    "bernoulli",
    "below",
    "fixed_point",
    "randomized_round",
    "TWO64",
]

RNGLike: TypeAlias = "None | int | np.random.SeedSequence | np.random.Generator | Source"

_U32 = 1 << 32
TWO64 = 1 << 64  #: a 64-bit threshold ``T`` stands for the probability ``T / TWO64``
_MSB = list(range(7, -1, -1)) if sys.byteorder == "little" else list(range(8))  # bytes, most significant first


class Source(Protocol):
    """A supply of uniformly random bytes."""

    secure: bool

    def random_bytes(self, n: int) -> bytes: ...


class SecureSource:
    """The operating system's CSPRNG; stateless, so safe across ``fork()``."""

    secure = True

    def random_bytes(self, n: int) -> bytes:
        return os.urandom(n)

    def __repr__(self) -> str:
        return "SecureSource()"


class GeneratorSource:
    """A seeded numpy generator: fast and reproducible, for simulation only."""

    secure = False

    def __init__(self, generator: np.random.Generator) -> None:
        self.generator = generator

    def random_bytes(self, n: int) -> bytes:
        return self.generator.bytes(n)

    def __repr__(self) -> str:
        return f"GeneratorSource({self.generator!r})"


SECURE = SecureSource()


def resolve(rng: object) -> Source:
    """Turn an ``rng`` argument into a byte source.

    ``None`` means the OS CSPRNG (:class:`SecureSource`); an int seed, a
    ``SeedSequence`` or a numpy ``Generator`` means simulation
    (:class:`GeneratorSource`); a source is returned as is. Anything else,
    including ``bool`` and the legacy ``RandomState``, is a TypeError.
    """
    if rng is None:
        return SECURE
    if isinstance(rng, (SecureSource, GeneratorSource)):
        return rng
    if isinstance(rng, np.random.Generator):
        return GeneratorSource(rng)
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"rng must be None, an int seed or a numpy Generator; got {rng!r}")
    if isinstance(rng, (int, np.integer, np.random.SeedSequence)):
        return GeneratorSource(np.random.default_rng(rng))
    if isinstance(rng, np.random.RandomState):
        raise TypeError(
            "rng must be None, an int seed or a numpy Generator; the legacy RandomState "
            "is not accepted (use np.random.default_rng)"
        )
    raise TypeError(f"rng must be None, an int seed or a numpy Generator; got {rng!r}")


def uniform_words(count: int, dtype: type[np.unsignedinteger[Any]], source: Source) -> NDArray[Any]:
    """``count`` uniform unsigned integers of ``dtype`` (native byte order), as a read-only array."""
    size = np.dtype(dtype).itemsize
    return np.frombuffer(source.random_bytes(count * size), dtype=dtype)


def uniform_below(bound: int, size: int, source: Source) -> NDArray[np.uint64]:
    """``size`` integers drawn exactly uniformly from ``[0, bound)``.

    Uses 32-bit words when ``bound <= 2**32`` and 64-bit words otherwise;
    words at or above the largest multiple of ``bound`` are rejected and drawn
    again, so every value has probability exactly ``1 / bound``.
    """
    if not 1 <= bound <= TWO64:
        raise ValueError(f"bound must be in [1, 2**64]; got {bound}")
    if bound == 1:
        return np.zeros(size, dtype=np.uint64)
    wide = bound > _U32
    span = TWO64 if wide else _U32
    dtype = np.uint64 if wide else np.uint32
    limit = (span // bound) * bound
    out = uniform_words(size, dtype, source).copy()
    if limit < span:
        bad = np.flatnonzero(out >= limit)
        while bad.size:
            fresh = uniform_words(bad.size, dtype, source)
            out[bad] = fresh
            bad = bad[fresh >= limit]
    if bound & (bound - 1) == 0:
        out &= dtype(bound - 1)
    else:
        out %= dtype(bound)
    return out.astype(np.uint64, copy=False)


def scalar_below(bound: int, source: Source) -> int:
    """One integer uniform in ``[0, bound)``; :mod:`secrets` on the secure path."""
    if source is SECURE:
        return secrets.randbelow(bound)
    return int(uniform_below(bound, 1, source)[0])


def _settle(
    expansion: list[int], start: int, steps: int, result: NDArray[Any], mask: NDArray[Any], source: Source
) -> None:
    """Advance the bit-sliced comparison ``U < c`` by ``steps`` bits, in place.

    ``mask`` marks the lanes still undecided (their random prefix equals the
    numerator's). At bit ``j`` a lane whose random bit is 0 where ``c_j = 1``
    is settled to 1 (``U < c``); one whose bit is 1 where ``c_j = 0`` is
    settled to 0; equal bits leave it undecided.
    """
    random = uniform_words(steps * mask.size, mask.dtype.type, source).reshape(steps, mask.size)
    for s in range(steps):
        u = random[s]
        if expansion[start + s]:
            result |= mask & ~u
            mask &= u
        else:
            mask &= ~u


def bernoulli_words(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.uint64]:
    """``count`` 64-bit words whose bits are i.i.d. Bernoulli(``numerator / 2**bits``).

    Each bit is the outcome of ``U < numerator`` for an independent uniform
    ``bits``-bit integer ``U``, decided most significant bit first, 64 lanes
    per word operation. Every random bit settles half of the lanes it is
    spent on, so after 4 bits per lane over whole words only 1/16 of the
    lanes are open; those are finished byte by byte (8 lanes at a time, only
    the bytes with open lanes draw more bits), about 6 random bits per lane
    in all.
    """
    if not 0 <= numerator <= (1 << bits):
        raise ValueError(f"numerator must be in [0, 2**bits]; got {numerator}/{1 << bits}")
    if numerator == 1 << bits:
        return np.full(count, np.uint64(TWO64 - 1), dtype=np.uint64)
    result = np.zeros(count, dtype=np.uint64)
    if numerator == 0 or count == 0:
        return result
    expansion = [(numerator >> (bits - 1 - j)) & 1 for j in range(bits)]
    last = max(j for j, b in enumerate(expansion) if b) + 1  # later bits can only give 0
    first = min(4, last)
    mask = np.full(count, np.uint64(TWO64 - 1), dtype=np.uint64)
    _settle(expansion, 0, first, result, mask, source)
    lanes, open_lanes = result.view(np.uint8), mask.view(np.uint8)
    at = np.flatnonzero(open_lanes)
    open_part = open_lanes[at]
    step = first
    while step < last and at.size:
        steps = min(4, last - step)
        part = lanes[at]
        _settle(expansion, step, steps, part, open_part, source)
        lanes[at] = part
        keep = open_part != 0
        at, open_part = at[keep], open_part[keep]
        step += steps
    return result


def bernoulli(numerator: int, denominator: int, size: int, source: Source) -> NDArray[np.bool_]:
    """``size`` independent booleans, each True with probability exactly ``numerator/denominator``."""
    if not 0 <= numerator <= denominator:
        raise ValueError(f"probability {numerator}/{denominator} is not in [0, 1]")
    return uniform_below(denominator, size, source) < np.uint64(numerator)


def bernoulli_bits(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.bool_]:
    """``count`` i.i.d. booleans, each True with probability exactly ``numerator / 2**bits``.

    The bits of :func:`bernoulli_words`, unpacked in order.
    """
    words = bernoulli_words(numerator, bits, (count + 63) // 64, source)
    return np.unpackbits(words.view(np.uint8), count=count).view(np.bool_)


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
        strict: NDArray[np.bool_] = uniform_words(n, np.uint64, source) < t
        return strict
    octets = t.view(np.uint8).reshape(n, 8)  # byte j of a lane is octets[:, _MSB[j]]
    u = uniform_words(n, np.uint8, source)
    top = octets[:, _MSB[0]]
    out: NDArray[np.bool_] = u < top
    tied = np.flatnonzero(u == top)
    for j in range(1, 8):
        if tied.size == 0:
            break
        u = uniform_words(tied.size, np.uint8, source)
        tb = octets[tied, _MSB[j]]
        out[tied] = u < tb
        tied = tied[u == tb]
    return out  # lanes tied on all 8 bytes have U == T, i.e. not below


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
