"""Sparse Bernoulli bits (:mod:`deniable._skips`) against a reference written from the definition.

The reference reads the bytes the sampler drew (recorded call by call) and
finds each gap by exact integer comparison with ``S(k) = (1 - q)**k``, by
bisection over ``k`` (not the sampler's float guess and 32-bit bounds): a
word ``u`` puts ``W`` in ``[u, u + 1) / 2**32``; when that cell holds a
bound ``S(k)``, the next recorded call's word refines it. Crafted words put
cells on the bounds; tiny and moderate probabilities exercise the capped
gaps and the end of the stream. Both backends (numpy and numba) must agree
with the reference byte for byte. Deterministic: no assertion depends on
chance.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from backends import both, needs_numba
from scripted import Scripted

from deniable import _accelerate as accelerate
from deniable import _randomness as randomness
from deniable import _skips as skips
from deniable._randomness import GeneratorSource

U32 = 1 << 32
EPS8 = math.ceil(U32 / (1 + math.exp(4)))  # the count-mean sketch's flip numerator at epsilon 8

PROBABILITIES = {
    "eps 8 sketch": (EPS8, 32),
    "2^-32": (1, 32),  # every gap capped at 2^16 (S(2^16) is almost 1)
    "just under 1/16": (U32 // 16 - 1, 32),
    "3/128": (3, 7),
    "1/3 (dense)": (U32 // 3, 32),
}


class Recording:
    """A seeded source that keeps every call's bytes, and serves scripted words first when given; with
    ``most``, a call beyond the ``most``-th fails (a sampler that would read on for ever stops at once)."""

    secure = False

    def __init__(self, seed: int, first: list[list[int]] | None = None, most: int | None = None) -> None:
        self.inner = GeneratorSource(np.random.default_rng(seed))
        self.first = list(first or [])
        self.most = most
        self.calls: list[bytes] = []

    def random_bytes(self, n: int) -> bytes:
        if self.most is not None and len(self.calls) >= self.most:
            raise RuntimeError(f"more than {self.most} calls")
        data = self.inner.random_bytes(n)
        if self.first:  # scripted words at the start of this call, the rest seeded
            words = np.frombuffer(data, dtype=np.uint32).copy()
            script = self.first.pop(0)
            words[: len(script)] = script
            data = words.tobytes()
        self.calls.append(data)
        return data


def use(backend: str) -> None:
    """Sample with ``backend`` (the test is skipped for numba when it is not installed)."""
    if backend == "numba" and not accelerate.numba_available():
        pytest.skip("numba is not installed")
    accelerate.set_accelerator(backend)


def survive(numerator: int, bits: int, k: int) -> Fraction:
    return Fraction((1 << bits) - numerator, 1 << bits) ** k


def reference(numerator: int, bits: int, count: int, calls: list[bytes]) -> bytes:
    """The packed bits the recorded calls stand for (every call must be used, none beyond the last)."""
    cap = skips.skip_table(numerator, bits).cap
    a = (1 << bits) - numerator
    a_cap = a**cap
    queue = [np.frombuffer(c, dtype=np.uint32).tolist() for c in calls]
    bits_out = np.zeros(count, dtype=np.uint8)
    pos = 0
    while pos < count:
        batch = queue.pop(0)
        for u in batch:
            v, size = u, 32
            while True:
                if (v + 1) << (bits * cap) <= a_cap << size:  # W < S(cap): capped
                    k = cap
                    break
                # the largest k <= cap with (v + 1) / 2^size <= S(k), by bisection (S decreases)
                lo, hi = -1, cap
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if (v + 1) << (bits * mid) <= a**mid << size:
                        lo = mid
                    else:
                        hi = mid - 1
                k = lo
                if k >= 0 and (k == cap or a ** (k + 1) << size <= v << (bits * (k + 1))):
                    break
                (extra,) = queue.pop(0)  # the cell holds a bound: the next call's word refines W
                v, size = v << 32 | extra, size + 32
            if k == cap:
                pos += cap
            else:
                pos += k
                if pos < count:
                    bits_out[pos] = 1
                pos += 1
            if pos >= count:
                break
    assert queue == [], "the sampler drew more than it used"
    return np.packbits(bits_out).tobytes()


def test_the_bounds_hold_s_k_and_the_cap() -> None:
    """``low[k] <= S(k) 2^32 <= high[k]`` within 1, exactly (every k up to 1,000, then every 4,099th and
    the last ones); ``S(cap) >= 2^-20 > S(cap + 1)`` (or the cap is 2^16)."""
    for numerator, bits in PROBABILITIES.values():
        table = skips.skip_table(numerator, bits)
        a = (1 << bits) - numerator
        ks = sorted({*range(min(table.cap, 1000)), *range(0, table.cap, 4099), table.cap - 1, table.cap})
        for k in ks:  # low 2^(bits k) <= a^k 2^32 <= high 2^(bits k)
            low, high, scaled = int(table.low[k]) << bits * k, int(table.high[k]) << bits * k, a**k << 32
            assert low <= scaled <= high and high - low <= 1 << bits * k, k
        floor = Fraction(1, 1 << 20)
        assert survive(numerator, bits, table.cap) >= floor * (1 - Fraction(1, 10**9))  # to the float's rounding
        assert table.cap == 1 << 16 or survive(numerator, bits, table.cap + 1) < floor
        assert table.log_keep == math.log1p(-numerator / (1 << bits))


@pytest.mark.parametrize("name", [n for n in PROBABILITIES if "dense" not in n])
@pytest.mark.parametrize("count", [1, 7, 8, 1000, 65_537, 300_001])
@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_reference_bits(name: str, count: int, backend: str, restore_accelerator: None) -> None:
    use(backend)
    numerator, bits = PROBABILITIES[name]
    source = Recording(count + len(name))
    out = skips.sparse_packed(numerator, bits, count, source)
    assert out.tobytes() == reference(numerator, bits, count, source.calls)


def straddler(k: int, size: int = 32) -> int:
    """The ``size``-bit prefix of ``S(k)`` (eps 8): its cell ``[v, v + 1) / 2^size`` holds ``S(k)`` inside."""
    scaled = survive(EPS8, 32, k) * (1 << size)
    assert scaled.denominator != 1
    return math.floor(scaled)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_words_whose_cell_holds_a_bound(backend: str, restore_accelerator: None) -> None:
    """A word on ``S(3)``: the next word refines it, below ``S(3)`` (gap 3) or above (gap 2); a second
    word on the bound too needs a third. Straddlers first and in the middle of a draw; each time the
    reference agrees and the 1 lands where the exact comparison says."""
    use(backend)
    low64 = straddler(3, 64) & (U32 - 1)  # the second word that leaves W on S(3) again
    cases = {  # the next word's 0s put W at the bottom of the cell, under S(3); its 1s at the top, above
        "below": ([[straddler(3)], [0]], 3),
        "above": ([[straddler(3)], [U32 - 1]], 2),
        "twice, then below": ([[straddler(3)], [low64], [0]], 3),
        "twice, then above": ([[straddler(3)], [low64], [U32 - 1]], 2),
    }
    for name, (script, gap) in cases.items():
        source = Recording(7, script)
        out = skips.sparse_packed(EPS8, 32, 4096, source)
        assert out.tobytes() == reference(EPS8, 32, 4096, source.calls), name
        assert np.unpackbits(out)[: gap + 1].tolist() == [0] * gap + [1], name
    # a straddler as the 6th word of the draw, near the end of a short stream
    source = Recording(8, [[U32 - 1] * 5 + [straddler(2)], [0]])
    out = skips.sparse_packed(EPS8, 32, 9, source)
    assert np.unpackbits(out)[:8].tolist() == [1] * 5 + [0, 0, 1]
    assert out.tobytes() == reference(EPS8, 32, 9, source.calls)


def test_refinements_at_the_edges() -> None:
    """Straddling words refined to every kind of gap, each against the reference, with the 1 (or the
    capped run of 0s) where the exact comparison puts it and the second word the last one read: gap 0
    (at ``q = odd / 2^33``, where ``S(1)`` can fall inside a cell), a 1 in the second byte (bit 8), a
    capped gap, a 1 just past the end of a 2-bit stream, a 1 that ends a 3-bit stream (the straddling
    word after it is not refined); at ``q = 3/128`` a second word that puts the cell's top on ``S(5)``
    (``S(5) 2^64`` is a whole number: gap 5) and one that puts its bottom there (gap 4); at
    ``q = 2^-25`` a cell just above ``S(12)`` whose float guess is 12, one too high (gap 11, found by
    trying ``k - 1``)."""
    cap = skips.skip_table(EPS8, 32).cap
    s5 = survive(3, 7, 5) * (1 << 64)
    assert s5.denominator == 1 and survive(3, 7, 5).denominator > U32  # whole at 64 bits, not at 32
    s5_words = [int(s5) >> 32], int(s5) & (U32 - 1)
    s12 = -(-((U32 - 128) ** 12 << 64) >> 32 * 12)  # ceil(S(12) 2^64) at q = 128 / 2^32
    odd = 2 * EPS8 + 1  # q = odd / 2^33: S(1) 2^32 is not whole, a word can straddle it
    cases = {  # numerator, bits, the scripted calls, count, the first bits
        "S(1), above": (odd, 33, [[math.floor(survive(odd, 33, 1) * U32)], [U32 - 1]], 4096, [1]),
        "S(8), below": (EPS8, 32, [[straddler(8)], [0]], 4096, [0] * 8 + [1]),
        "S(cap), below": (EPS8, 32, [[straddler(cap)], [0]], 4096, [0] * cap),
        "S(3), above, 2 bits": (EPS8, 32, [[straddler(3)], [U32 - 1]], 2, [0, 0]),
        "S(3), above, 3 bits, a straddler next": (EPS8, 32, [[straddler(3), straddler(2)], [U32 - 1]], 3, [0, 0, 1]),
        "top on S(5)": (3, 7, [s5_words[0], [s5_words[1] - 1]], 4096, [0] * 5 + [1]),
        "bottom on S(5)": (3, 7, [s5_words[0], [s5_words[1]]], 4096, [0] * 4 + [1]),
        "guess one too high": (128, 32, [[s12 >> 32], [s12 & (U32 - 1)]], 4096, [0] * 11 + [1]),
    }
    for name, (numerator, bits, script, count, first) in cases.items():
        source = Recording(9, script, most=2)  # the draw and one refining word
        out = skips.sparse_packed(numerator, bits, count, source)
        assert np.unpackbits(out)[: len(first)].tolist() == first, name
        assert out.tobytes() == reference(numerator, bits, count, source.calls), name
        assert len(source.calls[1]) == 4, name


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_s_k_on_a_word_boundary_is_not_a_straddle(backend: str, restore_accelerator: None) -> None:
    """At ``q = 3/128`` (7 bits) ``S(1) 2^32 = 125 * 2^25`` is a whole word: the cell just below ends on it
    (gap 1 without a second word), the cell starting at it has gap 0. At ``q = 5/128`` the float guess of
    the word below ``S(3) 2^32 = 123^3 2^11`` is 2.9999999999999996: gap 3 is found by trying ``k + 1``."""
    use(backend)
    for numerator, k, at, word, gap in ((3, 1, 125 << 25, (125 << 25) - 1, 1), (3, 1, 125 << 25, 125 << 25, 0),
                                        (5, 3, 123**3 << 11, (123**3 << 11) - 1, 3)):
        assert survive(numerator, 7, k) * U32 == at
        source = Recording(1, [[word]])
        out = skips.sparse_packed(numerator, 7, gap + 1, source)
        assert np.unpackbits(out)[: gap + 1].tolist() == [0] * gap + [1], word
        assert len(source.calls) == 1  # one draw, no refinement


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_a_stream_ending_on_a_word_reads_no_further(backend: str, restore_accelerator: None) -> None:
    """Five 1s end a 5-bit stream at the fifth word: the straddling word after it is never refined."""
    use(backend)
    source = Recording(5, [[U32 - 1] * 5 + [straddler(2)]])
    out = skips.sparse_packed(EPS8, 32, 5, source)
    assert np.unpackbits(out)[:5].tolist() == [1] * 5 and len(source.calls) == 1


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_capped_gaps(backend: str, restore_accelerator: None) -> None:
    """A word below ``S(cap)``: ``cap`` 0s and no 1 (the next word starts a new gap); the zero word too,
    each decided from its word alone."""
    use(backend)
    table = skips.skip_table(EPS8, 32)
    below = int(table.low[table.cap]) - 1
    source = Recording(3, [[below, 0, U32 - 1]])
    out = skips.sparse_packed(EPS8, 32, 3 * table.cap, source)
    assert np.unpackbits(out)[: 2 * table.cap + 1].tolist() == [0] * 2 * table.cap + [1]
    assert len(source.calls) == 1 and out.tobytes() == reference(EPS8, 32, 3 * table.cap, source.calls)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_the_top_capped_word_where_a_cell_is_wider_than_a_step(backend: str, restore_accelerator: None) -> None:
    """At ``q = 911527 / 2^32`` (about 2.1e-4) a cell near ``S(cap)`` spans more than one step of ``S``:
    the top capped word, 4095, is decided from its float guess (``cap``) and its neighbour's is 2 below."""
    use(backend)
    table = skips.skip_table(911_527, 32)
    top = int(table.low[table.cap]) - 1
    assert top == 4095 and math.log((top + 2) / U32) / table.log_keep < table.cap - 1
    source = Recording(2, [[top, U32 - 1]])
    out = skips.sparse_packed(911_527, 32, table.cap + 1, source)
    assert np.unpackbits(out)[: table.cap + 1].tolist() == [0] * table.cap + [1] and len(source.calls) == 1


class Counted(Scripted):
    """Scripted bytes, with the size of every call kept."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.sizes: list[int] = []

    def random_bytes(self, n: int) -> bytes:
        self.sizes.append(n)
        return super().random_bytes(n)


def draw(table: skips.SkipTable, left: int) -> int:
    """The bytes of a draw for ``left`` bits: the expected words, 4 standard deviations and 16 more."""
    expected = left * table.draws_per_bit
    return 4 * (int(expected + 4 * math.sqrt(expected)) + 16)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_each_draw_is_the_expected_words_and_a_margin(backend: str, restore_accelerator: None) -> None:
    """``draws_per_bit`` is ``q / (1 - S(cap))``; a seeded stream of 300,001 bits takes one draw of the
    expected words plus 4 standard deviations plus 16. On bytes 0xFF after a straddling first word
    (gap 2, then gap 0 for every word: one bit a word) a 100-bit stream runs out of its first draw after
    the refining word, and of the next ones; each is sized for the bits still to place."""
    use(backend)
    table = skips.skip_table(EPS8, 32)
    exact = Fraction(EPS8, U32) / (1 - survive(EPS8, 32, table.cap))
    assert abs(table.draws_per_bit - exact) < 1e-12 * exact
    source = Recording(1)
    skips.sparse_packed(EPS8, 32, 300_001, source)
    assert [len(call) for call in source.calls] == [draw(table, 300_001)]
    counted = Counted(straddler(3).to_bytes(4, "little") + b"\xff" * 4096)
    out = skips.sparse_packed(EPS8, 32, 100, counted)
    assert np.unpackbits(out)[:100].tolist() == [0, 0, 1] + [1] * 97
    sizes, left = [draw(table, 100), 4], 100 - 3 - (draw(table, 100) // 4 - 1)  # the straddler's 3 bits
    while left > 0:  # every later draw runs out too: one bit a word
        sizes.append(draw(table, left))
        left -= sizes[-1] // 4
    assert counted.sizes == sizes and len(sizes) > 3


@needs_numba
@pytest.mark.parametrize("count", [5, 64, 65_536, 1_000_003])
def test_both_backends_read_and_place_alike(count: int, restore_accelerator: None) -> None:
    def run() -> tuple[bytes, int]:
        source = Recording(count, [[U32 - 1, straddler(2), 12345], [77]])
        return skips.sparse_packed(EPS8, 32, count, source).tobytes(), len(source.calls)

    a, b = both(run)
    assert a == b


def test_the_cheaper_sampler_is_chosen() -> None:
    """Below 1/16 the sparse sampler, from 1/16 on the lane decoder (the same seed, the same bits as each)."""
    for numerator, sparse in ((U32 // 16 - 1, True), (U32 // 16, False), (EPS8, True), (U32 // 3, False)):
        got = skips.flips_packed(numerator, 32, 5000, GeneratorSource(np.random.default_rng(4)))
        chosen = skips.sparse_packed if sparse else randomness.bernoulli_packed
        assert got.tobytes() == chosen(numerator, 32, 5000, GeneratorSource(np.random.default_rng(4))).tobytes()
    assert not skips.flips_packed(0, 32, 100, GeneratorSource(np.random.default_rng(4))).any()
    # q = 2^-32 too: on bytes 0xFF every word is a gap of 0, a 1 (the lane decoder reads U >= q, 0s)
    assert skips.flips_packed(1, 32, 8, Scripted(b"\xff" * 1024)).tolist() == [0xFF]


@pytest.mark.parametrize(("numerator", "bits"), [(0, 32), (U32, 32), (-1, 32), (8, 3)])
def test_a_certain_probability_has_no_table(numerator: int, bits: int) -> None:
    with pytest.raises(ValueError, match=rf"^skip_table needs 0 < numerator < 2\*\*bits; got {numerator}/2\*\*{bits}$"):
        skips.skip_table(numerator, bits)
