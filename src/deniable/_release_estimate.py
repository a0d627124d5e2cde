"""Consistent marginals from a marginal release (CALM, Zhang et al. CCS 2018): the estimate's math.

A release (:class:`deniable.MarginalRelease`) has ``m`` *views*, sets ``V_j``
of questions; group ``j`` (the ``n_j`` respondents whose device drew ``V_j``)
estimates the view's marginal ``x_j`` (``K_j`` cells) with an oracle, unbiased
with covariance ``Sigma_j`` (:func:`deniable._marginals.cell_covariance`;
independent across views, since the groups are disjoint and the draw does
not depend on the answers).

Consistency (CALM's step, after Qardaji et al.'s PriView). Two views that
share questions ``A`` estimate the ``A``-marginal twice. For every ``A`` in
the closure under intersection of the views' pairwise intersections,
smallest first (the empty set first: every view's cells then sum to exactly
1, the known total), the views ``V_i ⊇ A`` are moved to agree on

``T(A) = sum_i w_i P_i x_i / sum_i w_i``,  ``w_i = 1 / (c_i sigma_i^2)``,

where ``P_i`` sums view ``i``'s cells into the ``A``-cells, ``c_i = K_i /
K_A`` is how many cells it sums and ``sigma_i^2 = Var*/n_i`` the oracle's
per-cell variance at ``f -> 0`` (so the weights do not depend on the
reports); each view then gets ``x_i += P_i^T (T(A) - P_i x_i) / c_i`` (the
difference spread evenly over the cells it sums). Processing a set after its
subsets keeps every earlier agreement: the update's projection on an
already consistent subset is zero. The map ``x -> x'`` is affine with
weights fixed by the ``n_j``, so ``x' = L x + e`` stays **unbiased** with
covariance ``L diag(Sigma_j) L^T`` (the standard errors of every marginal).

A view without reports (a small slice) starts uniform with weight 0: the
step gives it what the other views share with it, and its standard errors
are NaN where nothing was reported.

Any marginal ``S`` inside some view is then read off one view holding it
(all such views agree on ``S``): ``m = M x'_i``, covariance ``M (L Sigma L^T)_ii
M^T``. A marginal in no view is not estimated (CALM's maximum-entropy
reconstruction is biased wherever the views miss a dependence); choose
views that hold the marginals you will ask for.

Non-negativity (:meth:`ReleaseEstimate.nonnegative`): CALM alternates
Norm-Sub (:func:`deniable._consistency.norm_sub`: each view projected on
the simplex) and the consistency step until the consistent views are
non-negative to ``1e-12`` (at most ``rounds`` times), ending on the
consistency step, so the views still agree exactly and sum to 1. This trades
bias for error; the standard errors stay those of the linear estimate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from itertools import combinations, product
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _intervals as intervals
from deniable._consistency import norm_sub
from deniable._marginals import MarginalTable, marginal_of, positions, summing_matrix
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level

__all__ = ["ReleaseEstimate", "shared_sets", "consistency_steps", "make_consistent"]

Step = tuple[tuple[int, ...], list[tuple[int, NDArray[np.float64], float]]]


def shared_sets(views: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The empty set and the closure under intersection of the views' pairwise intersections, smallest
    first (each set sorted)."""
    found = {frozenset(a) & frozenset(b) for a, b in combinations(views, 2)}
    while True:
        more = {a & b for a in found for b in found} - found
        if not more:
            break
        found |= more
    found.add(frozenset())
    return sorted((tuple(sorted(s)) for s in found), key=lambda s: (len(s), s))


@lru_cache(maxsize=1024)
def _summing(sizes: tuple[int, ...], keep: tuple[int, ...]) -> NDArray[np.float64]:
    """:func:`~deniable._marginals.summing_matrix` of a view (all ones for the empty set), read-only."""
    out = summing_matrix(sizes, keep) if keep else np.ones((1, int(np.prod(sizes))))
    out.setflags(write=False)
    return out


def consistency_steps(shape: Sequence[int], views: Sequence[tuple[int, ...]], variances: Sequence[float]) -> list[Step]:
    """Per shared set ``A``: the views holding it, each with its summing matrix ``P_i`` and weight
    ``w_i = 1 / (c_i sigma_i^2)`` (module docstring)."""
    steps: list[Step] = []
    for shared in shared_sets(views):
        holders = []
        for i, view in enumerate(views):
            if set(shared) <= set(view):
                summing = _summing(tuple(shape[q] for q in view), tuple(view.index(q) for q in shared))
                c = summing.shape[1] / summing.shape[0]
                holders.append((i, summing, 1.0 / (c * variances[i])))
        if len(holders) >= 2 or not shared:
            steps.append((shared, holders))
    return steps


def make_consistent(
    values: NDArray[np.float64], offsets: NDArray[np.int64], steps: list[Step], total: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The consistency step on the stacked views ``values`` (one column per vector: shape ``(sum K_j, c)``),
    view ``j`` in rows ``offsets[j]:offsets[j+1]``; ``total``: each column's sum for the empty set (1 for
    estimates, 0 for the columns of a linear map)."""
    out = values.copy()
    for shared, holders in steps:
        sums = [summing @ out[offsets[i] : offsets[i + 1]] for i, summing, _ in holders]
        if shared:
            weights = np.array([w for _, _, w in holders])
            weights = weights if weights.sum() > 0 else np.ones(len(holders))  # no holder has reports
            target = np.tensordot(weights / weights.sum(), np.array(sums), axes=1)
        else:
            target = total[None, :]
        for (i, summing, _), now in zip(holders, sums, strict=True):
            c = summing.shape[1] / summing.shape[0]
            out[offsets[i] : offsets[i + 1]] += summing.T @ (target - now) / c
    return out


@dataclass(frozen=True, eq=False)
class ReleaseEstimate(Result):
    """The consistent marginals of a marginal release, with their covariance (module docstring).

    Made by :meth:`deniable.MarginalRelease.estimate_from`. :meth:`marginal`
    answers any marginal inside a view, :meth:`view` gives one view's table,
    :meth:`nonnegative` CALM's non-negative views. Its intervals, ``to_dict``
    and ``to_frame`` list every view's cells, labelled ``(view, answers)``.

    Parameters
    ----------
    questions : tuple of tuples
        Every question's categories.
    names : tuple of str or None
        The questions' names, where the release was given them.
    views : tuple of tuples of int
        The released sets of question positions.
    counts : tuple of int
        Each view's number of reports ``n_j``.
    values : ndarray
        The views' consistent cells, stacked (view ``j`` row-major in
        ``offsets[j]:offsets[j+1]``).
    linear : ndarray
        The consistency map ``L`` (``values = L x + e`` from the raw views ``x``).
    blocks : tuple of ndarray
        Each view's raw covariance ``Sigma_j`` (NaN for a view without reports).
    variances : tuple of float
        Each view's ``sigma_j^2 = Var*/n_j``, which weighs it in the consistency step.
    mechanism : str
        The views' oracle.
    epsilon : float
        A report's privacy loss.
    nonnegative_rounds : int
        How many rounds of Norm-Sub made these views non-negative (0: the linear estimate).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> r = dn.MarginalRelease(2, 2, 2, epsilon=2.0, names=["a", "b", "c"])
    >>> est = r.estimate(r.privatize_many(np.ones((6000, 3), dtype=int), rng=1))
    >>> pair = est.marginal(("b", "c"))
    >>> bool(pair.table[1, 1] > 0.8), bool(abs(pair.frequencies.sum() - 1) < 1e-12)
    (True, True)
    >>> bool(est.nonnegative().values.min() >= -1e-12)
    True
    """

    questions: tuple[tuple[Any, ...], ...]
    names: tuple[str, ...] | None
    views: tuple[tuple[int, ...], ...]
    counts: tuple[int, ...]
    values: NDArray[np.float64]
    linear: NDArray[np.float64]
    blocks: tuple[NDArray[np.float64], ...]
    variances: tuple[float, ...]
    mechanism: str
    epsilon: float
    nonnegative_rounds: int = 0

    @property
    def n(self) -> int:
        """All the reports, over the views."""
        return int(sum(self.counts))

    @cached_property
    def offsets(self) -> NDArray[np.int64]:
        """Where each view's cells start in :attr:`values` (and where the last ends)."""
        sizes = [int(np.prod([len(self.questions[q]) for q in v])) for v in self.views]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

    def _view_covariance(self, j: int) -> NDArray[np.float64]:
        """``(L Sigma L^T)_jj``: the covariance of view ``j``'s consistent cells."""
        cache = self.__dict__.setdefault("_covariances", {})
        if j in cache:
            return cache[j]
        offsets = self.offsets
        rows = self.linear[offsets[j] : offsets[j + 1]]
        out = np.zeros((rows.shape[0], rows.shape[0]))
        for i, block in enumerate(self.blocks):
            part = rows[:, offsets[i] : offsets[i + 1]]
            if self.counts[i] or np.any(part != 0):  # a view without reports (NaN) counts where it is used
                out += part @ block @ part.T
        cache[j] = out
        return out

    def _view_label(self, j: int) -> tuple[Any, ...]:
        return tuple(self.views[j] if self.names is None else (self.names[q] for q in self.views[j]))

    def view(self, j: int) -> MarginalTable:
        """View ``j``'s consistent marginal (its positions are the questions' positions)."""
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not 0 <= j < len(self.views):
            raise ValueError(f"view must be an index 0..{len(self.views) - 1}; got {j!r:.40}")
        offsets = self.offsets
        keep = self.views[j]
        names = None if self.names is None else tuple(self.names[q] for q in keep)
        return MarginalTable(
            tuple(self.questions[q] for q in keep),
            keep,
            self.values[offsets[j] : offsets[j + 1]],
            self._view_covariance(j),
            self.counts[j],
            names,
        )

    def marginal(self, which: Any) -> Any:
        """The marginal of the questions ``which`` (a position or name: a
        :class:`~deniable.MarginalEstimate`; a tuple of them: a
        :class:`~deniable._marginals.MarginalTable`), from a view that holds them all (every such view
        agrees after the consistency step); ValueError naming ``which`` if no view holds them."""
        wanted = positions(which, len(self.questions), self.names)
        for j, view in enumerate(self.views):
            if set(wanted) <= set(view):
                table = self.view(j)
                inner = tuple(view.index(q) for q in wanted)
                asked = inner[0] if isinstance(which, (int, np.integer, str)) else inner
                picked = marginal_of(table.questions, table.frequencies, table.covariance, self.n, asked, table.names)
                if isinstance(picked, MarginalTable):
                    picked = replace(picked, positions=wanted)
                return picked
        released = [self._view_label(j) for j in range(len(self.views))]
        raise ValueError(f"which: no released view holds the questions {which!r:.60}; the views are {released}")

    def nonnegative(self, rounds: int = 100) -> ReleaseEstimate:
        """The views made non-negative and consistent (CALM: Norm-Sub and the consistency step in turn,
        module docstring); the standard errors stay the linear estimate's."""
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise ValueError(f"rounds must be an integer >= 1; got {rounds!r:.40}")
        shape = [len(q) for q in self.questions]
        steps = consistency_steps(shape, self.views, self.variances)
        offsets = self.offsets
        values = self.values[:, None].copy()
        done = 0
        while done < rounds and values.min() < -1e-12:
            for j in range(len(self.views)):
                values[offsets[j] : offsets[j + 1], 0] = norm_sub(values[offsets[j] : offsets[j + 1], 0])
            values = make_consistent(values, offsets, steps, np.ones(1))
            done += 1
        return replace(self, values=values[:, 0], nonnegative_rounds=done)

    @property
    def std_errors(self) -> NDArray[np.float64]:
        """Every view's cells' standard errors, stacked like :attr:`values`."""
        return np.concatenate([self.view(j).std_errors for j in range(len(self.views))])

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-cell normal interval ``f ± z SE`` over every view's cells, stacked like :attr:`values`."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.values, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per view cell, labelled ``(view, answers)``: ``estimate``, ``std_error``, ``ci_low``, ``ci_high``."""
        low, high = self.confidence_interval(confidence_level, method)
        labels = [
            (self._view_label(j), cell)
            for j, v in enumerate(self.views)
            for cell in product(*(self.questions[q] for q in v))
        ]
        columns = {"estimate": self.values, "std_error": self.std_errors, "ci_low": low, "ci_high": high}
        fields: dict[str, Any] = {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "n": self.n,
            "target": "population",
            "views": [list(self._view_label(j)) for j in range(len(self.views))],
            "view_counts": list(self.counts),
            "questions": [list(q) for q in self.questions],
        }
        if self.names is not None:
            fields["names"] = list(self.names)
        return ResultTable(fields, columns, "cell", labels, "cells")

    def _caption(self) -> str:
        return f"marginal release ({self.mechanism}, epsilon={self.epsilon:.4g}): {len(self.views)} views, n={self.n}"
