"""Confidence intervals: normal, Wilson and Clopper-Pearson, in one place.

Every function takes ``alpha``, the probability that the interval misses
(level ``1 - alpha``), and works on scalars or numpy arrays alike (scalars
in, floats out). ``z = Phi^-1(1 - alpha/2)`` is the two-sided standard normal
quantile and ``B^-1(u; a, b)`` the ``u``-quantile of a Beta(a, b)
distribution. For ``c`` successes in ``n`` trials, ``lambda = c / n``:

* normal (Wald):   ``estimate ± z · SE``
* Wilson score (Wilson 1927):
  ``(lambda + z^2/(2n) ± z sqrt(lambda (1 - lambda)/n + z^2/(4n^2))) / (1 + z^2/n)``
* Clopper-Pearson, exact (Clopper & Pearson 1934): one-sided ``1 - alpha``
  bounds ``lower = B^-1(alpha; c, n - c + 1)`` (0 when ``c = 0``) and
  ``upper = B^-1(1 - alpha; c + 1, n - c)`` (1 when ``c = n``); the two-sided
  interval puts ``alpha / 2`` in each tail.

The one-sided bounds are :func:`clopper_pearson_lower` and
:func:`clopper_pearson_upper`; every function named ``*_interval`` or
:func:`clopper_pearson` is two-sided.

>>> round(z_for(0.05), 6)
1.959964
>>> ci = wilson_interval(30, 100, 0.05)
>>> round(ci.low, 4), round(ci.high, 4)
(0.2189, 0.3958)
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deniable._results import ConfidenceInterval

__all__ = [
    "Interval",
    "z_for",
    "normal_interval",
    "wilson_interval",
    "clopper_pearson",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
]

_STANDARD_NORMAL = NormalDist()


@dataclass(frozen=True)
class Interval(ConfidenceInterval):
    """A two-sided interval ``[low, high]`` at ``level`` (arrays when the inputs were arrays).

    A :class:`~deniable.ConfidenceInterval` that also records its level; it
    unpacks like a pair: ``low, high = wilson_interval(c, n, alpha)``.
    """

    level: float


def check_alpha(alpha: float) -> float:
    """Validate a miss probability: a number in (0, 1)."""
    if not isinstance(alpha, Real) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    return float(alpha)


def _out(x: NDArray[np.float64]) -> Any:
    return float(x) if x.ndim == 0 else x


def _counts(successes: ArrayLike, trials: ArrayLike, name: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    c = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    if np.any(n <= 0) or np.any(c < 0) or np.any(c > n):
        raise ValueError(f"{name} needs 0 <= successes <= trials and trials > 0")
    return c, n


def z_for(alpha: float, two_sided: bool = True) -> float:
    """The standard normal quantile a two-sided (``Phi^-1(1 - alpha/2)``) or
    one-sided (``Phi^-1(1 - alpha)``) test at ``alpha`` uses: ``-Phi^-1(q)``
    from the lower tail, as ``scipy.stats.norm.isf`` computes it (to a few ulps:
    the standard library's ``NormalDist.inv_cdf``, Wichura's AS 241, so that an
    interval does not import ``scipy.special``)."""
    a = check_alpha(alpha)
    return -_STANDARD_NORMAL.inv_cdf(a / 2 if two_sided else a)


def normal_interval(estimate: ArrayLike, std_error: ArrayLike, alpha: float) -> Interval:
    """Two-sided normal (Wald) interval ``estimate ± z · std_error``, ``z = Phi^-1(1 - alpha/2)``."""
    z = z_for(alpha)
    f = np.asarray(estimate, dtype=float)
    se = np.asarray(std_error, dtype=float)
    return Interval(_out(f - z * se), _out(f + z * se), 1 - alpha)


def wilson_interval(successes: ArrayLike, trials: ArrayLike, alpha: float) -> Interval:
    """Two-sided Wilson score interval for a binomial rate at level ``1 - alpha``.

    ``centre ± half`` with ``centre = (lambda + z^2/(2n)) / (1 + z^2/n)`` and
    ``half = z sqrt(lambda (1 - lambda)/n + z^2/(4n^2)) / (1 + z^2/n)``,
    clipped to [0, 1] (it lies there up to rounding); exactly 0 at ``c = 0`` and
    1 at ``c = n``, where the formula's end is 0 or 1 but rounds to either side.
    """
    z = z_for(alpha)
    c, n = _counts(successes, trials, "wilson_interval")
    lam = c / n
    centre = (lam + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(lam * (1 - lam) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = np.where(c == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
    high = np.where(c == n, 1.0, np.clip(centre + half, 0.0, 1.0))
    return Interval(_out(low), _out(high), 1 - alpha)


def clopper_pearson_lower(successes: ArrayLike, trials: ArrayLike, alpha: float) -> Any:
    """One-sided ``1 - alpha`` exact lower bound on a binomial rate:
    ``B^-1(alpha; c, n - c + 1)``, and 0 when ``c = 0``."""
    from scipy import stats

    a = check_alpha(alpha)
    c, n = _counts(successes, trials, "clopper_pearson_lower")
    with np.errstate(invalid="ignore"):
        low = np.where(c > 0, stats.beta.ppf(a, c, n - c + 1), 0.0)
    return _out(low)


def clopper_pearson_upper(successes: ArrayLike, trials: ArrayLike, alpha: float) -> Any:
    """One-sided ``1 - alpha`` exact upper bound on a binomial rate:
    ``B^-1(1 - alpha; c + 1, n - c)``, and 1 when ``c = n``."""
    from scipy import stats

    a = check_alpha(alpha)
    c, n = _counts(successes, trials, "clopper_pearson_upper")
    with np.errstate(invalid="ignore"):
        high = np.where(c < n, stats.beta.isf(a, c + 1, n - c), 1.0)
    return _out(high)


def clopper_pearson(successes: ArrayLike, trials: ArrayLike, alpha: float) -> Interval:
    """Two-sided exact (Clopper-Pearson) interval at level ``1 - alpha``.

    Each tail gets ``alpha / 2``: ``[clopper_pearson_lower(c, n, alpha/2),
    clopper_pearson_upper(c, n, alpha/2)]``, so each side misses with
    probability at most ``alpha / 2`` whatever the true rate.
    """
    a = check_alpha(alpha)
    _counts(successes, trials, "clopper_pearson")
    return Interval(
        clopper_pearson_lower(successes, trials, a / 2),
        clopper_pearson_upper(successes, trials, a / 2),
        1 - a,
    )
