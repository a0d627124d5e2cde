"""The Walsh-Hadamard transform and parities against their definitions."""

from __future__ import annotations

import numpy as np
import pytest

from deniable.mechanisms._walsh import fwht, parity


def _definition(values: np.ndarray) -> np.ndarray:
    """``out[v] = sum_w values[w] (-1)**popcount(v & w)``, one sum per entry."""
    size = values.size
    return np.array([sum(int(values[w]) * (-1) ** bin(v & w).count("1") for w in range(size)) for v in range(size)])


def test_fwht_is_the_definition_for_vectors_and_rows() -> None:
    """Every length from 1 to 16 (a power of two), exact int64 (also from uint8 counts, which must not
    wrap), and a 2-D array transformed row by row; the input is left as it was."""
    rng = np.random.default_rng(7)
    for size in (1, 2, 4, 8, 16):
        values = rng.integers(-(2**40), 2**40, size)
        out = fwht(values)
        assert out.dtype == np.int64 and out.tolist() == _definition(values).tolist()
    counts = np.array([200, 100, 255, 1], dtype=np.uint8)
    assert fwht(counts).tolist() == _definition(counts).tolist() and counts.tolist() == [200, 100, 255, 1]
    rows = rng.integers(0, 1000, (3, 8))
    assert fwht(rows).tolist() == [_definition(row).tolist() for row in rows]
    assert fwht(np.zeros((0, 4), dtype=np.int64)).shape == (0, 4)


def test_fwht_refuses_other_shapes_and_lengths() -> None:
    with pytest.raises(ValueError, match=r"^fwht needs a vector or a 2-D array of rows; got shape \(2, 2, 2\)$"):
        fwht(np.zeros((2, 2, 2), dtype=np.int64))
    for size in (3, 6, 12):
        with pytest.raises(ValueError, match=rf"^fwht needs a power-of-two length; got {size}$"):
            fwht(np.zeros(size, dtype=np.int64))


def test_parity_is_the_popcount_mod_2() -> None:
    x = np.array([0, 1, 3, 7, 2**63, 2**64 - 1, 0b1011], dtype=np.uint64)
    out = parity(x)
    assert out.dtype == np.uint8 and out.tolist() == [bin(int(v)).count("1") % 2 for v in x]
