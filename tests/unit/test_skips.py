"""Sparse Bernoulli bits (:mod:`deniable.skips`) against a reference written from the definition.

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

from deniable import accelerate, randomness, skips
from deniable.randomness import GeneratorSource

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
    """A seeded source that keeps every call's bytes, and serves scripted words first when given."""

    secure = False

    def __init__(self, seed: int, first: list[list[int]] | None = None) -> None:
        self.inner = GeneratorSource(np.random.default_rng(seed))
        self.first = list(first or [])
        self.calls: list[bytes] = []

    def random_bytes(self, n: int) -> bytes:
        data = self.inner.random_bytes(n)
        if self.first:  # scripted words at the start of this call, the rest seeded
            words = np.frombuffer(data, dtype=np.uint32).copy()
            script = self.first.pop(0)
            words[: len(script)] = script
            data = words.tobytes()
        self.calls.append(data)
        return data


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
    if backend == "numba" and not accelerate.numba_available():
        pytest.skip("numba is not installed")
    accelerate.set_accelerator(backend)
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
    if backend == "numba" and not accelerate.numba_available():
        pytest.skip("numba is not installed")
    accelerate.set_accelerator(backend)
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


def test_s_k_on_a_word_boundary_is_not_a_straddle() -> None:
    """At ``q = 3/128`` (7 bits) ``S(1) 2^32 = 125 * 2^25`` is a whole word: the cell just below ends on it
    (gap 1 without a second word), the cell starting at it has gap 0."""
    at = 125 << 25
    for word, gap in ((at - 1, 1), (at, 0)):
        source = Recording(1, [[word]])
        out = skips.sparse_packed(3, 7, 2, source)
        assert np.unpackbits(out)[:2].tolist() == [1 if i == gap else 0 for i in range(2)], word
        assert len(source.calls) == 1  # one draw, no refinement


def test_capped_gaps() -> None:
    """A word below ``S(cap)``: ``cap`` 0s and no 1 (the next word starts a new gap); the zero word too."""
    table = skips.skip_table(EPS8, 32)
    below = int(table.low[table.cap]) - 1
    source = Recording(3, [[below, 0, U32 - 1]])
    out = np.unpackbits(skips.sparse_packed(EPS8, 32, 3 * table.cap, source))
    assert out[: 2 * table.cap].sum() == 0 and out[2 * table.cap] == 1


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


@pytest.mark.parametrize(("numerator", "bits"), [(0, 32), (U32, 32), (-1, 32), (8, 3)])
def test_a_certain_probability_has_no_table(numerator: int, bits: int) -> None:
    with pytest.raises(ValueError, match=rf"^skip_table needs 0 < numerator < 2\*\*bits; got {numerator}/2\*\*{bits}$"):
        skips.skip_table(numerator, bits)
