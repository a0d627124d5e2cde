"""``deniable._randomness`` fed crafted bytes: rejection boundaries, byte order and seeded single reports.

A :class:`Scripted` source hands out exactly the bytes a test wrote, so a
boundary the statistical suites cannot see (a word at the rejection limit
occurs with probability 2^-32) is checked directly. Deterministic: no
assertion here depends on chance.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from mechanism_grid import CASES
from scripted import Scripted

import deniable as dn
from deniable import _randomness as randomness
from deniable._randomness import TWO64, below, bernoulli, fixed_point, randomized_round, scalar_below, uniform_below

U32 = 1 << 32


class Constant:
    """An endless source of one repeated byte."""

    secure = False

    def __init__(self, byte: int) -> None:
        self.byte = byte

    def random_bytes(self, n: int) -> bytes:
        return bytes([self.byte]) * n


def words32(*values: int) -> Scripted:
    return Scripted(np.array(values, dtype=np.uint32).tobytes())


def words64(*values: int) -> Scripted:
    return Scripted(np.array(values, dtype=np.uint64).tobytes())


def msb_first(*values: int) -> Scripted:
    """64-bit values as bytes, most significant first (the order :func:`below` reads them lazily)."""
    return Scripted(b"".join(v.to_bytes(8, "big") for v in values))


def test_rejection_at_the_limit_32_bit() -> None:
    """bound 3: words >= 3 * floor(2^32 / 3) = 2^32 - 1 are redrawn; the one below it is kept."""
    limit = (U32 // 3) * 3
    src = words32(limit, limit, 7)
    assert uniform_below(3, 1, src).tolist() == [7 % 3] and src.data == b""
    src = words32(limit - 1)
    assert uniform_below(3, 1, src).tolist() == [(limit - 1) % 3] and src.data == b""
    # several lanes: only the rejected ones draw again, in lane order, until none is left
    src = words32(limit, 5, limit, limit - 1, limit, 9)
    assert uniform_below(3, 3, src).tolist() == [(limit - 1) % 3, 5 % 3, 9 % 3] and src.data == b""


def test_rejection_at_the_limit_64_bit() -> None:
    bound = U32 + 1  # above 2^32: 64-bit words
    limit = (TWO64 // bound) * bound
    src = words64(limit, TWO64 - 1, limit - 1)
    assert uniform_below(bound, 1, src).tolist() == [(limit - 1) % bound] and src.data == b""
    assert uniform_below(U32, 1, words32(U32 - 1)).tolist() == [U32 - 1]  # 2^32 itself: 32-bit words


def test_powers_of_two_mask_without_rejection() -> None:
    assert uniform_below(8, 2, words32(U32 - 1, 12)).tolist() == [7, 4]
    assert uniform_below(1 << 40, 1, words64(TWO64 - 1)).tolist() == [(1 << 40) - 1]
    assert uniform_below(TWO64, 1, words64(TWO64 - 1)).tolist() == [TWO64 - 1]
    src = Scripted(b"")
    assert uniform_below(1, 4, src).tolist() == [0, 0, 0, 0]  # no randomness needed
    for bad in (0, TWO64 + 1):
        with pytest.raises(ValueError, match=rf"bound must be in \[1, 2\*\*64\]; got {bad}"):
            uniform_below(bad, 1, src)


def test_bernoulli_compares_below_the_numerator() -> None:
    assert bernoulli(3, 10, 3, words32(2, 3, 13)).tolist() == [True, False, False]
    assert bernoulli(10, 10, 1, words32(9)).tolist() == [True]
    with pytest.raises(ValueError, match=r"probability 11/10 is not in \[0, 1\]"):
        bernoulli(11, 10, 1, Scripted(b""))


def test_scalar_below_reads_the_given_source() -> None:
    """A seeded or scripted source is used as is (only the OS CSPRNG goes through :mod:`secrets`)."""
    limit = (U32 // 3) * 3
    assert scalar_below(3, words32(limit, 4)) == 1
    assert scalar_below(1000, randomness.resolve(7)) == scalar_below(1000, randomness.resolve(7))
    assert 0 <= scalar_below(5, randomness.SECURE) < 5


@pytest.mark.parametrize("threshold", [0x0102030405060708, 1 << 63, 0xFF00000000000001, 0x00FF00FF00FF00FF])
@pytest.mark.parametrize("lazy", [True, False])
def test_below_is_strict_at_the_threshold(threshold: int, lazy: bool) -> None:
    """``U < T``: U = T is not below, U = T - 1 is, U = T + 1 is not; lazily bytes are read MSB first."""
    t = np.array([threshold], dtype=np.uint64)
    for u, want in [(threshold, False), (threshold - 1, True), (threshold + 1, False)]:
        src = msb_first(u) if lazy else words64(u)
        assert below(t, src, lazy).tolist() == [want]
        if not lazy:
            assert src.data == b""


def test_lazy_below_draws_only_for_tied_lanes() -> None:
    """Lane 0 ties on its first byte and draws a second one; lane 1 is settled by its first byte."""
    t = np.array([0x80 << 56 | 0x40 << 48, 0x80 << 56], dtype=np.uint64)
    src = Scripted(bytes([0x80, 0x7F, 0x3F]))  # first bytes of both lanes, then lane 0's second byte
    assert below(t, src).tolist() == [True, True] and src.data == b""
    src = Scripted(bytes([0x80, 0x81, 0x41]))
    assert below(t, src).tolist() == [False, False] and src.data == b""


def test_bernoulli_words_extremes() -> None:
    """The lazy comparison reads a stream of fair bits; a lane ends at its stream's next 1 after G 0s
    and is ``c_G`` (bit G of the numerator, most significant first), False once G passes c's last 1.

    All-ones bytes decide every lane at G = 0 (c's top bit); 0x55 (01010101) at G = 1; 0x11 at G = 3.
    Numerators 0 and 2^bits are certain and read nothing.
    """
    empty = Scripted(b"")
    assert bernoulli_words_of(0, empty) == [0] * 3 and bernoulli_words_of(1 << 32, empty) == [TWO64 - 1] * 3
    assert bernoulli_words_of(5, Constant(0xFF)) == [0] * 3  # c_0 = 0
    assert bernoulli_words_of(1 << 31, Constant(0xFF)) == [TWO64 - 1] * 3  # c = 0.1b: c_0 = 1
    assert bernoulli_words_of(1 << 31, Constant(0x55)) == [0] * 3  # G = 1 is past c's last 1
    assert bernoulli_words_of(3 << 30, Constant(0x55)) == [TWO64 - 1] * 3  # c = 0.11b: c_1 = 1
    assert bernoulli_words_of(3 << 29, Constant(0xFF)) == [0] * 3  # c = 0.011b: c_0 = 0
    assert bernoulli_words_of(5 << 29, Constant(0x55)) == [0] * 3  # c = 0.101b: c_1 = 0
    assert bernoulli_words_of(5 << 29, Constant(0x11)) == [0] * 3  # G = 3: past c's last 1 (bit 2)
    # 0xAA (10101010): the first lane ends at the first bit (G = 0), every later one after a 0 (G = 1)
    assert randomness.bernoulli_bits(1 << 31, 32, 4, Constant(0xAA)).tolist() == [True, False, False, False]
    assert randomness.bernoulli_bits(5 << 29, 32, 4, Constant(0x22)).tolist() == [True, False, False, False]
    with pytest.raises(ValueError, match=r"numerator must be in \[0, 2\*\*bits\]; got 9/8"):
        randomness.bernoulli_words(9, 3, 1, Constant(0))


def bernoulli_words_of(numerator: int, source: Any) -> list[int]:
    return [int(w) for w in randomness.bernoulli_words(numerator, 32, 3, source)]


def test_fixed_point_and_randomized_round() -> None:
    np.testing.assert_array_equal(
        fixed_point(np.array([0.0, 0.5, 0.25, 1.0])),
        np.array([0, 1 << 63, 1 << 62, ((1 << 53) - 1) << 11], dtype=np.uint64),
    )
    x = np.array([1.5, 2.0, -0.25, 7.75])
    assert randomized_round(x.copy(), Constant(0x00)).tolist() == [2, 2, 0, 8]  # U = 0: up iff a fraction
    assert randomized_round(x.copy(), Constant(0xFF)).tolist() == [1, 2, -1, 7]  # U = 2^64 - 1: never up
    y = x.copy()
    randomized_round(y, Constant(0x00), overwrite=True)
    assert not np.array_equal(y, x)  # scratch space used as allowed
    randomized_round(x, Constant(0x00))
    assert x.tolist() == [1.5, 2.0, -0.25, 7.75]  # untouched otherwise


def test_secure_source_reads_the_os_for_each_call() -> None:
    """Every draw is a fresh ``os.urandom`` call of exactly the size asked: nothing is read ahead or kept."""
    calls: list[int] = []
    real = os.urandom

    def counting(n: int) -> bytes:
        calls.append(n)
        return real(n)

    source = randomness.SecureSource()
    os.urandom = counting
    try:
        first, second = source.random_bytes(16), source.random_bytes(5)
    finally:
        os.urandom = real
    assert calls == [16, 5] and len(first) == 16 and len(second) == 5
    assert randomness.resolve(None) is randomness.SECURE and repr(randomness.SECURE) == "SecureSource()"


@pytest.mark.parametrize("case", [c for c in CASES if not c.heavy], ids=lambda c: c.id)
def test_seeded_single_reports_are_reproducible(case: Any) -> None:
    """``privatize(v, rng=seed)`` is the seeded simulation path: the same seed gives the same report."""
    m = case.make()
    for value in (m.domain[0], m.domain[-1]):
        for seed in range(8):
            a, b = m.privatize(value, rng=seed), m.privatize(value, rng=seed)
            assert np.array_equal(np.asarray(a), np.asarray(b)), (value, seed)


@pytest.mark.parametrize(
    "build",
    [
        lambda: dn.Duchi(0.0, 1.0, epsilon=1.0),
        lambda: dn.Laplace(0.0, 1.0, epsilon=1.0),
        lambda: dn.Piecewise(0.0, 1.0, epsilon=1.0),
        lambda: dn.Hybrid(0.0, 1.0, epsilon=1.0),
        lambda: dn.SquareWave(0.0, 1.0, epsilon=1.0),
    ],
    ids=["Duchi", "Laplace", "Piecewise", "Hybrid", "SquareWave"],
)
def test_seeded_single_numeric_reports_are_reproducible(build: Any) -> None:
    m = build()
    for seed in range(8):
        assert np.array_equal(np.asarray(m.privatize(0.3, rng=seed)), np.asarray(m.privatize(0.3, rng=seed)))


class Counting:
    """Wraps a source and counts the bytes drawn."""

    secure = False

    def __init__(self, inner: Any) -> None:
        self.inner, self.drawn = inner, 0

    def random_bytes(self, n: int) -> bytes:
        self.drawn += n
        return bytes(self.inner.random_bytes(n))


def test_bernoulli_bits_draw_only_what_they_need() -> None:
    """One draw of ``count // 4 + 64`` bytes (2 bits per lane on average, with a margin) when it
    decides every lane, whatever the numerator; a certain numerator draws nothing."""
    for count in (1, 64, 65, 1000):
        for byte in (0xFF, 0x55):  # 1 or 2 stream bits per lane: one draw suffices
            src = Counting(Constant(byte))
            bits = randomness.bernoulli_bits(3 << 30, 32, count, src)
            assert bits.shape == (count,) and bits.all()
            assert src.drawn == count // 4 + 64
    src = Counting(Constant(0xFF))
    assert randomness.bernoulli_bits(1 << 32, 32, 100, src).all() and src.drawn == 0


def test_probability_zero_and_one_are_valid() -> None:
    assert bernoulli(0, 10, 2, words32(0, 9)).tolist() == [False, False]
    assert uniform_below(1, 3, Scripted(b"")).dtype == np.uint64
    for bad in (-1, 11):
        with pytest.raises(ValueError, match=rf"^probability {bad}/10 is not in \[0, 1\]$"):
            bernoulli(bad, 10, 1, Scripted(b""))


def test_randomized_round_is_lazy_by_default_and_returns_integers() -> None:
    """One lane at 1/2: the threshold's top byte is 0x80, so one random byte (0x7F) decides it."""
    src = Scripted(bytes([0x7F]))
    out = randomized_round(np.array([2.5]), src)
    assert out.tolist() == [3] and out.dtype == np.int64 and src.data == b""
    out = randomized_round(np.array([2.5]), words64(1 << 63), lazy=False)  # U = T: not below
    assert out.tolist() == [2] and out.dtype == np.int64


def test_legacy_random_state_message() -> None:
    with pytest.raises(TypeError, match=r"^rng must be None, an int seed or a numpy Generator; the legacy "
                       r"RandomState is not accepted \(use np\.random\.default_rng\)$"):
        randomness.resolve(np.random.RandomState(1))


def test_a_stuck_source_fails_instead_of_hanging() -> None:
    """The lazy comparison waits for a 1 bit; a source of only zero bytes is refused, not waited on."""
    with pytest.raises(RuntimeError, match="zero bits in a row .* broken or stuck"):
        randomness.bernoulli_packed(1, 2, 64, Scripted(bytes(1 << 20)))


# ------------------------------------------- lazy Bernoulli bits across draws
# bernoulli_bits(c, bits, n) compares, lane after lane, a uniform U with c = numerator / 2**bits,
# U's bits being c's bits flipped where the random stream (the source's bytes, most significant
# bit first, draw after draw) has a 1: the first 1 is where U and c first differ, so the lane is
# U < c exactly when c has a 1 there. The reference below reads that comparison bit by bit.


def _compare_bit_by_bit(numerator: int, bits: int, data: bytes, count: int) -> list[bool]:
    stream = iter([(byte >> (7 - i)) & 1 for byte in data for i in range(8)])
    out = []
    for _ in range(count):
        j = 0
        while True:
            c = (numerator >> (bits - 1 - j)) & 1 if j < bits else 0
            u = c ^ next(stream)
            if u != c:
                out.append(u < c)
                break
            j += 1
    return out


def test_lazy_bernoulli_lanes_continue_across_draws() -> None:
    """8 lanes at 182/256 (1011 0110): the first draw (8 // 4 + 64 = 66 bytes) holds only 3
    one-bits, so lane 3 starts in its 2 trailing zeros and ends in the second draw
    ((8 - 3) // 4 + 64 = 65 bytes): 2 + 3 zeros, a 1 at U's bit 5, where c has a 1."""
    first = bytearray(66)
    first[0], first[10], first[65] = 0b0010_0000, 0b0000_0001, 0b0000_0100
    second = bytes([0b0001_0000]) + np.random.default_rng(7).integers(0, 256, 64, dtype=np.uint8).tobytes()
    data = bytes(first) + second
    want = _compare_bit_by_bit(182, 8, data, 8)
    assert want[:4] == [True, False, False, True]  # c_2 = 1, two runs longer than c, c_5 = 1
    src = Scripted(data)
    np.testing.assert_array_equal(randomness.bernoulli_bits(182, 8, 8, src), want)
    assert src.data == b""  # exactly two draws of the sizes above
    packed = randomness.bernoulli_packed(182, 8, 8, Scripted(data))
    np.testing.assert_array_equal(np.unpackbits(packed), want)


def test_lazy_bernoulli_counts_zero_draws_into_the_run() -> None:
    """A draw of only zeros (64 bytes for one lane) lengthens the current run by 512 bits: with
    c = 2**-513 (its only 1 at bit 512) and the next draw starting with a 1, U and c first differ
    at bit 512, so U < c."""
    bits, numerator = 600, 1 << (600 - 513)
    data = bytes(64) + bytes([0x80]) + bytes(63)
    assert _compare_bit_by_bit(numerator, bits, data, 1) == [True]
    assert randomness.bernoulli_bits(numerator, bits, 1, Scripted(data)).tolist() == [True]
    later = Scripted(bytes(128) + bytes([0x80]) + bytes(63))  # two zero draws: they first differ at bit 1024
    assert randomness.bernoulli_bits(numerator, bits, 1, later).tolist() == [False]


def test_a_256_bit_numerator_reads_runs_of_256_zeros(accelerator: str) -> None:
    """A 256-bit numerator has 257 table entries: the run state reaches 256, one past what 8 bits
    hold (the numpy decoder indexes its pattern table with ``state << 8 | byte``). c = 2**-1 +
    2**-256: a run of 255 zeros ends at c's last 1 (True), a run of 256 at the tie (False), within
    one draw or after a whole draw of zeros; the lanes after them end at G = 0, c's first 1."""
    numerator = (1 << 255) | 1
    runs = [bytes(32) + bytes([0xC0]) + bytes(31), bytes(31) + bytes([0x01, 0xC0]) + bytes(31),
            bytes(64) + bytes([0xC0]) + bytes(63)]  # the last: the run crosses a draw of 64 zero bytes
    for data, first in zip(runs, [False, True, False], strict=True):
        assert _compare_bit_by_bit(numerator, 256, data, 2) == [first, True]
        src = Scripted(data)
        assert randomness.bernoulli_bits(numerator, 256, 2, src).tolist() == [first, True]
        assert src.data == b""


def test_a_source_is_stuck_only_after_more_than_2_16_zero_bits(accelerator: str) -> None:
    """Exactly 2**16 zero bits (128 draws of 64 bytes) can still come from a fair source; one
    more zero draw is refused with the count and its probability (with either backend)."""
    ok = Scripted(bytes(128 * 64) + bytes([0x80]) + bytes(63))
    assert randomness.bernoulli_bits(1, 2, 1, ok).tolist() == [False] and ok.data == b""
    with pytest.raises(RuntimeError, match=r"^the random source returned 66048 zero bits in a row "
                       r"\(probability 2\*\*-66048\): it is broken or stuck$"):
        randomness.bernoulli_bits(1, 2, 1, Scripted(bytes(129 * 64)))


def test_expansion_table_is_the_numerator_bits_then_the_tie() -> None:
    """Entry G < bits is bit G of the numerator (most significant first); entry ``bits`` (U equal to
    the numerator) is False, except for the certain ``2**bits``."""
    table = randomness.expansion_table(182, 8)
    assert table.tolist() == [1, 0, 1, 1, 0, 1, 1, 0, 0] and table.dtype == np.uint8
    assert randomness.expansion_table(0, 8).tolist() == [0] * 9
    assert randomness.expansion_table(1, 1).tolist() == [1, 0]
    certain = randomness.expansion_table(256, 8)
    assert certain.tolist() == [1] * 9 and certain.dtype == np.uint8
    with pytest.raises(ValueError, match=r"^numerator must be in \[0, 2\*\*bits\]; got 257/256$"):
        randomness.expansion_table(257, 8)


def test_run_patterns_are_the_bits_of_the_lanes_each_byte_ends() -> None:
    """``pattern[row, state, byte]``, for every row, state and byte, against its definition: the run
    starts at ``state`` 0s, each 1 of the byte (most significant first) ends a lane at bit
    ``table[row, min(G, cap)]``, the first lane highest. Tables of another integer dtype give the
    same patterns."""
    for tables in (np.stack([randomness.expansion_table(5, 3), randomness.expansion_table(2, 3)]),
                   np.stack([randomness.expansion_table(182, 8), randomness.expansion_table(45, 8)]),
                   randomness.expansion_table(1, 1)[None, :]):
        rows, cap = tables.shape[0], tables.shape[1] - 1
        want = np.zeros((rows, cap + 1, 256), dtype=np.uint8)
        for row in range(rows):
            for state in range(cap + 1):
                for byte in range(256):
                    g, pattern = state, 0
                    for shift in range(7, -1, -1):
                        if byte >> shift & 1:
                            pattern, g = pattern << 1 | int(tables[row, min(g, cap)]), 0
                        else:
                            g += 1
                    want[row, state, byte] = pattern
        np.testing.assert_array_equal(randomness.run_patterns(tables), want)
        np.testing.assert_array_equal(randomness.run_patterns(tables.astype(np.int64)), want)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_two_tables_give_each_lane_its_own_probability(backend: str) -> None:
    """20 lanes, lane i at 182/256 or 45/256 as bit i of ``select`` says: every lane is the
    bit-by-bit comparison of the stream with its own numerator, with either backend. Sparse bytes
    make runs past both tables' ends, where a lane must not read the other table."""
    from deniable import _accelerate as accelerate

    if backend == "numba" and not accelerate.numba_available():
        pytest.skip("numba is not installed")
    count = 20
    choice = np.random.default_rng(3).integers(0, 2, count).astype(np.uint8)
    gen = np.random.default_rng(4)
    sparse = [gen.integers(0, 256, count // 4 + 64, dtype=np.uint8) for _ in range(3)]
    data = (sparse[0] & sparse[1] & sparse[2]).tobytes()  # 1 bit in 8: runs longer than the tables
    numerators = [45 if c else 182 for c in choice]
    stream = iter([(byte >> (7 - i)) & 1 for byte in data for i in range(8)])
    want = []
    for numerator in numerators:  # the reference above, one numerator per lane
        j = 0
        while True:
            c = (numerator >> (7 - j)) & 1 if j < 8 else 0
            if next(stream):
                want.append(c == 1)
                break
            j += 1
    assert 0 < sum(want) < count and len(set(numerators)) == 2
    tables = np.stack([randomness.expansion_table(182, 8), randomness.expansion_table(45, 8)])
    previous = accelerate.set_accelerator(backend)
    try:
        src = Scripted(data)
        packed = randomness.dyadic_packed(tables, count, src, select=np.packbits(choice))
    finally:
        accelerate.set_accelerator(previous)
    assert src.data == b"" and packed.size == 3
    np.testing.assert_array_equal(np.unpackbits(packed)[:count], want)
    assert not np.unpackbits(packed)[count:].any()  # padding bits are 0


def test_dyadic_packed_needs_one_table_or_two_and_a_select() -> None:
    one = randomness.expansion_table(3, 2)[None, :]
    two = np.vstack([one, one])
    select = np.zeros(1, dtype=np.uint8)
    bad = ((two, None), (one, select), (np.vstack([one, one, one]), select), (one[0], None), (one[0, :1], None),
           (one[0, :2], select))  # the last three: 1-D
    for tables, sel in bad:
        with pytest.raises(ValueError, match=r"^dyadic_packed needs one table row, or two rows and a select array$"):
            randomness.dyadic_packed(tables, 4, Scripted(b""), select=sel)
    assert randomness.dyadic_packed(one, 0, Scripted(b"")).size == 0


def _runs_stream(runs: list[int], lanes_per_block: int, filler: int) -> bytes:
    """The bytes that end lane ``i`` after ``runs[i]`` zeros, drawn as :func:`dyadic_packed` draws them.

    Each block of lanes starts a fresh stream; within a block, draws of ``remaining // 4 + 64``
    bytes follow each other until every lane has its run, and the rest of the last draw (here
    ``filler`` bits, which must not be read as lanes) is discarded.
    """
    data = bytearray()
    for start in range(0, len(runs), lanes_per_block):
        block = runs[start : start + lanes_per_block]
        bits = "".join("0" * g + "1" for g in block)
        ends = np.cumsum([g + 1 for g in block])  # bit after each lane's 1
        done, used = 0, 0
        while done < len(block):
            size = (len(block) - done) // 4 + 64
            used += 8 * size
            done = int(np.searchsorted(ends, used, side="right"))
        bits = bits.ljust(used, "1" if filler else "0")
        data += int(bits, 2).to_bytes(used // 8, "big")
    return bytes(data)


@pytest.mark.parametrize(("count", "block"), [(20, 1 << 16), (203, 64)])
def test_two_tables_lane_by_lane(accelerator: str, count: int, block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lane ``i`` of a scripted stream ends after ``G_i`` zeros (every G from 0 past the tables' end,
    a few runs of hundreds of bits that cross draws, one longer than a whole draw) and must be bit
    ``G_i`` of its own numerator (182/256 or 45/256 as bit ``i`` of ``select`` says; 0 past the
    numerator's last bit), with either backend. Blocks of 64 lanes put lanes at block edges; every
    byte of the script is read (the draw sizes), the bits after the last lane (0s or 1s) are not
    lanes, and the padding bits stay 0. ``select`` may be any sequence of bytes."""
    monkeypatch.setattr(randomness, "_BLOCK_LANES", block)
    gen = np.random.default_rng(count)
    runs = [int(g) for g in gen.integers(0, 12, count)]
    runs[count // 2], runs[count // 3], runs[-2] = 700, 300, 1100  # across draws; -2: a draw of zeros
    choice = gen.integers(0, 2, count)
    numerators = [45 if c else 182 for c in choice]
    want = [bool(n >> (7 - g) & 1) if g < 8 else False for n, g in zip(numerators, runs, strict=True)]
    tables = np.stack([randomness.expansion_table(182, 8), randomness.expansion_table(45, 8)])
    select = np.packbits(choice)
    for sel in (select, [int(b) for b in select]):
        for filler in (0, 1):
            src = Scripted(_runs_stream(runs, block, filler))
            packed = randomness.dyadic_packed(tables, count, src, select=sel)
            assert src.data == b"" and packed.shape == ((count + 7) // 8,)
            np.testing.assert_array_equal(np.unpackbits(packed)[:count], want)
            assert not np.unpackbits(packed)[count:].any()  # padding bits are 0


@pytest.mark.parametrize(("a", "b", "k"), [(10, 3, 4), ((1 << 31) + 5, (1 << 29) - 1, 4), (3 << 40, 5 << 30, 7)])
def test_grr_maps_each_word_to_the_truth_or_the_rth_other(a: int, b: int, k: int) -> None:
    """GRR's draw ``r`` below ``a + (k - 1) b``: the truth if ``r < a``, else the ``(r - a) // b``-th of
    the other categories, read off scripted words (32-bit ones, the second bound above 2^31 where no word
    is reduced, and 64-bit ones above 2^32), every truth against draws at the edges of each slot."""
    from deniable.mechanisms._kary import randomize

    bound = a + (k - 1) * b
    draws = [0, a - 1] + [a + j * b + edge for j in range(k - 1) for edge in (0, b - 1)]
    for truth in range(k):
        wide = bound > U32
        src = words64(*draws) if wide else words32(*draws)
        got = randomize(np.full(len(draws), truth, dtype=np.int64), a, b, k, src)
        others = [c for c in range(k) if c != truth]
        assert got.tolist() == [truth, truth] + [others[j] for j in range(k - 1) for _ in (0, 1)]
        assert got.dtype == np.int64 and src.data == b""
