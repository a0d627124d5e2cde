"""Frequent items of set-valued answers: SVIM (Wang, Li & Jha, "Locally differentially private frequent
itemset mining", S&P 2018), built on :class:`~deniable.SetValued`.

Each user holds a set ``V`` of at most ``max_items`` of the ``k`` items and is put in one of three groups
(the collector's uniformly random assignment, independent of the sets, in the shares ``0.4, 0.1, 0.5`` of
the authors' code); each user reports once, at ``epsilon``, so the whole protocol is ``epsilon``-LDP.

1. **Prune.** Group 1 reports ``V`` by padding and sampling to ``ell = 1``
   (:class:`~deniable.SetValued` over all ``k`` items); the ``2 top_k`` items of largest estimate are the
   candidates ``S`` (published to the other groups; choosing them is post-processing).
2. **Sizes.** Group 2 reports ``|V & S|`` in ``0 .. M`` (``M = min(max_items, |S|)``) by GRR; the
   estimated size shares ``theta_i`` give ``L``, the smallest size at or above the 90th percentile of
   the sizes ``>= 1``.
3. **Counts.** Group 3 reports ``V & S`` by padding and sampling to ``L`` (:class:`~deniable.SetValued`
   over ``S``): ``f^_x`` (``L`` times the oracle's estimate) and its standard error ``s_x``.

**Size correction.** A set with more than ``L`` candidates has each drawn with probability
``1 / |V & S| < 1 / L``, so ``f^_x`` undercounts. If an item's holders are spread over the sizes in
proportion to ``i theta_i`` (the paper's assumption: an item is as likely to be any member of a set),
``E f^_x = u f_x`` with ``u = sum_i min(i, L) theta_i / sum_i i theta_i``; the result is
``f~_x = f^_x / u^``, ``u^`` at the estimated ``theta^``. When ``L = M`` no set is cut: ``u = 1`` exactly
and ``f~_x`` is unbiased for the population share.

**Standard errors** (delta method; groups 2 and 3 are disjoint, so independent):
``Var(f~_x) = s_x^2 / u^2 + f^_x^2 Var(u^) / u^4``, ``Var(u^) = g' Sigma g`` with
``g_i = (min(i, L) - u i) / sum_j j theta_j`` and ``Sigma`` GRR's covariance of ``theta^``
(multinomial supports, plugged in at the observed rates). The estimates are for the population the
users are drawn from; they do not include the bias of the proportionality assumption when ``L < M``.

**Privacy of each phase.** Each phase's mechanism is built at ``epsilon`` and its ``epsilon`` attribute
is its report's exact loss, at most ``epsilon``: phase 1 and 3 are :class:`~deniable.SetValued`, whose
oracle runs at the largest budget that keeps the whole report ``epsilon``-LDP (GRR, as in the paper, at
the amplified ``ln(L (e^epsilon - 1) + 1)``; ``L = 1`` in phase 1, where that is ``epsilon``), phase 2 is
GRR at ``epsilon``. A user reports in one phase only, so the protocol is ``epsilon``-LDP.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _intervals as intervals
from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts
from deniable._compare import covariance
from deniable._privacy import check_epsilon
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._kary import GRR
from deniable.mechanisms._set_valued import SET_ORACLES, SetValued

__all__ = ["FrequentItems", "FrequentSets", "Tally", "assign_groups", "check_count", "compact", "ranked"]

Held = tuple[NDArray[np.int64], NDArray[np.int64]]
"""Each user's held candidate indices (rows padded with -1) and their number."""
SHARES = (0.4, 0.1, 0.5)
"""SVIM's group shares (prune, sizes, counts), as in the authors' code."""
PERCENTILE = 0.9
"""``L`` is the smallest size at or above this share of the sizes ``>= 1`` (the paper's 90th percentile)."""


def check_count(value: Any, name: str, least: int = 1) -> int:
    """``value`` as an int ``>= least``; ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}; got {value!r}")
    return int(value)


def _check_shares(shares: Any, parts: int) -> tuple[float, ...]:
    got = tuple(float(s) for s in shares)
    if len(got) != parts or min(got) <= 0 or not np.isclose(sum(got), 1.0):
        raise ValueError(f"shares must be {parts} positive shares of the users adding up to 1; got {shares!r}")
    return got


def assign_groups(n: int, shares: Sequence[float], rng: randomness.RNGLike = None) -> NDArray[np.int64]:
    """Each of ``n`` users' group ``0 .. len(shares) - 1``: a uniformly random assignment, independent of the
    users' answers, with ``round`` of the shares' cumulative counts in each; ValueError if a group is empty."""
    n = check_count(n, "n")
    bounds = np.round(np.cumsum([0.0, *shares]) * n).astype(np.int64)
    sizes = np.diff(bounds)
    if (sizes < 1).any():
        raise ValueError(
            f"too few users for the groups: n={n} gives group sizes {sizes.tolist()} at shares "
            f"{list(shares)}; every group needs at least one user"
        )
    order = np.argsort(randomness.uniform_words(n, np.uint64, randomness.resolve(rng)), kind="stable")
    groups = np.empty(n, dtype=np.int64)
    for g in range(sizes.size):
        groups[order[bounds[g] : bounds[g + 1]]] = g
    return groups


@dataclass(frozen=True, eq=False)
class FrequentSets(Result):
    """Frequent items (SVIM) or itemsets (SVSM): the candidates by decreasing estimated share, with SEs.

    The first ``top_k`` are the answer (:meth:`top`); the others are the remaining candidates, estimated
    the same way. Shares are of users holding the item (or every item of the itemset), population target,
    corrected for sampling (module docstring); intervals are normal, ``f +- z SE``.

    Parameters
    ----------
    mechanism : str
        ``"SVIM"`` or ``"SVSM"``.
    epsilon : float
        Each user's privacy loss (each reports once).
    values : tuple
        The candidates (items, or itemsets as tuples of items), by decreasing estimate.
    frequencies : numpy.ndarray
        Their estimated shares of users.
    std_errors : numpy.ndarray
        Their standard errors (delta method).
    top_k : int
        How many of them are the answer.
    n : int
        The users of the whole protocol.
    ell : int
        The padded length ``L`` of the counting phase.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> fi = dn.FrequentItems(range(6), epsilon=4.0, top_k=2, max_items=2)
    >>> sets = [{0, 1} if i % 2 else {0} for i in range(6000)]
    >>> found = fi.run(sets, rng=rng)
    >>> [item for item, share, se in found.top()]
    [0, 1]
    """

    mechanism: str
    epsilon: float
    values: tuple[Any, ...]
    frequencies: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    top_k: int
    n: int
    ell: int

    def top(self) -> list[tuple[Any, float, float]]:
        """``(value, share, std_error)`` of the first ``top_k``, by decreasing share."""
        return [
            (v, float(f), float(s))
            for v, f, s in zip(self.values[: self.top_k], self.frequencies, self.std_errors, strict=False)
        ]

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Per-candidate normal interval ``f +- z SE`` at ``confidence_level``."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        columns = {
            "estimate": self.frequencies,
            "std_error": self.std_errors,
            "ci_low": low,
            "ci_high": high,
            "top": np.arange(len(self.values)) < self.top_k,
        }
        fields = {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "n": self.n,
            "ell": self.ell,
            "top_k": self.top_k,
            "target": "population",
        }
        return ResultTable(fields, columns, "value", self.values, "values")

    def _caption(self) -> str:
        return f"{self.mechanism}: top {self.top_k} of {len(self.values)} candidates, ell={self.ell}, n={self.n}"


class Tally:
    """Phases 2 and 3 over ``m`` candidates: a user's true value is the set of candidate indices it holds.

    ``most`` bounds how many it can hold (``M``); ``size_mechanism`` is GRR over ``0 .. M``, and
    ``count_mechanism(L)`` a :class:`~deniable.SetValued` over the indices ``0 .. m - 1``.
    """

    def __init__(self, m: int, most: int, epsilon: float, oracle: str, percentile: float) -> None:
        self.m, self.most, self.oracle, self.percentile = m, most, oracle, percentile
        self.size_mechanism = GRR(most + 1, epsilon=epsilon)
        self.epsilon = epsilon
        self._counts: dict[int, SetValued] = {}

    def count_mechanism(self, ell: int) -> SetValued:
        """Padding and sampling of the held candidates to ``ell`` (built once per ``ell``)."""
        if ell not in self._counts:
            self._counts[ell] = SetValued(
                self.m, epsilon=self.epsilon, max_items=self.most, ell=ell, oracle=self.oracle
            )
        return self._counts[ell]

    def run(
        self, sizes: Held, counts: Held, source: randomness.Source, length: Callable[[SupportCounts], int]
    ) -> tuple[SupportCounts, SupportCounts, int]:
        """Phases 2 and 3 simulated on the two groups' held candidates: size reports, ``L``, count reports."""
        size_stat = self.size_mechanism.aggregate(self.size_mechanism.privatize_many(sizes[1], rng=source))
        ell = length(size_stat)
        mech = self.count_mechanism(ell)
        padded = np.full((counts[1].size, self.most), -1, dtype=np.int64)
        width = min(self.most, counts[0].shape[1])
        padded[:, :width] = counts[0][:, :width]
        reports = mech.mechanism._sample(mech._sample_padded(padded, counts[1], source), source)
        return size_stat, mech.aggregate(reports), ell

    def length(self, size_stat: SupportCounts) -> int:
        """``L``: the smallest size ``i >= 1`` whose estimated share of the sizes ``>= 1`` reaches ``percentile``."""
        theta = np.clip(self.size_mechanism.estimate_from(size_stat).frequencies[1:], 0.0, None)
        if theta.sum() <= 0:
            return 1
        reach = np.cumsum(theta) / theta.sum()
        return int(np.argmax(reach >= self.percentile - 1e-12)) + 1

    def estimate(
        self, size_stat: SupportCounts, count_stat: SupportCounts, ell: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The candidates' corrected shares ``f^ / u^`` and their delta-method SEs (module docstring)."""
        counts = self.count_mechanism(ell).estimate_from(count_stat)
        f, s = counts.frequencies, np.asarray(counts.std_errors, dtype=float)
        if ell >= self.most:  # no set is cut: u = 1 exactly
            return f, s
        sizes = self.size_mechanism.estimate_from(size_stat)
        theta = np.asarray(sizes.frequencies, dtype=float)
        i = np.arange(self.most + 1)
        kept, whole = float(np.minimum(i, ell) @ theta), float(i @ theta)
        if whole <= 0 or kept <= 0:
            return f, s  # no size information: no correction
        u = min(kept / whole, 1.0)
        grad = (np.minimum(i, ell) - u * i) / whole
        cov = covariance(sizes)
        var_u = float(grad @ cov[0] @ grad) if cov is not None else 0.0
        return f / u, np.sqrt(s**2 / u**2 + f**2 * var_u / u**4)


class FrequentItems:
    r"""SVIM: the ``top_k`` most frequent items of set-valued answers, in three groups of users (module docstring).

    Run it on simulated data with :meth:`run`; a deployment runs the phases itself: :meth:`assign` the
    users, collect group 1's :attr:`prune` reports, publish :meth:`candidates`, collect group 2's
    :meth:`size_mechanism` reports of :meth:`held` sizes and group 3's :meth:`count_mechanism` reports
    of the held candidates, then :meth:`result`.

    Parameters
    ----------
    items : int or sequence
        ``k`` (the ints ``0 .. k-1``) or the list of items (at least 2).
    epsilon : float
        Each user's privacy loss, ``> 0`` (keyword only, as all).
    top_k : int
        How many items to find, ``>= 1``; ``2 top_k`` candidates are kept (at most ``k``).
    max_items : int
        The most items a set may hold, ``1 .. k``.
    shares : sequence of 3 floats, default (0.4, 0.1, 0.5)
        The groups' shares of the users (prune, sizes, counts).
    percentile : float, default 0.9
        ``L`` reaches this share of the sizes ``>= 1``.
    oracle : {"auto", "grr", "oue", "olh"}, default "auto"
        The frequency oracle of the padding-and-sampling phases.
    ell : int, optional
        A fixed ``L`` for the counting phase instead of the percentile's (capped at ``M``).

    Raises
    ------
    ValueError
        ``top_k < 1``, bad ``shares``, ``percentile`` or ``epsilon``, or the errors of
        :class:`~deniable.SetValued`.

    Notes
    -----
    With size shares :math:`\theta_i`, the counting phase's estimate has expectation
    :math:`u f_x`, :math:`u = \sum_i \min(i, L)\theta_i / \sum_i i\theta_i`, under the
    proportionality assumption; :math:`\tilde f_x = \hat f_x / \hat u`, with
    :math:`\operatorname{Var}(\tilde f_x) \approx s_x^2/u^2 + f_x^2 \operatorname{Var}(\hat u)/u^4`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(1)
    >>> fi = dn.FrequentItems(["mail", "maps", "chat", "news", "game"], epsilon=4.0, top_k=2, max_items=3)
    >>> sets = [["mail", "maps"] if i % 3 else ["mail", "news", "chat"] for i in range(9000)]
    >>> found = fi.run(sets, rng=rng)
    >>> [item for item, share, se in found.top()]
    ['mail', 'maps']
    >>> bool(abs(found.frequencies[0] - 1.0) < 6 * found.std_errors[0])
    True
    """

    name = "SVIM"

    def __init__(
        self,
        items: Any,
        *,
        epsilon: float,
        top_k: int,
        max_items: int,
        shares: Sequence[float] = SHARES,
        percentile: float = PERCENTILE,
        oracle: str = "auto",
        ell: int | None = None,
    ) -> None:
        self.prune = SetValued(items, epsilon=epsilon, max_items=max_items, ell=1, oracle=oracle)
        self._items = Domain(items, "FrequentItems")
        self.top_k = check_count(top_k, "top_k")
        self.max_items, self.oracle = self.prune.max_items, oracle
        self.epsilon = check_epsilon(epsilon, owner="FrequentItems")
        self.shares = _check_shares(shares, 3)
        if not 0 < percentile <= 1:
            raise ValueError(f"percentile must be in (0, 1]; got {percentile!r}")
        if oracle not in ("auto", *SET_ORACLES):
            raise ValueError(f"oracle must be one of {['auto', *SET_ORACLES]}; got {oracle!r}")
        self.percentile = float(percentile)
        self.ell = None if ell is None else check_count(ell, "ell")
        self._tallies: dict[tuple[int, int], Tally] = {}

    @property
    def domain(self) -> tuple[Any, ...]:
        """The items."""
        return tuple(self._items.values)

    def assign(self, n: int, rng: randomness.RNGLike = None) -> NDArray[np.int64]:
        """Each of ``n`` users' group, 0 (prune), 1 (sizes) or 2 (counts) (:func:`assign_groups`)."""
        return assign_groups(n, self.shares, rng)

    def candidates(self, prune_stat: SupportCounts) -> tuple[Any, ...]:
        """The ``2 top_k`` items (at most ``k``) of largest phase-1 estimate, best first."""
        est = self.prune.estimate_from(prune_stat)
        keep = min(2 * self.top_k, len(self.domain))
        return tuple(self.domain[i] for i in np.argsort(-est.frequencies, kind="stable")[:keep])

    def _tally(self, candidates: Sequence[Any]) -> Tally:
        m = len(candidates)
        key = (m, min(self.max_items, m))
        if key not in self._tallies:  # the phases' mechanisms depend on the candidates' number only
            self._tallies[key] = Tally(m, key[1], self.epsilon, self.oracle, self.percentile)
        return self._tallies[key]

    def held(self, candidates: Sequence[Any], sets: Any) -> list[list[int]]:
        """Each set's candidates, as indices into ``candidates`` (errors name ``sets[i]``): a user's true
        value for :meth:`count_mechanism`, and its length for :meth:`size_mechanism`."""
        padded, lengths = self._held(candidates, self.prune._padded(sets)[0])
        return [row[:size].tolist() for row, size in zip(padded, lengths.tolist(), strict=True)]

    def _held(self, candidates: Sequence[Any], padded: NDArray[np.int64]) -> Held:
        where = np.full(len(self.domain), -1, dtype=np.int64)
        where[[self._items.encode_one(c) for c in candidates]] = np.arange(len(candidates))
        mapped = np.where(padded >= 0, where[np.maximum(padded, 0)], -1)
        return compact(mapped >= 0, mapped)

    def size_mechanism(self, candidates: Sequence[Any]) -> GRR:
        """Phase 2: GRR over the sizes ``0 .. M`` of ``held``."""
        return self._tally(candidates).size_mechanism

    def length(self, candidates: Sequence[Any], size_stat: SupportCounts) -> int:
        """``L`` from the phase-2 aggregate (or the fixed ``ell``, capped at ``M``)."""
        tally = self._tally(candidates)
        return min(self.ell, tally.most) if self.ell is not None else tally.length(size_stat)

    def count_mechanism(self, candidates: Sequence[Any], ell: int) -> SetValued:
        """Phase 3: padding and sampling of ``held`` (candidate indices) to ``ell``."""
        return self._tally(candidates).count_mechanism(ell)

    def result(
        self, candidates: Sequence[Any], size_stat: SupportCounts, count_stat: SupportCounts, ell: int, n: int
    ) -> FrequentSets:
        """The candidates' corrected shares and SEs, best first (module docstring)."""
        f, se = self._tally(candidates).estimate(size_stat, count_stat, ell)
        return ranked(self.name, self.epsilon, list(candidates), f, se, self.top_k, n, ell)

    def run(self, sets: Any, rng: randomness.RNGLike = None) -> FrequentSets:
        """Simulate the whole protocol on ``sets`` (one per user): assign, randomize, aggregate, estimate."""
        source = randomness.resolve(rng)
        padded, lengths = self.prune._padded(_rows(sets))  # every set checked before any phase runs
        return self._run(padded, lengths, self.assign(lengths.size, source), source)

    def _run(
        self,
        padded: NDArray[np.int64],
        lengths: NDArray[np.int64],
        groups: NDArray[np.int64],
        source: randomness.Source,
    ) -> FrequentSets:
        first = groups == 0
        reports = self.prune.mechanism._sample(self.prune._sample_padded(padded[first], lengths[first], source), source)
        candidates = self.candidates(self.prune.aggregate(reports))
        size_stat, count_stat, ell = self._tally(candidates).run(
            self._held(candidates, padded[groups == 1]),
            self._held(candidates, padded[groups == 2]),
            source,
            lambda stat: self.length(candidates, stat),
        )
        return self.result(candidates, size_stat, count_stat, ell, lengths.size)


def _rows(sets: Any) -> list[Any]:
    if isinstance(sets, (str, bytes)) or not hasattr(sets, "__iter__"):
        raise ValueError(f"sets must be a sequence of sets (one per user); got {sets!r:.60}")
    return list(sets)


def compact(keep: NDArray[np.bool_], values: NDArray[np.int64]) -> Held:
    """Each row's ``values`` where ``keep``, moved to the front in order (the rest -1), and their number."""
    order = np.argsort(~keep, axis=1, kind="stable")
    return np.take_along_axis(np.where(keep, values, -1), order, axis=1), keep.sum(axis=1).astype(np.int64)


def ranked(
    name: str,
    epsilon: float,
    values: list[Any],
    f: NDArray[np.float64],
    se: NDArray[np.float64],
    top_k: int,
    n: int,
    ell: int,
) -> FrequentSets:
    """``values`` with their shares and SEs, sorted by decreasing share."""
    order = np.argsort(-f, kind="stable")
    return FrequentSets(name, epsilon, tuple(values[i] for i in order), f[order], se[order], top_k, n, ell)
