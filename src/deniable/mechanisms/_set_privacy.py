"""The exact privacy loss of padding and sampling (the amplification of Wang, Li & Jha, S&P 2018).

A :class:`~deniable.SetValued` report is the oracle's report of one entry drawn uniformly from the padded
set ``P(V)``: ``V`` and the dummies ``k .. k + ell - |V| - 1`` when ``|V| < ell``, ``V`` itself otherwise
(``b = max(|V|, ell)`` entries). Its law is ``P(y | V) = (1 / b) sum_{e in P(V)} P_oracle(y | e)``, and the
exact privacy loss of the whole report is ``max_y max_{V, V'} ln(P(y | V) / P(y | V'))`` over every pair of
sets of at most ``max_items`` items (the empty set included). It is at most the oracle's ``epsilon``
(a mixture of its rows) and, per oracle:

* **GRR** (``p`` for the true entry, ``q`` for each other): ``P(y | V) = q + (p - q) [y in P(V)] / b``, largest
  ``(p + (ell - 1) q) / ell`` (``y`` in a padded set of ``ell`` entries), smallest ``q`` (``y`` outside), both
  reached (``V = {x}``, ``V' = {x'}``, ``y = x``), so ``e^eps_set = 1 + (p / q - 1) / ell``: with ``p / q =
  e^eps``, ``eps_set = ln(1 + (e^eps - 1) / ell)``, the paper's amplification (it runs GRR at
  ``ln(ell (e^eps - 1) + 1)`` to report at ``eps``).
* **OUE** (bit ``e`` set with probability ``p`` for the entry, ``q`` otherwise): the likelihood is a
  common factor times the mean of ``R(y_e)`` over ``P(V)``, ``R(1) = p / q`` and ``R(0) = (1 - p) / (1 - q)``.
  A set of ``ell`` items and the empty set (all ``ell`` dummies) have disjoint padded sets, so the bits
  ``y = 1`` on the first and ``0`` on the second give the full ``R(1) / R(0) = e^eps``: **no amplification**
  (every vector of bits is seen, so two disjoint padded sets are told apart as well as two items).
* **OLH** (seed ``s``, bucket ``y``; ``a`` and ``b`` the weights of ``H_s(e) = y`` or not): the ratio is
  ``(b + (a - b) x) / (b + (a - b) x')`` with ``x``, ``x'`` the shares of two padded sets in the level set
  ``A = {e : H_s(e) = y}``. It is computed over the whole hash family: for each Toeplitz matrix (the offset
  only relabels the buckets) and bucket, the largest share of a padded set in ``A`` and the smallest;
  sets longer than ``ell`` never do better than those of ``ell`` items, so sizes ``0 .. ell`` suffice. The
  search stops once a level set reaches the oracle's ratio (``A`` holds a whole padded set and misses
  another); a search that would go through more than ``2**26`` (matrix, cell, level set) entries
  stops there and states the oracle's ``epsilon`` (never understated).

Every value is a ratio of the oracle's integer weights, rounded up by :func:`deniable._privacy.ln_up`.

**Spending a report's budget** (:func:`set_oracle`): a :class:`~deniable.SetValued` asked for ``epsilon``
runs its oracle at the largest budget whose report is still ``epsilon``-LDP:

* GRR at ``epsilon_o = ln(ell (e^epsilon - 1) + 1)`` (Wang et al.), computed to 60 digits and rounded
  down to a float; its weights satisfy ``a / b <= e^epsilon_o`` (:func:`deniable._privacy.exp_ratio`), so
  ``(a + (ell - 1) b) / (ell b) <= 1 + (e^epsilon_o - 1) / ell = e^epsilon``: the amplified epsilon is
  ``epsilon`` to the weights' rounding and never above it.
* OUE at ``epsilon`` (no amplification).
* OLH at ``epsilon`` where that report is not amplified (a level set holds a whole padded set and misses
  another: every domain but the smallest); otherwise the largest ``epsilon_o`` in
  ``[epsilon, ln(ell (e^epsilon - 1) + 1)]`` whose exact amplified epsilon is at most ``epsilon``, by
  bisection (:data:`_BISECTIONS` steps; each a search over a small family).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np

from deniable import _privacy as privacy
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms._hashing import LocalHashing
from deniable.mechanisms._kary import GRR
from deniable.mechanisms._unary import UnaryEncoding

__all__ = ["amplified_epsilon", "set_oracle", "grr_oracle_epsilon"]

_MAX_ENTRIES = 1 << 26  # the most (matrix, cell, level set) entries the OLH search goes through
_ENTRIES_PER_BLOCK = 1 << 21  # ... at a time
_BISECTIONS = 12  # OLH's oracle budget to within ln(ell) / 4096


def grr_oracle_epsilon(epsilon: float, ell: int) -> float:
    """``ln(ell (e^epsilon - 1) + 1)`` rounded down to a float: GRR's budget for an ``epsilon``-LDP report."""
    with localcontext() as ctx:
        ctx.prec = privacy._PREC
        exact = (ell * (Decimal(epsilon).exp() - 1) + 1).ln()
    value = float(exact)
    return math.nextafter(value, 0.0) if Decimal(value) > exact else value


def set_oracle(cls: Any, k: int, ell: int, epsilon: float) -> FrequencyOracle:
    """The oracle ``cls`` over ``k + ell`` cells at the largest budget whose padded-and-sampled report is
    ``epsilon``-LDP (module docstring)."""
    cells = k + ell
    if issubclass(cls, GRR):
        budget = grr_oracle_epsilon(epsilon, ell)
        try:
            return cls(cells, epsilon=budget)
        except ValueError as exc:
            raise ValueError(f"epsilon={epsilon} with ell={ell} runs GRR at ln(ell (e^epsilon - 1) + 1) = "
                             f"{budget:.6g}, which it cannot realise ({exc}); pass a smaller epsilon") from None
    oracle = cls(cells, epsilon=epsilon)
    if not issubclass(cls, LocalHashing) or amplified_epsilon(oracle, k, ell) >= oracle.epsilon:
        return oracle
    low, high = epsilon, grr_oracle_epsilon(epsilon, ell)
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        trial = cls(cells, epsilon=middle)
        if amplified_epsilon(trial, k, ell) <= epsilon:
            low, oracle = middle, trial
        else:
            high = middle
    return oracle


def amplified_epsilon(oracle: FrequencyOracle, k: int, ell: int) -> float:
    """The exact privacy loss of padding and sampling ``k`` items to ``ell`` with ``oracle`` over
    ``k + ell`` cells, rounded up (module docstring); at most ``oracle.epsilon``."""
    if isinstance(oracle, GRR):
        p, q = oracle._a, oracle._b  # weights over one denominator
        return privacy.ln_up(Fraction(p + (ell - 1) * q, ell * q))
    if isinstance(oracle, UnaryEncoding):
        return float(oracle.epsilon)
    if isinstance(oracle, LocalHashing):
        ratio = _hashing_ratio(oracle, k, ell)
        return float(oracle.epsilon) if ratio is None else privacy.ln_up(ratio)
    raise TypeError(f"no amplified epsilon for {type(oracle).__name__}")


def _hashing_ratio(oracle: LocalHashing, k: int, ell: int) -> Fraction | None:
    """The largest ratio of two padded sets' report probabilities over every hash; None past the budget.

    A level set is a bucket's cells, named by the bucket (``g`` of them) or, when there are fewer cells
    than buckets, by each of its cells (the same sets, some more than once; empty buckets give 1).
    """
    cells = k + ell
    groups = min(oracle.g, cells)
    matrices = 1 << (oracle.hash_bits + oracle.m - 1)
    a, b = oracle._a, oracle._b
    sizes = np.arange(ell + 1)  # |V| = 0 .. ell (module docstring)
    block = max(1, _ENTRIES_PER_BLOCK // (cells * groups + (ell + 1) * groups))
    best, done = Fraction(1), 0
    for start in range(0, matrices, block):
        if done > _MAX_ENTRIES:
            return None  # not searched to the end: the oracle's epsilon is stated
        seeds = np.arange(start, min(start + block, matrices), dtype=np.uint64)
        buckets = np.stack([oracle.hash(seeds, c) for c in range(cells)], axis=1)  # (matrices, cells)
        names = np.arange(oracle.g) if groups == oracle.g else buckets[:, None, :]
        hit = buckets[:, :, None] == names  # (matrices, cells, level sets)
        held = hit[:, :k].sum(axis=1)  # the items in each level set
        dummies = np.zeros((seeds.size, ell + 1, groups), dtype=np.int64)  # [., r, A]: dummies 0 .. r-1 in A
        dummies[:, 1:] = np.cumsum(hit[:, k:], axis=1)
        padding = dummies[:, ell - sizes]  # (matrices, sizes, level sets): the dummies of a |V| = s set in A
        most = np.minimum(sizes[None, :, None], held[:, None, :]) + padding
        least = np.maximum(sizes[None, :, None] - (k - held[:, None, :]), 0) + padding
        top, bottom = most.max(axis=1), least.min(axis=1)  # the shares' numerators over ell
        ratio = (b * ell + (a - b) * top) / (b * ell + (a - b) * bottom)
        close = np.flatnonzero(ratio.ravel() >= ratio.max() * (1 - 1e-12))
        for high, low in {(int(top.ravel()[i]), int(bottom.ravel()[i])) for i in close}:  # the exact largest
            best = max(best, Fraction(b * ell + (a - b) * high, b * ell + (a - b) * low))
        if best == Fraction(a, b):
            break
        done += seeds.size * cells * groups
    return best
