"""Walker's alias method over integer weights that sum to exactly ``2**64``.

The lattice noise of :class:`~deniable.Laplace` and :class:`~deniable.Gaussian`
is drawn from such a table, so ``P(z) = W[z] / 2**64`` holds exactly for the
integers ``W`` whose privacy loss is accounted.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._randomness import TWO64, Source

__all__ = ["AliasTable", "integer_weights"]


class AliasTable:
    """Walker/Vose alias table over integer weights summing to exactly ``2**64``.

    ``2**column_bits`` columns of height ``2**(64 - column_bits)``; a draw
    picks a column with ``column_bits`` uniform bits and keeps the column's
    own outcome when ``U < own * 2**column_bits`` (:func:`~deniable._randomness.below`), else takes
    its alias. Outcome ``j`` then has probability exactly
    ``weights[j] / 2**64``. Samples are returned as ``j - offset``.
    """

    def __init__(self, weights: list[int], column_bits: int, offset: int = 0) -> None:
        if not 1 <= column_bits <= 16:
            raise ValueError(f"column_bits must be in [1, 16]; got {column_bits}")
        n = 1 << column_bits
        if len(weights) > n:
            raise ValueError(f"{len(weights)} outcomes do not fit {n} columns")
        if sum(weights) != TWO64 or min(weights) < 0:
            raise ValueError("alias weights must be non-negative integers summing to 2**64")
        height = TWO64 >> column_bits
        mass = list(weights) + [0] * (n - len(weights))
        own = [height] * n
        alias = list(range(n))
        small = [j for j in range(n) if mass[j] < height]
        large = [j for j in range(n) if mass[j] >= height]
        while small and large:
            s, g = small.pop(), large.pop()
            own[s], alias[s] = mass[s], g
            mass[g] -= height - mass[s]
            (small if mass[g] < height else large).append(g)
        # what remains is exactly full (integer arithmetic: no leftovers)
        # a full column keeps its own outcome: threshold 0 with itself as alias
        self.thresholds = np.array(
            [o << column_bits if o < height else 0 for o in own], dtype=np.uint64
        )
        alias = [a if o < height else j for j, (o, a) in enumerate(zip(own, alias, strict=True))]
        # outcomes[2c] is column c's alias, outcomes[2c + 1] its own outcome
        self.outcomes = (np.array([alias, range(n)]).T.ravel() - offset).astype(np.int32)
        self.column_bits = column_bits
        self._mask = np.uint16(n - 1)

    def sample(self, n: int, source: Source, lazy: bool = True) -> NDArray[np.int32]:
        """``n`` outcomes ``j - offset`` with ``P(j) = weights[j] / 2**64``."""
        columns = randomness.uniform_words(n, np.uint16, source) & self._mask
        keep = randomness.below(self.thresholds[columns], source, lazy)
        index = columns.astype(np.int32)
        index <<= 1
        index += keep
        return self.outcomes[index]


def integer_weights(probs: NDArray[np.float64], centre: int) -> list[int]:
    """Integers ``floor(p * 2**64)`` adjusted at ``centre`` so they sum to exactly ``2**64``."""
    scaled = probs * 2.0**64
    weights = [int(w) for w in scaled.tolist()]
    weights[centre] += TWO64 - sum(weights)
    return weights
