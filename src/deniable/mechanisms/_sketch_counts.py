"""The count-mean sketches' aggregate: the ``k_h x m`` sketch and the reports per row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._aggregates import Mergeable, _count, _fields, _fingerprint
from deniable.errors import AggregateError

__all__ = ["SketchCounts"]


@dataclass(frozen=True, eq=False)
class SketchCounts(Mergeable):
    """Mergeable sufficient statistic of a count-mean sketch.

    ``table`` is the ``k_h x m`` sketch (CMS: reports per row with each bit
    set; HCMS: sums of the reports' signs per row and Hadamard index) and
    ``row_counts`` the reports per row; ``n`` is their sum. ``a + b`` merges.
    """

    fingerprint: str
    table: NDArray[np.int64]
    row_counts: NDArray[np.int64]

    @property
    def n(self) -> int:
        return int(self.row_counts.sum())

    def _merged(self, other: SketchCounts) -> SketchCounts:
        if other.table.shape != self.table.shape:
            raise AggregateError(f"cannot merge sketches of shapes {self.table.shape} and {other.table.shape}")
        return SketchCounts(self.fingerprint, self.table + other.table, self.row_counts + other.row_counts)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SketchCounts)
            and other.fingerprint == self.fingerprint
            and np.array_equal(other.row_counts, self.row_counts)
            and np.array_equal(other.table, self.table)
        )

    __hash__ = None  # type: ignore[assignment]

    def _parts(self) -> tuple[NDArray[np.int64], ...]:
        return self.row_counts, self.table

    def _from_parts(self, parts: Sequence[NDArray[Any]]) -> SketchCounts:
        return SketchCounts(self.fingerprint, parts[1], parts[0])

    def to_json(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint, "n": self.n,
            "row_counts": self.row_counts.tolist(), "table": self.table.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SketchCounts:
        """Inverse of :meth:`to_json`; AggregateError naming the field if ``data`` is malformed."""
        _fields(data, ("fingerprint", "n", "row_counts", "table"))
        n = _count(data)
        rows, table = data["row_counts"], data["table"]
        if not isinstance(rows, list) or not rows or not all(type(c) is int and c >= 0 for c in rows):
            raise AggregateError("aggregate field 'row_counts' must be a non-empty list of non-negative integers")
        if sum(rows) != n:
            raise AggregateError(f"aggregate field 'row_counts' must add up to n={n}; got {sum(rows)}")
        if (
            not isinstance(table, list) or len(table) != len(rows)
            or not all(isinstance(r, list) and len(r) == len(table[0]) for r in table)
            or not all(type(c) is int and abs(c) <= n for r in table for c in r)
        ):
            raise AggregateError(
                f"aggregate field 'table' must be {len(rows)} equal lists of integers in -n..n (n={n})"
            )
        return cls(_fingerprint(data), np.asarray(table, dtype=np.int64), np.asarray(rows, dtype=np.int64))
