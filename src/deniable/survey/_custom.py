"""A survey design given by its transition matrix (RRreg's ``"custom"`` model).

``Custom(matrix)`` takes ``matrix[j][r] = P(answer r | true state j)``, the
orientation of every randomizer in deniable (:meth:`Design.transition_matrix
<deniable.survey.Design.transition_matrix>`): one row per true state
(``m >= 2``), one column per answer (``R >= 2``), each row summing to exactly
1. Entries are exact: fractions as text (``"1/6"``), decimals or floats (read
exactly). The prevalence of each state is estimated from the answers:

* moments: the answer shares ``lambda = P^T pi`` give ``pi = (P^T)^+ lambda``
  (the pseudo-inverse; the inverse when ``R = m``), with the delta-method
  covariance ``(P^T)^+ (diag(lambda) - lambda lambda^T) / (n - 1) (P^+)``;
* the multinomial maximum likelihood on the simplex when the moments fall
  outside it (as for forced response with m categories).

The parameters are ``pi`` (the share of state 1) for two states, else
``pi0 .. pi{m-1}``. The rows must be linearly independent (else the
answers cannot tell the states apart). Local DP:
``epsilon = max_r ln(max_j P[j, r] / min_j P[j, r])``, infinite where an
answer is impossible in one state and possible in another. On the device
each state's row is sampled exactly from the OS CSPRNG: one uniform integer
below the row's common denominator, compared with its cumulative numerators.

>>> d = Custom([["5/6", "1/6"], ["1/6", "5/6"]])   # Warner with p = 5/6
>>> round(d.epsilon, 4)
1.6094
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable.mechanisms._binary import BinaryRR
from deniable.survey._design_base import Design
from deniable.survey._designs import FittedDesign

__all__ = ["Custom"]


class Custom(FittedDesign):
    """A design given by its transition matrix ``[state, answer]`` (see the module docstring)."""

    model = "Custom"

    def __init__(self, matrix: Any) -> None:
        rows = _rows(matrix)
        self.rows: tuple[tuple[Fraction, ...], ...] = rows
        self.m = len(rows)
        self.p = tuple(v for row in rows for v in row)  # row by row (the wire form keeps the shape)
        floats = np.array([[float(v) for v in row] for row in rows])
        if np.linalg.matrix_rank(floats) < self.m:
            raise ValueError(
                f"matrix rows must be linearly independent for Custom (the answers must tell the {self.m} "
                f"states apart); got rank {np.linalg.matrix_rank(floats)}"
            )
        self._float = floats
        self._sampling = [privacy.integer_probabilities(list(row)) for row in rows]

    # ----------------------------------------------------------- the model
    @property
    def states(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("non-carrier", "carrier") if self.m == 2 else tuple(f"state {j}" for j in range(self.m))

    @property
    def responses(self) -> tuple[int, ...]:
        return tuple(range(len(self.rows[0])))

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("pi",) if self.m == 2 else tuple(f"pi{j}" for j in range(self.m))

    def _shares(self, params: dict[str, float]) -> NDArray[np.float64]:
        if self.m == 2:
            return np.array([1 - params["pi"], params["pi"]])
        return np.array([params[f"pi{j}"] for j in range(self.m)])

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        """``P(answer r) = sum_j pi_j P[j, r]``."""
        self._check_group(group)
        return np.asarray(self._shares(params) @ self._float, dtype=np.float64)

    def _state_params(self, state: int, extra: float | None) -> dict[str, float]:
        if self.m == 2:
            return {"pi": float(state == 1)}
        return {f"pi{j}": float(j == state) for j in range(self.m)}

    # ---------------------------------------------------------- the device
    @property
    def epsilon(self) -> float:
        worst = Fraction(1)
        for r in range(len(self.rows[0])):
            column = [row[r] for row in self.rows]
            if max(column) == 0:
                continue
            if min(column) == 0:
                return math.inf
            worst = max(worst, max(column) / min(column))
        return privacy.ln_up(worst)

    def channel(self, group: int = 1) -> BinaryRR:
        """Two states and two answers: the yes/no channel; any other shape has none."""
        self._check_group(group)
        if self.m != 2 or len(self.rows[0]) != 2:
            raise ValueError(f"Custom with {self.m} states and {len(self.rows[0])} answers is not a yes/no channel")
        return BinaryRR._from_channel(self.rows[1][1], self.rows[0][1])

    def _randomize(
        self, states: NDArray[Any], groups: NDArray[np.int64], source: randomness.Source, unrelated: Any
    ) -> NDArray[Any]:
        """Each state's row sampled exactly: a uniform integer below its denominator, against its
        cumulative numerators."""
        index = states.astype(np.int64)
        out = np.empty(index.size, dtype=np.int64)
        for j, (numerators, denominator) in enumerate(self._sampling):
            at = np.flatnonzero(index == j)
            u = randomness.uniform_below(denominator, at.size, source)
            out[at] = np.searchsorted(np.cumsum(numerators).astype(np.uint64), u, side="right")
        return out.astype(bool) if self.responses == (0, 1) else out

    # ------------------------------------------------------------ the wire
    def _params(self) -> dict[str, Any]:
        return {"model": self.model, "matrix": [[str(v) for v in row] for row in self.rows]}

    @classmethod
    def _build(cls, params: dict[str, Any]) -> Design:
        matrix = params["matrix"]
        if not isinstance(matrix, list) or not all(
            isinstance(row, list) and all(isinstance(v, str) for v in row) for row in matrix
        ):
            raise ValueError(
                f"config field 'params.matrix' must be rows of exact fractions as text; got {matrix!r:.60}"
            )
        return cls(matrix)

    def __repr__(self) -> str:
        eps = self.epsilon
        note = "" if math.isfinite(eps) else " -- an answer reveals the truth (no local-DP guarantee)"
        shape = f"{self.m} states x {len(self.rows[0])} answers"
        return f"Custom({shape}, epsilon={eps:.6g}{note})"


def _rows(matrix: Any) -> tuple[tuple[Fraction, ...], ...]:
    """The matrix as exact rows, checked: at least 2 x 2, rectangular, each row a distribution."""
    try:
        rows = [list(row) for row in matrix]
    except TypeError:
        raise TypeError(f"matrix must be rows of probabilities for Custom; got {matrix!r:.60}") from None
    if len(rows) < 2 or any(len(row) != len(rows[0]) for row in rows) or len(rows[0]) < 2:
        shape = [len(row) for row in rows]
        raise ValueError(f"matrix must have at least 2 rows (states) of the same length >= 2 (answers); "
                         f"got row lengths {shape}")
    exact = tuple(
        tuple(privacy.exact_probability(v, f"matrix[{j}][{r}]", "Custom") for r, v in enumerate(row))
        for j, row in enumerate(rows)
    )
    for j, row in enumerate(exact):
        if sum(row) != 1:
            raise ValueError(f"matrix row {j} must sum to exactly 1 for Custom (P(answer | state {j})); "
                             f"got {float(sum(row)):.17g}")
    return exact
