"""Choosing a range mechanism by the queries an analyst will ask.

:func:`best_range_mechanism` builds every candidate for ``bins`` bins of ``[low, high]`` at ``epsilon``
(:class:`~deniable.HaarHRR` when ``bins`` is a power of two; :class:`~deniable.HierarchicalHistogram`
with each branching factor 2, 4, 8, 16 of which ``bins`` is a power, its oracle chosen by ``"auto"``)
and returns the one whose queries have the lowest mean variance (``query_variance``: each level's
expected ``n / h`` reports, at the given bin shares or uniform ones). The variance is ``n`` times the
query's, so it does not depend on ``n``. A workload is explicit ``(a, b)`` pairs or one of

* ``"short"``: 200 ranges of 2% of the domain, evenly placed;
* ``"long"``: 200 ranges of half the domain;
* ``"prefix"``: 200 CDF values ``[low, x)``;
* ``"mixed"``: all of these.

In Cormode et al.'s comparison (and here) the Haar mechanism wins at small epsilon, the hierarchy
with a branching factor of 4 to 8 at larger ones; short ranges favour hierarchies more than long ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.mechanisms import HaarHRR, HierarchicalHistogram, RangeMechanism

__all__ = ["RangeChoice", "best_range_mechanism", "WORKLOADS"]

WORKLOADS = ("short", "long", "prefix", "mixed")
_PLANNING_N = 1_000_000


@dataclass(frozen=True)
class RangeChoice:
    """The range mechanism whose queries have the lowest mean variance, and the others' variances.

    ``variances`` maps each candidate's name to ``n`` times the mean variance of the workload's queries.

    Parameters
    ----------
    mechanism : RangeMechanism
        The chosen mechanism, ready to use.
    name : str
        Its name among the candidates (with the branching factor and oracle
        of a hierarchy).
    variances : dict of str to float
        Every candidate's ``n`` times mean query variance (lower is better).

    Examples
    --------
    >>> import deniable as dn
    >>> choice = dn.best_range_mechanism(0, 1, bins=16, epsilon=1.0, queries="short")
    >>> choice.name, min(choice.variances, key=choice.variances.get) == choice.name
    ('HierarchicalHistogram(B=16, OUE)', True)
    """

    mechanism: RangeMechanism
    name: str
    variances: dict[str, float]

    def __repr__(self) -> str:
        rows = ", ".join(f"{k}={v:.4g}" for k, v in sorted(self.variances.items(), key=lambda kv: kv[1]))
        return f"RangeChoice({self.name}: {rows})"


def workload(low: float, high: float, queries: Any) -> NDArray[np.float64]:
    """The ``(a, b)`` pairs of a named workload (module docstring), or ``queries`` checked."""
    if isinstance(queries, str):
        if queries not in WORKLOADS:
            raise ValueError(f"queries must be one of {list(WORKLOADS)} or (a, b) pairs; got {queries!r}")
        t = (np.arange(200) + 0.5) / 200
        span = high - low
        short = np.stack([low + t * 0.98 * span, low + (t * 0.98 + 0.02) * span], axis=1)
        long = np.stack([low + t * 0.5 * span, low + (t * 0.5 + 0.5) * span], axis=1)
        prefix = np.stack([np.full(200, low), low + t * span], axis=1)
        chosen = {"short": [short], "long": [long], "prefix": [prefix], "mixed": [short, long, prefix]}[queries]
        return np.clip(np.concatenate(chosen), low, high)
    pairs = np.asarray(queries, dtype=float)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.shape[0] == 0:
        raise ValueError(f"queries must be (a, b) pairs; got an array of shape {pairs.shape}")
    return pairs


def best_range_mechanism(
    low: float, high: float, *, bins: int, epsilon: float, queries: Any = "mixed", frequencies: Any = None,
) -> RangeChoice:
    """The range mechanism with the lowest mean variance over ``queries`` (module docstring).

    ``frequencies``: the bins' expected shares (None: uniform). ValueError naming ``bins`` when no
    candidate fits it (``bins`` must be a power of 2, 4, 8 or 16).

    Parameters
    ----------
    low, high : float
        The range of the values, ``low < high``.
    bins : int
        The number of equal-width bins, a power of 2, 4, 8 or 16.
    epsilon : float
        The privacy loss of one report, ``> 0``.
    queries : str or array_like, default "mixed"
        ``"short"``, ``"long"``, ``"prefix"``, ``"mixed"`` (module
        docstring) or explicit ``(a, b)`` range pairs.
    frequencies : array_like, optional
        The bins' expected shares; uniform if None.

    Returns
    -------
    RangeChoice
        The candidate with the lowest mean query variance, and every
        candidate's.

    Raises
    ------
    ValueError
        ``bins`` fits no candidate, or a bad ``queries`` or ``epsilon``.

    Notes
    -----
    A range query :math:`[a, b)` is answered from the fewest tree nodes (or
    Haar coefficients) that cover it; with :math:`h` levels each gets
    :math:`n / h` reports, and a node's frequency has variance
    :math:`V^* h / n`. The variance compared is :math:`n` times the mean of
    the queries' variances, which does not depend on :math:`n`.

    Examples
    --------
    >>> import deniable as dn
    >>> choice = dn.best_range_mechanism(0, 100, bins=16, epsilon=0.5, queries="long")
    >>> type(choice.mechanism).__name__, len(choice.variances)
    ('HaarHRR', 4)
    """
    candidates: dict[str, RangeMechanism] = {}
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool) and bins >= 2 and not bins & (bins - 1):
        candidates["HaarHRR"] = HaarHRR(low, high, bins=int(bins), epsilon=epsilon)
    for branching in (2, 4, 8, 16):
        try:
            m = HierarchicalHistogram(low, high, bins=bins, epsilon=epsilon, branching=branching)
        except ValueError as exc:
            if "power of branching" in str(exc):
                continue
            raise
        candidates[f"HierarchicalHistogram(B={branching}, {m.oracle.upper()})"] = m
    if not candidates:
        raise ValueError(f"bins must be a power of 2, 4, 8 or 16 for a range mechanism; got {bins!r}")
    pairs = workload(float(low), float(high), queries)
    variances = {
        name: float(np.mean(m.query_variance(_PLANNING_N, pairs, frequencies))) * _PLANNING_N
        for name, m in candidates.items()
    }
    best = min(variances, key=lambda k: variances[k])
    return RangeChoice(candidates[best], best, variances)
