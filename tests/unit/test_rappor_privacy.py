"""RAPPOR's realised privacy loss, read from its Bloom filters: exact against the transition matrix.

When hashes collide (a filter with fewer than ``h`` bits, or no cohort with
two disjoint filters), the textbook ``h ln(q*(1-p*)/(p*(1-q*)))`` and
``2h ln((1-f/2)/(f/2))`` overstate the loss (up to ``h`` times); the
mechanism states what its filters realise, and its audit compares inputs and
cohorts that attain it. Exact checks, and one audit at a fixed seed (a
correct mechanism fails it with probability below ``alpha = 1e-6``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms._rappor import RAPPOR
from deniable.mechanisms._rappor_privacy import separations

COLLIDING = [  # none has two disjoint filters of h bits in any cohort
    dict(num_bits=3, num_hashes=2, num_cohorts=2),
    dict(num_bits=4, num_hashes=4, num_cohorts=2),
    dict(num_bits=8, num_hashes=8, num_cohorts=2),
]
DISJOINT = [
    dict(num_bits=8, num_hashes=2, num_cohorts=4),
    dict(num_bits=6, num_hashes=3, num_cohorts=2, hashing="google"),
]


def _textbook(m: RAPPOR) -> float:
    return m.num_hashes * math.log(float(m.q_star * (1 - m.p_star) / (m.p_star * (1 - m.q_star))))


@pytest.mark.parametrize("kwargs", COLLIDING + DISJOINT)
def test_epsilon_is_the_largest_log_ratio_of_the_transition_matrix(kwargs) -> None:
    m = RAPPOR(list("abcd"), f=0.25, p=0.25, q=0.75, **kwargs)
    _, matrix = m.transition_matrix()
    worst = np.log(matrix.max(axis=0) / matrix.min(axis=0)).max()
    assert m.epsilon == pytest.approx(worst, rel=1e-9) and m.epsilon >= worst * (1 - 1e-12)
    if kwargs in COLLIDING:  # power: the textbook value overstates these
        assert m.epsilon < 0.9 * _textbook(m)
    else:
        assert m.separation == (m.num_hashes, m.num_hashes) and m.epsilon == pytest.approx(_textbook(m), rel=1e-12)


@pytest.mark.parametrize("kwargs", COLLIDING + DISJOINT)
def test_epsilon_infinity_is_the_widest_filter_difference(kwargs) -> None:
    """A memoized permanent response leaks ``|B(x) xor B(x')| ln((1 - f/2)/(f/2))`` at most, over cohorts and pairs."""
    m = RAPPOR(list("abcd"), f=0.25, **kwargs)
    words = m._bloom3
    widest = max(
        int(np.bitwise_count(words[c, i] ^ words[c, j]).sum())
        for c in range(m.num_cohorts) for i in range(4) for j in range(4)
    )
    half_f = Fraction(1, 8)
    assert m.epsilon_infinity == pytest.approx(widest * math.log((1 - half_f) / half_f), rel=1e-12)


def test_an_epsilon_request_is_met_by_the_realised_lifetime_loss() -> None:
    """Filters with collisions get the f that realises the request (once they got 2h's and realised ~3/4 of it)."""
    m = RAPPOR(list("abcd"), epsilon=4.0, num_bits=8, num_hashes=8, num_cohorts=2)
    assert 0.99 * 4.0 <= m.epsilon_infinity <= 4.0
    textbook_half_f = 1 / (1 + math.exp(4.0 / 16))
    assert m._half_f / 2**32 < 0.9 * textbook_half_f  # less noise than the 2h rule would add


def test_separations_lists_each_difference_once_and_stops_at_disjoint_filters() -> None:
    table = np.array([[[0b011], [0b110], [0b011]], [[0b001], [0b100], [0b010]]], dtype=np.uint64)
    assert separations(table, 2) == {(1, 1): (0, 0, 1)}  # no (2, 2): cohort 1's filters have one bit
    table[1, 0], table[1, 2] = 0b0011, 0b1100
    assert separations(table, 2)[(2, 2)] in {(1, 0, 2), (1, 2, 0)}


def test_identical_filters_everywhere_are_refused() -> None:
    with pytest.raises(ValueError, match=r"^RAPPOR's categories have one Bloom filter in every cohort"):
        RAPPOR(["a", "b"], f=0.5, num_bits=1, num_hashes=1, num_cohorts=4)


def test_the_audit_measures_the_realised_loss_where_no_filters_are_disjoint() -> None:
    """No cohort has disjoint filters (3 bits, 2 hashes): the audit once measured a lower bound of 0.

    It now compares two categories that attain ``epsilon`` (``audit_pairs``), in the cohorts where
    they do. Power: a randomizer that claims half its loss is caught (it was not when the bound was 0).
    """
    kwargs = dict(f=0.1, p=0.1, q=0.9, num_bits=3, num_hashes=2, num_cohorts=2)
    m = RAPPOR(list("abc"), **kwargs)
    assert m.separation != (2, 2)
    result = dn.audit(m, trials=100_000, rng=5)
    assert result.passed and result.epsilon_lower > 0.8 * m.epsilon, str(result)

    class Claiming(RAPPOR):
        @property
        def epsilon(self) -> float:
            return m.epsilon / 2

    assert not dn.audit(Claiming(list("abc"), **kwargs), trials=100_000, rng=6).passed
