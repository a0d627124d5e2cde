"""The fast Walsh-Hadamard transform and GF(2) parities shared by hashing and Hadamard response."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["fwht", "parity"]


def fwht(values: NDArray[np.int64]) -> NDArray[np.int64]:
    """Unnormalized Walsh-Hadamard transform of a length-2**L vector, exactly, in O(L 2**L).

    ``out[v] = sum_w values[w] * (-1)**popcount(v & w)``; a 2-D array is
    transformed row by row (all rows at once).
    """
    a = np.array(values, dtype=np.int64)
    if a.ndim not in (1, 2):
        raise ValueError(f"fwht needs a vector or a 2-D array of rows; got shape {a.shape}")
    size = a.shape[-1]
    if size & (size - 1):
        raise ValueError(f"fwht needs a power-of-two length; got {size}")
    if size <= 1 or a.size == 0:
        return a
    rows = a.reshape(-1, size)
    h = 1
    while h < size:
        view = rows.reshape(rows.shape[0], -1, 2, h)
        left = view[:, :, 0, :].copy()
        view[:, :, 0, :] += view[:, :, 1, :]
        view[:, :, 1, :] = left - view[:, :, 1, :]
        h *= 2
    return a


def parity(x: NDArray[np.unsignedinteger]) -> NDArray[np.uint8]:
    """Parity (popcount mod 2) of each unsigned integer."""
    return (np.bitwise_count(x) & 1).astype(np.uint8)
