"""The textbook debias formulas as plain functions (prob = P(report == truth)).

* binary:      ``pi = (m + p - 1) / (2p - 1)``
* categorical: ``f_v = (m_v (k - 1) + p - 1) / (p k - 1)``

where ``m`` is the observed (released) share. These are the estimators of
:class:`deniable.BinaryRR` and :class:`deniable.GRR`, for users who only have
the released means.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._privacy import check_probability

__all__ = ["debias_binary", "debias_categorical"]


def _shares(values: Any, name: str) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(arr)) or (arr < 0).any() or (arr > 1).any():
        raise ValueError(f"{name} must be shares in [0, 1]; got {values!r}")
    return arr


def debias_binary(mean_release: Any, prob: float) -> Any:
    r"""Unbiased share of "yes" from the observed share of "yes" reports.

    For Warner's design, where each respondent reports the truth with
    probability ``prob`` and its opposite otherwise.

    Parameters
    ----------
    mean_release : float or array_like
        The observed share(s) of "yes" reports, in ``[0, 1]``.
    prob : float
        The probability of reporting the truth, in ``(0.5, 1]``.

    Returns
    -------
    float or numpy.ndarray
        The unbiased estimate(s) of the true share of "yes" (a float for a
        scalar input); not clipped to ``[0, 1]``.

    Raises
    ------
    ValueError
        A share outside ``[0, 1]`` or ``prob`` outside ``(0.5, 1]``.

    Notes
    -----
    A "yes" report has probability :math:`\lambda = p \pi + (1 - p)(1 - \pi)`,
    so :math:`\hat\pi = (\hat\lambda + p - 1) / (2p - 1)` is unbiased.

    Examples
    --------
    >>> from deniable import debias_binary
    >>> round(debias_binary(0.364, 0.75), 12)
    0.228
    """
    m = _shares(mean_release, "mean_release")
    p = float(check_probability(prob, "prob", Fraction(1, 2), Fraction(2), "debias_binary"))
    if p > 1:
        raise ValueError(f"prob must be in (0.5, 1] for debias_binary; got {prob!r}")
    out = (m + p - 1) / (2 * p - 1)
    return float(out) if out.ndim == 0 else out


def debias_categorical(mean_releases: Any, prob: float) -> NDArray[np.float64]:
    r"""Unbiased category shares from the observed shares of k-ary RR reports.

    For k-ary randomized response (:class:`~deniable.GRR`), where each
    respondent reports the true category with probability ``prob`` and each
    other one with probability ``(1 - prob) / (k - 1)``.

    Parameters
    ----------
    mean_releases : array_like
        The observed share of reports in each of the ``k >= 2`` categories.
    prob : float
        The probability of reporting the true category, in ``(1/k, 1]``.

    Returns
    -------
    numpy.ndarray
        The unbiased estimates of the ``k`` true shares; they sum to the
        sum of ``mean_releases`` (1 for shares of one batch) and are not
        clipped to ``[0, 1]``.

    Raises
    ------
    ValueError
        Fewer than two shares, a share outside ``[0, 1]``, or ``prob``
        outside ``(1/k, 1]``.

    Notes
    -----
    With :math:`q = (1 - p) / (k - 1)`, category :math:`v` is reported with
    probability :math:`\lambda_v = q + (p - q) \pi_v`, so
    :math:`\hat\pi_v = (\hat\lambda_v (k - 1) + p - 1) / (p k - 1)`.

    Examples
    --------
    >>> from deniable import debias_categorical
    >>> debias_categorical([0.5, 0.3, 0.2], 0.6).round(6)
    array([0.75, 0.25, 0.  ])
    """
    m = _shares(mean_releases, "mean_releases")
    if m.ndim != 1 or m.size < 2:
        raise ValueError(f"mean_releases must be a 1-D sequence of k >= 2 shares; got {mean_releases!r}")
    k = m.size
    p = float(check_probability(prob, "prob", Fraction(1, k), Fraction(2), "debias_categorical"))
    if p > 1:
        raise ValueError(f"prob must be in (1/k, 1] for debias_categorical; got {prob!r}")
    return (m * (k - 1) + p - 1) / (p * k - 1)
