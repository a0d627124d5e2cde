"""Mergeable sufficient statistics: what an aggregate of reports keeps.

* :class:`SupportCounts`, of a frequency oracle: ``n`` and the support counts
  ``C_v`` (how many reports support category ``v``);
* :class:`MeanStat`, of a numeric mechanism: ``n``, the sum and the sum of
  squares of the standardized reports (and per-cell counts where the
  mechanism reconstructs a distribution).

Both merge with ``+`` (``0`` is the identity, so ``sum()`` works), travel as
JSON (``to_json`` / ``from_json``, which rejects a malformed or inconsistent
object naming the field) and carry the ``fingerprint`` of the mechanism
configuration that made them, so that aggregates of different
configurations are never mixed.

Stored, an aggregate is bytes (:class:`Packed`: ``to_bytes`` /
``from_bytes``): a 16-byte header (:data:`BLOB_MAGIC`, the format version
and a digest of the fingerprint) and then the aggregate's arrays as
little-endian int64 (counts) and float64 (sums), in a fixed order. The
shapes come from an aggregate of the same configuration (e.g. the empty
one), so reading checks the header and the length once and returns numpy
views of the bytes, with no per-element check: it is for data this library
wrote, not for input (which takes ``from_json``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import AggregateError

__all__ = ["Packed", "Mergeable", "SupportCounts", "MeanStat", "BLOB_MAGIC", "BLOB_VERSION", "tallied_counts"]

BLOB_MAGIC = b"DNAG"
"""The first bytes of a stored aggregate (:meth:`Packed.to_bytes`)."""
BLOB_VERSION = 1
"""The layout version of :meth:`Packed.to_bytes`, its fifth byte."""
_DIGEST_BYTES = 11  # header: magic (4) + version (1) + fingerprint digest (11) = 16 bytes
_LAYOUT = {"i": np.dtype("<i8"), "u": np.dtype("<i8"), "f": np.dtype("<f8")}


@lru_cache(maxsize=4096)
def _header(fingerprint: str) -> bytes:
    digest = hashlib.blake2b(fingerprint.encode(), digest_size=_DIGEST_BYTES, person=b"deniable:agg").digest()
    return BLOB_MAGIC + bytes([BLOB_VERSION]) + digest


class Packed:
    """Aggregates stored as bytes: the header, then :meth:`_parts` as little-endian numbers.

    A subclass names its arrays (``_parts``: integer arrays are stored as
    int64, float arrays as float64) and rebuilds itself from arrays of the
    same shapes (``_from_parts``).
    """

    fingerprint: str

    def _parts(self) -> Sequence[NDArray[Any]]:
        raise NotImplementedError

    def _from_parts(self, parts: Sequence[NDArray[Any]]) -> Any:
        raise NotImplementedError

    def to_bytes(self) -> bytes:
        """The stored form: :func:`_header` of the fingerprint, then every part, C order."""
        parts = self._parts()
        return _header(self.fingerprint) + b"".join(
            np.ascontiguousarray(p, dtype=_LAYOUT[p.dtype.kind]).tobytes() for p in parts
        )

    def from_bytes(self, data: bytes) -> Any:
        """The aggregate stored as ``data`` (:meth:`to_bytes`), shaped like this one (of the same
        configuration, e.g. the empty aggregate); its arrays are read-only views of ``data``.

        AggregateError if the header is not this configuration's or the length is not its layout's.
        """
        like = self._parts()
        header = _header(self.fingerprint)
        size = len(header) + sum(p.size * 8 for p in like)
        if len(data) != size or data[: len(header)] != header:
            raise AggregateError(
                f"the stored aggregate is not one of {self.fingerprint!r:.80} "
                f"(need {size} bytes starting {header.hex()}; got {len(data)} bytes)"
            )
        parts, offset = [], len(header)
        for p in like:
            parts.append(np.frombuffer(data, _LAYOUT[p.dtype.kind], p.size, offset).reshape(p.shape))
            offset += p.size * 8
        return self._from_parts(parts)


class Mergeable(Packed):
    """Shared ``+`` of mergeable aggregates: 0 is the identity (so ``sum()`` works),
    and only aggregates of the same mechanism configuration (``fingerprint``) merge."""

    fingerprint: str

    def _merged(self, other: Any) -> Any:
        raise NotImplementedError

    def require(self, kind: type, fingerprint: str) -> None:
        """Refuse to estimate from an aggregate of another type or mechanism configuration."""
        if not isinstance(self, kind):
            raise TypeError(f"estimate_from needs a {kind.__name__} aggregate; got {type(self).__name__}")
        if self.fingerprint != fingerprint:
            raise AggregateError(
                f"aggregate was made by another mechanism configuration "
                f"({self.fingerprint}, this is {fingerprint})"
            )

    def __add__(self, other: object) -> Any:
        if isinstance(other, int) and other == 0:
            return self
        if type(other) is not type(self):
            return NotImplemented
        if other.fingerprint != self.fingerprint:
            raise AggregateError(
                "cannot merge aggregates of different mechanisms "
                f"({self.fingerprint} vs {other.fingerprint})"
            )
        return self._merged(other)

    __radd__ = __add__


def _fields(data: Any, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """Check that ``data`` is an object with the required fields and no others."""
    names = " and ".join(", ".join(repr(f) for f in required).rsplit(", ", 1))
    if not isinstance(data, dict) or any(f not in data for f in required):
        raise AggregateError(f"an aggregate must be a JSON object with fields {names}")
    unknown = sorted(set(data) - set(required) - set(optional))
    if unknown:
        raise AggregateError(f"aggregate field {unknown[0]!r} is not known (fields: {names})")


def _fingerprint(data: dict[str, Any]) -> str:
    fingerprint = data["fingerprint"]
    if not isinstance(fingerprint, str):
        raise AggregateError(f"aggregate field 'fingerprint' must be a string; got {fingerprint!r}")
    return fingerprint


def _count(data: dict[str, Any]) -> int:
    n = data["n"]
    if type(n) is not int or n < 0:
        raise AggregateError(f"aggregate field 'n' must be a non-negative integer; got {n!r}")
    return n


def _counts(value: Any, n: int, field: str = "counts") -> NDArray[np.int64]:
    if not isinstance(value, list) or not all(type(c) is int and 0 <= c <= n for c in value):
        raise AggregateError(f"aggregate field {field!r} must be a list of integers in 0..n={n}")
    return np.asarray(value, dtype=np.int64).reshape(len(value))


def tallied_counts(cells: NDArray[np.integer], codes: NDArray[np.integer], size: int) -> NDArray[np.int64]:
    """``np.bincount(cells[codes], minlength=size)`` without the rows' values: each row's cell is
    tallied (``t_j = #{i : codes_i = j}``) and ``counts[c] = sum of t_j over the cells j with
    cells_j = c`` (two cells may be the same value). Exact integers; one pass over ``codes``."""
    counts = np.zeros(size, dtype=np.int64)
    np.add.at(counts, cells, np.bincount(codes, minlength=cells.size))
    return counts


@dataclass(frozen=True, eq=False)
class SupportCounts(Mergeable):
    """Mergeable sufficient statistic of a frequency oracle: support counts and n.

    ``a + b`` merges two partial aggregates of the same mechanism (associative,
    commutative; ``mechanism.aggregate([])`` is the identity). ``fingerprint``
    identifies the mechanism configuration so that aggregates of different
    mechanisms are never mixed.

    Parameters
    ----------
    fingerprint : str
        The fingerprint of the mechanism configuration that made it.
    counts : numpy.ndarray of int64
        ``counts[v]``: how many reports support category ``v``.
    n : int
        The number of reports.

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> stat = m.aggregate(["a", "b", "a"]) + m.aggregate(["c"])
    >>> stat.counts.tolist(), stat.n
    ([2, 1, 1], 4)
    """

    fingerprint: str
    counts: NDArray[np.int64]
    n: int

    def _merged(self, other: SupportCounts) -> SupportCounts:
        return SupportCounts(self.fingerprint, self.counts + other.counts, self.n + other.n)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SupportCounts)
            and other.fingerprint == self.fingerprint
            and other.n == self.n
            and np.array_equal(other.counts, self.counts)
        )

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "n": self.n, "counts": self.counts.tolist()}

    def _parts(self) -> tuple[NDArray[np.int64], ...]:
        return np.array([self.n], dtype=np.int64), self.counts

    def _from_parts(self, parts: Sequence[NDArray[Any]]) -> SupportCounts:
        return SupportCounts(self.fingerprint, parts[1], int(parts[0][0]))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SupportCounts:
        """Inverse of :meth:`to_json`; AggregateError naming the field if ``data`` is malformed."""
        _fields(data, ("fingerprint", "n", "counts"))
        n = _count(data)
        return cls(_fingerprint(data), _counts(data["counts"], n), n)


@dataclass(frozen=True, eq=False)
class MeanStat(Mergeable):
    r"""Mergeable sufficient statistic of numeric reports.

    ``total`` and ``total_sq`` are the sum and sum of squares of the
    *standardized* reports ``(y - mid) / half`` (``mid``, ``half`` the centre
    and half-width of the declared range), which keeps the sums well
    conditioned for any range. ``cell_counts`` holds how many reports fell in
    each output cell, for mechanisms that reconstruct a distribution
    (SquareWave), else None.
    ``a + b`` merges (commutative; associative up to float rounding of the
    sums); ``mechanism.aggregate([])`` is the identity.

    Parameters
    ----------
    fingerprint : str
        The fingerprint of the mechanism configuration that made it.
    n : int
        The number of reports.
    total : float
        :math:`\sum_i (y_i - m) / h`, with :math:`m` and :math:`h` the centre
        and half-width of the declared range.
    total_sq : float
        :math:`\sum_i ((y_i - m) / h)^2`.
    cell_counts : numpy.ndarray of int64, optional
        Reports per output cell (SquareWave); None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.Laplace(0, 10, epsilon=1.0)
    >>> stat = m.aggregate(m.privatize_many([1, 2, 3], rng=np.random.default_rng(0)))
    >>> merged = stat + m.aggregate([])
    >>> merged.n, merged.total == stat.total
    (3, True)
    """

    fingerprint: str
    n: int
    total: float
    total_sq: float
    cell_counts: NDArray[np.int64] | None = None

    def _merged(self, other: MeanStat) -> MeanStat:
        a, b = self.cell_counts, other.cell_counts
        counts = None if a is None or b is None else a + b
        return MeanStat(
            self.fingerprint, self.n + other.n, self.total + other.total,
            self.total_sq + other.total_sq, counts,
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MeanStat)
            and (self.fingerprint, self.n, self.total, self.total_sq)
            == (other.fingerprint, other.n, other.total, other.total_sq)
            and (self.cell_counts is None) == (other.cell_counts is None)
            and (
                self.cell_counts is None
                or (other.cell_counts is not None and np.array_equal(self.cell_counts, other.cell_counts))
            )
        )

    __hash__ = None  # type: ignore[assignment]

    def _parts(self) -> tuple[NDArray[Any], ...]:
        head = (np.array([self.n], dtype=np.int64), np.array([self.total, self.total_sq], dtype=np.float64))
        return head if self.cell_counts is None else (*head, self.cell_counts)

    def _from_parts(self, parts: Sequence[NDArray[Any]]) -> MeanStat:
        total, total_sq = parts[1].tolist()
        return MeanStat(self.fingerprint, int(parts[0][0]), total, total_sq, parts[2] if len(parts) > 2 else None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fingerprint": self.fingerprint, "n": self.n,
            "total": self.total, "total_sq": self.total_sq,
        }
        if self.cell_counts is not None:
            out["cell_counts"] = self.cell_counts.tolist()
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MeanStat:
        """Inverse of :meth:`to_json`; AggregateError naming the field if ``data`` is malformed.

        The sums must be finite numbers with ``total_sq >= 0`` and, by
        Cauchy-Schwarz, ``total^2 <= n total_sq`` (up to rounding); ``cell_counts``,
        where present, are integers in ``0..n`` adding up to ``n``.
        """
        _fields(data, ("fingerprint", "n", "total", "total_sq"), ("cell_counts",))
        n = _count(data)
        sums = []
        for name in ("total", "total_sq"):
            value = data[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise AggregateError(f"aggregate field {name!r} must be a finite number; got {value!r}")
            sums.append(float(value))
        total, total_sq = sums
        if total_sq < 0 or total * total > n * total_sq * (1 + 1e-9) + 1e-9:
            raise AggregateError(
                f"aggregate fields 'total'={total!r} and 'total_sq'={total_sq!r} are inconsistent "
                f"with n={n} reports (need total_sq >= 0 and total^2 <= n * total_sq)"
            )
        counts = None
        if data.get("cell_counts") is not None:
            counts = _counts(data["cell_counts"], n, "cell_counts")
            if int(counts.sum()) != n:
                raise AggregateError(
                    f"aggregate field 'cell_counts' must add up to n={n}; got {int(counts.sum())}"
                )
        return cls(_fingerprint(data), n, total, total_sq, counts)
