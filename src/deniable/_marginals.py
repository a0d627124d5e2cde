"""Marginals of a joint estimate of several questions, the test of independence and Cramér's V.

A joint estimate of ``d`` questions (categories ``k_1, ..., k_d``) is a vector
``f`` of ``K = k_1 ... k_d`` cell shares, row-major (the last question's
answer varies fastest), with covariance ``Sigma`` (:mod:`deniable._joint`).
The marginal of any subset ``S`` of the questions is a sum of cells,
``m = M f`` with ``M`` the 0/1 summing matrix, so it is unbiased with
covariance ``M Sigma M^T``. Every marginal is computed from the one joint
vector, so overlapping marginals agree exactly: summing the ``(1, 3)``
marginal over question 3 gives the ``(1,)`` marginal, to the last bit of
rounding (the consistency a separately estimated marginal would lack).

Where the mechanism named its questions (``names=[...]``), a marginal may
name them too: ``marginal(("q1", "q3"))`` is ``marginal((0, 2))``.

Independence of two questions (``i``, ``j``) is the Wald test of
:mod:`deniable._joint` on their two-way marginal; association is Cramér's
``V = sqrt(phi^2 / min(k_i - 1, k_j - 1))`` with
``phi^2 = sum_ab (f_ab - f_a f_b)^2 / (f_a f_b)`` of the two-way marginal
(plugged in, its shares clipped to [0, 1]), and its standard error by the delta
method, ``sqrt(g^T Sigma_ij g)`` with ``g`` the numerical gradient of ``V``
with respect to the two-way cells. Near ``V = 0`` the square root makes the
delta method poor (``V`` is biased upward by the noise); test independence
with :meth:`MarginalTable.independence` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _intervals as intervals
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level

__all__ = ["MarginalEstimate", "MarginalTable", "IndependenceTest", "Association", "summing_matrix",
           "marginal_of", "wald_independence", "cramers_v", "cell_covariance", "check_names", "positions"]


@dataclass(frozen=True)
class MarginalEstimate(Result):
    """One question's shares from the joint estimate: unbiased, with standard errors (population).

    :meth:`deniable.JointEstimate.marginal` with one position makes it.

    Parameters
    ----------
    domain : tuple
        The question's categories.
    frequencies : numpy.ndarray
        Their estimated shares (sums of joint cells).
    std_errors : numpy.ndarray
        Their standard errors, from the joint covariance.
    n : int
        The number of reports.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> j = dn.Joint(["yes", "no"], ["A", "B", "C"], epsilon=3.0)
    >>> first = rng.choice(["yes", "no"], size=5000, p=[0.3, 0.7])
    >>> second = rng.choice(["A", "B", "C"], size=5000)
    >>> est = j.estimate(j.privatize_many(first, second, rng=rng))
    >>> m = est.marginal(0)
    >>> m.domain, m.frequencies.round(2).tolist()
    (('yes', 'no'), [0.3, 0.7])
    """

    domain: tuple[Any, ...]
    frequencies: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    n: int

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-category normal interval ``f ± z SE`` at ``confidence_level`` (``ci`` is its older spelling)."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per category: ``estimate``, ``std_error``, ``ci_low``, ``ci_high``."""
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"estimate": self.frequencies, "std_error": self.std_errors, "ci_low": low, "ci_high": high}
        return ResultTable({"n": self.n, "target": "population"}, columns, "category", self.domain, "categories")


@dataclass(frozen=True)
class IndependenceTest:
    r"""Wald test that two questions are independent (:mod:`deniable._joint`).

    Parameters
    ----------
    statistic : float
        :math:`W = r^\top (J \Sigma J^\top)^{-1} r`, with
        :math:`r_{ab} = f_{ab} - f_{a\cdot} f_{\cdot b}`.
    df : int
        Its degrees of freedom, :math:`(k_1 - 1)(k_2 - 1)`.
    p_value : float
        :math:`P(\chi^2_{df} \ge W)`.
    method : str, default "wald"
        The test.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> j = dn.Joint(["yes", "no"], ["A", "B", "C"], epsilon=3.0)
    >>> first = rng.choice(["yes", "no"], size=5000, p=[0.3, 0.7])
    >>> second = rng.choice(["A", "B", "C"], size=5000)
    >>> est = j.estimate(j.privatize_many(first, second, rng=rng))
    >>> test = est.independence()
    >>> test.df, test.method, test.p_value > 0.01
    (2, 'wald', True)
    """

    statistic: float
    df: int
    p_value: float
    method: str = "wald"

    def __repr__(self) -> str:
        return f"IndependenceTest(wald W={self.statistic:.4g}, df={self.df}, p={self.p_value:.4g})"


@dataclass(frozen=True)
class Association:
    r"""Cramér's V between two questions with its delta-method standard error (module docstring).

    Parameters
    ----------
    cramers_v : float
        :math:`V = \sqrt{\phi^2 / \min(k_i - 1, k_j - 1)}`, with
        :math:`\phi^2 = \sum_{ab} (f_{ab} - f_a f_b)^2 / (f_a f_b)`.
    std_error : float
        Its delta-method standard error (poor near 0).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> j = dn.Joint(["yes", "no"], ["A", "B", "C"], epsilon=3.0)
    >>> first = rng.choice(["yes", "no"], size=5000, p=[0.3, 0.7])
    >>> second = rng.choice(["A", "B", "C"], size=5000)
    >>> est = j.estimate(j.privatize_many(first, second, rng=rng))
    >>> a = est.association()
    >>> 0 <= a.cramers_v < 5 * a.std_error
    True
    """

    cramers_v: float
    std_error: float

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Normal interval ``V ± z SE`` cut to [0, 1]."""
        low, high = intervals.normal_interval(self.cramers_v, self.std_error, 1 - check_level(confidence_level))
        return ConfidenceInterval(max(0.0, float(low)), min(1.0, float(high)))


def summing_matrix(shape: Sequence[int], keep: Sequence[int]) -> NDArray[np.float64]:
    """``M`` with ``M[r, c] = 1`` when cell ``c`` of the row-major product ``shape`` falls in cell ``r`` of
    the row-major product of the questions ``keep`` (in that order)."""
    cells = np.arange(int(np.prod(shape)))
    coords = np.unravel_index(cells, tuple(shape))
    rows = np.ravel_multi_index(tuple(coords[i] for i in keep), tuple(shape[i] for i in keep))
    out = np.zeros((int(np.prod([shape[i] for i in keep])), cells.size))
    out[rows, cells] = 1.0
    return out


def cell_covariance(mechanism: Any, cells: Any) -> NDArray[np.float64]:
    """The covariance of an oracle's debiased cells (population target; :mod:`deniable._joint`).

    ``mechanism``: GRR or a unary encoding; ``cells``: its
    :class:`~deniable.Estimate` from ``n >= 1`` reports.
    """
    gap = cells.p_star - cells.q_star
    rate = cells.observed
    if mechanism.report_kind == "category":  # GRR: multinomial support counts
        support = np.diag(rate) - np.outer(rate, rate)
    else:
        f = np.clip(cells.frequencies, 0.0, 1.0)
        support = -np.outer(gap * f, gap * f)
        np.fill_diagonal(support, rate * (1 - rate))
    out: NDArray[np.float64] = support / (cells.n * np.outer(gap, gap))
    return out


def check_names(names: Any, d: int, owner: str) -> tuple[str, ...] | None:
    """The questions' names (None: none given): ``d`` distinct non-empty strings; ValueError naming ``names``."""
    if names is None:
        return None
    got = tuple(names) if not isinstance(names, str) else (names,)
    if len(got) != d or not all(isinstance(x, str) and x for x in got) or len(set(got)) != len(got):
        raise ValueError(f"names must be {d} distinct non-empty strings, one per question, for {owner}; "
                         f"got {names!r:.80}")
    return got


def _single(which: Any) -> bool:
    """Whether ``which`` names one question (a position or a name), not a tuple of them."""
    return isinstance(which, (int, np.integer, str)) and not isinstance(which, bool)


def positions(which: Any, d: int, names: Sequence[str] | None = None) -> tuple[int, ...]:
    """``which`` (a position, a name, or a tuple of them) as distinct question positions; ValueError naming
    ``which``."""
    picked = (which,) if _single(which) else which
    try:
        items = tuple(picked)
    except TypeError:
        items = ()
    named = [x for x in items if isinstance(x, str)]
    if named and names is None:
        raise ValueError(f"which names questions ({which!r:.60}) but these questions have no names: give "
                         f"names=[...] to the mechanism, or positions 0..{d - 1}")
    if named and names is not None:
        unknown = [x for x in named if x not in names]
        if unknown:
            raise ValueError(f"which: {unknown[0]!r} is not a question's name; the names are {list(names)}")
        items = tuple(names.index(x) if isinstance(x, str) else x for x in items)
    try:
        positions = tuple(int(i) for i in items if not isinstance(i, bool))
    except (TypeError, ValueError):
        positions = ()
    if len(positions) != len(items):
        positions = ()
    if d == 2 and isinstance(which, (int, np.integer)) and which not in (0, 1):
        raise ValueError(f"which must be 0 (the first question) or 1 (the second); got {which!r}")
    if not positions or len(set(positions)) != len(positions) or not all(0 <= i < d for i in positions):
        raise ValueError(f"which must be a question's position 0..{d - 1} or a tuple of distinct ones; got {which!r}")
    return positions


def marginal_of(questions: Sequence[tuple[Any, ...]], frequencies: NDArray[np.float64],
                covariance: NDArray[np.float64], n: int, which: Any, names: Sequence[str] | None = None) -> Any:
    """One question's :class:`MarginalEstimate` (``which`` a position or a name) or the
    :class:`MarginalTable` of the questions ``which`` (a tuple of positions or names), from a joint vector
    and its covariance."""
    keep = positions(which, len(questions), names)
    summing = summing_matrix([len(q) for q in questions], keep)
    cov = summing @ covariance @ summing.T
    shares = summing @ frequencies
    if _single(which):
        return MarginalEstimate(questions[keep[0]], shares, np.sqrt(np.maximum(np.diag(cov), 0.0)), n)
    kept = None if names is None else tuple(names[i] for i in keep)
    return MarginalTable(tuple(questions[i] for i in keep), keep, shares, cov, n, kept)


def wald_independence(table: NDArray[np.float64], covariance: NDArray[np.float64]) -> IndependenceTest:
    """The Wald test of independence of a ``k1 x k2`` table of shares with the covariance of its cells."""
    from scipy import stats

    k1, k2 = table.shape
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    grid = np.meshgrid(np.arange(k1 - 1), np.arange(k2 - 1), indexing="ij")
    a, b = grid[0].ravel(), grid[1].ravel()
    contrasts = table[a, b] - rows[a] * cols[b]
    partial = np.zeros((a.size, k1, k2))
    index = np.arange(a.size)
    partial[index, a, b] += 1.0
    partial[index, a, :] -= cols[b][:, None]
    partial[index, :, b] -= rows[a][:, None]
    jac = partial.reshape(a.size, k1 * k2)
    middle = jac @ covariance @ jac.T
    statistic = float(contrasts @ np.linalg.pinv(middle, hermitian=True) @ contrasts)
    df = (k1 - 1) * (k2 - 1)
    return IndependenceTest(statistic, df, float(stats.chi2.sf(statistic, df)))


def _v(cells: NDArray[np.float64], shape: tuple[int, int]) -> float:
    table = np.clip(cells, 0.0, 1.0).reshape(shape)
    table = table / table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        phi2 = float(np.sum(np.where(expected > 0, (table - expected) ** 2 / expected, 0.0)))
    return float(np.sqrt(max(phi2, 0.0) / (min(shape) - 1)))


def cramers_v(table: NDArray[np.float64], covariance: NDArray[np.float64]) -> Association:
    """Cramér's V of a two-way table of shares and its delta-method standard error (module docstring)."""
    shape = (int(table.shape[0]), int(table.shape[1]))
    cells = table.ravel()
    v = _v(cells, shape)
    step = 1e-6
    grad = np.array([(_v(cells + step * e, shape) - _v(cells - step * e, shape)) / (2 * step)
                     for e in np.eye(cells.size)])
    return Association(v, float(np.sqrt(max(float(grad @ covariance @ grad), 0.0))))


@dataclass(frozen=True, eq=False)
class MarginalTable(Result):
    r"""The joint shares of some of the questions (a k-way marginal), with their covariance.

    ``questions``: the kept questions' categories; ``positions``: where they
    stand among the joint's questions; ``frequencies``: the cells, row-major;
    ``covariance``: theirs; ``names``: the kept questions' names where the
    mechanism named them (then :meth:`marginal` takes names too). Its table
    lists the cells labelled by their tuples of answers.

    Parameters
    ----------
    questions : tuple of tuple
        The kept questions' categories.
    positions : tuple of int
        Their positions among the joint's questions.
    frequencies : numpy.ndarray
        The marginal cells, row-major.
    covariance : numpy.ndarray
        Their covariance, :math:`M \Sigma M^\top`.
    n : int
        The number of reports.
    names : tuple of str or None, default None
        The kept questions' names, where the mechanism named them.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> j = dn.Joint(2, 2, 2, epsilon=3.0)
    >>> answers = [rng.integers(0, 2, 3000) for _ in range(3)]
    >>> est = j.estimate(j.privatize_many(*answers, rng=rng))
    >>> pair = est.marginal((0, 2))
    >>> pair.positions, pair.frequencies.shape, pair.independence().df
    ((0, 2), (4,), 1)
    """

    questions: tuple[tuple[Any, ...], ...]
    positions: tuple[int, ...]
    frequencies: NDArray[np.float64]
    covariance: NDArray[np.float64]
    n: int
    names: tuple[str, ...] | None = None

    @property
    def std_errors(self) -> NDArray[np.float64]:
        return np.sqrt(np.maximum(np.diag(self.covariance), 0.0))

    @property
    def table(self) -> NDArray[np.float64]:
        """The shares as an array of shape ``(k_i, k_j, ...)``."""
        return self.frequencies.reshape(tuple(len(q) for q in self.questions))

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-cell normal interval ``f ± z SE``."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per cell (a tuple of answers): ``estimate``, ``std_error``, ``ci_low``, ``ci_high``."""
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"estimate": self.frequencies, "std_error": self.std_errors, "ci_low": low, "ci_high": high}
        fields = {"n": self.n, "target": "population", "positions": list(self.positions),
                  "questions": [list(q) for q in self.questions]}
        if self.names is not None:
            fields["names"] = list(self.names)
        return ResultTable(fields, columns, "cell", list(product(*self.questions)), "cells")

    def _caption(self) -> str:
        return f"marginal of questions {self.positions}: {' x '.join(str(len(q)) for q in self.questions)} cells"

    def marginal(self, which: Any) -> Any:
        """A marginal of this marginal (positions among its own questions, or their names)."""
        return marginal_of(self.questions, self.frequencies, self.covariance, self.n, which, self.names)

    def independence(self, first: Any = 0, second: Any = 1) -> IndependenceTest:
        """Wald test that two of its questions (positions or names) are independent, ``(k_i - 1)(k_j - 1)``
        degrees of freedom."""
        pair = self.marginal((first, second))
        return wald_independence(pair.table, pair.covariance)

    def association(self, first: Any = 0, second: Any = 1) -> Association:
        """Cramér's V between two of its questions, with its standard error."""
        pair = self.marginal((first, second))
        return cramers_v(pair.table, pair.covariance)
