"""Layer B for the sparse Bernoulli sampler (:func:`deniable._skips.sparse_packed`).

Its bits must be i.i.d. Bernoulli(``q``): three checks on 10^7 bits per
probability, through the seeded and the secure source and each backend:

* the number of 1s, a two-sided exact binomial test;
* the gaps between 1s (0s before each 1), a chi-square test against the
  geometric law ``P(G >= k) = (1 - q)**k`` in 64 cells of about equal
  probability: i.i.d. Bernoulli bits are exactly i.i.d. geometric gaps;
* the 1s by position modulo 64 (a packing slip, a bit order or a word
  boundary, would move them), a chi-square test against uniform.

Alpha: at most 1e-6 per test function, split by Bonferroni. Power: the same
checks reject a probability 5% too large, gaps made 10% sticky (a 1 more
likely right after a 1), and 1s at positions 7 mod 8 moved one place.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from deniable import _accelerate as accelerate
from deniable import _skips as skips
from deniable import testing
from deniable._randomness import SECURE, GeneratorSource

pytestmark = pytest.mark.stat

ALPHA = 1e-6
N = 10_000_000
U32 = 1 << 32
CASES = {
    "eps 8 sketch": math.ceil(U32 / (1 + math.exp(4))),
    "just under 1/16": U32 // 16 - 1,
    "1/1000": U32 // 1000,
}


def checks(bits: np.ndarray, q: float, alpha: float) -> dict[str, testing.CheckResult]:
    """The three checks, each at ``alpha``, of ``bits`` (0/1, in stream order) claimed Bernoulli(``q``)."""
    ones = np.flatnonzero(bits)
    n = bits.size
    gaps = np.diff(ones, prepend=-1) - 1
    # 64 cells of about equal probability: [e_i, e_i+1) with P = S(e_i) - S(e_i+1), S(k) = (1 - q)^k
    edges = np.unique(np.ceil(np.log1p(-np.arange(64) / 64) / math.log1p(-q))).astype(np.int64)
    observed = np.bincount(np.searchsorted(edges, gaps, side="right") - 1, minlength=edges.size)
    survive = np.append((1 - q) ** edges.astype(float), 0.0)
    by_place = np.bincount(ones % 64, minlength=64)
    return {
        "count": testing.proportion_check(ones.size, n, q, alpha, label="count"),
        "gaps": testing.chi_square_gof(observed, -np.diff(survive), alpha, label="gaps"),
        "place": testing.chi_square_gof(by_place, np.full(64, 1 / 64), alpha, label="place"),
    }


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_sparse_bits_are_bernoulli(backend: str, restore_accelerator: None) -> None:
    if backend == "numba" and not accelerate.numba_available():
        pytest.skip("numba is not installed")
    accelerate.set_accelerator(backend)
    alpha = ALPHA / (len(CASES) * 2 * 3)
    for name, numerator in CASES.items():
        for label, source in (("seeded", GeneratorSource(np.random.default_rng(11))), ("secure", SECURE)):
            bits = np.unpackbits(skips.sparse_packed(numerator, 32, N, source))
            for result in checks(bits, numerator / U32, alpha).values():
                assert result, (name, label, str(result))


def test_the_checks_have_power() -> None:
    """Each check rejects its kind of error at the same alpha (the wrong samplers are numpy's, seeded);
    the other two checks of each wrong sample are not assertions (hidden from recording). The
    count of a probability 5% too large lies 21 standard deviations from the claimed one, 16
    beyond the band's end (at 3%, 7.4: a miss near 1e-13, but a run's estimate could read 1e-6);
    the sticky gaps and slipped places give chi-square statistics in the
    tens of thousands against a critical 142."""
    rng = np.random.default_rng(3)
    q = CASES["eps 8 sketch"] / U32
    alpha = ALPHA / (len(CASES) * 2 * 3)
    too_likely = (rng.random(N) < q * 1.05).astype(np.uint8)
    sticky = (rng.random(N) < q).astype(np.uint8)  # then a 1 follows a 1 with probability q + 0.1
    after = np.flatnonzero(sticky[:-1]) + 1
    sticky[after[rng.random(after.size) < 0.1]] = 1
    slipped = (rng.random(N) < q).astype(np.uint8)
    seven = np.flatnonzero(slipped[:-1] & (np.arange(N - 1) % 8 == 7))
    slipped[seven], slipped[seven + 1] = 0, 1
    with testing.recording(hide=True):
        wrong = [checks(too_likely, q, alpha)["count"], checks(sticky, q, alpha)["gaps"],
                 checks(slipped, q, alpha)["place"]]
    for result in wrong:
        assert not testing.family([result]), str(result)
