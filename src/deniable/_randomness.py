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
probability ``c / 2**w`` compare uniform bits with the binary expansion of
``c`` (most significant bit first), a lane being decided at the first bit
that differs: a run of one random bit stream per lane, 2 random bits per
output bit on average, not a float. Large batches decode the stream with
numba when it is installed (:mod:`deniable._accelerate`): the same bits for
the same bytes. For probabilities below 1/16, :mod:`deniable._skips` finds
the 1s of a stream by exact geometric gaps instead, for about ``32 q``
random bits per output bit.

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
from functools import lru_cache
from typing import Any, Protocol, TypeAlias

import numpy as np
from numpy.typing import NDArray

from deniable import _accelerate as accelerate
from deniable._kernel_tables import LANES_PER_BYTE, patterns, run_patterns

__all__ = [
    "RNGLike",
    "Source",
    "SecureSource",
    "GeneratorSource",
    "words_below",
    "resolve",
    "uniform_words",
    "uniform_below",
    "expansion_table",
    "run_patterns",
    "dyadic_packed",
    "bernoulli_packed",
    "bernoulli_words",
    "bernoulli_bits",
    "bernoulli",
    "below",
    "fixed_point",
    "randomized_round",
    "TWO64",
]

RNGLike: TypeAlias = "None | int | np.random.SeedSequence | np.random.Generator | Source"
"""What ``rng=`` accepts: ``None`` for the OS CSPRNG (private), a seed or Generator for simulation (not private)."""

_U32 = 1 << 32
TWO64 = 1 << 64
"""2**64: a 64-bit threshold ``T`` stands for the probability ``T / TWO64``."""
_STUCK_BITS = 1 << 16  # more zero bits in a row than this: the source is broken (2**-65536 for a fair one)
_BLOCK_LANES = 1 << 16  # Bernoulli bits decided at a time (under 0.3 MiB of working memory)
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
    return words_below(bound, size, source).astype(np.uint64, copy=False)


def words_below(bound: int, size: int, source: Source) -> NDArray[np.uint32] | NDArray[np.uint64]:
    """:func:`uniform_below` in the words drawn: uint32 when ``bound <= 2**32``, else uint64 (the same
    values, with no widening pass)."""
    if not 1 <= bound <= TWO64:
        raise ValueError(f"bound must be in [1, 2**64]; got {bound}")
    if bound == 1:
        return np.zeros(size, dtype=np.uint32)
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
    if limit == bound:  # bound > span / 2: every accepted word is already below it
        pass
    elif bound & (bound - 1) == 0:
        out &= dtype(bound - 1)
    else:
        out %= dtype(bound)
    return out


def scalar_below(bound: int, source: Source) -> int:
    """One integer uniform in ``[0, bound)``; :mod:`secrets` on the secure path."""
    if source is SECURE:
        return secrets.randbelow(bound)
    return int(uniform_below(bound, 1, source)[0])


def expansion_table(numerator: int, bits: int) -> NDArray[np.uint8]:
    """The outcome of ``U < numerator / 2**bits`` by where a lazy comparison stops.

    Entry ``G < bits`` is bit ``G`` of the numerator (most significant
    first): the comparison decided at the first bit ``G`` where ``U`` and the
    numerator differ. Entry ``bits`` is the outcome when they never differ,
    ``U == numerator``: False, except for the certain ``2**bits`` (all True).
    """
    if not 0 <= numerator <= (1 << bits):
        raise ValueError(f"numerator must be in [0, 2**bits]; got {numerator}/{1 << bits}")
    if numerator == 1 << bits:
        return np.ones(bits + 1, dtype=np.uint8)
    return np.array([(numerator >> (bits - 1 - j)) & 1 for j in range(bits)] + [0], dtype=np.uint8)


def _stuck(carried: int) -> None:
    if carried > _STUCK_BITS:
        raise RuntimeError(
            f"the random source returned {carried} zero bits in a row (probability 2**-{carried}): "
            "it is broken or stuck"
        )


@lru_cache(maxsize=64)
def _aligned(tables: bytes, rows: int) -> NDArray[np.uint16]:
    pattern = patterns(tables, rows).astype(np.int64)
    aligned = ((pattern << (16 - LANES_PER_BYTE.astype(np.int64))) & 0xFFFF).astype(np.uint16)
    aligned = aligned.reshape(rows, -1)
    aligned.flags.writeable = False
    return aligned


def _numpy_decoder(tables: NDArray[np.uint8]) -> Any:
    """``decode(octets, carried, select, out, lane0, need) -> (decided, zeros)`` in numpy.

    What the compiled decoder (:mod:`deniable._accelerate`) computes, a byte
    at a time but for all the bytes of a draw at once: each byte's run
    carried in (the trailing 0s of the byte before it, 8 more per zero
    byte, capped), its lanes' bits from :func:`run_patterns` (left-aligned
    in 16 bits), its first lane from a cumulative count of 1s, and the bit
    fields, shifted to their place, summed per output byte by ``bincount``
    (they do not overlap, so the sum is their OR). Every array is per byte
    of randomness (a quarter of a lane), none per lane or per random bit.
    """
    raw = np.ascontiguousarray(tables, dtype=np.uint8).tobytes()
    aligned = _aligned(raw, tables.shape[0])
    cap = aligned.shape[1] // 256 - 1
    index = np.uint16 if cap < 256 else np.int64  # state << 8 | byte

    def decode(
        octets: NDArray[np.uint8], carried: int, select: NDArray[np.uint8], out: NDArray[np.uint8],
        lane0: int, need: int,
    ) -> tuple[int, int]:
        b = octets
        count = np.bitwise_count(b)
        ends = np.cumsum(count, dtype=np.int32)  # lanes decided up to each byte
        total = int(ends[-1]) if b.size else 0
        if total == 0:
            return 0, carried + 8 * b.size
        zeros = 0
        if total < need:
            last = int(np.flatnonzero(b)[-1])
            lowest = int(b[last]) & -int(b[last])
            zeros = 8 * (b.size - 1 - last) + lowest.bit_length() - 1  # the 0s after the last 1
        else:  # the bytes up to the one that ends lane ``need``
            n = int(np.searchsorted(ends, need)) + 1
            b, count, ends = b[:n], count[:n], ends[:n]
        state: NDArray[Any] = np.empty(b.size, dtype=index)
        state[0] = min(carried, cap)
        if b.size > 1:
            low = np.bitwise_and(b[:-1], np.negative(b[:-1]))  # each byte's lowest 1
            low -= 1  # its trailing 0s as 1s: all 8 for a zero byte
            np.bitwise_count(low, out=state[1:])
            zero = np.flatnonzero(b[:-1] == 0)
            if zero.size:  # after a run of zero bytes from s: the state at s plus 8 per zero byte
                start = np.ones(zero.size, dtype=np.bool_)
                start[1:] = zero[1:] != zero[:-1] + 1
                first = np.maximum.accumulate(np.where(start, zero, 0))
                state[zero + 1] = np.minimum(cap, state[first] + 8 * (zero + 1 - first))
            if cap < 8:
                np.minimum(state, cap, out=state)
        state <<= 8
        state |= b
        bits = aligned[0].take(state)  # the byte's lanes, first lane at bit 15
        pos = ends - count  # each byte's first lane, from lane0 rounded down to a byte
        pos += lane0 & 7
        base = lane0 >> 3
        offset = (pos & 7).astype(np.uint16)
        if aligned.shape[0] == 2:  # each lane its select bit's row
            other = aligned[1].take(state)
            other ^= bits
            byte = pos >> 3
            byte += base
            window = select.take(byte, mode="clip").astype(np.uint16)
            window <<= 8
            byte += 1
            window |= select.take(byte, mode="clip")
            window <<= offset
            other &= window
            bits ^= other
        if total >= need:  # only the lanes up to ``need`` of the last byte
            keep = need - int(ends[-1] - count[-1])
            bits[-1] &= np.uint16((0xFFFF << (16 - keep)) & 0xFFFF)
        bits >>= offset
        pos >>= 3
        words = np.bincount(pos, weights=bits).astype(np.uint16)
        target = out[base : base + words.size + 1]
        target[: words.size] |= (words >> 8).astype(np.uint8)
        target[1:] |= words[: target.size - 1].astype(np.uint8)
        return min(total, need), zeros

    return decode


def _decide(
    kernel: Any, select: NDArray[np.uint8], out: NDArray[np.uint8], lane0: int, lanes: int, source: Source,
) -> None:
    """Lanes ``lane0 .. lane0 + lanes - 1`` (``lane0`` a multiple of 8) of :func:`dyadic_packed`.

    The lanes are the runs of one stream of fair bits, each ending at a 1
    (``G`` the 0s before it); draws of ``remaining // 4 + 64`` bytes until
    every lane has its run, the unused rest of the last draw discarded.
    ``kernel`` decodes one draw: the numpy decoder, or the compiled one
    (:func:`deniable._accelerate.run_decoder`), which give the same lanes
    from the same bytes.
    """
    done, carried = 0, 0
    while done < lanes:
        octets = uniform_words((lanes - done) // 4 + 64, np.uint8, source)
        got, carried = kernel(octets, carried, select, out, lane0 + done, lanes - done)
        if got == 0:
            _stuck(carried)
        done += got


def dyadic_packed(
    tables: NDArray[np.uint8], count: int, source: Source, select: NDArray[np.uint8] | None = None
) -> NDArray[np.uint8]:
    """``count`` independent Bernoulli bits decided lazily, packed as by :func:`numpy.packbits`.

    ``tables`` holds one or two :func:`expansion_table` rows (of the same
    width); with two, lane ``i`` uses row ``select``'s bit ``i`` (``select``
    packed the same way), so each lane has its own probability. Comparing a
    uniform ``U`` with the numerator ``c`` most significant bit first, a lane
    is decided at the first bit ``G`` where the two differ, to ``c_G`` (``U``
    has a 0 there exactly when ``c`` has a 1). Each random bit differs from
    ``c``'s with probability 1/2 whatever ``c``, so ``G`` is the number of 0s
    before the first 1 in a stream of fair bits, and consecutive lanes are
    the runs ending at consecutive 1s of one random stream: ``P(True) =
    sum_j c_j 2**-(j+1) = c`` exactly, lanes independent, 2 random bits per
    lane on average. The output is a deterministic function of the random
    bytes, whichever backend (:mod:`deniable._accelerate`) decodes the runs;
    lanes are decided in blocks of ``_BLOCK_LANES``, so the working memory is
    constant whatever ``count``.
    """
    out = np.zeros((count + 7) // 8, dtype=np.uint8)
    tables = np.ascontiguousarray(tables, dtype=np.uint8)
    if tables.ndim != 2 or tables.shape[0] not in (1, 2) or (tables.shape[0] == 2) != (select is not None):
        raise ValueError("dyadic_packed needs one table row, or two rows and a select array")
    rows = np.zeros((0,), dtype=np.uint8) if select is None else np.ascontiguousarray(select, dtype=np.uint8)
    kernel = (accelerate.run_decoder(count) or _numpy_decoder)(tables)
    for start in range(0, count, _BLOCK_LANES):
        _decide(kernel, rows, out, start, min(_BLOCK_LANES, count - start), source)
    return out


def bernoulli_packed(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.uint8]:
    """``count`` i.i.d. Bernoulli(``numerator / 2**bits``) bits, packed as by :func:`numpy.packbits`.

    ``ceil(count / 8)`` bytes, the unused low bits of the last byte 0. Each
    bit is ``U < numerator`` for an independent uniform ``bits``-bit ``U``,
    decided lazily (:func:`dyadic_packed`): 2 random bits per output bit on
    average; the certain numerators 0 and ``2**bits`` read nothing.
    """
    table = expansion_table(numerator, bits)
    if numerator in (0, 1 << bits):
        return np.packbits(np.full(count, numerator != 0))
    return dyadic_packed(table[None, :], count, source)


def bernoulli_words(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.uint64]:
    """``count`` 64-bit words whose bits are i.i.d. Bernoulli(``numerator / 2**bits``).

    The bits of :func:`bernoulli_packed`, 64 to a word.
    """
    return bernoulli_packed(numerator, bits, 64 * count, source).view(np.uint64)


def bernoulli(numerator: int, denominator: int, size: int, source: Source) -> NDArray[np.bool_]:
    """``size`` independent booleans, each True with probability exactly ``numerator/denominator``."""
    if not 0 <= numerator <= denominator:
        raise ValueError(f"probability {numerator}/{denominator} is not in [0, 1]")
    return uniform_below(denominator, size, source) < np.uint64(numerator)


def bernoulli_bits(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.bool_]:
    """``count`` i.i.d. booleans, each True with probability exactly ``numerator / 2**bits``.

    The bits of :func:`bernoulli_packed`, unpacked.
    """
    return np.unpackbits(bernoulli_packed(numerator, bits, count, source), count=count).view(np.bool_)


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
