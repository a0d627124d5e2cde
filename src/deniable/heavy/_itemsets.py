"""Frequent itemsets of set-valued answers: SVSM (Wang, Li & Jha, S&P 2018), on top of SVIM.

The users are put in two parts (a uniformly random assignment, independent of the sets; shares
``0.4, 0.12, 0.48`` as in the authors' code), each user reporting once at ``epsilon`` (every phase's
mechanism spends it and states its exact loss, as in SVIM):

1. **Items.** The first ``0.4`` run :class:`~deniable.FrequentItems` (SVIM, its own three groups): the
   ``top_k`` items ``I`` with their shares ``f_i``.
2. **Candidates.** With ``v_i = 0.9 f_i / max_j f_j`` (shares clipped at a tiny positive), the ``top_k``
   itemsets ``A`` of at least two items of ``I`` with the largest ``prod_{i in A} v_i`` (the paper's
   guess of their frequency if items were independent) are the candidate itemsets, found best-first
   (every ``v_i < 1``, so a product only falls as items are added).
3. **Sizes and counts.** A user holds the candidate itemsets contained in its set. The next ``0.12``
   report how many by GRR, which gives ``L`` (the 90th percentile, as SVIM's phase 2), and the last
   ``0.48`` report the held itemsets by padding and sampling to ``L``
   (:class:`~deniable.SetValued` over the candidates); the size correction and the delta-method
   standard errors are SVIM's (:mod:`deniable.heavy._set_mining`).

The answer is the ``top_k`` of the single items (their SVIM estimates, as the authors' code does) and
the candidate itemsets together, by estimated share; each keeps its SE.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts
from deniable.heavy._set_mining import (
    PERCENTILE,
    SHARES,
    FrequentItems,
    FrequentSets,
    Held,
    Tally,
    _check_shares,
    _rows,
    assign_groups,
    check_count,
    compact,
    ranked,
)
from deniable.mechanisms._kary import GRR
from deniable.mechanisms._set_valued import SetValued

__all__ = ["FrequentItemsets", "best_products", "ITEMSET_SHARES"]

ITEMSET_SHARES = (0.4, 0.12, 0.48)
"""SVSM's shares of the users: SVIM (split again by its own shares), itemset sizes, itemset counts."""
_DAMPING = 0.9  # v_i = 0.9 f_i / max f: the largest item's factor, so that products fall as items are added


def best_products(values: Sequence[float], count: int) -> list[tuple[int, ...]]:
    """The ``count`` index tuples (sorted, at least two indices) of largest ``prod values[i]``, best first.

    ``values`` must be in ``(0, 1)``. Best-first over the subsets of the indices sorted by decreasing value:
    a subset ending at position ``j`` leads to the subset with ``j + 1`` added and the one with ``j``
    replaced by ``j + 1``, both no larger, and every subset has exactly one such parent.
    """
    order = np.argsort(-np.asarray(values, dtype=float), kind="stable")
    v = np.asarray(values, dtype=float)[order]
    heap: list[tuple[float, tuple[int, ...]]] = [(-float(v[0]), (0,))] if v.size else []
    out: list[tuple[int, ...]] = []
    while heap and len(out) < count:
        neg, subset = heapq.heappop(heap)
        if len(subset) >= 2:
            out.append(tuple(sorted(int(order[j]) for j in subset)))
        last = subset[-1]
        if last + 1 < v.size:
            heapq.heappush(heap, (neg * float(v[last + 1]), (*subset, last + 1)))
            heapq.heappush(heap, (neg / float(v[last]) * float(v[last + 1]), (*subset[:-1], last + 1)))
    return out


class FrequentItemsets:
    r"""SVSM: the ``top_k`` most frequent items and itemsets of set-valued answers (module docstring).

    Run it on simulated data with :meth:`run`; a deployment runs SVIM's phases (:attr:`items`) on groups
    0-2 of :meth:`assign`, publishes :meth:`candidates`, collects group 3's :meth:`size_mechanism`
    reports of the :meth:`held` counts and group 4's :meth:`count_mechanism` reports of the held
    itemsets, then :meth:`result`.

    Parameters
    ----------
    items : int or sequence
        ``k`` (the ints ``0 .. k-1``) or the list of items (at least 2).
    epsilon : float
        Each user's privacy loss, ``> 0`` (keyword only, as all).
    top_k : int
        How many items and itemsets to find, ``>= 1``.
    max_items : int
        The most items a set may hold, ``1 .. k``.
    shares : sequence of 3 floats, default (0.4, 0.12, 0.48)
        The shares of the users for SVIM, the itemset sizes and the itemset counts.
    item_shares : sequence of 3 floats, default (0.4, 0.1, 0.5)
        SVIM's own split of its share.
    percentile : float, default 0.9
        ``L`` reaches this share of the sizes ``>= 1`` (both phases 2).
    oracle : {"auto", "grr", "oue", "olh"}, default "auto"
        The frequency oracle of the padding-and-sampling phases.
    ell : int, optional
        A fixed ``L`` for the itemset counting phase (capped at the candidates' number).

    Raises
    ------
    ValueError
        ``top_k < 1``, bad shares, or the errors of :class:`FrequentItems`.

    Notes
    -----
    Candidate itemsets maximise :math:`\prod_{i \in A} 0.9 \hat f_i / \max_j \hat f_j`; their shares
    are estimated and corrected as SVIM's items (:math:`\tilde f_A = \hat f_A / \hat u`).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(2)
    >>> fs = dn.FrequentItemsets(range(6), epsilon=4.0, top_k=3, max_items=3)
    >>> sets = [[0, 1, 2] if i % 2 else [0, 1] for i in range(20000)]
    >>> found = fs.run(sets, rng=rng)
    >>> sorted(value for value, share, se in found.top())
    [(0,), (0, 1), (1,)]
    """

    name = "SVSM"

    def __init__(
        self,
        items: Any,
        *,
        epsilon: float,
        top_k: int,
        max_items: int,
        shares: Sequence[float] = ITEMSET_SHARES,
        item_shares: Sequence[float] = SHARES,
        percentile: float = PERCENTILE,
        oracle: str = "auto",
        ell: int | None = None,
    ) -> None:
        self.items = FrequentItems(
            items,
            epsilon=epsilon,
            top_k=top_k,
            max_items=max_items,
            shares=item_shares,
            percentile=percentile,
            oracle=oracle,
        )
        self.shares = _check_shares(shares, 3)
        self.top_k, self.epsilon = self.items.top_k, self.items.epsilon
        self.ell = None if ell is None else check_count(ell, "ell")
        self._tallies: dict[tuple[int, int], Tally] = {}

    def assign(self, n: int, rng: randomness.RNGLike = None) -> NDArray[np.int64]:
        """Each of ``n`` users' group: 0-2 SVIM's (prune, sizes, counts), 3 itemset sizes, 4 itemset counts."""
        first = self.shares[0]
        return assign_groups(n, [first * s for s in self.items.shares] + list(self.shares[1:]), rng)

    def candidates(self, found: FrequentSets) -> tuple[tuple[Any, ...], ...]:
        """The ``top_k`` candidate itemsets (tuples of items in domain order) from SVIM's answer ``found``."""
        items = [v for v, _, _ in found.top()]
        f = np.maximum(np.array([s for _, s, _ in found.top()]), 1e-9)
        position = {v: i for i, v in enumerate(self.items.domain)}
        out = []
        for subset in best_products(_DAMPING * f / f.max(), self.top_k):
            out.append(tuple(sorted((items[j] for j in subset), key=position.__getitem__)))
        return tuple(out)

    def held(self, candidates: Sequence[tuple[Any, ...]], sets: Any) -> list[list[int]]:
        """Each set's candidate itemsets (indices into ``candidates``) that it contains: a user's true value
        for :meth:`count_mechanism`, and its length for :meth:`size_mechanism`."""
        padded, lengths = self._held(candidates, self.items.prune._padded(_rows(sets))[0])
        return [row[:size].tolist() for row, size in zip(padded, lengths.tolist(), strict=True)]

    def _held(self, candidates: Sequence[tuple[Any, ...]], padded: NDArray[np.int64]) -> Held:
        members = sorted({i for c in candidates for i in c}, key=self.items.domain.index)
        has = np.zeros((padded.shape[0], len(members) + 1), dtype=bool)  # the last column: not a member
        spots, count = self.items._held(members, padded)
        has[np.arange(padded.shape[0])[:, None], np.where(spots >= 0, spots, len(members))] = True
        at = {v: j for j, v in enumerate(members)}
        contains = (
            np.stack([has[:, [at[i] for i in c]].all(axis=1) for c in candidates], axis=1)
            if candidates
            else np.zeros((padded.shape[0], 0), dtype=bool)
        )
        return compact(contains, np.broadcast_to(np.arange(len(candidates)), contains.shape))

    def _tally(self, candidates: Sequence[Any]) -> Tally:
        # a SetValued needs two items: with fewer candidates, an index nobody holds fills the domain
        key = (max(len(candidates), 2), max(len(candidates), 1))
        if key not in self._tallies:
            self._tallies[key] = Tally(*key, self.epsilon, self.items.oracle, self.items.percentile)
        return self._tallies[key]

    def size_mechanism(self, candidates: Sequence[tuple[Any, ...]]) -> GRR:
        """Group 3: GRR over the counts ``0 .. m`` of held candidate itemsets."""
        return self._tally(candidates).size_mechanism

    def length(self, candidates: Sequence[tuple[Any, ...]], size_stat: SupportCounts) -> int:
        """``L`` of the itemset counting phase (or the fixed ``ell``, capped at ``m``)."""
        tally = self._tally(candidates)
        return min(self.ell, tally.most) if self.ell is not None else tally.length(size_stat)

    def count_mechanism(self, candidates: Sequence[tuple[Any, ...]], ell: int) -> SetValued:
        """Group 4: padding and sampling of the held itemsets (candidate indices) to ``ell``."""
        return self._tally(candidates).count_mechanism(ell)

    def result(
        self,
        found: FrequentSets,
        candidates: Sequence[tuple[Any, ...]],
        size_stat: SupportCounts,
        count_stat: SupportCounts,
        ell: int,
        n: int,
    ) -> FrequentSets:
        """SVIM's ``top_k`` items (as 1-tuples) and the candidate itemsets, by decreasing share."""
        f, se = self._tally(candidates).estimate(size_stat, count_stat, ell)
        singles = found.top()
        values = [(v,) for v, _, _ in singles] + list(candidates)
        shares = np.concatenate([[s for _, s, _ in singles], f[: len(candidates)]])
        errors = np.concatenate([[e for _, _, e in singles], se[: len(candidates)]])
        return ranked(self.name, self.epsilon, values, shares, errors, self.top_k, n, ell)

    def run(self, sets: Any, rng: randomness.RNGLike = None) -> FrequentSets:
        """Simulate the whole protocol on ``sets`` (one per user): assign, randomize, aggregate, estimate."""
        source = randomness.resolve(rng)
        padded, lengths = self.items.prune._padded(_rows(sets))  # every set checked before any phase runs
        groups = self.assign(lengths.size, source)
        first = groups <= 2
        found = self.items._run(padded[first], lengths[first], groups[first], source)
        candidates = self.candidates(found)
        size_stat, count_stat, ell = self._tally(candidates).run(
            self._held(candidates, padded[groups == 3]),
            self._held(candidates, padded[groups == 4]),
            source,
            lambda stat: self.length(candidates, stat),
        )
        return self.result(found, candidates, size_stat, count_stat, ell, lengths.size)
