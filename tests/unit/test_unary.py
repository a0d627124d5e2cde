"""Unary encoding internals: the blocked column count equals the plain one."""

from __future__ import annotations

import os

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms import unary


@pytest.mark.parametrize("k", [2, 7, 8, 65, 1024, 20_000])
@pytest.mark.parametrize("n", [0, 1, 254, 255, 256, 4_337])
def test_support_counts_equal_unpacked_column_sums(k: int, n: int, rng: np.random.Generator) -> None:
    """Exact: the uint8 block sums give the int64 column sums of the unpacked bits, at the
    block (255 rows) and chunk edges, with every bit set (the worst case for overflow) too."""
    oue = dn.OUE(k, epsilon=1.0)
    bits = rng.integers(0, 2, (n, k), dtype=np.uint8)
    for matrix in (bits, np.ones_like(bits)):
        packed = np.packbits(matrix, axis=1)
        assert np.array_equal(oue._support_counts(packed), matrix.sum(axis=0, dtype=np.int64))


def test_support_counts_cross_chunks(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact across many chunks: a small chunk makes the loop run over 255-row blocks."""
    monkeypatch.setattr(unary, "_CHUNK_BITS", 16 * 255 * 2)
    oue = dn.OUE(16, epsilon=1.0)
    bits = rng.integers(0, 2, (255 * 7 + 3, 16), dtype=np.uint8)
    assert np.array_equal(oue._support_counts(np.packbits(bits, axis=1)), bits.sum(axis=0))


class CountingSource:
    """The OS CSPRNG, counting the bytes read."""

    secure = True

    def __init__(self) -> None:
        self.read = 0

    def random_bytes(self, n: int) -> bytes:
        self.read += n
        return os.urandom(n)


@pytest.mark.parametrize("make", [dn.OUE, dn.SUE])
def test_secure_reports_read_about_two_random_bits_per_bit(make) -> None:  # type: ignore[no-untyped-def]
    """At most 300 random bytes per k=1024 report (expected 256 + 1/4 for the true bit).

    The bits read per report bit are i.i.d. with mean 2 and variance 2 (a geometric count,
    capped at 32), so over 2,000 reports (2,048,000 bits) the total exceeds 300 bytes per
    report (a mean of 2.34 bits) with probability below 1e-100 (Hoeffding). Power: the
    previous bit-sliced sampler read 739 bytes per report.
    """
    m, n = make(1024, epsilon=1.0), 2_000
    source = CountingSource()
    reports = m._sample(np.arange(n) % 1024, source)
    assert reports.shape == (n, 128)
    assert source.read / n <= 300, source.read / n


def test_padding_bits_stay_zero(rng: np.random.Generator) -> None:
    """k = 13: the 3 low bits of each report's second byte are never set."""
    reports = dn.OUE(13, epsilon=5.0).privatize_many(rng.integers(0, 13, 20_000), rng=rng)
    assert not np.any(reports[:, 1] & 0b111)
