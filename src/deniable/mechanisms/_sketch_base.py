"""What CMS and HCMS share: the hashing of values into rows, the configuration, and the estimator.

:class:`Sketch` is the base of :class:`~deniable.mechanisms._sketch.CountMeanSketch`
and :class:`~deniable.mechanisms._sketch.HadamardCountMeanSketch` (the
mechanisms and their channels: :mod:`deniable.mechanisms._sketch`; the hash
family: :mod:`deniable.mechanisms._sketch_hashing`).

**Estimator** (both). A report of a device holding ``d`` supports ``d`` with
``p* = p``; one holding ``x != d`` with ``q_0`` (``1 - p`` for CMS, ``1/2``
for HCMS) unless ``h_j(x) = h_j(d)``, when with ``p``. Over the random
seed, ``q* = q_0 + (p - q_0) / m``, and with ``C_d`` the support count of
``n`` reports ``f_d = (C_d / n - q*) / (p* - q*)`` is unbiased (Apple's
``m / (m - 1)`` debias). Its variance over the devices' randomness and the
seed, for a fixed population with ``N_x`` devices holding ``x``, is

    Var f_d = pure_variance(n, p*, q*, f_d)
              + sum_{x != d} N_x (N_x - 1) / n**2 / (k_h (m - 1))

the frequency-oracle formula plus a hash-collision term, which vanishes
when every other device holds its own value and is largest when a few
values dominate (derivation: the law of total variance over the seed; with
``kappa_x`` the share of rows where ``x`` collides with ``d``,
``Var kappa_x = (m - 1) / (k_h m**2)`` and the ``kappa_x`` are
uncorrelated). For a fixed seed the estimate carries that collision bias;
it is unbiased over the seed, as in Apple's analysis.

Standard errors plug in ``clip(f_d, 0, 1)`` and an unbiased estimate of the
population's collision rate ``pi = sum_x N_x (N_x - 1) / (n (n - 1))`` from
the sketch itself: in row ``j`` (``n_j`` reports) the ordered pairs of
devices whose values share a bucket number ``Q_j`` with
``E Q_j = n_j (n_j - 1) (pi + (1 - pi) / m)``, and

* CMS: ``Q_j = [sum_b (S[j,b] - n_j q_0)**2 - n_j p(1-p) - (m-1) n_j q_0(1-q_0)] / (p - q_0)**2 - n_j``
* HCMS: ``Q_j = m (sum_l W[j,l]**2 - n_j) / (2p - 1)**2``

are unbiased; the collision term uses ``pi (n-1)/n - f_d**2``.
"""

from __future__ import annotations

import secrets
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable import _accelerate as accelerate
from deniable import _randomness as randomness
from deniable._aggregates import Mergeable
from deniable._estimate import Estimate, Target, check_target, pure_variance
from deniable._randomness import Source
from deniable.errors import AggregateError
from deniable.mechanisms._contract import Mechanism
from deniable.mechanisms._sketch_counts import SketchCounts
from deniable.mechanisms._sketch_hashing import (
    HASH_FAMILY,
    SEED_BYTES,
    JoinedKeys,
    keyed_digests,
    row_masks,
    text_bytes,
)
from deniable.mechanisms._walsh import parity
from deniable.wire import _codecs as codecs

__all__ = ["Sketch", "HashedKeys"]

_CATEGORY_CHUNK = 8192  # values per block when hashing against every row
_MATRIX_ENTRIES = 1 << 23  # estimates from a kept bucket matrix up to so many (row, key) pairs (16 MiB)
_PAIR_CELLS = 1 << 21  # (row, key) cells of ours per block when numpy lists the keys that share a bucket


@dataclass(frozen=True, eq=False)
class HashedKeys:
    """Byte-string keys hashed once by one sketch (:meth:`Sketch.hashed`): what
    :meth:`Sketch.estimate_keys` and :meth:`Sketch.without_collisions` take in
    place of the keys, so that a key is fingerprinted once and bucketed once."""

    keys: list[bytes]
    fingerprints: NDArray[np.uint64]
    sketch: Sketch
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def buckets(self) -> NDArray[Any]:
        """``B[j, i] = h_j(keys[i])`` for every row ``j`` (:meth:`Sketch.bucket_matrix`, computed once)."""
        if "buckets" not in self._cache:
            self._cache["buckets"] = self.sketch.bucket_matrix(self.fingerprints)
        return self._cache["buckets"]


_LAST_RATE: tuple[weakref.ref[SketchCounts], str, float] | None = None  # Sketch.collision_rate's last answer


def _shared_rows(ours: NDArray[Any], theirs: NDArray[Any], width: int) -> NDArray[np.int32]:
    """``C[i, k]``: the rows ``j`` with ``ours[j, i] == theirs[j, k]`` (bucket matrices of two key sets).

    Only the pairs that share a bucket are visited (about ``k_h |ours| |theirs| / m``): numpy lists,
    row by row, the ``theirs`` keys of each bucket (sorted cells ``j m + b``) and expands the matches.
    """
    rows, count, others = ours.shape[0], ours.shape[1], theirs.shape[1]
    out = np.zeros((count, others), dtype=np.int32)  # at most k_h <= 65536
    kernels = accelerate.sketch_kernels(ours.size)
    if kernels is not None:
        kernels.collision_counts(np.ascontiguousarray(ours), np.ascontiguousarray(theirs), width, out)
        return out
    offset = np.arange(rows, dtype=np.int64)[:, None] * width
    cells = (offset + theirs).ravel()
    order = np.argsort(cells, kind="stable")
    per_cell = np.bincount(cells, minlength=rows * width)
    first = np.cumsum(per_cell) - per_cell
    block = max(1, _PAIR_CELLS // max(rows, 1))
    for start in range(0, count, block):
        mine = (offset + ours[:, start : start + block]).ravel()
        hits = per_cell[mine]
        where = np.flatnonzero(hits)
        reps = hits[where]
        within = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        k = order[np.repeat(first[mine[where]], reps) + within] % others
        size = mine.size // rows
        i = np.repeat(where % size, reps)
        out[start : start + size] = np.bincount(i * others + k, minlength=size * others).reshape(size, others)
    return out


class Sketch(Mechanism):
    """Shared hashing, configuration and estimator of CMS and HCMS (see the module docstring)."""

    report_kind = "structured"
    stat_type: ClassVar[type[SketchCounts]] = SketchCounts
    report_fields: ClassVar[tuple[str, ...]]
    hex_fields: ClassVar[tuple[str, ...]] = ()  # report fields of packed bits, hex on the wire
    dtype: np.dtype[Any]

    rows: int
    width: int
    seed: bytes
    categories: tuple[str, ...]

    def _setup_hash(self, categories: Any, rows: Any, width: Any, seed: Any) -> None:
        owner = self.name
        if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= 1 << 16:
            raise ValueError(f"{owner}: rows must be an integer in 1..65536; got {rows!r}")
        if isinstance(width, bool) or not isinstance(width, int) or width < 8 or width > 1 << 20 or width & (width - 1):
            raise ValueError(f"{owner}: width must be a power of two in 8..2**20; got {width!r}")
        if seed is None:
            seed = secrets.token_bytes(SEED_BYTES)
        elif isinstance(seed, str):
            try:
                seed = bytes.fromhex(seed)
            except ValueError:
                raise ValueError(f"{owner}: seed must be {SEED_BYTES} bytes or their hex; got {seed!r:.80}") from None
        if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
            raise ValueError(f"{owner}: seed must be {SEED_BYTES} bytes or their hex; got {seed!r:.80}")
        listed = [] if categories is None else categories
        data, inverse = text_bytes(listed, "categories")
        if len(data) != inverse.size:
            raise ValueError(f"{owner}: categories must be distinct strings")
        self.rows, self.width, self.seed = rows, width, seed
        self.bits = width.bit_length() - 1
        self.categories = tuple(d.decode("utf-8") for d in data)
        self._masks = row_masks(seed, rows, self.bits)

    # ------------------------------------------------------------------ hash
    def fingerprints(self, data: Sequence[bytes] | JoinedKeys) -> NDArray[np.uint64]:
        """``phi(x)`` of UTF-8 byte strings (keyed BLAKE2b, 64 bits; :func:`keyed_digests`)."""
        return keyed_digests(data, self.seed, b"deniable:value", 8)

    @cached_property
    def _lut(self) -> NDArray[Any]:
        """``lut[j, k, v] = h_j(v << 8k)``: row ``j``'s hash of the fingerprint byte ``k`` holding ``v``.

        ``h_j`` is linear over GF(2), so ``h_j(phi)`` is the XOR of
        ``lut[j, k, (phi >> 8k) & 0xFF]`` over the 8 bytes: a lookup per byte
        instead of a parity per bucket bit (4 KiB per row, 8 KiB for
        ``m > 2**16``; built on first use).
        """
        dtype = np.uint16 if self.bits <= 16 else np.uint32
        values = np.arange(256, dtype=np.uint64)
        shifts = (8 * np.arange(8, dtype=np.uint64))[None, :, None]
        wide = np.zeros((self.rows, 8, 256), dtype=np.uint32)
        for i in range(self.bits):
            masks = (self._masks[:, i, None, None] >> shifts) & np.uint64(0xFF)  # (rows, 8, 1)
            wide |= parity(masks & values).astype(np.uint32) << np.uint32(i)
        lut = wide.astype(dtype)
        lut.flags.writeable = False
        return lut

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the lookup tables (rebuilt on first use where it is unpickled)."""
        state = self.__dict__.copy()
        state.pop("_lut", None)
        return state

    def buckets(self, rows: NDArray[Any], fingerprints: NDArray[np.uint64]) -> NDArray[np.int64]:
        """``h_j(x)`` for (broadcast) arrays of rows ``j`` and fingerprints ``phi(x)``."""
        rows = np.asarray(rows, dtype=np.int64)
        flat = self._lut.reshape(-1)
        base = rows * (8 * 256)
        out = np.zeros(np.broadcast_shapes(rows.shape, fingerprints.shape), dtype=np.int64)
        for k in range(8):
            byte = ((fingerprints >> np.uint64(8 * k)) & np.uint64(0xFF)).astype(np.int64)
            out ^= flat[base + (256 * k + byte)]
        return out

    def bucket_matrix(self, fingerprints: NDArray[np.uint64]) -> NDArray[Any]:
        """``B[j, i] = h_j(x_i)`` for every row ``j`` (``uint16``, or ``uint32`` for ``m > 2**16``)."""
        fps = np.ascontiguousarray(fingerprints, dtype=np.uint64)
        out = np.empty((self.rows, fps.size), dtype=self._lut.dtype)
        kernels = accelerate.sketch_kernels(out.size)
        if kernels is not None:
            kernels.bucket_matrix(self._lut, fps, out)
            return out
        rows = np.arange(self.rows)[:, None]
        for start in range(0, fps.size, _CATEGORY_CHUNK):
            stop = start + _CATEGORY_CHUNK
            out[:, start:stop] = self.buckets(rows, fps[None, start:stop])
        return out

    def _summed(self, table: NDArray[np.int64], keys: HashedKeys) -> NDArray[np.int64]:
        """``sum_j table[j, h_j(x_i)]`` for each key: from the keys' bucket matrix (computed once, and
        kept for :meth:`without_collisions`) up to ``_MATRIX_ENTRIES`` entries, else hashing as it goes."""
        table = np.ascontiguousarray(table, dtype=np.int64)
        count = len(keys)
        out = np.empty(count, dtype=np.int64)
        kernels = accelerate.sketch_kernels(self.rows * count)
        if self.rows * count <= _MATRIX_ENTRIES:
            if kernels is not None:
                kernels.matrix_sums(table, keys.buckets, out)
            else:
                np.take_along_axis(table, keys.buckets.astype(np.intp), axis=1).sum(axis=0, out=out)
            return out
        fps = keys.fingerprints
        if kernels is not None:
            kernels.support_sums(self._lut, table, fps, out)
            return out
        rows = np.arange(self.rows)[:, None]
        for start in range(0, count, _CATEGORY_CHUNK):
            block = fps[start : start + _CATEGORY_CHUNK]
            out[start : start + block.size] = table[rows, self.buckets(rows, block[None, :])].sum(axis=0)
        return out

    def hashed(self, keys: Sequence[bytes] | HashedKeys) -> HashedKeys:
        """``keys`` with their fingerprints (and, once asked, their buckets), to estimate them more than once."""
        if isinstance(keys, HashedKeys):
            return keys
        keys = list(keys)
        return HashedKeys(keys, self.fingerprints(keys), self)

    def hash(self, row: int, value: str) -> int:
        """``h_row(value)``: the bucket of one string in one row."""
        data, _ = text_bytes([value], "value")
        return int(self.buckets(np.array([row]), self.fingerprints(data))[0])

    # ------------------------------------------------------------- identity
    @property
    def domain(self) -> tuple[str, ...]:
        """The listed strings :meth:`estimate_from` estimates (others: :meth:`estimate_values`)."""
        return self.categories

    def _domain_json(self) -> Any:
        return list(self.categories)

    def _hash_params(self) -> dict[str, Any]:
        return {"hash": HASH_FAMILY, "rows": self.rows, "width": self.width, "seed": self.seed.hex()}

    @staticmethod
    def _hash_args(params: dict[str, Any]) -> dict[str, Any]:
        if params["hash"] != HASH_FAMILY:
            raise ValueError(f"params: hash must be {HASH_FAMILY!r}; got {params['hash']!r}")
        return {"rows": params["rows"], "width": params["width"], "seed": params["seed"]}

    # ------------------------------------------------------------ privatize
    def privatize(self, value: Any, rng: randomness.RNGLike = None) -> Any:
        """Randomize one respondent's string (secure randomness unless ``rng`` is given)."""
        if not isinstance(value, (str, bytes)):
            raise TypeError(f"value must be a string (str, or UTF-8 bytes); got {type(value).__name__} {value!r:.60}")
        return self.privatize_many([value], rng)[0]

    def privatize_many(self, values: Any, rng: randomness.RNGLike = None) -> NDArray[Any]:
        """One report per string; ``rng=None`` uses the OS CSPRNG (a seed is for simulation only)."""
        data, inverse = text_bytes(values)
        return self.privatize_keys(data, inverse, rng)

    def privatize_keys(
        self, keys: Sequence[bytes] | JoinedKeys, inverse: NDArray[np.int64], rng: randomness.RNGLike = None
    ) -> NDArray[Any]:
        """One report per entry of ``inverse``, of the byte string ``keys[inverse[i]]`` (hashed as is)."""
        source = randomness.resolve(rng)
        rows = randomness.uniform_below(self.rows, inverse.size, source).astype(np.int64)
        buckets = self.buckets(rows, self.fingerprints(keys)[inverse])
        return self._sample(rows, buckets, source)

    def _sample(self, rows: NDArray[np.int64], buckets: NDArray[np.int64], source: Source) -> NDArray[Any]:
        raise NotImplementedError

    # ------------------------------------------------------------ aggregate
    def _aggregate_checked(self, checked: NDArray[Any]) -> SketchCounts:
        return self._grouped(checked, np.zeros(checked.size, dtype=np.int64), 1)[0]

    def aggregate_groups(self, reports: Any, groups: Any, count: int) -> list[SketchCounts]:
        """The aggregate of each group ``0 .. count - 1`` of the reports (``groups[i]``: report ``i``'s),
        as :meth:`aggregate` of each group's reports apart gives it, in one pass over the reports."""
        checked = self._checked(reports)
        groups = np.asarray(groups)
        if (
            groups.shape != (checked.size,) or groups.dtype.kind not in "iu"
            or (groups.size and (int(groups.min()) < 0 or int(groups.max()) >= count))
        ):
            raise ValueError(f"groups must hold one integer in 0..{count - 1} per report")
        return self._grouped(checked, groups.astype(np.int64), count)

    def _grouped(self, checked: NDArray[Any], groups: NDArray[np.int64], count: int) -> list[SketchCounts]:
        cells = groups * self.rows + checked["row"].astype(np.int64)  # (group, row) pairs
        tables = self._tables(checked, cells, count * self.rows).reshape(count, self.rows, self.width)
        per_row = np.bincount(cells, minlength=count * self.rows).astype(np.int64).reshape(count, self.rows)
        return [SketchCounts(self.fingerprint, tables[g], per_row[g]) for g in range(count)]

    def _tables(self, checked: NDArray[Any], cells: NDArray[np.int64], size: int) -> NDArray[np.int64]:
        """The ``size x m`` sketch rows of the reports, report ``i`` adding to row ``cells[i]``."""
        raise NotImplementedError

    # -------------------------------------------------------------- reports
    def _report_to_json(self, report: Any) -> dict[str, Any]:
        return codecs.fields_to_json(report, self.report_fields, self.hex_fields)

    def _reports_from_json(self, items: list[Any]) -> NDArray[Any]:
        codecs.check_fields(items, self.report_fields, self.name)
        return self._validate(items)

    def _structured(self, reports: Any, dtype: np.dtype[Any]) -> NDArray[Any]:
        """Reports as a structured array of ``dtype`` (from one, or from dicts / tuples)."""
        fields = dtype.names or ()
        if isinstance(reports, np.ndarray) and reports.dtype.names:
            if set(reports.dtype.names) != set(fields) or reports.ndim != 1:
                raise ValueError(
                    f"{self.name} reports need the fields {list(fields)} in a 1-D array; "
                    f"got {reports.dtype} with shape {reports.shape}"
                )
            return reports.astype(dtype, copy=False)
        items = list(reports)
        out = np.empty(len(items), dtype=dtype)
        for i, item in enumerate(items):
            if isinstance(item, dict):
                item = tuple(item.get(f) for f in fields)
            if not isinstance(item, (tuple, list, np.void)) or len(item) != len(fields):  # type: ignore[arg-type]
                raise ValueError(f"{self.name} report {i} must have the fields {list(fields)}; got {item!r:.60}")
            out[i] = tuple(self._field(i, f, v) for f, v in zip(fields, item, strict=True))  # type: ignore[arg-type]
        return out

    def _field(self, i: int, name: str, value: Any) -> Any:
        if isinstance(value, np.integer):
            value = int(value)
        if type(value) is not int or value < 0 or value >= 1 << 32:
            raise ValueError(f"{self.name} report {i}: {name} must be a non-negative integer; got {value!r:.60}")
        return value

    def _check_range(self, arr: NDArray[Any], name: str, bound: int) -> None:
        if arr.size and int(arr[name].max()) >= bound:
            row = int(np.flatnonzero(arr[name] >= bound)[0])
            raise ValueError(f"{self.name} report {row}: {name} must be in 0..{bound - 1}; got {int(arr[name][row])}")

    # ------------------------------------------------------------- estimate
    def _probabilities(self) -> tuple[float, float]:
        """``(p, q_0)``: support probability for the device's own value, and for another without collision."""
        raise NotImplementedError

    def _lookup_table(self, stat: SketchCounts) -> NDArray[np.int64]:
        """The ``k_h x m`` table whose entries at a value's buckets add up to its (signed) support."""
        return stat.table

    def _support_counts(self, stat: SketchCounts, summed: NDArray[np.int64]) -> NDArray[np.int64]:
        """Support counts from the sums of :meth:`_lookup_table` over the rows."""
        return summed

    def _row_pairs(self, stat: SketchCounts) -> NDArray[np.float64]:
        """Unbiased estimates of each row's ordered pairs of reports whose values share a bucket."""
        raise NotImplementedError

    def support_rates(self) -> tuple[float, float]:
        """``(p*, q*)`` with ``q* = q_0 + (p - q_0) / m`` (over the random seed)."""
        p, q0 = self._probabilities()
        return p, q0 + (p - q0) / self.width

    def manipulation(self) -> Any:
        """How far fake reports can move the listed strings' estimates (:class:`deniable.Manipulation`):
        the frequency oracles' figures with this estimator's ``p*`` and ``q*``."""
        from deniable._manipulation import manipulation

        return manipulation(self)

    def collision_rate(self, stat: SketchCounts) -> float:
        """Unbiased estimate of ``pi``, the chance that two distinct devices hold the same value.

        Kept for the last aggregate asked about (aggregates are not changed in place), which
        :meth:`estimate_keys` and every round of :meth:`without_collisions` ask again.
        """
        global _LAST_RATE
        last = _LAST_RATE
        if last is not None and last[0]() is stat and last[1] == self.fingerprint:
            return last[2]
        rate = self._collision_rate(stat)
        _LAST_RATE = (weakref.ref(stat), self.fingerprint, rate)
        return rate

    def _collision_rate(self, stat: SketchCounts) -> float:
        n_j = stat.row_counts.astype(float)
        pairs = float((n_j * (n_j - 1)).sum())
        if pairs == 0:
            return 0.0
        m = self.width
        return (float(self._row_pairs(stat).sum()) / pairs - 1 / m) / (1 - 1 / m)

    def variance(
        self, n: int, frequencies: Any = 0.0, collisions: Any = 0.0, target: Target = "population"
    ) -> NDArray[np.float64]:
        """Variance of ``f_d`` from ``n`` devices, over devices and seed, for the inference ``target``.

        ``pure_variance(n, p*, q*, f_d, target) + collisions / (k_h (m - 1))``
        (the pure oracle's variance for the fixed devices, ``"respondents"``, or
        for devices sampled from a population, which adds ``f_d (1 - f_d) / n``), with
        ``collisions = sum_{x != d} N_x (N_x - 1) / n**2`` (0 when every other
        device holds a value of its own; at most ``(1 - f_d)**2``).
        """
        if n <= 0:
            raise ValueError(f"n must be positive; got {n}")
        p, q = self.support_rates()
        f = np.asarray(frequencies, dtype=float)
        extra = np.asarray(collisions, dtype=float) / (self.rows * (self.width - 1))
        return np.asarray(pure_variance(n, p, q, f, target) + extra, dtype=float)

    def _check_stat(self, stat: Any) -> SketchCounts:
        if not isinstance(stat, Mergeable):
            raise TypeError(f"estimate_from needs a SketchCounts aggregate; got {type(stat).__name__}")
        stat.require(SketchCounts, self.fingerprint)
        assert isinstance(stat, SketchCounts)
        if stat.table.shape != (self.rows, self.width):
            raise AggregateError(
                f"aggregate table has shape {stat.table.shape}; {self.name} needs {(self.rows, self.width)}"
            )
        return stat

    def estimate_from(self, stat: Any, target: Target = "population") -> Estimate:
        """Unbiased frequencies of the listed categories (:attr:`domain`) from a (merged) sketch."""
        return self.estimate_values(stat, self.categories, target)

    def estimate_values(self, stat: Any, values: Any, target: Target = "population") -> Estimate:
        """Unbiased frequencies of any strings from a (merged) sketch, aligned with ``values``."""
        data, inverse = text_bytes(values)
        texts = [d.decode("utf-8") for d in data]
        return self.estimate_keys(stat, data, inverse, tuple(texts[i] for i in inverse), target)

    def estimate_keys(
        self, stat: Any, data: Sequence[bytes] | HashedKeys, inverse: NDArray[np.int64], labels: tuple[Any, ...],
        target: Target = "population",
    ) -> Estimate:
        """Estimates of the byte strings ``data[inverse]`` (hashed as is), labelled ``labels``.

        ``data`` may be :meth:`hashed` keys (then not hashed again).
        """
        stat = self._check_stat(stat)
        keys = self.hashed(data)
        counts = self._support_counts(stat, self._summed(self._lookup_table(stat), keys))[inverse]
        p, q = self.support_rates()
        n = stat.n
        k = counts.size
        with np.errstate(invalid="ignore", divide="ignore"):
            observed = counts / n if n else np.full(k, np.nan)
            freqs = (observed - q) / (p - q)
            if n:
                plug = np.clip(freqs, 0, 1)
                pi = min(max(self.collision_rate(stat), 0.0), 1.0) * (n - 1) / n
                se = np.sqrt(self.variance(n, plug, np.maximum(pi - plug**2, 0.0), check_target(target)))
            else:
                se = observed
        return Estimate(
            mechanism=self.name, epsilon=self.epsilon,
            domain=labels,
            frequencies=freqs, std_errors=se, n=n, observed=observed, support_counts=counts,
            p_star=np.full(k, p), q_star=np.full(k, q), target=target,
        )

    def collision_weights(
        self, data: Sequence[bytes] | HashedKeys, others: Sequence[bytes] | HashedKeys
    ) -> NDArray[np.float64]:
        """``w[i, k] = (kappa - 1/m) m / (m - 1)`` with ``kappa`` the share of the ``k_h`` rows where
        ``data[i]`` and ``others[k]`` share a bucket; 0 where they are the same key."""
        ours, theirs = self.hashed(data), self.hashed(others)
        return self._weights(ours.buckets, theirs.buckets, ours.fingerprints[:, None] == theirs.fingerprints[None, :])

    def _weights(self, ours: NDArray[Any], theirs: NDArray[Any], same: NDArray[np.bool_]) -> NDArray[np.float64]:
        """:meth:`collision_weights` from the keys' bucket matrices (``same``: the pairs of one key)."""
        m = self.width
        weights = np.divide(_shared_rows(ours, theirs, m), self.rows)  # kappa, then in place:
        weights -= 1 / m  # (kappa - 1/m) * m / (m - 1), operation by operation
        weights *= m
        weights /= m - 1
        weights[same] = 0.0
        return weights

    def without_collisions(
        self, stat: Any, data: Sequence[bytes] | HashedKeys, estimate: Estimate, heavy: NDArray[np.int64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Estimates of ``data`` (``estimate`` is :meth:`estimate_keys` of them, population target)
        freed of the fixed-hash collision bias of the keys ``data[heavy]``, and their standard errors.

        For this seed, ``E f_d = f_d + sum_{x != d} f_x w_x(d)`` with ``w`` of
        :meth:`collision_weights` (a device holding ``x`` supports ``d`` with
        ``p`` in the rows where they share a bucket): a value that shares
        buckets with a frequent one is biased by a fixed amount, which the
        seed-averaged variance does not bound. The server knows every hash,
        so it subtracts ``sum_{x in heavy} f_x w_x(d)``, with the heavy keys'
        shares ``f_H`` solved from their own estimates,
        ``f^_H = (I + W_HH) f_H`` (they bias each other too; heavy keys that
        share their bucket in every row cannot be told apart, and least squares
        splits their estimates' sum between them). Variance: the
        pure oracle's, the collision term of the values outside ``heavy``
        only (``pi - f_d**2 - sum_{x in heavy, x != d} f_x**2``), and
        ``(sum_x |w_x(d)| SE_x)**2`` for the subtracted estimates' errors
        (a bound whatever their correlation).
        """
        stat = self._check_stat(stat)
        f = np.asarray(estimate.frequencies, dtype=float)
        se = np.asarray(estimate.std_errors, dtype=float)
        n = stat.n
        if not n or heavy.size == 0:
            return f, se
        keys = self.hashed(data)
        fps = keys.fingerprints
        weights = self._weights(keys.buckets, keys.buckets[:, heavy], fps[:, None] == fps[None, heavy])
        # the heavy keys' own estimates carry each other's bias: f^_H = (I + W_HH) f_H; keys that share
        # their bucket in every row cannot be told apart (a singular system): least squares splits their sum
        system = np.eye(heavy.size) + weights[heavy]
        try:
            shares = np.linalg.solve(system, f[heavy])
        except np.linalg.LinAlgError:
            shares = np.linalg.lstsq(system, f[heavy], rcond=None)[0]
        fixed = f - weights @ shares
        plug = np.clip(fixed, 0, 1)
        known = plug[heavy]
        pi = min(max(self.collision_rate(stat), 0.0), 1.0) * (n - 1) / n
        outside = ~np.isin(np.arange(f.size), heavy)
        others = pi - (known**2).sum() - np.where(outside, plug**2, 0.0)
        variance = self.variance(n, plug, np.maximum(others, 0.0)) + (np.abs(weights) @ se[heavy]) ** 2
        return fixed, np.sqrt(variance)

    def supports(self, reports: Any, value: Any) -> NDArray[np.bool_]:
        """Whether each report supports the string ``value``."""
        arr = self._checked(reports)
        data, _ = text_bytes([value], "value")
        buckets = self.buckets(arr["row"].astype(np.int64), np.repeat(self.fingerprints(data), arr.size))
        return self._supports(arr, buckets)

    def _supports(self, reports: NDArray[Any], buckets: NDArray[np.int64]) -> NDArray[np.bool_]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.name}(rows={self.rows}, width={self.width}, epsilon={self.epsilon:.6g})"
