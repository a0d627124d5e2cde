"""The tables the numpy decoders and their compiled twins share: a leaf, numpy only.

:mod:`deniable._randomness` and :mod:`deniable._skips` decode random bits with
numpy; the numba kernels (``deniable._runs_numba``, ``deniable._skips_numba``),
loaded through :mod:`deniable._accelerate`, decode the same bits compiled. Both
read the tables below, which live here so that the kernels import neither
sampler (each sampler imports :mod:`deniable._accelerate`, which loads the
kernels): the run decoder's per-byte patterns (:func:`run_patterns`) and the
gap decoder's bounds (:class:`SkipTable`, built by
:func:`deniable._skips.skip_table`) and status codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

__all__ = ["LANES_PER_BYTE", "patterns", "run_patterns", "MORE", "DONE", "STRADDLES", "SkipTable"]

LANES_PER_BYTE = np.bitwise_count(np.arange(256, dtype=np.uint8))
"""The 1s of each byte: the lanes it ends."""


@lru_cache(maxsize=64)
def patterns(tables: bytes, rows: int) -> NDArray[np.uint8]:
    """:func:`run_patterns` of the ``rows`` rows held in ``tables`` (their bytes, row after row), cached."""
    table = np.frombuffer(tables, dtype=np.uint8).reshape(rows, -1)
    cap = table.shape[1] - 1
    every = np.arange(256)
    g = np.repeat(np.arange(cap + 1)[:, None], 256, axis=1)
    pattern = np.zeros((rows, cap + 1, 256), dtype=np.int64)
    for shift in range(7, -1, -1):
        one = ((every >> shift) & 1).astype(bool)[None, :]
        bit = table[:, np.minimum(g, cap)]  # (rows, states, bytes): a lane ending here
        pattern = np.where(one, pattern << 1 | bit, pattern)
        g = np.where(one, 0, g + 1)
    pattern_u8 = pattern.astype(np.uint8)
    pattern_u8.flags.writeable = False
    return pattern_u8


def run_patterns(tables: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """``pattern[row, state, byte]``: the bits of the lanes byte ``byte`` ends, for the rows of ``tables``.

    ``state`` is the run carried into the byte (the 0s since the last 1),
    capped at ``cap = width - 1`` (every longer run gives the same bit). A
    byte ends ``popcount(byte)`` lanes; their bits, the first lane highest,
    are the low bits of the entry. Cached per ``tables``.
    """
    return patterns(np.ascontiguousarray(tables, dtype=np.uint8).tobytes(), tables.shape[0])


MORE, DONE, STRADDLES = 0, 1, 2
"""A decoder's status: the words ran out, the stream is complete, or the word at the index straddles a bound."""


@dataclass(frozen=True, eq=False)
class SkipTable:
    """The bounds of ``S(k) = (1 - numerator / 2**bits)**k`` for ``k = 0 .. cap``, in units of ``2**-32``.

    ``low[k] = floor(S(k) 2**32)`` and ``high[k] = ceil(S(k) 2**32)``
    (``uint64``: ``S(0) = 1`` is ``2**32``); ``log_keep = ln(1 - q)``, the
    float that guesses ``k``; ``draws_per_bit = q / (1 - S(cap))``, the
    words a stream needs per bit on average.
    """

    numerator: int
    bits: int
    cap: int
    low: NDArray[np.uint64]
    high: NDArray[np.uint64]
    log_keep: float
    draws_per_bit: float
