"""Compiled loops of the count-mean sketches and of bit-packed column counts, with numba.

Imported only through :mod:`deniable._accelerate`. Each computes exactly what
its numpy reference computes (integer arithmetic only, so the results are
the same, not close):

* :func:`column_counts` is :func:`deniable._columns.column_counts`: it adds
  each row's bits, spread one to a byte by ``spread`` (the 64-bit word of
  a byte's 8 bits), into the row's group, at most 255 rows of a group in a
  word's byte lanes before they are flushed into the int64 counts;
* :func:`digests` is keyed BLAKE2b (RFC 7693) with a digest of up to 8
  bytes, as :mod:`hashlib` computes it, of many short messages
  (:func:`deniable.mechanisms._sketch.keyed_digests`): the key block is
  compressed once;
* :func:`bucket_matrix`, :func:`support_sums` (and :func:`matrix_sums`,
  from a bucket matrix) and :func:`collision_counts` are
  :meth:`deniable.mechanisms._sketch.Sketch.buckets` over every row, the
  sketch's sum over the rows, and the pairs of keys sharing a bucket
  (:meth:`~deniable.mechanisms._sketch.Sketch.collision_weights`). A
  bucket is ``lut[j, 0, x_0] ^ ... ^ lut[j, 7, x_7]`` for the fingerprint's
  bytes ``x_k = (phi >> 8k) & 0xFF`` (``h_j`` is linear over GF(2)).

The loops run row by row, so that a row's lookup table (and sketch row)
stay in the first-level cache while every key passes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

__all__ = ["column_counts", "bucket_matrix", "support_sums", "matrix_sums", "collision_counts", "digests"]

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


def _matrix_sums(sketch: Any, buckets: Any, out: Any) -> None:
    """``out[i] = sum_j sketch[j, buckets[j, i]]``."""
    out[:] = 0
    for j in range(buckets.shape[0]):
        line = sketch[j]
        chosen = buckets[j]
        for i in range(chosen.size):
            out[i] += line[chosen[i]]


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
matrix_sums = _jit(_matrix_sums)
collision_counts = _jit(_collision_counts)


# ---------------------------------------------------------------- BLAKE2b
_IV = np.array([0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
                0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179], dtype=np.uint64)
_SIGMA = np.array([
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4], [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13], [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11], [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5], [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
], dtype=np.int64)


def _rotr(x: Any, n: Any) -> Any:
    return (x >> np.uint64(n)) | (x << np.uint64(64 - n))


def _mix(a: Any, b: Any, c: Any, d: Any, x: Any, y: Any) -> tuple[Any, Any, Any, Any]:
    """BLAKE2b's G on four state words and two message words."""
    a = a + b + x
    d = rotr(d ^ a, 32)
    c = c + d
    b = rotr(b ^ c, 24)
    a = a + b + y
    d = rotr(d ^ a, 16)
    c = c + d
    b = rotr(b ^ c, 63)
    return a, b, c, d


def _compress(h: Any, block: Any, count: Any, last: Any, m: Any) -> None:
    """BLAKE2b's compression of one 128-byte ``block`` into the state ``h`` (``count``: bytes so far)."""
    for i in range(16):
        word = np.uint64(0)
        for b in range(8):
            word |= np.uint64(block[8 * i + b]) << np.uint64(8 * b)
        m[i] = word
    v0, v1, v2, v3, v4, v5, v6, v7 = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    v8, v9, v10, v11, v12, v13, v14, v15 = _IV[0], _IV[1], _IV[2], _IV[3], _IV[4], _IV[5], _IV[6], _IV[7]
    v12 ^= np.uint64(count)
    if last:
        v14 = ~v14
    for r in range(12):
        s = _SIGMA[r]
        v0, v4, v8, v12 = mix(v0, v4, v8, v12, m[s[0]], m[s[1]])
        v1, v5, v9, v13 = mix(v1, v5, v9, v13, m[s[2]], m[s[3]])
        v2, v6, v10, v14 = mix(v2, v6, v10, v14, m[s[4]], m[s[5]])
        v3, v7, v11, v15 = mix(v3, v7, v11, v15, m[s[6]], m[s[7]])
        v0, v5, v10, v15 = mix(v0, v5, v10, v15, m[s[8]], m[s[9]])
        v1, v6, v11, v12 = mix(v1, v6, v11, v12, m[s[10]], m[s[11]])
        v2, v7, v8, v13 = mix(v2, v7, v8, v13, m[s[12]], m[s[13]])
        v3, v4, v9, v14 = mix(v3, v4, v9, v14, m[s[14]], m[s[15]])
    h[0] ^= v0 ^ v8
    h[1] ^= v1 ^ v9
    h[2] ^= v2 ^ v10
    h[3] ^= v3 ^ v11
    h[4] ^= v4 ^ v12
    h[5] ^= v5 ^ v13
    h[6] ^= v6 ^ v14
    h[7] ^= v7 ^ v15


def _digests(data: Any, ends: Any, key: Any, person: Any, size: Any, out: Any) -> None:
    """``out[i]``: keyed BLAKE2b (``size`` bytes of digest, 1..8; ``person``; a non-empty ``key``)
    of ``data[ends[i - 1]:ends[i]]``, its bytes read as a little-endian integer.

    The key block is compressed once; each message continues from that state
    (an empty message ends with the key block itself).
    """
    m = np.empty(16, dtype=np.uint64)
    block = np.zeros(128, dtype=np.uint8)
    initial = _IV.copy()
    initial[0] ^= np.uint64(0x01010000 | (key.size << 8) | size)
    for j in range(2):
        for b in range(8):
            initial[6 + j] ^= np.uint64(person[8 * j + b]) << np.uint64(8 * b)
    block[: key.size] = key
    keyed = initial.copy()
    compress(keyed, block, 128, False, m)
    h = np.empty(8, dtype=np.uint64)
    mask = np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * size)  # the digest's bytes of h[0]
    start = 0
    for i in range(ends.size):
        stop = ends[i]
        size = stop - start
        if size == 0:
            h[:] = initial
            block[:] = 0
            block[: key.size] = key
            compress(h, block, 128, True, m)
        else:
            h[:] = keyed
            done = 0
            while done < size:
                take = min(128, size - done)
                block[:] = 0
                block[:take] = data[start + done : start + done + take]
                done += take
                compress(h, block, 128 + done, done == size, m)
        out[i] = h[0] & mask
        start = stop


rotr = _jit(_rotr)
mix = _jit(_mix)
compress = _jit(_compress)
digests = _jit(_digests)
