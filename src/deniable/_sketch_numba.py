"""Compiled loops of the count-mean sketches and of bit-packed column counts, with numba.

Imported only through :mod:`deniable.accelerate`. Each computes exactly what
its numpy reference computes (integer arithmetic only, so the results are
the same, not close):

* :func:`column_counts` is :func:`deniable.columns.column_counts`: it adds
  each row's bits, spread one to a byte by ``spread`` (the 64-bit word of
  a byte's 8 bits), into the row's group, at most 255 rows of a group in a
  word's byte lanes before they are flushed into the int64 counts;
* :func:`bucket_matrix`, :func:`support_sums` and :func:`collision_counts`
  are :meth:`deniable.mechanisms.sketch.Sketch.buckets` over every row,
  the sketch's sum over the rows, and the pairs of keys sharing a bucket
  (:meth:`~deniable.mechanisms.sketch.Sketch.collision_weights`). A
  bucket is ``lut[j, 0, x_0] ^ ... ^ lut[j, 7, x_7]`` for the fingerprint's
  bytes ``x_k = (phi >> 8k) & 0xFF`` (``h_j`` is linear over GF(2)).

The loops run row by row, so that a row's lookup table (and sketch row)
stay in the first-level cache while every key passes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

__all__ = ["column_counts", "bucket_matrix", "support_sums", "collision_counts"]

_LANES = 255  # rows a byte lane of a word can add before it could overflow


def _column_counts(packed: Any, groups: Any, spread: Any, out: Any) -> None:
    """``out[g, 8 w + b] += `` bit ``b`` (in ``spread``'s order) of byte ``w``, over the rows of group ``g``."""
    words = packed.shape[1]
    size = out.shape[0]
    acc = np.zeros((size, words), dtype=np.uint64)
    fill = np.zeros(size, dtype=np.int64)
    for i in range(packed.shape[0]):
        g = groups[i]
        row = acc[g]
        for w in range(words):
            row[w] += spread[packed[i, w]]
        fill[g] += 1
        if fill[g] == _LANES:
            lanes = row.view(np.uint8)
            for c in range(lanes.size):
                out[g, c] += lanes[c]
            row[:] = 0
            fill[g] = 0
    for g in range(size):
        if fill[g]:
            lanes = acc[g].view(np.uint8)
            for c in range(lanes.size):
                out[g, c] += lanes[c]


def _bucket(table: Any, x: Any) -> Any:
    return (table[0, x & 0xFF] ^ table[1, (x >> 8) & 0xFF] ^ table[2, (x >> 16) & 0xFF]
            ^ table[3, (x >> 24) & 0xFF] ^ table[4, (x >> 32) & 0xFF] ^ table[5, (x >> 40) & 0xFF]
            ^ table[6, (x >> 48) & 0xFF] ^ table[7, (x >> 56) & 0xFF])


def _bucket_matrix(lut: Any, fps: Any, out: Any) -> None:
    """``out[j, i] = h_j(fps[i])``."""
    for j in range(lut.shape[0]):
        table = lut[j]
        for i in range(fps.size):
            out[j, i] = bucket(table, fps[i])


def _support_sums(lut: Any, sketch: Any, fps: Any, out: Any) -> None:
    """``out[i] = sum_j sketch[j, h_j(fps[i])]``."""
    out[:] = 0
    for j in range(lut.shape[0]):
        table = lut[j]
        line = sketch[j]
        for i in range(fps.size):
            out[i] += line[bucket(table, fps[i])]


def _collision_counts(ours: Any, theirs: Any, width: Any, out: Any) -> None:
    """``out[i, k]`` += the rows ``j`` with ``ours[j, i] == theirs[j, k]`` (a bucket's keys listed per row)."""
    others = theirs.shape[1]
    start = np.zeros(width + 1, dtype=np.int64)
    listed = np.empty(others, dtype=np.int64)
    for j in range(ours.shape[0]):
        start[:] = 0
        for k in range(others):
            start[theirs[j, k] + 1] += 1
        for b in range(width):
            start[b + 1] += start[b]
        for k in range(others):  # counting sort of the keys by bucket (start[b] moves to the end of b's keys)
            b = theirs[j, k]
            listed[start[b]] = k
            start[b] += 1
        for i in range(ours.shape[1]):
            b = ours[j, i]
            stop = start[b]
            first = start[b - 1] if b else 0
            for s in range(first, stop):
                out[i, listed[s]] += 1


def _jit(fn: Any) -> Any:
    try:  # compiled once per argument types, then loaded from numba's cache
        return numba.njit(nogil=True, cache=True)(fn)
    except RuntimeError:  # no writable cache location: compile in every process
        return numba.njit(nogil=True)(fn)


bucket = _jit(_bucket)
column_counts = _jit(_column_counts)
bucket_matrix = _jit(_bucket_matrix)
support_sums = _jit(_support_sums)
collision_counts = _jit(_collision_counts)
