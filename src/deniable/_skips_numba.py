"""The gap decoder of :func:`deniable._skips.sparse_packed`, compiled with numba.

Imported only through :mod:`deniable._accelerate`. It computes what
:func:`deniable._skips._numpy_decoder` computes, a word at a time: the float
``log`` guesses the gap ``k`` of a word ``u`` (its cell
``[u, u + 1) / 2**32``), the integer bounds of the table decide it (``k``
and ``k + 1`` are tried, at most one fits), and the word's 1 is set
(bit ``7 - p % 8`` of byte ``p // 8``) or, for a capped gap, ``cap`` 0s are
passed. A word whose cell straddles a bound stops the loop, for the exact
Python comparison.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from deniable._kernel_tables import DONE, MORE, STRADDLES, SkipTable

__all__ = ["decode"]


def _decode(words: Any, start: int, low: Any, high: Any, log_keep: float, cap: int, pos: int, count: int,
            out: Any) -> tuple[int, int, int]:
    for i in range(start, words.size):
        u = np.uint64(words[i])
        guess: int = min(int(math.log((u + 1) * 2.0**-32) / log_keep), cap)
        gap = -1
        for shift in (0, 1):
            k = guess + shift
            if k <= cap and u + 1 <= low[k] and (k == cap or high[k + 1] <= u):
                gap = k
                break
        if gap < 0:
            return pos, i, STRADDLES
        if gap == cap:
            pos += cap
        else:
            pos += gap
            if pos < count:
                out[pos >> 3] |= np.uint8(0x80 >> (pos & 7))
            pos += 1
        if pos >= count:
            return pos, i + 1, DONE
    return pos, words.size, MORE


try:  # compiled once, then loaded from numba's cache (next to this file, or in the user's cache directory)
    _compiled = numba.njit(nogil=True, cache=True)(_decode)
except RuntimeError:  # no writable cache location: compile in every process
    _compiled = numba.njit(nogil=True)(_decode)


def decode(words: Any, start: int, table: SkipTable, pos: int, count: int, out: Any) -> tuple[int, int, int]:
    """:func:`deniable._skips._numpy_decoder`'s contract, compiled."""
    result: tuple[int, int, int] = _compiled(words, start, table.low, table.high, table.log_keep, table.cap, pos,
                                             count, out)
    return result
