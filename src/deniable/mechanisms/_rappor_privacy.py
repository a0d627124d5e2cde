"""RAPPOR's realised privacy loss, read from its actual Bloom filters.

A report of ``x`` in cohort ``c`` differs from one of ``x'`` only at the
positions where the filters ``B = B(c, x)`` and ``B' = B(c, x')`` differ:
``a = |B - B'|`` positions where ``x`` sets a bit that ``x'`` does not, and
``b = |B' - B|`` the other way. Every bit is drawn independently (``q*`` if
set, ``p*`` if not) and the cohort does not depend on the value, so the
largest log-ratio of a one-time report is

    ``a ln(q*/p*) + b ln((1-p*)/(1-q*))``

(report 1 where ``x`` alone sets a bit, 0 where ``x'`` alone does), and a
memoized permanent response (bits 1 w.p. ``1 - f/2`` if set, ``f/2`` if
not) leaks at most ``(a + b) ln((1 - f/2) / (f/2))`` over a lifetime. Both
are largest for disjoint filters of ``h`` bits each (``a = b = h``), the
textbook values; when the hashes collide (a filter with fewer than ``h``
bits, or no cohort where two filters are disjoint) they are smaller, up to
``h`` times. :func:`separations` lists the ``(a, b)`` the filters attain,
so the mechanism states the loss it realises and its audit picks inputs and
cohorts that attain it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy

__all__ = ["separations", "one_time_loss", "lifetime_loss", "widest"]

_CHUNK = 256  # rows of distinct filters compared at a time


def separations(table: NDArray[np.uint64], hashes: int) -> dict[tuple[int, int], tuple[int, int, int]]:
    """``{(a, b): (cohort, i, j)}``: every ``(|B_i - B_j|, |B_j - B_i|)`` over cohorts and ordered pairs ``i != j``.

    ``table`` is ``[cohort, category, word]``. Each ``(a, b)`` maps to the
    first cohort and categories that attain it. The scan stops once
    ``(h, h)`` (disjoint full filters, the largest loss there is) is found.
    """
    found: dict[tuple[int, int], tuple[int, int, int]] = {}
    for cohort, filters in enumerate(table):
        distinct, first = np.unique(filters, axis=0, return_index=True)
        for start in range(0, len(distinct), _CHUNK):
            rows = distinct[start : start + _CHUNK]
            ahead = np.bitwise_count(rows[:, None, :] & ~distinct[None, :, :]).sum(axis=2)  # |B_i - B_j|
            behind = np.bitwise_count(distinct[None, :, :] & ~rows[:, None, :]).sum(axis=2)  # |B_j - B_i|
            codes = ahead.astype(np.int64) * (hashes + 1) + behind
            for code in np.unique(codes):
                a, b = divmod(int(code), hashes + 1)
                if (a, b) not in found and (a or b):
                    i, j = np.argwhere(codes == code)[0]
                    found[(a, b)] = (cohort, int(first[start + i]), int(first[j]))
            if (hashes, hashes) in found:
                return found
    return found


def one_time_loss(a: int, b: int, p_star: Fraction, q_star: Fraction) -> float:
    """``a ln(q*/p*) + b ln((1-p*)/(1-q*))``, rounded up."""
    return privacy.ln_up((q_star / p_star) ** a * ((1 - p_star) / (1 - q_star)) ** b)


def lifetime_loss(a: int, b: int, half_f: Fraction) -> float:
    """``(a + b) ln((1 - f/2) / (f/2))``, rounded up (infinite for ``f = 0``)."""
    return privacy.ln_up(((1 - half_f) / half_f) ** (a + b)) if half_f else float("inf")


def widest(found: dict[tuple[int, int], tuple[int, int, int]], p_star: Fraction, q_star: Fraction) -> tuple[int, int]:
    """The ``(a, b)`` of the largest one-time loss among those found (``(0, 0)`` if none differ)."""
    return max(found, key=lambda ab: (one_time_loss(ab[0], ab[1], p_star, q_star), ab), default=(0, 0))
