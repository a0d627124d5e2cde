"""Exact acceptance bands for the support counts of a pure frequency oracle.

For a fixed population with ``n_v`` respondents holding category ``v`` (of
``n``), each report supports ``v`` independently with probability ``p*`` (the
respondent holds ``v``) or ``q*`` (otherwise), so the support count is exactly
``C_v ~ Binomial(n_v, p*) + Binomial(n - n_v, q*)``. Its distribution is the
convolution of the two binomial pmfs; the band leaves at most ``alpha / 2`` in
each tail. The debiased estimate is an affine function of ``C_v``, so this
tests the estimate without a normal approximation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats


def support_count_band(n_v: int, n: int, p: float, q: float, alpha: float) -> tuple[int, int]:
    """``[low, high]`` with ``P(C_v < low) <= alpha/2`` and ``P(C_v > high) <= alpha/2``."""
    pmf = np.convolve(
        stats.binom.pmf(np.arange(n_v + 1), n_v, p),
        stats.binom.pmf(np.arange(n - n_v + 1), n - n_v, q),
    )
    below = np.cumsum(pmf)  # P(C <= c)
    above = np.cumsum(pmf[::-1])[::-1]  # P(C >= c)
    low = int(np.argmax(below > alpha / 2))  # smallest c with P(C <= c) > alpha/2
    high = int(np.flatnonzero(above > alpha / 2)[-1])  # largest c with P(C >= c) > alpha/2
    return low, high


def outside_bands(m: Any, true_counts: Any, frequencies: Any, alpha: float) -> list[str]:
    """Categories whose debiased estimate is outside its exact band (alpha / k each, Bonferroni).

    The band of ``C_v`` maps to ``f_v = (C_v / n - q*) / (p* - q*)`` (increasing, p* > q*).
    """
    p_star, q_star = m.support_probabilities()
    n = int(np.sum(true_counts))
    misses = []
    for v, (n_v, f) in enumerate(zip(true_counts, frequencies, strict=True)):
        p, q = float(p_star[v]), float(q_star[v])
        low, high = support_count_band(int(n_v), n, p, q, alpha / m.k)
        f_low, f_high = ((c / n - q) / (p - q) for c in (low, high))
        if not f_low - 1e-9 <= float(f) <= f_high + 1e-9:
            misses.append(f"{m.domain[v]!r}: estimate {float(f):.4f} outside [{f_low:.4f}, {f_high:.4f}]")
    return misses
