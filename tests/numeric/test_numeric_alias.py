"""Layer A for the alias table behind the lattice noise: exact probabilities, scripted draws, checks.

An :class:`AliasTable` with ``n = 2**column_bits`` columns gives outcome
``j`` the probability ``sum_c (T_c [own_c = j] + (2**64 - T_c) [alias_c = j]) / (n 2**64)``
for column thresholds ``T_c``; it must equal ``weights[j] / 2**64`` exactly,
in integers. A draw reads a 16-bit column word (its low ``column_bits`` bits
pick the column) and keeps the column's own outcome when the 64-bit ``U`` is
below ``T_c``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scripted import Scripted

from deniable._randomness import TWO64
from deniable.mechanisms._numeric.alias import AliasTable, integer_weights

# Weights summing to 2**64: uneven, with zeros, fewer outcomes than columns, one outcome only,
# all equal (every column full), one outcome a column's height exactly, columns split at round fractions.
WEIGHT_CASES: dict[str, tuple[list[int], int]] = {
    "uneven": ([1 << 62, 1 << 63, (1 << 62) - 12345, 12345], 3),
    "zeros": ([0, (1 << 63) + 7, 0, (1 << 62) - 7, 1 << 62, 0], 3),
    "sparse": ([3, TWO64 - 3], 4),
    "single": ([TWO64], 1),
    "flat": ([1 << 60] * 16, 4),
    "column_sized": ([1 << 62, (1 << 62) + 1, (1 << 63) - 1], 2),
    "graded": ([1 << 60, 3 << 60, 5 << 60, 7 << 60], 2),
}


def _outcome_mass(table: AliasTable, offset: int) -> list[int]:
    """``n 2**64 P(j)`` for each outcome ``j`` (one per column), in integers, from the table's columns."""
    mass = [0] * table.thresholds.size
    pairs = table.outcomes.reshape(-1, 2) + offset  # (alias, own) per column
    for threshold, (alias, own) in zip(table.thresholds.tolist(), pairs.tolist(), strict=True):
        mass[own] += threshold
        mass[alias] += TWO64 - threshold
    return mass


@pytest.mark.parametrize("offset", [0, 5])
@pytest.mark.parametrize("case", list(WEIGHT_CASES))
def test_the_table_gives_each_outcome_exactly_its_weight(case: str, offset: int) -> None:
    weights, bits = WEIGHT_CASES[case]
    table = AliasTable(weights, bits, offset=offset)
    n = 1 << bits
    assert table.column_bits == bits and table.thresholds.shape == (n,) and table.outcomes.shape == (2 * n,)
    assert table.outcomes.dtype == np.int32 and table.thresholds.dtype == np.uint64
    assert _outcome_mass(table, offset) == [n * w for w in weights] + [0] * (n - len(weights))


def test_the_offset_is_the_default_zero() -> None:
    weights, bits = WEIGHT_CASES["uneven"]
    np.testing.assert_array_equal(AliasTable(weights, bits).outcomes, AliasTable(weights, bits, 0).outcomes)
    np.testing.assert_array_equal(AliasTable(weights, bits, 2).outcomes, AliasTable(weights, bits).outcomes - 2)


def _draw_bytes(columns: list[int], uniforms: list[int]) -> bytes:
    """The bytes a full-width draw reads: the 16-bit column words, then the 64-bit ``U`` of each draw."""
    return np.array(columns, dtype=np.uint16).tobytes() + np.array(uniforms, dtype=np.uint64).tobytes()


@pytest.mark.parametrize("case", ["uneven", "zeros", "column_sized", "graded"])
def test_a_draw_keeps_the_columns_own_outcome_below_its_threshold(case: str) -> None:
    """For every column: ``U = T - 1`` keeps the own outcome, ``U = T`` takes the alias (scripted bytes).

    The column words carry set bits above ``column_bits``, which the mask must drop.
    """
    weights, bits = WEIGHT_CASES[case]
    offset = 2
    table = AliasTable(weights, bits, offset=offset)
    n = 1 << bits
    pairs = table.outcomes.reshape(-1, 2)
    thresholds = table.thresholds.tolist()
    columns, uniforms, expected = [], [], []
    for c in range(n):
        high_bits = 0xFFFF ^ (n - 1)
        for u, side in ((thresholds[c] - 1, 1), (thresholds[c], 0), (2**64 - 1, 0)):
            if u < 0:
                continue
            columns.append(high_bits | c)
            uniforms.append(u)
            expected.append(pairs[c, side])
    draws = table.sample(len(columns), Scripted(_draw_bytes(columns, uniforms)), lazy=False)
    assert draws.dtype == np.int32
    np.testing.assert_array_equal(draws, expected)
    assert set(draws.tolist()) == {j - offset for j, w in enumerate(weights) if w > 0}


def test_draws_are_byte_lazy_by_default() -> None:
    """By default a draw reads its 2-byte column word and then ``U`` byte by byte: a first byte of ``U``
    other than the threshold's settles the comparison, so 3 bytes a draw (scripted: no byte to spare)."""
    weights, bits = WEIGHT_CASES["graded"]
    table = AliasTable(weights, bits)
    pairs = table.outcomes.reshape(-1, 2)
    split = [c for c, t in enumerate(table.thresholds.tolist()) if 0 < t >> 56 < 255]
    assert split
    columns = [c for c in split for _ in range(2)]
    first = [0, 255] * len(split)  # below every such threshold's top byte, then above it
    data = np.array(columns, dtype=np.uint16).tobytes() + bytes(first)
    draws = table.sample(len(columns), Scripted(data))
    np.testing.assert_array_equal(draws, [pairs[c, side] for c in split for side in (1, 0)])


def test_table_checks_in_whole_messages() -> None:
    for bits in (0, 17):
        with pytest.raises(ValueError, match=rf"^column_bits must be in \[1, 16\]; got {bits}$"):
            AliasTable([TWO64], bits)
    assert AliasTable([TWO64], 16).thresholds.shape == (1 << 16,)
    with pytest.raises(ValueError, match=r"^5 outcomes do not fit 4 columns$"):
        AliasTable([1 << 62] * 3 + [(1 << 62) - 1, 1], 2)
    wrong_sums = ([TWO64 - 1], [TWO64, 1], [TWO64 + 1, -1])
    wrong_sum = "alias weights must be non-negative integers summing to 2**64"
    for weights in wrong_sums:
        with pytest.raises(ValueError, match=rf"^{re.escape(wrong_sum)}$"):
            AliasTable(weights, 2)


def test_integer_weights_floor_each_probability_and_give_the_rest_to_the_centre() -> None:
    probs = np.array([0.1, 0.25, 0.3, 0.2, 0.15])
    for centre in (0, 2, 4):
        weights = integer_weights(probs, centre)
        assert sum(weights) == TWO64 and all(isinstance(w, int) for w in weights)
        for j, p in enumerate(probs.tolist()):
            if j != centre:
                assert weights[j] == int(p * 2.0**64)
        assert weights[centre] - int(probs[centre] * 2.0**64) == TWO64 - sum(int(p * 2.0**64) for p in probs)
