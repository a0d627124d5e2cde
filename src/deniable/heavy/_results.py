"""The aggregate of heavy-hitter discovery (:class:`HeavyStat`) and its result (:class:`Discovery`)."""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._aggregates import Mergeable
from deniable._intervals import normal_interval
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level
from deniable.errors import AggregateError
from deniable.mechanisms._sketch import SketchCounts

PACKED = "deniable.packed-sketches/1"
"""The compact encoding of :meth:`HeavyStat.to_json` (see there)."""
_DTYPES: dict[str, np.dtype[Any]] = {"<i4": np.dtype("<i4"), "<i8": np.dtype("<i8")}

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

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, HeavyStat)
            and other.fingerprint == self.fingerprint
            and other.levels == self.levels
            and other.word == self.word
        )

    __hash__ = None  # type: ignore[assignment]

    def _merged(self, other: HeavyStat) -> HeavyStat:
        if len(other.levels) != len(self.levels) or (other.word is None) != (self.word is None):
            raise AggregateError("cannot merge discovery aggregates with different levels")
        word = None if self.word is None or other.word is None else self.word + other.word
        return HeavyStat(self.fingerprint, tuple(a + b for a, b in zip(self.levels, other.levels, strict=True)), word)

    def _sketches(self) -> list[SketchCounts]:
        return [*self.levels, *([self.word] if self.word is not None else [])]

    def _parts(self) -> list[NDArray[Any]]:
        return [part for sketch in self._sketches() for part in sketch._parts()]

    def _from_parts(self, parts: Sequence[NDArray[Any]]) -> HeavyStat:
        sketches = [s._from_parts(parts[2 * i : 2 * i + 2]) for i, s in enumerate(self._sketches())]
        word = sketches.pop() if self.word is not None else None
        return HeavyStat(self.fingerprint, tuple(sketches), word)

    def to_json(self) -> dict[str, Any]:
        """Compact JSON: the sketches' tables packed into one string, their row counts as lists.

        ``{"fingerprint", "encoding": PACKED, "sketch": the sketches' fingerprint,
        "shape": [sketches, rows, width], "dtype": "<i4" or "<i8",
        "row_counts": [[...] per sketch], "table": base64(zlib(tables))}``: the
        levels' sketches in order, then SFP's word sketch (``"word": true``),
        their tables as little-endian integers (32 bits when every count
        fits, else 64), C order. :meth:`from_json` also reads the older form,
        ``{"fingerprint", "levels": [sketch JSON, ...], "word": sketch JSON}``.
        """
        sketches = self._sketches()
        tables = np.stack([s.table for s in sketches])
        small = tables.size == 0 or int(np.abs(tables).max()) < 1 << 31
        dtype = "<i4" if small else "<i8"
        packed = zlib.compress(np.ascontiguousarray(tables, dtype=_DTYPES[dtype]).tobytes(), 1)
        return {
            "fingerprint": self.fingerprint, "encoding": PACKED, "sketch": self.levels[0].fingerprint,
            "shape": list(tables.shape), "dtype": dtype, "word": self.word is not None,
            "row_counts": [s.row_counts.tolist() for s in sketches],
            "table": base64.b64encode(packed).decode("ascii"),
        }

    @classmethod
    def from_json(cls, data: Any) -> HeavyStat:
        """Inverse of :meth:`to_json` (either form); AggregateError naming the field if ``data`` is malformed."""
        if isinstance(data, dict) and "encoding" in data:
            return cls._from_packed(data)
        allowed = {"fingerprint", "levels", "word"}
        if not isinstance(data, dict) or not {"fingerprint", "levels"} <= set(data) <= allowed:
            raise AggregateError(
                "a discovery aggregate must be a JSON object with fields 'fingerprint' and 'levels' (and SFP's 'word')"
            )
        if not isinstance(data["fingerprint"], str) or not isinstance(data["levels"], list) or not data["levels"]:
            raise AggregateError("discovery aggregate: 'fingerprint' must be a string and 'levels' a non-empty list")
        word = SketchCounts.from_json(data["word"]) if "word" in data else None
        return cls(data["fingerprint"], tuple(SketchCounts.from_json(s) for s in data["levels"]), word)

    @classmethod
    def _from_packed(cls, data: dict[str, Any]) -> HeavyStat:
        fields = {"fingerprint", "encoding", "sketch", "shape", "dtype", "word", "row_counts", "table"}
        if set(data) != fields:
            raise AggregateError(
                f"a packed discovery aggregate must have the fields {sorted(fields)}; got {sorted(data)}"
            )
        if data["encoding"] != PACKED:
            got = data["encoding"]
            raise AggregateError(f"discovery aggregate field 'encoding' must be {PACKED!r}; got {got!r:.60}")
        if not isinstance(data["fingerprint"], str) or not isinstance(data["sketch"], str):
            raise AggregateError("discovery aggregate fields 'fingerprint' and 'sketch' must be strings")
        shape, word = data["shape"], data["word"]
        if (not isinstance(shape, list) or len(shape) != 3
                or not all(type(d) is int and 1 <= d <= 1 << 20 for d in shape)
                or shape[0] * shape[1] * shape[2] > 1 << 26):
            raise AggregateError(
                f"discovery aggregate field 'shape' must be [sketches, rows, width]; got {shape!r:.60}"
            )
        if type(word) is not bool or shape[0] < 1 + word:
            raise AggregateError(f"discovery aggregate field 'word' must be true or false; got {word!r:.20}")
        if data["dtype"] not in _DTYPES:
            got = data["dtype"]
            raise AggregateError(f"discovery aggregate field 'dtype' must be one of {list(_DTYPES)}; got {got!r:.20}")
        rows = data["row_counts"]
        if (not isinstance(rows, list) or len(rows) != shape[0]
                or not all(isinstance(r, list) and len(r) == shape[1] and all(type(c) is int and c >= 0 for c in r)
                           for r in rows)):
            raise AggregateError(f"discovery aggregate field 'row_counts' must be {shape[0]} lists of {shape[1]} "
                                 "non-negative integers")
        dtype = _DTYPES[data["dtype"]]
        size = shape[0] * shape[1] * shape[2] * dtype.itemsize
        try:
            inflate = zlib.decompressobj()
            raw = inflate.decompress(base64.b64decode(data["table"], validate=True), size + 1)
        except (TypeError, ValueError, binascii.Error, zlib.error):
            raise AggregateError("discovery aggregate field 'table' must be base64 of zlib-compressed counts") from None
        if len(raw) != size or not inflate.eof:
            raise AggregateError(f"discovery aggregate field 'table' must hold {size} bytes ({shape}, {data['dtype']})")
        tables = np.frombuffer(raw, dtype=dtype).astype(np.int64).reshape(shape)
        counts = np.asarray(rows, dtype=np.int64)
        n = counts.sum(axis=1)
        if (np.abs(tables).max(axis=(1, 2)) > n).any():
            raise AggregateError("discovery aggregate field 'table' must hold integers in -n..n of each sketch")
        sketches = [SketchCounts(data["sketch"], tables[i], counts[i]) for i in range(shape[0])]
        return cls(data["fingerprint"], tuple(sketches[: shape[0] - word]), sketches[-1] if word else None)


@dataclass(frozen=True)
class Discovery(Result):
    r"""Discovered values, most frequent first, with estimated counts, standard errors and CIs.

    ``values`` are strings (``kind="text"``) or integers; ``truncated`` marks
    strings cut at ``max_length``; ``counts = f n`` for the estimated share
    ``f`` among the ``n`` devices; the CIs are normal at ``level``. The result
    shape of :mod:`deniable._results` (``confidence_interval`` at any level,
    ``to_dict``, ``to_frame``: by default at ``level``).

    Parameters
    ----------
    values : tuple
        The discovered values, most frequent first.
    truncated : numpy.ndarray of bool
        Which were cut at ``max_length``.
    counts : numpy.ndarray
        Their estimated counts, :math:`\hat f n`.
    std_errors : numpy.ndarray
        The counts' standard errors.
    ci_low, ci_high : numpy.ndarray
        The counts' normal intervals at ``level``.
    n : int
        The number of devices.
    level : float
        The intervals' confidence level.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> hh = dn.HeavyHitters(epsilon=4.0, method="pem", max_length=2, top_k=4, alphabet="abc", rows=16,
    ...                      seed=bytes(32))
    >>> values = rng.choice(["ab", "ba", "c"], size=4000, p=[0.5, 0.3, 0.2])
    >>> found = hh.estimate(hh.privatize_many(values, rng=rng))
    >>> type(found).__name__, found.n, found.level
    ('Discovery', 4000, 0.95)
    >>> bool(np.all(found.ci_low < found.counts)), found.truncated.tolist()
    (True, [False, False, False])
    """

    values: tuple[Any, ...]
    truncated: NDArray[np.bool_]
    counts: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    n: int
    level: float

    def confidence_interval(self, confidence_level: float = 0.95, method: str | None = None) -> ConfidenceInterval:
        """Normal intervals ``count ± z · std_error`` of the counts at ``confidence_level``."""
        level = check_level(confidence_level)
        self._method(method)
        low, high = normal_interval(self.counts, self.std_errors, 1 - level)
        return ConfidenceInterval(low, high)

    def _default_level(self) -> float:
        return self.level

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Per value: ``count``, ``std_error``, ``ci_low``, ``ci_high``, ``truncated``."""
        low, high = self.confidence_interval(confidence_level, method)
        columns = {"count": self.counts, "std_error": self.std_errors, "ci_low": low, "ci_high": high,
                   "truncated": self.truncated}
        return ResultTable({"n": self.n}, columns, "value", self.values, "values")

    def _caption(self) -> str:
        return f"{len(self.values)} discovered values, n = {self.n:,}"

    def __len__(self) -> int:
        return len(self.values)
