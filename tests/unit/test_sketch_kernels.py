"""The count-mean sketches' fast paths give exactly the integers of their definitions, under numpy and numba.

* :func:`deniable._columns.column_counts` (CMS and OUE aggregation) against
  unpacking every bit and adding it, with groups whose runs cross the
  255-report flush of the byte lanes;
* the compiled BLAKE2b against :mod:`hashlib`, and the byte lookup
  tables of the hash against its definition (the parity of ``R[j, i] &
  phi`` per bucket bit), for 16- and 32-bit tables;
* bucket matrices, support sums (from a kept matrix, and hashing as it
  goes), collision weights and the collision-free estimates: numpy and
  numba equal;
* CMS reports drawn packed: the same bytes under both for the same seed,
  and the report's own bucket at bit ``b % 8`` of byte ``b // 8``;
* one-pass aggregation by groups equal to aggregating each group apart, and
  the Walsh-Hadamard transform of a whole HCMS table equal to each row's;
* the all-``str`` shortcut of :func:`~deniable.mechanisms._sketch.text_bytes`
  equal to the value-by-value path; a pickled sketch without its lookup
  tables (they are rebuilt).

Deterministic: no assertion depends on chance.
"""

from __future__ import annotations

import hashlib
import pickle
from typing import Any

import numpy as np
import pytest
from backends import both, needs_numba

import deniable as dn
from deniable import _accelerate as accelerate
from deniable import _columns as columns
from deniable.mechanisms import _sketch_base as sketch_module
from deniable.mechanisms._sketch import JoinedKeys, keyed_digests, text_bytes
from deniable.mechanisms._walsh import fwht

BACKENDS = ["numpy", pytest.param("numba", marks=needs_numba)]
SEED = bytes(range(32))


def naive_counts(packed: np.ndarray, groups: np.ndarray, size: int, bitorder: Any) -> np.ndarray:
    out = np.zeros((size, 8 * packed.shape[1]), dtype=np.int64)
    np.add.at(out, groups, np.unpackbits(packed, axis=1, bitorder=bitorder).astype(np.int64))
    return out


# ------------------------------------------------------------ column counts
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("bitorder", ["big", "little"])
@pytest.mark.parametrize(("rows", "width", "size"), [(0, 4, 3), (1, 1, 1), (254, 2, 1), (255, 2, 1), (256, 2, 1),
                                                      (600, 16, 1), (3000, 5, 2), (5000, 128, 7), (70_000, 3, 300)])
def test_column_counts_are_the_bit_sums(backend: str, bitorder: Any, rows: int, width: int, size: int,
                                        restore_accelerator: None) -> None:
    """Groups of one value (runs of 254, 255, 256 and more reports), skewed groups, empty input."""
    rng = np.random.default_rng(rows + width)
    packed = rng.integers(0, 256, (rows, width), dtype=np.uint8)
    packed[: rows // 3] = 0xFF  # full lanes: a missed flush overflows
    groups = np.minimum(rng.geometric(0.05, rows) - 1, size - 1).astype(np.int64)
    accelerate.set_accelerator(backend)
    expected = naive_counts(packed, groups, size, bitorder)
    assert np.array_equal(columns.column_counts(packed, groups, size, bitorder), expected)
    assert np.array_equal(columns.column_counts(packed, bitorder=bitorder), expected.sum(axis=0)[None, :])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("rows", "cores", "parts"), [(3000, 4, 4), (3000, 2, 2), (2, 8, 2), (3000, 1, 1)])
def test_large_counts_are_split_over_threads_with_the_same_counts(
        backend: str, rows: int, cores: int, parts: int, restore_accelerator: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Called from the main thread, a count of at least two parts' bits is split into consecutive parts
    of rows, one thread each up to the cores (and the rows); the parts' counts add up to the same
    integers, with groups and without. From another thread, never split."""
    import threading

    monkeypatch.setattr(columns, "_PART_BITS", 64)  # 8 rows of 8 bytes a part at least
    monkeypatch.setattr(columns, "cores", lambda: cores)
    seen: list[tuple[int, int]] = []
    counts = columns._counts

    def record(packed: np.ndarray, *args: Any) -> np.ndarray:
        seen.append((packed.shape[0], threading.get_ident()))
        return counts(packed, *args)

    monkeypatch.setattr(columns, "_counts", record)
    accelerate.set_accelerator(backend)
    rng = np.random.default_rng(rows)
    packed = rng.integers(0, 256, (rows, 8), dtype=np.uint8)
    groups = rng.integers(0, 5, rows)
    expected = naive_counts(packed, groups, 5, "little")
    assert np.array_equal(columns.column_counts(packed, groups, 5, "little"), expected)
    sizes = sorted(size for size, _ in seen)
    assert len(sizes) == parts and sum(sizes) == rows and sizes[-1] - sizes[0] <= 1
    assert (threading.get_ident() in {ident for _, ident in seen}) == (parts == 1)
    seen.clear()
    assert np.array_equal(columns.column_counts(packed, bitorder="little"), expected.sum(axis=0)[None, :])
    assert len(seen) == parts
    seen.clear()
    out: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: out.append(columns.column_counts(packed, groups, 5, "little")))
    worker.start()
    worker.join()
    assert np.array_equal(out[0], expected) and len(seen) == 1


def test_only_the_main_thread_of_the_main_process_splits() -> None:
    """A Dask or server worker (another thread, or a child process) already has its share of the cores."""
    import multiprocessing
    import threading

    from deniable import _cores

    assert _cores.may_split() and _cores.cores() >= 1
    seen: list[bool] = []
    worker = threading.Thread(target=lambda: seen.append(_cores.may_split()))
    worker.start()
    worker.join()
    assert seen == [False]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(_cores.may_split) is False


@needs_numba
def test_column_counts_use_the_compiled_loop_as_the_setting_says(restore_accelerator: None,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto``: the compiled loop from ``AUTO_FROM`` packed bits on (1,024 rows of 8 bytes), numpy below
    (1,023 rows); ``numba``: for any size; ``numpy``: never. The same counts either way."""
    from deniable import _sketch_numba

    used: list[int] = []
    compiled = _sketch_numba.column_counts

    def record(packed: np.ndarray, *args: Any) -> None:
        used.append(packed.shape[0])
        compiled(packed, *args)

    monkeypatch.setattr(_sketch_numba, "column_counts", record)
    packed = np.random.default_rng(5).integers(0, 256, (1024, 8), dtype=np.uint8)
    assert accelerate.AUTO_FROM == 1024 * 8 * 8
    for setting, rows, compiled_rows in [("auto", 1024, [1024]), ("auto", 1023, []), ("numba", 1, [1]),
                                         ("numpy", 1024, [])]:
        accelerate.set_accelerator(setting)
        used.clear()
        counts = columns.column_counts(packed[:rows])
        assert used == compiled_rows
        assert np.array_equal(counts, np.unpackbits(packed[:rows], axis=1).sum(axis=0)[None, :])


@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_spread_table_puts_bit_c_of_a_byte_in_byte_lane_c(bitorder: Any) -> None:
    """``spread_table(order)[v]``: a uint64 whose byte ``c`` in memory is 1 exactly when bit ``c`` of ``v``
    is set in ``order`` (``"big"``: bit ``c`` is ``v >> (7 - c) & 1``, ``"little"``: ``v >> c & 1``)."""
    table = columns.spread_table(bitorder)
    assert table.dtype == np.uint64 and table.shape == (256,)
    lanes = table.view(np.uint8).reshape(256, 8)
    for v in range(256):
        want = [v >> (c if bitorder == "little" else 7 - c) & 1 for c in range(8)]
        assert lanes[v].tolist() == want


# ------------------------------------------------------------------ hashing
@pytest.mark.parametrize("backend", BACKENDS)
def test_fingerprints_are_keyed_blake2b(backend: str, restore_accelerator: None) -> None:
    """Every length from 0 to 299 bytes (one, two and three blocks; exactly 128 and 256), as hashlib hashes them;
    other keys, persons and digest sizes (SFP's one-byte puzzle piece)."""
    m = dn.CountMeanSketch(epsilon=1.0, rows=2, width=8, seed=SEED)
    rng = np.random.default_rng(12)
    data = [rng.bytes(n) for n in range(300)] + [b"", b"a" * 128, b"b" * 256, "é🙂".encode()] * 10
    accelerate.set_accelerator(backend)
    expected = [
        int.from_bytes(hashlib.blake2b(d, digest_size=8, key=SEED, person=b"deniable:value").digest(), "little")
        for d in data
    ]
    assert m.fingerprints(data).tolist() == expected
    assert m.fingerprints([]).shape == (0,)
    for person, size in [(b"deniable:sfp", 1), (b"", 3), (b"sixteen bytes ok", 8)]:
        short = [hashlib.blake2b(d, digest_size=size, key=b"k" * 7, person=person).digest() for d in data]
        assert keyed_digests(data, b"k" * 7, person, size).tolist() == [int.from_bytes(d, "little") for d in short]
    with pytest.raises(ValueError, match="a key and a digest of 1..8 bytes; got 0 and 8"):
        keyed_digests(data, b"", b"", 8)
    joined = JoinedKeys(np.frombuffer(b"".join(data), dtype=np.uint8), np.cumsum([len(d) for d in data]))
    assert joined.split() == data and len(joined) == len(data)
    assert m.fingerprints(joined).tolist() == expected  # keys stored end to end: the same digests
    empty = JoinedKeys(np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64))
    assert empty.split() == [] and m.fingerprints(empty).shape == (0,)
    assert JoinedKeys(np.frombuffer(b"abcd", dtype=np.uint8), np.array([2, 2, 4])).split() == [b"ab", b"", b"cd"]


def parity_buckets(m: Any, rows: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """The hash's definition: bucket bit ``i`` is the parity of ``R[j, i] & phi``."""
    out = np.zeros(np.broadcast_shapes(rows.shape, fps.shape), dtype=np.int64)
    for i in range(m.bits):
        out |= (np.bitwise_count(m._masks[rows, i] & fps) & 1).astype(np.int64) << i
    return out


FPS = np.random.default_rng(3).integers(0, 1 << 63, 700, dtype=np.int64).astype(np.uint64) * np.uint64(3)
FPS[:3] = [0, (1 << 64) - 1, 1 << 63]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("rows", "width"), [(256, 1024), (5, 8), (3, 1 << 17)])
def test_lookup_tables_are_the_parity_definition(backend: str, rows: int, width: int,
                                                 restore_accelerator: None) -> None:
    m = dn.CountMeanSketch(epsilon=2.0, rows=rows, width=width, seed=SEED)
    accelerate.set_accelerator(backend)
    every = np.arange(rows)[:, None]
    expected = parity_buckets(m, every, FPS[None, :])
    assert np.array_equal(m.bucket_matrix(FPS), expected)
    assert m.bucket_matrix(FPS).dtype == (np.uint16 if width <= 1 << 16 else np.uint32)
    some = np.random.default_rng(4).integers(0, rows, FPS.size)
    assert np.array_equal(m.buckets(some, FPS), parity_buckets(m, some, FPS))


@needs_numba
@pytest.mark.parametrize("cls", [dn.CountMeanSketch, dn.HadamardCountMeanSketch], ids=["cms", "hcms"])
@pytest.mark.parametrize("matrix_entries", [1 << 23, 0], ids=["matrix", "hashing"])
def test_estimates_and_collision_weights_are_the_same_under_both(
    cls: Any, matrix_entries: int, restore_accelerator: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Support sums from a kept bucket matrix and hashing as it goes, collision counts, corrected estimates."""
    monkeypatch.setattr(sketch_module, "_MATRIX_ENTRIES", matrix_entries)
    m = cls(epsilon=3.0, rows=64, width=256, seed=SEED)
    values = [f"v{int(i)}" for i in np.random.default_rng(5).zipf(1.3, 20_000) % 500]
    stat = m.aggregate(m.privatize_many(values, rng=6))
    keys = [f"v{i}".encode() for i in range(600)]

    def run() -> list[bytes]:
        est = m.estimate_keys(stat, keys, np.arange(len(keys)), tuple(range(len(keys))))
        fixed, se = m.without_collisions(stat, keys, est, np.arange(0, 40, 2))
        weights = m.collision_weights(keys, keys[:30] + [b"other"])
        return [np.asarray(a).tobytes() for a in (est.support_counts, est.frequencies, fixed, se, weights)]

    a, b = both(run)
    assert a == b


def test_collision_weights_count_the_shared_rows() -> None:
    """``kappa`` from the sparse count equals the share of rows with equal buckets, by definition."""
    m = dn.CountMeanSketch(epsilon=3.0, rows=16, width=8, seed=SEED)
    keys = [f"k{i}".encode() for i in range(200)]
    others = keys[:7] + [b"x", b"y"]
    fps, theirs = m.fingerprints(keys), m.fingerprints(others)
    every = np.arange(16)[:, None]
    shared = (parity_buckets(m, every, fps[None, :])[:, :, None]
              == parity_buckets(m, every, theirs[None, :])[:, None, :]).mean(axis=0)
    expected = (shared - 1 / 8) * 8 / 7
    expected[fps[:, None] == theirs[None, :]] = 0.0
    assert np.array_equal(m.collision_weights(keys, others), expected)


# ----------------------------------------------------------------- reports
@needs_numba
def test_cms_reports_are_the_same_under_both(restore_accelerator: None) -> None:
    m = dn.CountMeanSketch(epsilon=4.0, rows=32, width=1024, seed=SEED)
    values = [f"w{i % 97}" for i in range(9_000)]  # more than one block of 4,096 reports
    a, b = both(lambda: m.privatize_many(values, rng=8).tobytes())
    assert a == b


def test_a_cms_report_sets_its_own_bucket_bit() -> None:
    """At epsilon 40 a bit flips w.p. 9 / 2**32 (none here, for this seed): only bit ``b % 8`` of byte ``b // 8``."""
    m = dn.CountMeanSketch(epsilon=40.0, rows=4, width=64, seed=SEED)
    reports = m.privatize_many(["a", "bb", "a"], rng=9)
    for report, value in zip(reports, ["a", "bb", "a"], strict=True):
        bucket = m.hash(int(report["row"]), value)
        expected = np.zeros(8, dtype=np.uint8)
        expected[bucket // 8] = 1 << (bucket % 8)
        assert np.array_equal(report["bits"], expected)


# --------------------------------------------------------------- aggregate
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cls", [dn.CountMeanSketch, dn.HadamardCountMeanSketch], ids=["cms", "hcms"])
def test_aggregating_by_groups_is_aggregating_each_group(backend: str, cls: Any, restore_accelerator: None) -> None:
    m = cls(epsilon=2.0, rows=16, width=64, seed=SEED)
    values = [f"v{i % 13}" for i in range(3_000)]
    reports = m.privatize_many(values, rng=10)
    groups = np.random.default_rng(11).integers(0, 5, reports.size)
    groups[groups == 3] = 4  # group 3 empty
    accelerate.set_accelerator(backend)
    together = m.aggregate_groups(reports, groups, 5)
    assert together == [m.aggregate(reports[groups == g]) for g in range(5)]
    assert together[3].n == 0
    with pytest.raises(ValueError, match=r"groups must hold one integer in 0\.\.4 per report"):
        m.aggregate_groups(reports, np.full(reports.size, 5), 5)
    with pytest.raises(ValueError, match="groups must hold one integer"):
        m.aggregate_groups(reports, groups[:-1], 5)


# -------------------------------------------------------------- text bytes
def test_text_bytes_shortcut_equals_the_value_by_value_path() -> None:
    """All ``str`` takes the shortcut; the same values as UTF-8 bytes take the checked loop."""
    texts = ["b", "a", "", "é🙂", "b", "a", "zz", ""] * 3
    fast = text_bytes(texts)
    slow = text_bytes([t.encode() for t in texts])
    assert fast[0] == slow[0] and np.array_equal(fast[1], slow[1])
    assert fast[0] == [b"b", b"a", b"", "é🙂".encode(), b"zz"]

    class Text(str):
        pass

    mixed = text_bytes([Text("a"), "a", "b"])
    assert mixed[0] == [b"a", b"b"] and mixed[1].tolist() == [0, 0, 1]


def test_fwht_of_rows_is_each_rows_transform() -> None:
    """HCMS transforms its whole table at once: the same as one row at a time, and as the definition."""
    table = np.random.default_rng(13).integers(-50, 50, (6, 16))
    signs = 1 - 2 * (np.bitwise_count(np.arange(16)[:, None] & np.arange(16)[None, :]) & 1).astype(np.int64)
    assert np.array_equal(fwht(table), table @ signs)
    assert np.array_equal(fwht(table), np.stack([fwht(row) for row in table]))
    with pytest.raises(ValueError, match="power-of-two length; got 12"):
        fwht(np.zeros((2, 12), dtype=np.int64))


def test_a_pickled_sketch_leaves_its_lookup_tables_behind() -> None:
    m = dn.CountMeanSketch(epsilon=2.0, rows=64, width=1024, seed=SEED)
    before = m.hash(3, "word")  # builds the tables
    copy = pickle.loads(pickle.dumps(m))
    assert "_lut" in m.__dict__ and "_lut" not in copy.__dict__
    assert copy == m and copy.hash(3, "word") == before
    assert len(pickle.dumps(m)) < 16_000  # 64 rows of tables would be 256 KiB
