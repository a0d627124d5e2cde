"""Column counts of bit-packed reports: how many reports (of each group) set each bit.

A report is ``B`` bytes of packed bits (``numpy.packbits`` with
``bitorder`` ``"big"``, bit ``c`` of the report being bit ``7 - c % 8`` of
byte ``c // 8``, or ``"little"``, bit ``c % 8``). :func:`column_counts`
returns ``C[g, c]``, the reports of group ``g`` with bit ``c`` set, exactly.

The bits are unpacked one to a byte, and up to 255 reports of one group
are added byte by byte without widening (no byte can exceed 255), then
into int64. numpy sums blocks of 255 reports (one group), or, for groups,
sorts the reports by group and adds each run of one group 8 bytes at a time
as 64-bit words (no carry can cross a byte lane) with ``add.reduceat``;
with numba (:mod:`deniable._accelerate`) a compiled loop keeps each
group's words (a byte's bits spread to a word by a lookup) and needs no
sort. Both give the same counts.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from deniable import _accelerate as accelerate
from deniable._cores import cores, may_split

__all__ = ["column_counts", "spread_table"]

_LANES = 255  # reports a byte lane of a word can add before it could overflow
_PART_BITS = 1 << 23  # report bits per thread at least (1 MiB of packed reports) when a count is split
_BLOCK_BYTES = 1 << 19  # packed bytes unpacked at a time by numpy (4 MiB of bits, one to a byte)


def spread_table(bitorder: Literal["big", "little"]) -> NDArray[np.uint64]:
    """``table[v]``: the 64-bit word whose byte lanes (in memory order) are byte ``v``'s bits in ``bitorder``."""
    values = np.arange(256, dtype=np.uint8)[:, None]
    return np.unpackbits(values, axis=1, bitorder=bitorder).view(np.uint64).ravel()


_SPREAD = {"big": spread_table("big"), "little": spread_table("little")}


def column_counts(
    packed: NDArray[np.uint8], groups: NDArray[np.int64] | None = None, size: int = 1,
    bitorder: Literal["big", "little"] = "big",
) -> NDArray[np.int64]:
    """``C[g, c]``: the rows of ``packed`` in group ``g`` (``groups[i]`` in ``0..size-1``; None: all in
    group 0) with bit ``c`` set, shape ``(size, 8 B)`` for ``B``-byte rows packed in ``bitorder``.

    A large call (at least ``2 * _PART_BITS`` bits) made from the main thread is counted in consecutive
    parts of rows, one thread each up to the cores (:mod:`deniable._cores`), and the parts' counts
    added: the same integers."""
    packed = np.asarray(packed, dtype=np.uint8)  # rows may be strided (a field of structured reports)
    rows, width = packed.shape
    parts = min(cores(), rows * width * 8 // _PART_BITS, rows) if may_split() else 1
    if parts < 2:
        return _counts(packed, groups, size, bitorder)
    bounds = np.linspace(0, rows, parts + 1).astype(int)
    cuts = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    with ThreadPoolExecutor(parts) as pool:  # numpy's unpacking and sums, and the compiled loop, release the GIL
        counted = list(pool.map(lambda cut: _counts(packed[cut], None if groups is None else groups[cut], size,
                                                     bitorder), cuts))
    total: NDArray[np.int64] = np.sum(counted, axis=0)
    return total


def _counts(
    packed: NDArray[np.uint8], groups: NDArray[np.int64] | None, size: int, bitorder: Literal["big", "little"],
) -> NDArray[np.int64]:
    """:func:`column_counts` in the calling thread."""
    rows, width = packed.shape
    out = np.zeros((size, 8 * width), dtype=np.int64)
    if rows == 0:
        return out
    group = np.zeros(rows, dtype=np.int64) if groups is None else np.ascontiguousarray(groups, dtype=np.int64)
    spread = _SPREAD[bitorder]
    kernels = accelerate.sketch_kernels(rows * width * 8)
    if kernels is not None:
        kernels.column_counts(packed, group, spread, out)
        return out
    step = max(_LANES, _BLOCK_BYTES // width // _LANES * _LANES)
    if groups is None:  # blocks of 255 reports summed in uint8, then in int64
        for start in range(0, rows, step):
            bits = np.unpackbits(packed[start : start + step], axis=1, bitorder=bitorder)
            whole = bits.shape[0] // _LANES * _LANES
            out[0] += bits[:whole].reshape(-1, _LANES, bits.shape[1]).sum(axis=1, dtype=np.uint8).sum(
                axis=0, dtype=np.int64)
            out[0] += bits[whole:].sum(axis=0, dtype=np.int64)
        return out
    order = np.argsort(group, kind="stable")
    for start in range(0, rows, step):
        chosen = order[start : start + step]
        labels = group[chosen]
        bits = np.unpackbits(packed[chosen], axis=1, bitorder=bitorder)
        # runs of one group, cut every 255 reports; each run's words added as integers (8 byte lanes each)
        at = np.arange(labels.size)
        head = np.ones(labels.size, dtype=bool)
        head[1:] = labels[1:] != labels[:-1]
        run_start = np.maximum.accumulate(np.where(head, at, 0))
        cuts = np.flatnonzero((at - run_start) % _LANES == 0)
        lanes = np.add.reduceat(bits.view(np.uint64), cuts, axis=0).view(np.uint8)
        owners = labels[cuts]
        heads = np.flatnonzero(np.append(True, owners[1:] != owners[:-1]))
        out[owners[heads]] += np.add.reduceat(lanes, heads, axis=0, dtype=np.int64)
    return out
