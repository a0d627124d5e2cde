"""RAPPOR's Bloom filters: the two hashings (deniable's SHA-256 and google/rappor's MD5), each
category's filter in each cohort with the separations they attain (for the realised epsilon), and
google/rappor's report forms."""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import ReportError
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._rappor_privacy import separations

__all__ = ["HASHINGS", "google_bloom_bits", "google_irrs", "Filters"]

_WORD = 64

HASHINGS = {
    "sha256": "sha256(cohort NUL type NUL value)",
    "google": "md5(cohort u32be, utf8 value) byte i mod num_bits (google/rappor)",
}
"""Bloom hashings by name, and how a configuration's ``params.hash`` records each."""
_MAX_HASHES = {"sha256": 8, "google": 16}  # 4-byte words of a SHA-256 digest / bytes of an MD5 digest


def google_bloom_bits(value: str, cohort: int, num_hashes: int, num_bits: int) -> list[int]:
    """The Bloom bit positions google/rappor's clients set for ``value`` in ``cohort``.

    ``d = MD5(cohort as 4 big-endian bytes || value in UTF-8)``; hash ``i``
    sets bit ``d[i] mod num_bits`` (bit 0 the least significant of the
    report integer), for ``num_hashes <= 16`` and ``num_bits <= 256``.

    >>> google_bloom_bits("foo", 0, 2, 16)
    [6, 6]
    """
    digest = hashlib.md5(struct.pack(">I", cohort) + value.encode("utf-8"), usedforsecurity=False).digest()
    return [digest[i] % num_bits for i in range(num_hashes)]


def _sha256_bloom_bits(value: Any, cohort: int, num_hashes: int, num_bits: int) -> list[int]:
    digest = hashlib.sha256(f"{cohort}\x00{type(value).__name__}\x00{value}".encode()).digest()
    return [int.from_bytes(digest[4 * j : 4 * j + 4], "big") % num_bits for j in range(num_hashes)]


Filters = tuple[NDArray[np.uint64], dict[tuple[int, int], tuple[int, int, int]]]


def _filters(domain: Domain, hashing: str, bits: int, hashes: int, cohorts: int) -> Filters:
    """``[cohort, category, word]``: each category's Bloom filter in each cohort, in 64-bit words; and
    the separations ``(a, b)`` they attain (:func:`~deniable.mechanisms._rappor_privacy.separations`)."""
    if hashing == "google" and not all(isinstance(v, str) for v in domain.values):
        raise ValueError("RAPPOR with hashing='google' needs string categories (hashed as UTF-8)")
    positions: Any = google_bloom_bits if hashing == "google" else _sha256_bloom_bits
    table = np.zeros((cohorts, len(domain.values), -(-bits // _WORD)), dtype=np.uint64)
    for c in range(cohorts):
        for i, value in enumerate(domain.values):
            for bit in positions(value, c, hashes, bits):
                table[c, i, bit // _WORD] |= np.uint64(1 << (bit % _WORD))
    found = separations(table, hashes)
    if not found:
        raise ValueError(
            f"RAPPOR's categories have one Bloom filter in every cohort (num_bits={bits}, num_hashes={hashes}, "
            f"num_cohorts={cohorts}): reports would carry nothing about them; use more bits or cohorts"
        )
    return table, found


def google_irrs(cohorts: Any, irrs: Any, num_bits: int) -> list[dict[str, Any]]:
    """Google's ``(cohort, irr)`` reports (ints, or MSB-first bit strings of ``num_bits``) as wire items;
    :class:`~deniable.errors.ReportError` naming the first bad row."""
    if len(cohorts) != len(irrs):
        raise ReportError(f"reports_from_google: {len(cohorts)} cohorts but {len(irrs)} irrs")
    items = []
    for i, (cohort, irr) in enumerate(zip(cohorts, irrs, strict=True)):
        if isinstance(irr, str):
            if len(irr) != num_bits or irr.strip("01"):
                raise ReportError(
                    f"Google report {i}: irr must be {num_bits} characters 0/1 (most significant first); "
                    f"got {irr!r:.80}", i,
                )
            irr = int(irr, 2)
        items.append({"cohort": cohort, "bits": irr})
    return items

def _as_int(words: Any) -> int:
    """A report's bits (one 64-bit word, or words least significant first) as one integer."""
    flat = np.atleast_1d(np.asarray(words, dtype=np.uint64))
    return sum(int(w) << (_WORD * i) for i, w in enumerate(flat))
