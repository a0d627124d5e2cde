"""The exact samplers of ``deniable._randomness``: uniform integers and dyadic Bernoulli bits.

Each test spends alpha = 1e-6 in total (Bonferroni over its bounds/probabilities,
sources and checks), on both the seeded simulation source and the OS CSPRNG.
Power: a modulo-without-rejection sampler (biased for bounds that do not divide
2**32) and a Bernoulli with a 20%-too-large numerator are rejected. The
Bernoulli tests run once per run decoder (``accelerator`` fixture: numpy, and
numba when installed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from deniable import _randomness as randomness
from deniable import testing
from deniable._randomness import GeneratorSource, resolve

pytestmark = pytest.mark.stat

ALPHA = 1e-6
N = 200_000
BOUNDS = [2, 3, 5, 7, 10, 100, 255, 256, 1000, 3 * 2**30, 2**32 - 1, 2**32, 2**32 + 1, 2**32 + 3,
          3 * 2**40 + 7, 2**63 + 5]
BINS = 64


def sources(rng: np.random.Generator) -> list[tuple[str, Any]]:
    return [("seeded", GeneratorSource(rng)), ("secure", resolve(None))]


def bin_probabilities(bound: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Exact cell probabilities of ``v // width`` and of ``v % 64`` for v uniform below ``bound``."""
    width = -(-bound // BINS)  # ceil
    cells = -(-bound // width)
    top = np.array([min((j + 1) * width, bound) - j * width for j in range(cells)], dtype=float) / bound
    low = np.array([(bound - 1 - r) // BINS + 1 if r < bound else 0 for r in range(BINS)], dtype=float) / bound
    return top, low, width


def uniform_checks(values: np.ndarray, bound: int, alpha: float, label: str) -> list[testing.CheckResult]:
    if bound <= 1000:
        expected = np.full(bound, 1 / bound)
        return [testing.chi_square_gof(np.bincount(values.astype(np.int64), minlength=bound), expected, alpha,
                                       label=label)]
    top, low, width = bin_probabilities(bound)
    v = values.astype(np.uint64)
    return [
        testing.chi_square_gof(np.bincount((v // np.uint64(width)).astype(np.int64), minlength=top.size), top,
                               alpha / 2, label=label + " high bins"),
        testing.chi_square_gof(np.bincount((v % np.uint64(BINS)).astype(np.int64), minlength=BINS), low,
                               alpha / 2, label=label + " low bits"),
    ]


def test_uniform_below_is_uniform(rng: np.random.Generator) -> None:
    """Chi-square over every value (small bounds) or over high/low bins (large bounds);
    alpha 1e-6 over bounds x sources. Power: test_uniform_check_has_power."""
    alpha = ALPHA / (len(BOUNDS) * 2)
    failures = []
    for bound in BOUNDS:
        for name, source in sources(rng):
            values = randomness.uniform_below(bound, N, source)
            assert values.dtype == np.uint64 and values.shape == (N,)
            assert int(values.max()) < bound
            failures += [str(r) for r in uniform_checks(values, bound, alpha, f"bound {bound} {name}")
                         if not r.passed]
    assert not failures, "\n".join(failures)


def test_uniform_check_has_power(rng: np.random.Generator) -> None:
    """Power: reducing a 32-bit word modulo 3 * 2**30 (no rejection) doubles the odds of the
    lowest third; reducing a 64-bit word modulo 3 * 2**62 likewise. Both are rejected."""
    alpha = ALPHA / (len(BOUNDS) * 2)
    for bound, word in ((3 * 2**30, 2**32), (3 * 2**62, 2**64)):
        raw = rng.integers(0, word, size=N, dtype=np.uint64, endpoint=False) if word == 2**32 else \
            rng.integers(0, 2**64 - 1, size=N, dtype=np.uint64, endpoint=True)
        biased = raw % np.uint64(bound)
        assert not testing.family(uniform_checks(biased, bound, alpha, "modulo bias"))


def test_uniform_below_edge_bounds(rng: np.random.Generator) -> None:
    source = GeneratorSource(rng)
    assert not randomness.uniform_below(1, 100, source).any()
    assert randomness.uniform_below(2**64, 10, source).dtype == np.uint64
    assert randomness.uniform_below(5, 0, source).shape == (0,)
    for bad in (0, -1, 2**64 + 1):
        with pytest.raises(ValueError, match="bound"):
            randomness.uniform_below(bad, 1, source)
    assert all(0 <= randomness.scalar_below(7, resolve(None)) < 7 for _ in range(100))


# ------------------------------------------------------------------ bernoulli
PROBS = [(1, 1), (1, 2), (3, 3), (1 << 31, 32), (123_456_789, 32), (2**32 - 1, 32), (1, 32), (5, 7)]
WORDS = 20_000


def bernoulli_checks(words: np.ndarray, num: int, bits: int, alpha: float, label: str) -> list[testing.CheckResult]:
    """Per-lane rates (64 lanes, Wilson) and independence of lanes within and across words."""
    p = num / 2**bits
    lanes = ((words[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    n = lanes.shape[0]
    a = alpha / (64 + 4)
    out = [testing.proportion_check(int(lanes[:, j].sum()), n, p, a, label=f"{label} lane {j}") for j in range(64)]
    if 20 / n < p < 1 - 20 / n:  # every 2x2 cell expects >= 5
        pairs = [(lanes[:, 0], lanes[:, 1]), (lanes[:, 31], lanes[:, 32]),
                 (lanes[:-1, 63], lanes[1:, 0]), (lanes[:-1, 5], lanes[1:, 5])]
        out += [testing.independence_2x2(x, y, a, label=f"{label} pair {i}") for i, (x, y) in enumerate(pairs)]
    return out


def test_bernoulli_words_rates_and_independence(rng: np.random.Generator, accelerator: str) -> None:
    """Each bit is Bernoulli(num / 2**bits), independent of its neighbours; alpha 1e-6 over
    probabilities x sources x lanes."""
    alpha = ALPHA / (len(PROBS) * 2)
    failures = []
    for num, bits in PROBS:
        for name, source in sources(rng):
            words = randomness.bernoulli_words(num, bits, WORDS, source)
            assert words.dtype == np.uint64 and words.shape == (WORDS,)
            failures += [str(r) for r in bernoulli_checks(words, num, bits, alpha, f"{num}/2^{bits} {name}")
                         if not r.passed]
    assert not failures, "\n".join(failures)


def test_bernoulli_words_exact_ends(rng: np.random.Generator, accelerator: str) -> None:
    """Probabilities 0 and 1 are exact; 1 - 2**-32 essentially never gives a 0 in 1.3M bits."""
    source = GeneratorSource(rng)
    assert not randomness.bernoulli_words(0, 32, 1000, source).any()
    ones = randomness.bernoulli_words(2**32, 32, 1000, source)
    assert np.all(ones == np.uint64(2**64 - 1))
    assert randomness.bernoulli_words(3, 2, 0, source).shape == (0,)
    # P(any zero among 64 * 20000 bits) = 1.3e6 * 2**-32 = 3e-4: not an assertion we make;
    # the rate check above covers 1 - 2**-32 with its Wilson interval instead.
    with pytest.raises(ValueError, match="numerator"):
        randomness.bernoulli_words(5, 2, 1, source)
    with pytest.raises(ValueError, match="numerator"):
        randomness.bernoulli_words(-1, 2, 1, source)


def test_bernoulli_check_has_power(rng: np.random.Generator, accelerator: str) -> None:
    """Power: a numerator 20% too large is caught in 16 x WORDS words (at 123456789 / 2**32 a lane's
    rate moves 19.6 standard deviations, against z = 6.1; in WORDS words, 4.9, and each of the
    64 lanes missed 88% of the time: all of them 3e-4); so are duplicated words."""
    alpha = ALPHA / (len(PROBS) * 2)
    source = GeneratorSource(rng)
    # claimed num/2**bits, sampled with a numerator about 20% (25% for 1/4) larger
    for num, bits, wrong_num, wrong_bits in ((1, 2, 5, 4), (123_456_789, 32, 148_148_147, 32),
                                             (1 << 31, 32, 2_576_980_378, 32)):
        wrong = randomness.bernoulli_words(wrong_num, wrong_bits, 16 * WORDS, source)
        assert not testing.family(bernoulli_checks(wrong, num, bits, alpha, "skewed")), (num, bits)
    words = randomness.bernoulli_words(1 << 31, 32, WORDS // 2, source)
    repeated = np.repeat(words, 2)  # each word used twice: lanes across words are dependent
    assert not testing.family(bernoulli_checks(repeated, 1 << 31, 32, alpha, "duplicated"))


def test_bernoulli_helper_is_exact_ratio(rng: np.random.Generator) -> None:
    """``bernoulli(a, b)`` for a non-dyadic ratio (alpha 1e-6); power: 20% off is rejected."""
    source = GeneratorSource(rng)
    draws = randomness.bernoulli(2, 7, N, source)
    assert testing.proportion_check(int(draws.sum()), N, 2 / 7, ALPHA / 2).passed
    assert not testing.proportion_check(int(draws.sum()), N, 2 / 7 * 1.2, ALPHA / 2).passed
    with pytest.raises(ValueError, match="probability"):
        randomness.bernoulli(8, 7, 1, source)


def _triples(num: int, bits: int, n: int, source: Any) -> np.ndarray:
    """Counts of the 8 patterns of 3 consecutive packed bits, starting at every third bit."""
    packed = randomness.bernoulli_packed(num, bits, 3 * n, source)
    b = np.unpackbits(packed, count=3 * n).reshape(n, 3)
    return np.bincount(b[:, 0] * 4 + b[:, 1] * 2 + b[:, 2], minlength=8)


def test_bernoulli_packed_joint_law_across_blocks(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch, accelerator: str
) -> None:
    """Blocks of 64 lanes (so that most triples cross or sit next to a block edge): the 8
    patterns of 3 consecutive bits follow the product law, chi-square at alpha 1e-6 / 2 per
    source; power: a numerator 20% too large fails the same test."""
    monkeypatch.setattr(randomness, "_BLOCK_LANES", 64)
    num, bits, n = 5, 3, 60_000
    p = num / 2**bits
    law = np.array([(p if j & 4 else 1 - p) * (p if j & 2 else 1 - p) * (p if j & 1 else 1 - p)
                    for j in range(8)])
    for name, source in sources(rng):
        result = testing.chi_square_gof(_triples(num, bits, n, source), law, ALPHA / 2, label=name)
        assert result.passed, str(result)
    wrong = testing.chi_square_gof(_triples(6, 3, n, GeneratorSource(rng)), law, ALPHA / 2, label="6/8")
    assert not wrong.passed, str(wrong)
    assert randomness.bernoulli_packed(num, bits, 13, GeneratorSource(rng))[-1] & 0b111 == 0  # padding
