"""The count-mean sketches' hash family: a string's bytes, its keyed fingerprint, its bucket in each row.

Used by :mod:`deniable.mechanisms._sketch` (CMS, HCMS) and by the discovery
protocols of :mod:`deniable.heavy`.

**Hashing** (fixed, so that any client computes the same buckets). A value
is a ``str``; its bytes are its UTF-8 encoding (``bytes`` holding valid UTF-8
are the same value as their text; the empty string is a value like any
other). The configuration carries a 32-byte ``seed``. Then

* fingerprint ``phi(x)`` = BLAKE2b(UTF-8(x), digest 8 bytes, key = seed,
  person = ``b"deniable:value"``) read as a little-endian 64-bit integer;
* row ``j``'s hash ``h_j(x) = T_j phi(x)`` over GF(2): bucket bit ``i`` is
  the parity of ``R[j, i] & phi(x)``, with the 64-bit mask ``R[j, i]`` =
  BLAKE2b(``j`` as 4 little-endian bytes + ``i`` as 1 byte, digest 8,
  key = seed, person = ``b"deniable:row"``).

For a uniformly random seed the matrices ``T_j`` are independent uniform
``log2(m) x 64`` matrices, so for distinct fingerprints ``x, y, d`` the
events ``h_j(x) = h_j(d)`` and ``h_j(y) = h_j(d)`` are independent, each of
probability ``1/m``. Fingerprints of distinct strings coincide with
probability ``2**-64``; that is the only approximation of the estimator
(:mod:`deniable.mechanisms._sketch_base`).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _accelerate as accelerate

__all__ = ["HASH_FAMILY", "SEED_BYTES", "text_bytes", "JoinedKeys", "keyed_digests", "row_masks"]

HASH_FAMILY = "blake2b-gf2"
"""The hash family's name in a sketch's configuration (``params.hash``)."""
SEED_BYTES = 32
"""Bytes of a sketch's seed, the key of every hash."""


def text_bytes(values: Any, name: str = "values") -> tuple[list[bytes], NDArray[np.int64]]:
    """The distinct values' UTF-8 bytes and each value's position among them.

    ``values`` are ``str`` (or ``bytes`` holding valid UTF-8, the same value
    as their text). TypeError names the first value of another type,
    ValueError the first bytes that are not UTF-8.
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of strings; got a single {type(values).__name__}")
    if isinstance(values, np.ndarray):
        values = values.tolist()
    items = list(values)
    with contextlib.suppress(TypeError):  # an unhashable value: the checks below name it
        # each value's position among the distinct ones, numbered as first met, in one pass at C speed
        numbered: defaultdict[Any, int] = defaultdict(itertools.count().__next__)
        found = np.fromiter(map(numbered.__getitem__, items), dtype=np.int64, count=len(items))
        if set(map(type, numbered)) <= {str}:  # every distinct value a str (a later one equal to it is it)
            return list(map(str.encode, numbered)), found  # UTF-8
    index: dict[str, int] = {}
    inverse = np.empty(len(items), dtype=np.int64)
    for i, v in enumerate(items):
        if type(v) is not str:
            if isinstance(v, bytes):
                try:
                    v = v.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(
                        f"{name}[{i}] is not valid UTF-8 ({exc.reason} at byte {exc.start}); got {v!r:.60}"
                    ) from None
            elif isinstance(v, str):
                v = str(v)
            else:
                raise TypeError(
                    f"{name}[{i}] must be a string (str, or UTF-8 bytes); got {type(v).__name__} {v!r:.60}"
                )
        inverse[i] = index.setdefault(v, len(index))
    return [v.encode("utf-8") for v in index], inverse


@dataclass(frozen=True, eq=False)
class JoinedKeys:
    """Byte strings stored end to end: key ``i`` is ``data[ends[i - 1]:ends[i]]`` (``ends[-1] = 0``).

    What :func:`keyed_digests` (and :meth:`~deniable.mechanisms._sketch_base.Sketch.privatize_keys`) take in
    place of a list when the keys are built with numpy, as the prefix
    extending protocol's level keys are.
    """

    data: NDArray[np.uint8]
    ends: NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.ends.size)

    def split(self) -> list[bytes]:
        """The keys as a list of ``bytes``."""
        raw, ends = self.data.tobytes(), self.ends.tolist()
        return [raw[a:b] for a, b in zip([0, *ends], ends, strict=False)]


def keyed_digests(data: Sequence[bytes] | JoinedKeys, key: bytes, person: bytes, size: int) -> NDArray[np.uint64]:
    """BLAKE2b of each of ``data`` (``key``, ``person``, a digest of ``size`` bytes in 1..8), read as a
    little-endian integer. With numba (:mod:`deniable._accelerate`) a compiled BLAKE2b hashes the
    batch; else :mod:`hashlib`, from one copy of the keyed state per message. Both give hashlib's."""
    if not key or not 1 <= size <= 8:
        raise ValueError(f"keyed_digests needs a key and a digest of 1..8 bytes; got {len(key)} and {size}")
    kernels = accelerate.sketch_kernels(64 * len(data))
    if kernels is not None:
        out = np.empty(len(data), dtype=np.uint64)
        if isinstance(data, JoinedKeys):
            joined, ends = np.ascontiguousarray(data.data), np.ascontiguousarray(data.ends, dtype=np.int64)
        else:
            ends = np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)))
            joined = np.frombuffer(b"".join(data), dtype=np.uint8)
        padded = np.frombuffer(person.ljust(16, b"\0"), dtype=np.uint8)  # as BLAKE2b pads it
        kernels.digests(joined, ends, np.frombuffer(key, dtype=np.uint8), padded, size, out)
        return out
    if isinstance(data, JoinedKeys):
        data = data.split()
    keyed = hashlib.blake2b(digest_size=size, key=key, person=person)
    digests = []
    for d in data:  # a copy of the keyed state: the key block is hashed once
        h = keyed.copy()
        h.update(d)
        digests.append(h.digest().ljust(8, b"\0"))
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64)


def row_masks(seed: bytes, rows: int, bits: int) -> NDArray[np.uint64]:
    """``R[j, i]``: the 64-bit mask whose parity with a fingerprint is bit ``i`` of row ``j``'s bucket
    (BLAKE2b of ``j`` in 4 little-endian bytes and ``i`` in one, keyed by ``seed``, person ``deniable:row``)."""
    masks = np.empty((rows, bits), dtype=np.uint64)
    for j in range(rows):
        for i in range(bits):
            digest = hashlib.blake2b(
                j.to_bytes(4, "little") + bytes([i]), digest_size=8, key=seed, person=b"deniable:row"
            ).digest()
            masks[j, i] = int.from_bytes(digest, "little")
    return masks
