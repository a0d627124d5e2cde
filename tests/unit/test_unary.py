"""Unary encoding internals: the blocked column count equals the plain one."""

from __future__ import annotations

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
