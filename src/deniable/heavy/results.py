"""The aggregate of heavy-hitter discovery (:class:`HeavyStat`) and its result (:class:`Discovery`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.aggregates import Mergeable
from deniable.errors import AggregateError
from deniable.mechanisms.sketch import SketchCounts

__all__ = ["HeavyStat", "Discovery"]


@dataclass(frozen=True, eq=False)
class HeavyStat(Mergeable):
    """Mergeable aggregate of :class:`~deniable.HeavyHitters`: one sketch per level (PEM's prefix
    lengths, SFP's fragment positions) and, for SFP, the sketch of the whole items (``word``)."""

    fingerprint: str
    levels: tuple[SketchCounts, ...]
    word: SketchCounts | None = None

    @property
    def n(self) -> int:
        """Devices: each sent one level report (and, for SFP, one word report)."""
        return sum(s.n for s in self.levels)

    def _merged(self, other: HeavyStat) -> HeavyStat:
        if len(other.levels) != len(self.levels) or (other.word is None) != (self.word is None):
            raise AggregateError("cannot merge discovery aggregates with different levels")
        word = None if self.word is None or other.word is None else self.word + other.word
        return HeavyStat(self.fingerprint, tuple(a + b for a, b in zip(self.levels, other.levels, strict=True)), word)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fingerprint": self.fingerprint, "levels": [s.to_json() for s in self.levels]}
        if self.word is not None:
            out["word"] = self.word.to_json()
        return out

    @classmethod
    def from_json(cls, data: Any) -> HeavyStat:
        """Inverse of :meth:`to_json`; AggregateError naming the field if ``data`` is malformed."""
        allowed = {"fingerprint", "levels", "word"}
        if not isinstance(data, dict) or not {"fingerprint", "levels"} <= set(data) <= allowed:
            raise AggregateError(
                "a discovery aggregate must be a JSON object with fields 'fingerprint' and 'levels' (and SFP's 'word')"
            )
        if not isinstance(data["fingerprint"], str) or not isinstance(data["levels"], list) or not data["levels"]:
            raise AggregateError("discovery aggregate: 'fingerprint' must be a string and 'levels' a non-empty list")
        word = SketchCounts.from_json(data["word"]) if "word" in data else None
        return cls(data["fingerprint"], tuple(SketchCounts.from_json(s) for s in data["levels"]), word)


@dataclass(frozen=True)
class Discovery:
    """Discovered values, most frequent first, with estimated counts, standard errors and CIs.

    ``values`` are strings (``kind="text"``) or integers; ``truncated`` marks
    strings cut at ``max_length``; ``counts = f n`` for the estimated share
    ``f`` among the ``n`` devices; the CIs are normal at ``level``.
    """

    values: tuple[Any, ...]
    truncated: NDArray[np.bool_]
    counts: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    n: int
    level: float

    def to_frame(self) -> Any:
        """A pandas DataFrame: ``value``, ``count``, ``std_error``, ``ci_low``, ``ci_high``, ``truncated``."""
        import pandas as pd

        return pd.DataFrame({
            "value": list(self.values), "count": self.counts, "std_error": self.std_errors,
            "ci_low": self.ci_low, "ci_high": self.ci_high, "truncated": self.truncated,
        })

    def __len__(self) -> int:
        return len(self.values)
