"""Blair & Imai's (2012) test for a design effect in a list experiment (R ``list``'s ``ict.test``).

Without a design effect (adding the sensitive item does not change the
answers to the control items) the shares of the respondent types

    pi(y, 1) = P(Y(0) = y, Z = 1) = F0(y) - F1(y)            y = 0..J
    pi(y, 0) = P(Y(0) = y, Z = 0) = F1(y) - F0(y - 1)

are all non-negative, with ``F_t`` the cumulative distribution of the
answers in group ``t``. Each family (``Z = 1``: ``y = 0..J-1``; ``Z = 0``:
``y = 1..J``; the others are non-negative by construction) is tested
against ``pi >= 0`` by the likelihood-ratio statistic ``lambda = min_{p >= 0}
(p - pi_hat)' Sigma^{-1} (p - pi_hat)``, whose null distribution at the
boundary is chi-bar-squared: ``P(lambda > c) = sum_S w(S) P(chi2_{m - |S|} >
c)`` over the sets ``S`` of components left positive by the projection, with
the exact weights of Kudo (1963), ``w(S) = P(N(0, Sigma_SS.S') > 0) P(N(0,
(Sigma_S'S')^{-1}) > 0)`` (orthant probabilities in closed form up to
dimension 3). A family of one is tested by Welch's one-sided t-test, as R
does. The two p-values are combined by Bonferroni: ``min(1, 2 min(p1, p0))``.

``gms=True`` first drops the components far inside the null (generalized
moment selection, Andrews & Soares 2010): ``sqrt(n) pi_hat / sd > sqrt(ln
n)`` with ``sd`` each component's own standard deviation ``sqrt(n) se``. (R's
``ict.test`` divides by the spread of the family's estimates instead, so its
``gms=TRUE`` p-values differ; with ``gms=False`` they agree.)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.survey._list import ListExperiment

__all__ = ["DesignEffectTest", "ict_test"]


@dataclass(frozen=True)
class DesignEffectTest:
    """The design-effect test: ``pvalue`` (Bonferroni over the two families), each family's ``pvalues``
    (``{1: p1, 0: p0}``), and the respondent types' shares ``table`` (``(y, z) -> (estimate, std_error)``)."""

    pvalue: float
    pvalues: dict[int, float]
    table: dict[tuple[int, int], tuple[float, float]]
    gms: bool

    def __repr__(self) -> str:
        return (f"DesignEffectTest(p={self.pvalue:.4g}: {'reject' if self.pvalue < 0.05 else 'no evidence of'} "
                f"a design effect at 5%; Z=1 family p={self.pvalues[1]:.4g}, Z=0 family p={self.pvalues[0]:.4g})")


def ict_test(y: Any, treat: Any, J: int, *, gms: bool = False) -> DesignEffectTest:  # noqa: N803
    """Blair & Imai's test of no design effect (module docstring); ``y`` and ``treat`` as for
    :func:`~deniable.survey.list_difference`."""
    answers, treated = ListExperiment(J).check(y, treat)
    y1, y0 = answers[treated], answers[~treated]
    n1, n0 = y1.size, y0.size
    if n1 < 2 or n0 < 2:
        raise ValueError(f"treat must give each list at least 2 respondents; got {n1} treated and {n0} control")
    levels = np.arange(-1, J + 1)  # F(-1) = 0 .. F(J)
    f1 = np.array([np.mean(y1 <= v) for v in levels])
    f0 = np.array([np.mean(y0 <= v) for v in levels])
    cov1 = (f1[np.minimum.outer(np.arange(levels.size), np.arange(levels.size))] - np.outer(f1, f1)) / n1
    cov0 = (f0[np.minimum.outer(np.arange(levels.size), np.arange(levels.size))] - np.outer(f0, f0)) / n0
    # rows: pi(y, 1) for y = 0..J, then pi(y, 0) for y = 0..J, as combinations of F1 and F0 (index v + 1)
    a1 = np.zeros((2 * (J + 1), levels.size))
    a0 = np.zeros_like(a1)
    for y_value in range(J + 1):
        a0[y_value, y_value + 1], a1[y_value, y_value + 1] = 1.0, -1.0
        a1[J + 1 + y_value, y_value + 1], a0[J + 1 + y_value, y_value] = 1.0, -1.0
    pi = a1 @ f1 + a0 @ f0
    cov = a1 @ cov1 @ a1.T + a0 @ cov0 @ a0.T
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    table = {(int(v), z): (float(pi[(1 - z) * (J + 1) + v]), float(se[(1 - z) * (J + 1) + v]))
             for z in (1, 0) for v in range(J + 1)}
    n = n1 + n0
    families = {1: np.arange(0, J), 0: np.arange(J + 1 + 1, 2 * (J + 1))}
    pvalues = {}
    for z, rows in families.items():
        keep = pi[rows] != 0
        if gms:
            with np.errstate(divide="ignore", invalid="ignore"):
                keep &= ~(pi[rows] / se[rows] > math.sqrt(math.log(n)))
        rows = rows[keep]
        pvalues[z] = _family_pvalue(pi[rows], cov[np.ix_(rows, rows)], y1, y0, rows, J) if rows.size else math.nan
    present = [p for p in pvalues.values() if not math.isnan(p)]
    combined = min(1.0, 2 * min(present)) if present else 1.0
    return DesignEffectTest(combined, pvalues, table, gms)


def _family_pvalue(pi: NDArray[np.float64], cov: NDArray[np.float64], y1: Any, y0: Any, rows: NDArray[np.int64],
                   J: int) -> float:  # noqa: N803
    from scipy import optimize, stats

    if pi.size == 1:  # Welch's one-sided t-test of the two cumulative shares, as R
        row = int(rows[0])
        if row <= J:  # pi(y, 1) = F0(y) - F1(y)
            a, b = (y0 <= row).astype(float), (y1 <= row).astype(float)
        else:  # pi(y, 0) = F1(y) - F0(y - 1)
            v = row - (J + 1)
            a, b = (y1 <= v).astype(float), (y0 <= v - 1).astype(float)
        return float(stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue)
    values, vectors = np.linalg.eigh(cov)
    positive = values > values.max() * 1e-12
    whiten = (vectors[:, positive] / np.sqrt(values[positive])).T  # W' W = cov^+
    if np.all(pi >= 0):
        statistic = 0.0
    else:
        projected, _ = optimize.nnls(whiten, whiten @ pi)
        statistic = float(np.sum((whiten @ (projected - pi)) ** 2))
    m = pi.size
    total = 0.0
    for size in range(m + 1):
        weight = sum(_kudo_weight(cov, list(free)) for free in itertools.combinations(range(m), size))
        total += weight * (float(stats.chi2.sf(statistic, m - size)) if m - size > 0 else float(statistic < 0))
    return total


def _kudo_weight(cov: NDArray[np.float64], free: list[int]) -> float:
    """``P(N(0, cov_SS.S') > 0) P(N(0, (cov_S'S')^{-1}) > 0)``: the projection leaves exactly ``free`` positive."""
    rest = [i for i in range(cov.shape[0]) if i not in free]
    if rest:
        inverse = np.linalg.inv(cov[np.ix_(rest, rest)])
        conditional = cov[np.ix_(free, free)] - cov[np.ix_(free, rest)] @ inverse @ cov[np.ix_(rest, free)]
    else:
        inverse, conditional = np.zeros((0, 0)), cov
    return _orthant(np.asarray(conditional, dtype=np.float64)) * _orthant(np.asarray(inverse, dtype=np.float64))


def _orthant(cov: NDArray[np.float64]) -> float:
    """``P(X > 0)`` for ``X ~ N(0, cov)``: closed forms up to dimension 3, else scipy's multivariate normal."""
    m = cov.shape[0]
    if m == 0:
        return 1.0
    sd = np.sqrt(np.diag(cov))
    rho = cov / np.outer(sd, sd)
    if m == 1:
        return 0.5
    if m == 2:
        return 0.25 + math.asin(float(np.clip(rho[0, 1], -1, 1))) / (2 * math.pi)
    if m == 3:
        return 0.125 + sum(math.asin(float(np.clip(rho[i, j], -1, 1))) for i, j in ((0, 1), (0, 2), (1, 2))) / (
            4 * math.pi)
    from scipy import stats

    return float(stats.multivariate_normal(mean=np.zeros(m), cov=rho).cdf(np.zeros(m)))
