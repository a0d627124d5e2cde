"""Sparse Bernoulli bits: the 1s of a long stream found by exact geometric skips.

For a small probability ``q = c / 2**w`` most bits are 0, and deciding each
one (:func:`deniable._randomness.bernoulli_packed`, about 2 random bits per
output bit) reads far more randomness than the stream holds. Here the 1s are
found one gap at a time. The number of 0s before the next 1, ``G``, has
``P(G >= k) = S(k) = (1 - q)**k``, so ``G = k`` exactly when
``S(k + 1) <= W < S(k)`` for a uniform ``W`` in ``[0, 1)``.

``W`` is read 32 bits at a time: the word ``u`` places it in the cell
``[u, u + 1) / 2**32``, which decides ``G`` when the cell lies inside one
``[S(k + 1), S(k))``. That is checked against integer bounds,
``floor(S(k) 2**32)`` and ``ceil(S(k) 2**32)``, computed once per ``q`` with
integer arithmetic (:func:`skip_table`); the float ``log`` only guesses
``k``, so the outcome never depends on rounding. A cell that decides has
``k = floor(f(u + 1))``, ``f(x) = ln(x 2**-32) / ln(1 - q)``; the float
``f``, good to a few units in its last place, can fall below an integer
``k`` that the true one reaches (``k + 1`` is tried too), but not reach
``k + 1``: that needs ``S(k + 1) 2**32`` within ``1e-4`` below ``u + 1``,
inside the cell, which then straddles and is not decided. A cell that straddles a bound (about ``cap * 2**-32``
of them) reads 32 more bits at a time until it does not, each comparison
exact in Python integers. A gap is capped at ``cap`` (the largest with
``S(cap) >= 2**-20``, at most ``2**16``): a ``W`` below ``S(cap)`` means
``cap`` 0s and no 1 yet, after which the memoryless ``G`` starts again; a
gap running past the end of the stream is dropped (no 1 in the last ``r``
bits has probability ``S(r)``, which is what the dropped gap says). Every
bit is therefore Bernoulli(``q``) exactly, independently of the others, for
about ``32 q`` random bits per output bit (0.6 at the count-mean sketch's
``q = 0.018`` at epsilon 8) rather than 2.

Large calls decode the words with numba when it is installed
(:mod:`deniable._accelerate`); both backends place the same 1s for the same
random bytes.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _accelerate as accelerate
from deniable._kernel_tables import DONE, MORE, STRADDLES, SkipTable
from deniable._randomness import Source, bernoulli_packed, uniform_words

__all__ = ["SkipTable", "skip_table", "sparse_packed", "flips_packed", "SPARSE_BELOW"]

_CELL_BITS = 32  # bits of W per word
_FLOOR_LOG2 = 20  # the cap keeps S(cap) >= 2**-20
_MAX_CAP = 1 << 16
_GUARD = 64  # bits beyond 2**-_CELL_BITS kept while the bounds are computed
_BATCH = 1 << 18  # words drawn at a time at most (1 MiB)

SPARSE_BELOW = 1 / 16
"""The probability below which :func:`sparse_packed` reads less and runs faster than the lane decoder."""

@lru_cache(maxsize=32)
def skip_table(numerator: int, bits: int) -> SkipTable:
    """The :class:`SkipTable` of ``q = numerator / 2**bits`` (``0 < numerator < 2**bits``).

    ``S(k)`` is carried as integer lower and upper bounds with
    ``_GUARD`` extra bits (each step rounds the lower bound down and the
    upper one up), so the 32-bit bounds are rigorous.
    """
    if not 0 < numerator < 1 << bits:
        raise ValueError(f"skip_table needs 0 < numerator < 2**bits; got {numerator}/2**{bits}")
    keep = (1 << bits) - numerator
    log_keep = math.log1p(-numerator / (1 << bits))
    cap = int(min(_MAX_CAP, max(1, math.floor(_FLOOR_LOG2 * math.log(2) / -log_keep))))
    one = 1 << (_CELL_BITS + _GUARD)
    low, high = [one], [one]
    for _ in range(cap):
        low.append(low[-1] * keep >> bits)
        high.append(-(-high[-1] * keep >> bits))
    low64 = np.array([v >> _GUARD for v in low], dtype=np.uint64)
    high64 = np.array([-(-v >> _GUARD) for v in high], dtype=np.uint64)
    survive = float(low[-1]) / one  # S(cap), to float precision
    return SkipTable(numerator, bits, cap, low64, high64, log_keep, numerator / (1 << bits) / (1 - survive))


def _gaps(words: NDArray[np.uint32], table: SkipTable) -> NDArray[np.int64]:
    """Each word's gap ``G`` (``cap``: no 1 yet), or -1 where its cell straddles a bound."""
    u = words.astype(np.uint64)
    guess = np.minimum((np.log((u + 1) * 2.0**-_CELL_BITS) / table.log_keep).astype(np.int64), table.cap)
    out = np.full(u.size, -1, dtype=np.int64)
    for shift in (0, 1):  # at most one k fits a word
        k = np.minimum(guess + shift, table.cap)
        inside = u + 1 <= table.low[k]
        inside &= (k == table.cap) | (table.high[np.minimum(k + 1, table.cap)] <= u)
        out[inside] = k[inside]
    return out


def _numpy_decoder(
    words: NDArray[np.uint32], start: int, table: SkipTable, pos: int, count: int, out: NDArray[np.uint8],
) -> tuple[int, int, int]:
    """Place the 1s of ``words[start:]`` from bit ``pos`` on; returns ``(pos, index, status)``.

    ``status`` :data:`DONE`: bit ``count`` reached (``index`` is the next
    unused word); :data:`STRADDLES`: ``words[index]`` needs more bits (the
    words before it are placed); :data:`MORE`: every word used.
    """
    gaps = _gaps(words[start:], table)
    bad = np.flatnonzero(gaps < 0)
    usable = int(bad[0]) if bad.size else gaps.size
    gaps = gaps[:usable]
    capped = gaps == table.cap
    ends = pos + np.cumsum(np.where(capped, table.cap, gaps + 1))
    last = int(np.searchsorted(ends, count))  # the first word that reaches the end
    status = DONE if last < usable else (STRADDLES if usable < words.size - start else MORE)
    used = min(last + 1, usable)
    ones = ends[:used][~capped[:used]] - 1
    ones = ones[ones < count]
    np.bitwise_or.at(out, ones >> 3, (0x80 >> (ones & 7)).astype(np.uint8))
    return (int(ends[used - 1]) if used else pos), start + used, status


def _straddler(word: int, table: SkipTable, source: Source) -> int:
    """The gap of a word whose cell straddles a bound: 32 more bits at a time, compared exactly.

    With ``L`` bits read, ``W`` is in ``[v, v + 1) / 2**L``; ``G = k`` is
    certain when ``S(k + 1) <= v / 2**L`` and ``(v + 1) / 2**L <= S(k)``,
    ``S(k) = a**k / 2**(bits k)`` with ``a = 2**bits - numerator``. Ends:
    once ``L >= bits * cap`` no cell straddles a bound.
    """
    a, b, cap = (1 << table.bits) - table.numerator, table.bits, table.cap
    v, size = word, _CELL_BITS
    while True:
        v = v << _CELL_BITS | int(uniform_words(1, np.uint32, source)[0])
        size += _CELL_BITS
        guess = min(cap, int((math.log(v + 1) - size * math.log(2)) / table.log_keep))
        for k in (guess, guess - 1, guess + 1):
            if not 0 <= k <= cap or (v + 1) << (b * k) > a**k << size:
                continue
            if k == cap or a ** (k + 1) << size <= v << (b * (k + 1)):
                return k


def sparse_packed(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.uint8]:
    """``count`` i.i.d. Bernoulli(``numerator / 2**bits``) bits, packed as by :func:`numpy.packbits`.

    The same law as :func:`deniable._randomness.bernoulli_packed`, for
    about ``32 q`` random bits per output bit (see the module docstring):
    the cheaper of the two below :data:`SPARSE_BELOW` (they cost about the
    same near ``q = 0.07``).
    """
    table = skip_table(numerator, bits)
    out = np.zeros((count + 7) // 8, dtype=np.uint8)
    decode = accelerate.skip_decoder(count) or _numpy_decoder
    pos = 0
    while pos < count:
        expected = (count - pos) * table.draws_per_bit
        words = uniform_words(min(_BATCH, int(expected + 4 * math.sqrt(expected)) + 16), np.uint32, source)
        index, status = 0, MORE
        while status != DONE and index < words.size:
            pos, index, status = decode(words, index, table, pos, count, out)
            if status == STRADDLES:
                pos = _place(pos, _straddler(int(words[index]), table, source), table.cap, count, out)
                status = DONE if pos >= count else MORE
                index += 1
    return out


def flips_packed(numerator: int, bits: int, count: int, source: Source) -> NDArray[np.uint8]:
    """``count`` i.i.d. Bernoulli(``numerator / 2**bits``) bits packed, by the cheaper exact sampler:
    :func:`sparse_packed` below :data:`SPARSE_BELOW`, else :func:`deniable._randomness.bernoulli_packed`."""
    if 0 < numerator < (1 << bits) * SPARSE_BELOW:
        return sparse_packed(numerator, bits, count, source)
    return bernoulli_packed(numerator, bits, count, source)


def _place(pos: int, gap: int, cap: int, count: int, out: NDArray[Any]) -> int:
    """Bit ``pos + gap`` set (unless the gap is capped or past the end); the next position."""
    if gap == cap:
        return pos + cap
    one = pos + gap
    if one < count:
        out[one >> 3] |= 0x80 >> (one & 7)
    return one + 1
