"""Privacy amplification by shuffling (Feldman, McMillan & Talwar, FOCS 2021).

If each of ``n`` respondents sends one report from an ``epsilon0``-LDP
randomizer and the collector sees the reports only as a uniformly shuffled
multiset (anonymous collection: no order, no identities), the shuffled
output is ``(epsilon, delta)``-DP centrally with ``epsilon`` much smaller
than ``epsilon0`` for large ``n``.

Numerical bound ("Hiding among the clones", Theorem 3.2 and Appendix E).
The shuffled output is ``(epsilon, delta)``-DP if the two distributions

    ``P = A + Delta``,  ``Q = A + 1 - Delta``

are ``(epsilon, delta)``-indistinguishable, where ``C ~ Bin(n - 1, e^-epsilon0)``
counts the other respondents who act as clones, ``A ~ Bin(C, 1/2)`` and
``Delta ~ Bernoulli(alpha)``, ``alpha = e^epsilon0 / (e^epsilon0 + 1)``
(with ``C`` revealed). Given ``C = c`` the likelihood ratio ``P_c(x)/Q_c(x)``
decreases in ``x``, so the hockey-stick divergence
``sum_x max(0, P_c(x) - e^epsilon Q_c(x))`` is ``F_P(x*) - e^epsilon F_Q(x*)``
with ``F`` the CDFs, ``F_P(x) = alpha B_c(x) + (1 - alpha) B_c(x - 1)``,
``F_Q(x) = (1 - alpha) B_c(x) + alpha B_c(x - 1)`` (``B_c`` the
``Bin(c, 1/2)`` CDF) and ``x*`` the largest integer below
``beta (c + 1)``, ``beta = (alpha - e^epsilon (1 - alpha)) / ((2 alpha - 1)(1 + e^epsilon))``.
The map ``x -> c + 1 - x`` swaps ``P_c`` and ``Q_c``, so the divergence is
the same in both directions. ``delta(epsilon)`` is its expectation over
``C``, summed exactly over the values of ``c`` outside a tail of mass at most
``delta / 1000``, plus that tail mass (an upper bound: each conditional
divergence is at most 1). ``delta(epsilon)`` decreases in ``epsilon`` and is
0 at ``epsilon0``; the result is the upper end of a bisection for the
smallest ``epsilon`` with ``delta(epsilon) <= delta``, to within ``tol``.

Closed form (their Theorem 3.1), valid for
``epsilon0 <= ln(n / (16 ln(2 / delta)))``:

    ``epsilon <= ln(1 + (e^epsilon0 - 1)/(e^epsilon0 + 1) (8 sqrt(e^epsilon0 ln(4/delta) / n) + 8 e^epsilon0 / n))``

Both are capped at ``epsilon0``: shuffling is post-processing of the
``epsilon0``-LDP reports, so ``(epsilon0, 0)`` always holds.

The guarantee assumes every respondent sends exactly one report from the
same ``epsilon0``-LDP randomizer and that the shuffler is trusted; the
collector must not see who sent what, or when.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

__all__ = ["shuffle_epsilon", "shuffle_delta"]

_TAIL_SHARE = 1e-3


def _check(epsilon0: float, n: int, delta: float) -> None:
    if isinstance(epsilon0, bool) or not isinstance(epsilon0, int | float) or not (
        0 < epsilon0 < math.inf
    ):
        raise ValueError(f"epsilon0 must be a finite number > 0; got {epsilon0!r}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be an int >= 1 (the number of shuffled reports); got {n!r}")
    if isinstance(delta, bool) or not isinstance(delta, int | float) or not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1); got {delta!r}")


def shuffle_delta(epsilon: float, epsilon0: float, n: int, *, tail: float = 0.0) -> float:
    """``delta(epsilon)`` of the numerical bound (module docstring) for ``n`` shuffled ``epsilon0``-LDP reports.

    ``tail`` is the mass of ``C`` left out of the exact sum (added to the
    result); 0 sums over every ``c``.
    """
    _check(epsilon0, n, 0.5)
    if epsilon >= epsilon0:
        return 0.0
    return _Clones(epsilon0, n, tail).delta(epsilon)


class _Clones:
    """The parts of ``delta(epsilon)`` that do not depend on ``epsilon``: the clone counts ``c`` summed
    over, their probabilities and the mass left out (computed once per bisection)."""

    def __init__(self, epsilon0: float, n: int, tail: float) -> None:
        from scipy import stats

        clone = math.exp(-epsilon0)
        trials = n - 1
        if tail > 0 and trials > 0:
            low = int(stats.binom.ppf(tail / 2, trials, clone))
            high = int(stats.binom.isf(tail / 2, trials, clone))
        else:
            low, high = 0, trials
        self.c = np.arange(low, high + 1)
        self.weight = stats.binom.pmf(self.c, trials, clone)
        self.left_out = float(stats.binom.cdf(low - 1, trials, clone) + stats.binom.sf(high, trials, clone))
        self.alpha = math.exp(epsilon0) / (math.exp(epsilon0) + 1)

    def delta(self, epsilon: float) -> float:
        from scipy import stats

        c, alpha = self.c, self.alpha
        e = math.exp(epsilon)
        beta = (alpha - e * (1 - alpha)) / ((2 * alpha - 1) * (1 + e))
        x = np.ceil(beta * (c + 1)) - 1
        b_x = stats.binom.cdf(x, c, 0.5)
        b_before = stats.binom.cdf(x - 1, c, 0.5)
        f_p = alpha * b_x + (1 - alpha) * b_before
        f_q = (1 - alpha) * b_x + alpha * b_before
        divergence = np.maximum(f_p - e * f_q, 0.0)
        return float(np.dot(self.weight, divergence)) + self.left_out


def _closed_form(epsilon0: float, n: int, delta: float) -> float:
    limit = math.log(n / (16 * math.log(2 / delta))) if n > 16 * math.log(2 / delta) else -math.inf
    if epsilon0 > limit:
        raise ValueError(
            f"the closed form of Feldman et al. (Theorem 3.1) holds for epsilon0 <= ln(n / (16 ln(2/delta))) "
            f"= {limit:.4g} at n={n}, delta={delta:g}; got epsilon0={epsilon0:g}. Use method='numerical'"
        )
    e0 = math.exp(epsilon0)
    bound = math.log1p((e0 - 1) / (e0 + 1) * (8 * math.sqrt(e0 * math.log(4 / delta) / n) + 8 * e0 / n))
    return min(bound, float(epsilon0))


def shuffle_epsilon(
    epsilon0: float,
    n: int,
    delta: float = 1e-6,
    *,
    method: Literal["numerical", "closed-form"] = "numerical",
    tol: float = 1e-6,
) -> float:
    r"""Central ``epsilon`` of ``n`` shuffled ``epsilon0``-LDP reports at ``delta`` (Feldman et al. 2021).

    ``method="numerical"`` (default) bisects the numerical bound to within
    ``tol`` and returns the upper end (a valid guarantee); ``"closed-form"``
    evaluates Theorem 3.1 and refuses outside its range. Never above
    ``epsilon0``. See :mod:`deniable._shuffle` for the formulas.

    Parameters
    ----------
    epsilon0 : float
        The local privacy loss of each respondent's one report, ``> 0``.
    n : int
        The number of respondents whose reports are shuffled together.
    delta : float, default 1e-6
        The central delta, in ``(0, 1)``.
    method : {"numerical", "closed-form"}, default "numerical"
        The numerical bound of "Hiding among the clones" (tighter) or its
        closed form (Theorem 3.1).
    tol : float, default 1e-6
        The bisection's precision (``method="numerical"`` only).

    Returns
    -------
    float
        A central epsilon for which the shuffled reports are
        ``(epsilon, delta)``-DP, at most ``epsilon0``.

    Raises
    ------
    ValueError
        An argument out of range, or ``method="closed-form"`` where
        ``epsilon0 > ln(n / (16 ln(2 / delta)))``.

    Notes
    -----
    The closed form is :math:`\varepsilon \le \ln\bigl(1 + \frac{e^{\varepsilon_0} - 1}{e^{\varepsilon_0} + 1}
    \bigl(8 \sqrt{e^{\varepsilon_0} \ln(4/\delta) / n} + 8 e^{\varepsilon_0} / n\bigr)\bigr)`.

    Examples
    --------
    >>> from deniable import shuffle_epsilon
    >>> round(shuffle_epsilon(4.0, 100_000, 1e-6), 3)
    0.17
    >>> round(shuffle_epsilon(1.0, 100_000, 1e-6, method="closed-form"), 3)
    0.073
    """
    _check(epsilon0, n, delta)
    epsilon0 = float(epsilon0)
    n = int(n)
    if method == "closed-form":
        return _closed_form(epsilon0, n, delta)
    if method != "numerical":
        raise ValueError(f"method must be 'numerical' or 'closed-form'; got {method!r}")
    if not (isinstance(tol, float | int) and tol > 0):
        raise ValueError(f"tol must be a positive number; got {tol!r}")
    clones = _Clones(epsilon0, n, delta * _TAIL_SHARE)
    low, high = 0.0, epsilon0
    if clones.delta(0.0) <= delta:
        return 0.0
    while high - low > tol:
        mid = (low + high) / 2
        if clones.delta(mid) <= delta:
            high = mid
        else:
            low = mid
    return high
