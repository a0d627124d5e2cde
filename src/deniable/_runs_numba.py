"""The run decoder of :func:`deniable._randomness.dyadic_packed`, compiled with numba.

Imported only through :mod:`deniable._accelerate`. It computes what
:func:`deniable._randomness._numpy_decoder` computes for one draw of random
bytes: the bytes are a stream of fair bits, most significant bit of each
byte first; each 1 ends a lane whose run held ``G`` 0s, and the lane's bit
is ``tables[row, min(G, width - 1)]`` (``row`` the lane's bit of ``select``
when there are two rows). Lane ``i`` is bit ``7 - i % 8`` of byte ``i // 8``
of ``out``, which holds 0s from ``lane0`` on.

It works a byte at a time: with the run so far capped at ``cap = width - 1``
(every longer run gives the same bit) as the state ``s``, a byte ``b`` ends
``popcount(b)`` lanes whose bits, first lane highest, are ``pattern[row, s,
b]`` (for one row; with two, each lane takes its row's bit). The next state
is the 0s after ``b``'s last 1 (capped), or ``s + 8`` (capped) for a zero
byte, so consecutive bytes do not wait on each other's table lookups, and
the output bits are appended without a branch (a flush branch taken half the
time would be mispredicted half the time). The pattern table is built once
per ``tables`` with numpy (:func:`deniable._randomness.run_patterns`).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from deniable._kernel_tables import run_patterns

__all__ = ["decide", "decoder"]

_COUNT = np.array([bin(b).count("1") for b in range(256)], dtype=np.int64)  # lanes a byte ends
_TRAILING = np.array([8] + [(b & -b).bit_length() - 1 for b in range(1, 256)], dtype=np.int64)  # 0s after its last 1

_READ_1D = numba.types.Array(numba.uint8, 1, "C", readonly=True)
_READ_3D = numba.types.Array(numba.uint8, 3, "C", readonly=True)
_SIGNATURE = numba.types.UniTuple(numba.int64, 2)(
    _READ_1D, numba.int64, _READ_3D, _READ_1D, numba.uint8[::1], numba.int64, numba.int64
)


def _decide(octets: Any, carried: int, pattern: Any, select: Any, out: Any, lane0: int, need: int) -> tuple[int, int]:
    """Decide up to ``need`` lanes from ``octets``; returns ``(lanes decided, 0s after the last 1)``.

    ``carried``: the 0s at the end of the previous draw (the run in
    progress). The returned count of 0s (exact, not capped) matters only
    when fewer than ``need`` lanes were decided.
    """
    cap = pattern.shape[1] - 1
    two = pattern.shape[0] == 2
    flat0 = pattern[0].ravel()
    flat1 = pattern[-1].ravel()
    size = octets.size
    state = min(carried, cap)
    zeros = carried
    done = 0
    pos = lane0 >> 3  # the byte of out being filled
    nacc = lane0 & 7  # bits in acc not yet written
    acc = np.int64(out[pos] >> (8 - nacc)) if nacc else np.int64(0)
    nsel = select.size
    for i in range(size):
        b = np.int64(octets[i])
        if b == 0:
            state = min(state + 8, cap)
            zeros += 8
            continue
        cnt = _COUNT[b]
        pat = np.int64(flat0[(state << 8) | b])
        if two:
            lane = lane0 + done
            k = lane >> 3
            window = np.int64(select[k]) << 8
            if k + 1 < nsel:
                window |= np.int64(select[k + 1])
            sel = (window >> (16 - (lane & 7) - cnt)) & ((1 << cnt) - 1)
            pat = (pat & ~sel) | (np.int64(flat1[(state << 8) | b]) & sel)
        if done + cnt >= need:
            take = need - done
            acc = (acc << take) | (pat >> (cnt - take))
            nacc += take
            while nacc >= 8:
                nacc -= 8
                out[pos] = np.uint8((acc >> nacc) & 0xFF)
                pos += 1
            acc &= (1 << nacc) - 1
            if nacc:
                out[pos] = np.uint8((acc << (8 - nacc)) & 0xFF)
            return need, 0
        acc = (acc << cnt) | pat
        nacc += cnt
        done += cnt
        full = nacc >> 3  # a byte of out is complete (without a branch: it would be mispredicted half the time)
        nacc &= 7
        out[pos] = np.uint8((acc >> nacc) & 0xFF)
        pos += full
        acc &= (1 << nacc) - 1
        zeros = _TRAILING[b]
        state = min(zeros, cap)  # a byte with a 1 forgets the state before it
    if nacc:
        out[pos] = np.uint8((acc << (8 - nacc)) & 0xFF)
    return done, zeros


try:  # compiled once, then loaded from numba's cache (next to this file, or in the user's cache directory)
    decide = numba.njit(_SIGNATURE, nogil=True, cache=True)(_decide)
except RuntimeError:  # no writable cache location: compile in every process
    decide = numba.njit(_SIGNATURE, nogil=True)(_decide)


def decoder(tables: NDArray[np.uint8]) -> Any:
    """``decode(octets, carried, select, out, lane0, need)``: :func:`decide` with the byte tables of ``tables``
    (:func:`deniable._randomness.run_patterns`)."""
    pattern = run_patterns(tables)

    def decode(octets: Any, carried: int, select: Any, out: Any, lane0: int, need: int) -> tuple[int, int]:
        return decide(octets, carried, pattern, select, out, lane0, need)

    return decode
