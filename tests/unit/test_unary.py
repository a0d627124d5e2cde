"""Unary encoding internals: the blocked column count equals the plain one.

Also: Unary encodings (SUE, OUE): their 32-bit integer probabilities and their configs.

Deterministic: the references are exact rational arithmetic (``Fraction``)
and :func:`deniable._privacy.exp_ratio`'s documented contract.
"""

from __future__ import annotations

import os
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scripted import Scripted

import deniable as dn
from deniable import _columns as columns
from deniable._privacy import exp_ratio, ln_up
from deniable._randomness import GeneratorSource
from deniable.errors import ConfigError
from deniable.wire import from_config


@pytest.mark.parametrize("k", [2, 7, 8, 65, 1024, 20_000])
@pytest.mark.parametrize("n", [0, 1, 254, 255, 256, 4_337])
def test_support_counts_equal_unpacked_column_sums(k: int, n: int, rng: np.random.Generator) -> None:
    """Exact: the uint8 block sums give the int64 column sums of the unpacked bits, at the
    block (255 rows) and chunk edges, with every bit set (the worst case for overflow) too."""
    oue = dn.OUE(k, epsilon=1.0)
    bits = rng.integers(0, 2, (n, k), dtype=np.uint8)
    for matrix in (bits, np.ones_like(bits)):
        packed = np.packbits(matrix, axis=1)
        counts = oue._support_counts(packed)
        assert counts.dtype == np.int64 and np.array_equal(counts, matrix.sum(axis=0, dtype=np.int64))


def test_support_counts_cross_chunks(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact across many chunks: a small chunk makes the loop run over 255-row blocks."""
    monkeypatch.setattr(columns, "_BLOCK_BYTES", 2 * 255 * 2)
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


ONE = 1 << 32


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0, 10.0])
def test_sue_probabilities_are_the_closest_within_epsilon(eps: float) -> None:
    """p = floor(2^32 a / (a + b)) with a/b = exp_ratio(eps/2); q = 1 - p; p + 2^-32 would exceed eps."""
    a, b = exp_ratio(eps / 2, 1)
    m = dn.SUE(4, epsilon=eps)
    p = (a * ONE) // (a + b)
    assert (m.p, m.q) == (Fraction(p, ONE), Fraction(ONE - p, ONE))
    assert m.epsilon == ln_up(Fraction(p * p, (ONE - p) ** 2)) <= eps
    assert ln_up(Fraction((p + 1) ** 2, (ONE - p - 1) ** 2)) > eps * (1 - 1e-9)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0, 10.0])
def test_oue_probabilities_are_the_closest_within_epsilon(eps: float) -> None:
    """p = 1/2, q = ceil(2^32 b / (a + b)) / 2^32 with a/b = exp_ratio(eps); q - 2^-32 would exceed eps."""
    a, b = exp_ratio(eps, 1)
    m = dn.OUE(4, epsilon=eps)
    q = -((-b * ONE) // (a + b))
    assert (m.p, m.q) == (Fraction(1, 2), Fraction(q, ONE))
    assert m.epsilon == ln_up(Fraction(ONE - q, q)) <= eps
    assert ln_up(Fraction(ONE - q + 1, q - 1)) > eps * (1 - 1e-9)


def _first_guess_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """``exp_ratio`` answering ``a + 64``: a ratio above ``e^eps``, which the epsilon loops must undo."""
    from deniable import _privacy as privacy

    real = privacy.exp_ratio

    def above(epsilon: float, others: int) -> tuple[int, int]:
        a, b = real(epsilon, others)
        return a + 64, b

    monkeypatch.setattr(privacy, "exp_ratio", above)


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_sue_steps_a_too_large_p_down_to_the_largest_within_epsilon(
    monkeypatch: pytest.MonkeyPatch, eps: float
) -> None:
    """The guard ``while ln_up(p^2 / (1 - p)^2) > eps: p -= 2^-32`` is never entered with
    ``exp_ratio``'s ratio (at most ``e^(eps/2)``); fed one above it, SUE steps ``p`` down to the
    largest ``p`` whose loss is within ``eps``, exactly. Asked for exactly that loss, it keeps the
    same ``p`` (a loop that stopped only below the request would step once more)."""
    a, b = exp_ratio(eps / 2, 1)
    _first_guess_too_large(monkeypatch)
    m = dn.SUE(4, epsilon=eps)
    p = int(m.p * ONE)
    assert ((a + 64) * ONE) // (a + 64 + b) - p >= 2  # the loop ran
    assert ln_up(Fraction(p * p, (ONE - p) ** 2)) <= eps < ln_up(Fraction((p + 1) ** 2, (ONE - p - 1) ** 2))
    assert dn.SUE(4, epsilon=m.epsilon).p == m.p


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_oue_steps_a_too_small_q_up_to_the_smallest_within_epsilon(
    monkeypatch: pytest.MonkeyPatch, eps: float
) -> None:
    """OUE's guard ``while ln_up((1 - q) / q) > eps: q += 2^-32``, fed a ratio above ``e^eps``:
    ``q`` ends at the smallest value whose loss is within ``eps``, exactly, and at the same ``q``
    when asked for exactly that loss."""
    a, b = exp_ratio(eps, 1)
    _first_guess_too_large(monkeypatch)
    m = dn.OUE(4, epsilon=eps)
    q = int(m.q * ONE)
    assert q + (-b * ONE) // (a + 64 + b) >= 2  # the loop ran: q - ceil(2^32 b / (a + 64 + b))
    assert ln_up(Fraction(ONE - q, q)) <= eps < ln_up(Fraction(ONE - q + 1, q - 1))
    assert dn.OUE(4, epsilon=m.epsilon).q == m.q


def test_epsilons_the_32_bit_probabilities_cannot_reach_are_refused() -> None:
    assert dn.OUE(3, epsilon=21.5).epsilon > 21.5 * 0.99
    with pytest.raises(ValueError, match=r"epsilon=22.0 cannot be realised by OUE .*\(it would give 21.49\)"):
        dn.OUE(3, epsilon=22.0)
    with pytest.raises(ValueError, match=r"epsilon=50.0 cannot be realised by SUE .*\(it would give 44.36\)"):
        dn.SUE(3, epsilon=50.0)


def test_config_round_trip_and_checks() -> None:
    m = dn.OUE(5, epsilon=1.0)
    config = m.to_config()
    assert config["params"] == {"bits": 32, "p_numerator": ONE // 2, "q_numerator": int(m.q * ONE)}
    again = from_config(config)
    assert again == m and again.epsilon == m.epsilon
    with pytest.raises(ConfigError, match=r"domain for OUE has duplicate category 1"):
        from_config(dict(config, domain=[1, 1, 2, 3, 4]))
    for bits in (16, 64):
        with pytest.raises(ConfigError, match=rf"OUE params: bits must be 32; got {bits}"):
            from_config(dict(config, params=dict(config["params"], bits=bits)))
    for p, q in [(ONE // 4, ONE // 2), (ONE // 2, ONE // 2), (ONE, 5), (ONE // 2, 0)]:
        with pytest.raises(ConfigError, match=r"OUE needs 0 < q < p < 1 in 32-bit probabilities"):
            from_config(dict(config, params={"bits": 32, "p_numerator": p, "q_numerator": q}))


class Repeating(GeneratorSource):
    """A simulation source that repeats one byte forever."""

    def __init__(self, byte: int) -> None:
        self.byte = byte

    def random_bytes(self, n: int) -> bytes:
        return bytes([self.byte]) * n


@pytest.mark.parametrize("cls", [dn.SUE, dn.OUE])
@pytest.mark.parametrize("k", [70, 130])
def test_one_hot_lanes_across_words(cls: Any, k: int) -> None:
    """Crafted bytes: a stream of 1 bits decides every Bernoulli at its probability's top bit, 0 for
    q < 1/2 (the noise bits) and 1 for p >= 1/2 (the value's bit); the report is exactly the one-hot
    encoding, for values in every byte and 64-bit word."""
    m = cls(k, epsilon=1.0)
    for value in (0, 7, 8, 63, 64, 65, k - 1):
        report = m.privatize_many([value], rng=Repeating(0xFF))
        assert report.shape == (1, (k + 7) // 8)
        want = np.zeros(k, dtype=np.uint8)
        want[value] = 1
        np.testing.assert_array_equal(m.unpack(report)[0], want)
        assert m.aggregate(report).counts.tolist() == want.tolist()
        assert m.supports(report, value).tolist() == [True] and m.supports(report, value).dtype == np.bool_
        assert m.supports(report, (value + 1) % k).tolist() == [False]
        assert m.reports_from_json(m.reports_to_json(report)).tolist() == report.tolist()


def test_messages_name_the_mechanism() -> None:
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for SUE; got 0.0$"):
        dn.SUE(3, epsilon=0.0)
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for OUE; got -1$"):
        dn.OUE(3, epsilon=-1)
    for cls in (dn.SUE, dn.OUE):
        with pytest.raises(ValueError, match=rf"^domain for {cls.__name__} has duplicate category 1$"):
            cls([1, 1], epsilon=1.0)
    with pytest.raises(ValueError, match=r"at such large epsilons GRR or SubsetSelection is also far more accurate$"):
        dn.OUE(3, epsilon=22.0)
    with pytest.raises(NotImplementedError, match=r"^transition_matrix enumerates 2\*\*k outputs; k <= 12 only$"):
        dn.SUE(13, epsilon=1.0).transition_matrix()
    outputs, matrix = dn.SUE(12, epsilon=1.0).transition_matrix()
    assert len(outputs) == 4096 and matrix.shape == (12, 4096)


def test_report_checks() -> None:
    m = dn.OUE(12, epsilon=1.0)
    empty = m._checked(np.zeros((0, 2), dtype=np.uint8))
    assert empty.shape == (0, 2) and empty.dtype == np.uint8
    with pytest.raises(ValueError, match=r"^OUE report 1 sets padding bits beyond the k=12 categories$"):
        m.aggregate(np.array([[0, 0], [0, 1]], dtype=np.uint8))
    with pytest.raises(ValueError, match=r"^OUE report 1 sets padding bits"):  # row 0 sets category 11 only
        m.aggregate(np.array([[0, 0x10], [0, 0x01]], dtype=np.uint8))
    with pytest.raises(ValueError, match=r"^OUE report 2 sets padding bits"):
        m.aggregate(np.array([[0, 0], [0, 0], [0, 0x08]], dtype=np.uint8))
    bits = np.zeros((2, 12), dtype=bool)
    bits[0, 3] = bits[1, 11] = True
    assert m.aggregate(bits).counts.tolist() == [0, 0, 0, 1] + [0] * 7 + [1]
    with pytest.raises(ValueError, match=r"^OUE unpacked reports must hold only 0 and 1$"):
        m.aggregate(np.full((1, 12), 2))
    with pytest.raises(ValueError, match=r"^OUE report 0 must be a hex string of 4 characters \(12 bits\)"):
        m.reports_from_json(["00"])
    assert m.report_to_json(np.array([0x10, 0x00], dtype=np.uint8)) == "1000"


@pytest.mark.parametrize("k", [8, 64, 70, 128, 130])
def test_every_category_bit_can_be_set(k: int) -> None:
    """Every bit 1: the noise draw reads 0x55 (each lane decided at q's second bit, which is 1 for
    q = 1/(e + 1) = 0.0100...b) and the value's bit reads 1s (p = 1/2 = 0.1b: 1). The report has
    exactly k ones (no lane masked, no padding set)."""
    m = dn.OUE(k, epsilon=1.0)
    assert m.q < Fraction(1, 2) and m.q >= Fraction(1, 4)  # q's first two bits are 01
    width = (k + 7) // 8
    source = Scripted(b"\x55" * (2 * width * 8 // 4 + 64) + b"\xff" * 64)
    report = m.privatize_many([0, k - 1], rng=source)
    assert report.shape == (2, width) and source.data == b""
    assert m.unpack(report).tolist() == [[1] * k] * 2
    counts = m.aggregate(report).counts
    assert counts.tolist() == [2] * k and counts.dtype == np.int64


@pytest.mark.stat
@pytest.mark.parametrize("cls", [dn.SUE, dn.OUE])
def test_simulated_support_counts_follow_the_binomials(cls: Any) -> None:
    """``C_v ~ Binomial(n_v, p) + Binomial(n - n_v, q)``: each simulated count of 100,000 reports is
    within z sd of ``n_v p + (n - n_v) q`` (alpha 1e-6 over the 4 categories, seed fixed). Power: with
    p and q swapped, or the other respondents' term ``n + n_v``, category 0 is off by more than
    20,000 (p - q) (over 20 sd)."""
    from deniable._intervals import z_for
    from deniable.testing import estimate_check

    m = cls(4, epsilon=1.0)
    p, q = float(m.p), float(m.q)
    true_counts = np.array([60_000, 40_000, 0, 0])
    n = int(true_counts.sum())
    counts = m.simulate_support_counts(true_counts, np.random.default_rng(11))
    assert counts.shape == (4,) and counts.dtype == np.int64
    mean = true_counts * p + (n - true_counts) * q
    sd = np.sqrt(true_counts * p * (1 - p) + (n - true_counts) * q * (1 - q))
    assert (res := estimate_check(counts, mean, sd, 1e-6)), res.message
    z = z_for(1e-6 / 4)
    swapped = true_counts * q + (n - true_counts) * p
    assert abs(counts[0] - swapped[0]) > 20 * sd[0] and 20_000 * (p - q) > 20 * sd[0] + z * sd[0]


@pytest.mark.parametrize("width", range(1, 10))
def test_the_value_bit_is_set_in_words_and_bytes_alike(width: int, rng: np.random.Generator) -> None:
    """The value's own bit (a word mask for reports of 1, 2, 4 and 8 bytes, a flat byte index
    otherwise) is cleared or set as ``truth`` says, for every position, and no other bit moves."""
    from deniable.mechanisms._unary import _set_bits

    n = 4000
    packed = rng.integers(0, 256, (n, width), dtype=np.uint8)
    idx = rng.integers(0, 8 * width, n)
    truth = rng.random(n) < 0.5
    want = np.unpackbits(packed, axis=1)
    want[np.arange(n), idx] = truth
    _set_bits(packed, idx, truth)
    np.testing.assert_array_equal(np.unpackbits(packed, axis=1), want)
