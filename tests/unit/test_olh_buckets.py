"""OLH's bucket count at large epsilon, and the direct support counting it needs (exact checks).

For domains of at most 1024 categories OLH takes the variance-minimising
power of two up to g = 2^20 (it was capped at 2^10, costing 1.3x variance at
epsilon 8 and 40x at 12); past 2^10 buckets the support counts are taken by
hashing every report against every category, and must equal the per-category
``supports`` sums exactly. Power: the old cap's variance ratio fails the
bound the new choice meets.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms._hashing import lh_variance


@pytest.mark.parametrize("epsilon", [6.0, 8.0, 10.0, 12.0, 13.5])
@pytest.mark.parametrize("k", [16, 1024])
def test_olh_takes_the_best_power_of_two_up_to_2_to_the_20(k: int, epsilon: float) -> None:
    m = dn.OLH(list(range(k)), epsilon=epsilon)
    best = min((1 << b for b in range(1, 21)), key=lambda g: lh_variance(epsilon, g))
    assert m.g == best
    textbook = lh_variance(epsilon, round(math.exp(epsilon)) + 1)
    assert lh_variance(epsilon, m.g) <= 1.03 * textbook
    assert lh_variance(epsilon, 1024) > 1.03 * textbook  # power: the old cap


def test_large_domains_keep_the_walsh_hadamard_cap() -> None:
    assert dn.OLH(list(range(1025)), epsilon=12.0).g == 1024


@pytest.mark.parametrize(("k", "epsilon"), [(16, 12.0), (5, 9.0), (1024, 8.0)])
def test_direct_support_counts_equal_the_per_category_supports(k: int, epsilon: float) -> None:
    m = dn.OLH(list(range(k)), epsilon=epsilon)
    assert m.g > 1024
    rng = np.random.default_rng(k)
    reports = m.privatize_many(rng.integers(0, k, 3000), rng=rng)
    counts = m.aggregate(reports).counts
    expected = [int(m.supports(reports, v).sum()) for v in range(k)]
    np.testing.assert_array_equal(counts, expected)
    again = dn.from_config(m.to_config())
    assert again.g == m.g and np.array_equal(again.aggregate(reports).counts, counts)
