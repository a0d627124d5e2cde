"""Comparisons of two independent estimates: two slices, two rounds, an A/B experiment's arms.

``dn.compare(a, b)`` takes two results of the same mechanism configuration
made from disjoint sets of respondents (so independent) and gives the
difference ``a - b``:

* **frequencies** (:class:`~deniable.Estimate`): per category ``d_v = f_v^a -
  f_v^b`` with ``SE_v = sqrt(SE_a,v^2 + SE_b,v^2)`` (each estimate's own
  standard error, the mechanism's variance for its target), the normal
  interval and the two-sided p-value of ``d_v = 0``. The p-values are
  corrected for the ``k`` categories compared (``correction``: ``"holm"``,
  the default, controls the family-wise error; ``"bh"`` (Benjamini-Hochberg)
  the false discovery rate; ``"none"``). The **whole vector** is tested by a
  Wald chi-square, ``W = d^T (Sigma_a + Sigma_b)^+ d`` on ``r`` degrees of
  freedom, ``Sigma`` each estimate's covariance *including the mechanism's*
  (a Pearson chi-square on the debiased counts would ignore the
  randomization's variance and reject far too often). The covariance has a
  closed form where a report supports exactly one category (GRR, binary RR,
  ``k`` - 1 free shares: ``Sigma = (diag(lambda) - lambda lambda^T) / (n
  g^2)``, ``r = k - 1``) and for unary encoding (OUE, SUE: ``Sigma_uv = -f_u f_v
  / n`` off the diagonal, ``r = k``), plugged in at the observed shares
  ``lambda = C / n`` and ``g = p* - q*`` (:mod:`deniable._joint`); population
  target. Other oracles get the per-category tests only.
* **means** (:class:`~deniable.MeanEstimate`): ``d = mean_a - mean_b``,
  ``SE = sqrt(SE_a^2 + SE_b^2)``, interval and p-value.

:func:`difference_sample_size` plans the respondents per arm that detect a
difference ``delta`` at level ``alpha`` with the given power:
``n = (z_{1-alpha/2} + z_{power})^2 (V_a + V_b) / delta^2`` with ``V`` one
respondent's variance of the estimate at each arm's share (population target).

>>> import numpy as np, deniable as dn
>>> m = dn.GRR(["a", "b", "c"], epsilon=2.0)
>>> rng = np.random.default_rng(0)
>>> a = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.5, 0.3, 0.2]), rng=rng))
>>> b = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.4, 0.4, 0.2]), rng=rng))
>>> cmp = dn.compare(a, b)
>>> bool(cmp.chi_square.p_value < 1e-6), bool(cmp.p_adjusted[0] < 1e-6)
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from deniable import _intervals as intervals
from deniable._estimate import Estimate, MeanEstimate
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level

__all__ = ["Comparison", "ChiSquareTest", "SlicedComparison", "compare", "adjust_p_values", "difference_sample_size",
           "CORRECTIONS"]

CORRECTIONS = ("holm", "bh", "none")
"""The multiple-comparison corrections :func:`adjust_p_values` applies."""


def adjust_p_values(p_values: ArrayLike, method: str = "holm") -> NDArray[np.float64]:
    r"""p-values adjusted for testing them all: Holm's step-down (family-wise error), Benjamini-Hochberg's
    step-up (``"bh"``, false discovery rate) or ``"none"``.

    Holm: the ``i``-th smallest of ``m`` becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``.
    BH: ``min_{j >= i} min(1, m p_(j) / j)``. Rejecting where the adjusted
    p-value is at most ``alpha`` controls the error rate at ``alpha``.

    Parameters
    ----------
    p_values : array_like
        A 1-D array of p-values in ``[0, 1]``.
    method : {"holm", "bh", "none"}, default "holm"
        The correction.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values, in the order given.

    Raises
    ------
    ValueError
        An unknown ``method``, or p-values that are not a 1-D array in
        ``[0, 1]``.

    Notes
    -----
    With :math:`p_{(1)} \le \dots \le p_{(m)}`, Holm's adjusted
    :math:`p_{(i)}` is :math:`\max_{j \le i} \min(1, (m - j + 1) p_{(j)})`
    and Benjamini-Hochberg's :math:`\min_{j \ge i} \min(1, m p_{(j)} / j)`.

    Examples
    --------
    >>> from deniable import adjust_p_values
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.5]).round(4).tolist()
    [0.04, 0.09, 0.09, 0.5]
    >>> adjust_p_values([0.01, 0.04, 0.03, 0.5], "bh").round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.5]
    """
    p = np.asarray(p_values, dtype=float)
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be 'holm', 'bh' or 'none'; got {method!r}")
    if p.ndim != 1 or np.any(~((p >= 0) & (p <= 1))):
        raise ValueError("p_values must be a 1-D array of numbers in [0, 1]")
    if method == "none" or p.size == 0:
        return p.copy()
    m = p.size
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ranked / np.arange(1, m + 1))[::-1])[::-1]
    out = np.empty(m)
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class ChiSquareTest:
    r"""The Wald chi-square test that two frequency vectors are equal (module docstring).

    Parameters
    ----------
    statistic : float
        :math:`W = d^\top (\Sigma_a + \Sigma_b)^+ d`, with :math:`d` the
        difference of the frequencies.
    df : int
        Its degrees of freedom: ``k - 1`` where a report supports one
        category, ``k`` for unary encoding.
    p_value : float
        :math:`P(\chi^2_{df} \ge W)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    >>> rng = np.random.default_rng(0)
    >>> a = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.5, 0.3, 0.2]), rng=rng))
    >>> b = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.4, 0.4, 0.2]), rng=rng))
    >>> cmp = dn.compare(a, b)
    >>> test = cmp.chi_square
    >>> test.df, bool(test.p_value < 1e-6)
    (2, True)
    """

    statistic: float
    df: int
    p_value: float

    def __repr__(self) -> str:
        return f"ChiSquareTest(W={self.statistic:.4g}, df={self.df}, p={self.p_value:.4g})"


@dataclass(frozen=True, eq=False)
class Comparison(Result):
    r"""The difference ``a - b`` of two independent estimates, per category (or of the means).

    :func:`compare` makes it.

    Parameters
    ----------
    mechanism : str
        The name of the mechanism of both estimates.
    labels : tuple
        The categories (``()`` for means).
    difference : numpy.ndarray or float
        ``a - b`` per category, or a float for means.
    std_errors : numpy.ndarray or float
        Its standard errors, :math:`\sqrt{SE_a^2 + SE_b^2}`.
    p_values : numpy.ndarray or float
        Two-sided p-values of no difference (normal), per category.
    p_adjusted : numpy.ndarray or float
        The same, corrected by ``correction`` over the categories.
    correction : {"holm", "bh", "none"}
        The correction applied.
    chi_square : ChiSquareTest or None
        The whole-vector test, or None where the mechanism's covariance has
        no closed form here, or for means.
    n_a, n_b : int
        The two estimates' numbers of reports.
    target : str
        The estimates' target.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    >>> rng = np.random.default_rng(0)
    >>> a = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.5, 0.3, 0.2]), rng=rng))
    >>> b = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.4, 0.4, 0.2]), rng=rng))
    >>> cmp = dn.compare(a, b)
    >>> cmp.labels, cmp.correction
    (('a', 'b', 'c'), 'holm')
    >>> bool(abs(cmp.difference[0] - 0.1) < 5 * cmp.std_errors[0])
    True
    """

    mechanism: str
    labels: tuple[Any, ...]
    difference: Any
    std_errors: Any
    p_values: Any
    p_adjusted: Any
    correction: str
    chi_square: ChiSquareTest | None
    n_a: int
    n_b: int
    target: str

    ci_methods: ClassVar[tuple[str, ...]] = ("normal",)

    @property
    def std_error(self) -> Any:
        """The standard error (the same as :attr:`std_errors`; a float for means)."""
        return self.std_errors

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Normal interval ``d ± z SE`` at ``confidence_level`` per category (unadjusted for multiplicity)."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.difference, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per category: ``estimate`` (the difference), ``std_error``, ``ci_low``, ``ci_high``, ``p_value``,
        ``p_adjusted``; the whole-vector test in the fields."""
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"estimate": self.difference, "std_error": self.std_errors, "ci_low": low, "ci_high": high,
                   "p_value": self.p_values, "p_adjusted": self.p_adjusted}
        test = self.chi_square
        fields = {"mechanism": self.mechanism, "n_a": self.n_a, "n_b": self.n_b, "target": self.target,
                  "correction": self.correction,
                  "chi_square": None if test is None else {"statistic": test.statistic, "df": test.df,
                                                           "p_value": test.p_value}}
        if not self.labels:
            return ResultTable(fields, columns)
        return ResultTable(fields, columns, "category", self.labels, "categories")

    def _caption(self) -> str:
        test = "" if self.chi_square is None else f"; all categories: p = {self.chi_square.p_value:.3g}"
        return f"difference a - b, {self.mechanism}, n = {self.n_a:,} and {self.n_b:,}{test}"


def _same(a: Any, b: Any) -> None:
    """ValueError naming ``b`` unless both results come from one mechanism configuration and target."""
    if type(a) is not type(b):
        raise ValueError(f"b must be a {type(a).__name__} like a; got {type(b).__name__}")
    if isinstance(a, Estimate):
        same = (a.mechanism == b.mechanism and a.epsilon == b.epsilon and a.domain == b.domain
                and np.array_equal(a.p_star, b.p_star) and np.array_equal(a.q_star, b.q_star))
    else:
        same = (a.mechanism, a.epsilon, a.low, a.high, a.delta) == (b.mechanism, b.epsilon, b.low, b.high, b.delta)
    if not same:
        raise ValueError(f"b was estimated with another mechanism than a ({b.mechanism}, epsilon={b.epsilon:.6g} vs "
                         f"{a.mechanism}, epsilon={a.epsilon:.6g}, or other categories or range): compare results "
                         "of one mechanism configuration")
    if a.target != b.target:
        raise ValueError(f"b's target is {b.target!r}, a's {a.target!r}: compare estimates of one target")


def covariance(est: Estimate) -> tuple[NDArray[np.float64], int] | None:
    """``(Sigma, df)``: the covariance of a population-target frequency estimate and the rank of the vector
    test, where it has a closed form (module docstring); None otherwise."""
    if est.target != "population" or est.n == 0:
        return None
    p, q = est.p_star, est.q_star
    gap = p - q
    rate = est.observed
    k = len(est.domain)
    if np.allclose(p + (k - 1) * q, 1.0):  # a report supports exactly one category
        support, df = np.diag(rate) - np.outer(rate, rate), k - 1
    elif est.mechanism in ("OUE", "SUE"):
        f = np.clip(est.frequencies, 0.0, 1.0)
        support, df = -np.outer(gap * f, gap * f), k
        np.fill_diagonal(support, rate * (1 - rate))
    else:
        return None
    return support / (est.n * np.outer(gap, gap)), df


def _p_values(z: Any) -> Any:
    from scipy import stats

    return 2 * stats.norm.sf(np.abs(z))


@dataclass(frozen=True, eq=False)
class SlicedComparison(Result):
    """Every slice compared with a reference slice, corrected over all the tests together.

    ``comparisons[label]`` is slice ``label`` minus the reference (a
    :class:`Comparison`); ``p_adjusted`` of each is corrected over every
    (slice, category) test at once, and :attr:`chi_square_adjusted` the
    whole-vector p-values over the slices. Its table is the long form: one
    row per slice and category.

    Parameters
    ----------
    by : str
        The name of the field the reports were sliced by.
    reference : object
        The label of the reference slice.
    comparisons : dict
        Every other slice's label to its :class:`Comparison` with the
        reference.
    correction : {"holm", "bh", "none"}
        The correction applied.
    chi_square_adjusted : dict
        Every other slice's whole-vector p-value, corrected over the slices
        (None where there is no whole-vector test).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    >>> rng = np.random.default_rng(0)
    >>> x = rng.choice(["a", "b", "c"], 6000, p=[0.5, 0.3, 0.2])
    >>> platform = np.where(rng.random(6000) < 0.5, "ios", "android")
    >>> sliced = m.estimate(m.privatize_many(x, rng=rng), by=platform)
    >>> cmp = dn.compare(sliced)
    >>> cmp.reference, list(cmp.comparisons)
    ('android', ['ios'])
    >>> cmp["ios"].difference.shape
    (3,)
    """

    by: str
    reference: Any
    comparisons: dict[Any, Comparison]
    correction: str
    chi_square_adjusted: dict[Any, float | None]

    def __getitem__(self, label: Any) -> Comparison:
        return self.comparisons[label]

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Every comparison's normal intervals, in the long form's row order (unadjusted)."""
        parts = [c.confidence_interval(confidence_level, method) for c in self.comparisons.values()]
        return ConfidenceInterval(np.concatenate([np.atleast_1d(p.low) for p in parts]),
                                  np.concatenate([np.atleast_1d(p.high) for p in parts]))

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Long form: ``slice``, ``category``, then each comparison's columns, ``chi_square_p_adjusted``."""
        tables = {label: c._table(confidence_level, method) for label, c in self.comparisons.items()}
        first = next(iter(tables.values()))
        rows = {label: max(len(t.labels), 1) for label, t in tables.items()}
        columns: dict[str, Any] = {}
        if first.index is not None:
            columns["category"] = [x for t in tables.values() for x in t.labels]
        for key in first.columns:
            columns[key] = np.concatenate([np.atleast_1d(t.columns[key]) for t in tables.values()])
        columns["chi_square_p_adjusted"] = [self.chi_square_adjusted[label] for label, k in rows.items()
                                            for _ in range(k)]
        labels = [label for label, k in rows.items() for _ in range(k)]
        fields = {"by": self.by, "reference": self.reference, "correction": self.correction}
        return ResultTable(fields, columns, "slice", labels, "slices")

    def _caption(self) -> str:
        return f"each slice of {self.by} minus {self.reference!r} ({self.correction} over all tests)"


def _compare_slices(sliced: Any, reference: Any, correction: str) -> SlicedComparison:
    """Each slice of ``sliced`` minus the ``reference`` slice, corrected together (:class:`SlicedComparison`)."""
    if reference is None:
        reference = sliced.labels[0]
    if reference not in sliced:
        raise ValueError(f"reference must be one of the slices {list(sliced.labels)!r:.200}; got {reference!r}")
    base = sliced[reference]
    each = {label: compare(sliced[label], base, "none") for label in sliced.labels if label != reference}
    if not each:
        raise ValueError("a comparison of slices needs two slices or more; got one")
    flat = np.concatenate([np.atleast_1d(c.p_values) for c in each.values()])
    adjusted = adjust_p_values(flat, correction)
    out: dict[Any, Comparison] = {}
    start = 0
    for label, c in each.items():
        size = np.size(c.p_values)
        part = adjusted[start:start + size]
        start += size
        out[label] = Comparison(c.mechanism, c.labels, c.difference, c.std_errors, c.p_values,
                                part if c.labels else float(part[0]), correction, c.chi_square, c.n_a, c.n_b, c.target)
    tests = {label: c.chi_square.p_value for label, c in each.items() if c.chi_square is not None}
    vector = dict(zip(tests, adjust_p_values(np.array(list(tests.values())), correction).tolist(), strict=True))
    return SlicedComparison(sliced.by, reference, out, correction, {label: vector.get(label) for label in each})


def compare(a: Any, b: Any = None, correction: str = "holm", *, reference: Any = None) -> Any:
    r"""The difference ``a - b`` of two independent estimates of one mechanism (module docstring).

    ``a`` and ``b``: two :class:`~deniable.Estimate` or two
    :class:`~deniable.MeanEstimate` from disjoint respondents (two slices of a
    :class:`~deniable.SlicedEstimate`, two rounds, two arms), made by the same
    mechanism configuration for the same target; ValueError naming ``b``
    otherwise. ``correction``: ``"holm"`` (default), ``"bh"`` or ``"none"``
    over the categories.

    ``a`` a :class:`~deniable.SlicedEstimate` (and no ``b``): every slice
    minus the ``reference`` slice (default the first), the correction
    applied over every (slice, category) test at once and over the slices'
    whole-vector tests (a :class:`SlicedComparison`).

    Parameters
    ----------
    a : Estimate, MeanEstimate or SlicedEstimate
        The first estimate, or estimates by slice.
    b : Estimate or MeanEstimate, optional
        The second estimate, of the same mechanism configuration and target
        (left out when ``a`` is a SlicedEstimate).
    correction : {"holm", "bh", "none"}, default "holm"
        The multiple-comparison correction (:func:`adjust_p_values`).
    reference : object, optional
        The reference slice's label (default the first).

    Returns
    -------
    Comparison or SlicedComparison
        The difference with its standard errors, p-values and whole-vector
        test.

    Raises
    ------
    ValueError
        Estimates of different mechanisms or targets, an unknown
        ``correction``, or ``b`` given with a SlicedEstimate.
    TypeError
        No ``b`` for two estimates.

    Notes
    -----
    Per category :math:`d_v = \hat f^a_v - \hat f^b_v` with
    :math:`SE_v = \sqrt{SE_{a,v}^2 + SE_{b,v}^2}`; the whole vector by
    :math:`W = d^\top (\Sigma_a + \Sigma_b)^+ d`, chi-square on ``r``
    degrees of freedom.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    >>> rng = np.random.default_rng(0)
    >>> a = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.5, 0.3, 0.2]), rng=rng))
    >>> b = m.estimate(m.privatize_many(rng.choice(["a", "b", "c"], 20_000, p=[0.4, 0.4, 0.2]), rng=rng))
    >>> cmp = dn.compare(a, b)
    >>> bool(cmp.chi_square.p_value < 1e-6), bool(cmp.p_adjusted[0] < 1e-6)
    (True, True)
    >>> bool(cmp.p_adjusted[2] > 0.01)  # "c" is 0.2 in both
    True
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be 'holm', 'bh' or 'none'; got {correction!r}")
    if hasattr(a, "results") and hasattr(a, "labels"):  # a SlicedEstimate
        if b is not None:
            raise ValueError("b must be left out when a is a SlicedEstimate (each slice is compared with reference)")
        return _compare_slices(a, reference, correction)
    if b is None:
        raise TypeError("compare needs two estimates a and b, or one SlicedEstimate")
    if not isinstance(a, (Estimate, MeanEstimate)):
        raise TypeError(f"a must be an Estimate or a MeanEstimate; got {type(a).__name__}")
    _same(a, b)
    for name, est in (("a", a), ("b", b)):
        if est.n < (2 if isinstance(est, MeanEstimate) else 1):
            raise ValueError(f"{name} has no reports to compare (n={est.n})")
    if isinstance(a, MeanEstimate):
        gap = a.mean - b.mean
        spread = math.hypot(a.std_error, b.std_error)
        p_mean = float(_p_values(gap / spread))
        return Comparison(a.mechanism, (), gap, spread, p_mean, p_mean, "none", None, a.n, b.n, a.target)
    if a.std_errors is None or b.std_errors is None:
        raise ValueError("a and b must be unbiased estimates with standard errors (not post-processed)")
    d = a.frequencies - b.frequencies
    se = np.sqrt(a.std_errors**2 + b.std_errors**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, _p_values(d / se), np.where(d == 0, 1.0, 0.0))
    chi = None
    covs = covariance(a), covariance(b)
    if covs[0] is not None and covs[1] is not None:
        from scipy import stats

        df = covs[0][1]
        sigma = covs[0][0] + covs[1][0]
        keep = slice(0, df)  # GRR-like: the k-th share is 1 minus the others
        statistic = float(d[keep] @ np.linalg.pinv(sigma[keep, keep], hermitian=True) @ d[keep])
        chi = ChiSquareTest(statistic, df, float(stats.chi2.sf(statistic, df)))
    return Comparison(a.mechanism, tuple(a.domain), d, se, p, adjust_p_values(p, correction), correction, chi,
                      a.n, b.n, a.target)


def difference_sample_size(mechanism: Any, frequency_a: float, frequency_b: float, *, power: float = 0.8,
                           level: float = 0.95) -> int:
    r"""Respondents per arm for a two-sided test at ``1 - level`` to detect ``frequency_a != frequency_b``
    (one category's share in each arm) with probability ``power`` (module docstring; population target).

    For a frequency oracle ``V(f) = lambda (1 - lambda) / (p* - q*)^2`` with
    ``lambda = q* + (p* - q*) f`` (the largest over the categories' rates). For a
    numeric mechanism pass the two means: ``V`` is its worst-case variance
    of one report plus the largest spread ``(high - low)^2 / 4``.

    Parameters
    ----------
    mechanism : Mechanism
        The mechanism both arms use.
    frequency_a, frequency_b : float
        The share of one category (or, for a numeric mechanism, the mean)
        expected in each arm; they must differ.
    power : float, default 0.8
        The probability of detecting the difference, in ``(0, 1)``.
    level : float, default 0.95
        One minus the test's size.

    Returns
    -------
    int
        Respondents per arm.

    Raises
    ------
    ValueError
        ``power`` or ``level`` outside ``(0, 1)``, equal or out-of-range
        frequencies.

    Notes
    -----
    :math:`n = (z_{1 - \alpha/2} + z_{\mathrm{power}})^2 (V_a + V_b) / \delta^2`,
    with :math:`\delta = f_a - f_b` and :math:`V` one respondent's variance
    of the estimate at each arm's share.

    Examples
    --------
    >>> import deniable as dn
    >>> dn.difference_sample_size(dn.GRR(["a", "b", "c"], epsilon=2.0), 0.3, 0.35)
    2984
    >>> dn.difference_sample_size(dn.Laplace(0, 10, epsilon=1.0), 5, 5.5)
    14129
    """
    from scipy import stats

    level = check_level(level)
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1); got {power!r}")
    delta = abs(frequency_a - frequency_b)
    if delta == 0:
        raise ValueError("frequency_a and frequency_b must differ: no sample size detects no difference")
    if hasattr(mechanism, "support_rates"):
        for name, f in (("frequency_a", frequency_a), ("frequency_b", frequency_b)):
            if not 0 <= f <= 1:
                raise ValueError(f"{name} must be in [0, 1]; got {f!r}")
        p, q = mechanism.support_rates()

        def variance(f: float) -> float:
            rate = q + (p - q) * f
            return float(np.max(rate * (1 - rate) / (p - q) ** 2))

        total = variance(frequency_a) + variance(frequency_b)
    else:
        total = 2 * (float(mechanism.variance(1)) + (mechanism.high - mechanism.low) ** 2 / 4)
    z = stats.norm.isf((1 - level) / 2) + stats.norm.ppf(power)
    return math.ceil(z * z * total / delta**2 - 1e-9)
