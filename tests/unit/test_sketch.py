"""Count-mean sketches: the fixed hash family, bad input, malformed reports, wire round trips, merging."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable.errors import AggregateError, ConfigError, ReportError
from deniable.mechanisms._sketch import SketchCounts

KINDS = [dn.CountMeanSketch, dn.HadamardCountMeanSketch]
kinds = pytest.mark.parametrize("cls", KINDS, ids=["cms", "hcms"])
SEED = bytes(range(32))


def small(cls: Any, **kw: Any) -> Any:
    return cls(["apple", "banana", ""], epsilon=kw.pop("epsilon", 2.0), rows=kw.pop("rows", 8),
               width=kw.pop("width", 64), seed=kw.pop("seed", SEED), **kw)


# ---------------------------------------------------------------- hashing
def test_hash_family_known_answers() -> None:
    """The documented family, pinned: any client must compute these buckets for this seed."""
    m = dn.CountMeanSketch(epsilon=4, rows=4, width=1024, seed=SEED)
    assert [m.hash(j, "hello") for j in range(4)] == [37, 887, 818, 551]
    assert [m.hash(j, "") for j in range(4)] == [507, 463, 937, 492]
    assert [m.hash(j, "é🙂") for j in range(4)] == [548, 707, 800, 755]
    digest = hashlib.blake2b(b"hello", digest_size=8, key=SEED, person=b"deniable:value").digest()
    assert int(m.fingerprints([b"hello"])[0]) == int.from_bytes(digest, "little")
    mask = hashlib.blake2b(b"\0\0\0\0\0", digest_size=8, key=SEED, person=b"deniable:row").digest()
    assert int(m._masks[0, 0]) == int.from_bytes(mask, "little")
    # the same family for HCMS, and the hash does not depend on epsilon or the listed categories
    h = dn.HadamardCountMeanSketch(["x"], epsilon=1, rows=4, width=1024, seed=SEED.hex())
    assert [h.hash(j, "hello") for j in range(4)] == [37, 887, 818, 551]


def test_default_seed_is_fresh() -> None:
    a, b = dn.CountMeanSketch(epsilon=1), dn.CountMeanSketch(epsilon=1)
    assert a.seed != b.seed and len(a.seed) == 32 and a != b


# ------------------------------------------------------------- bad input
@kinds
def test_empty_string_is_a_value(cls: Any) -> None:
    """The empty string is a value of its own (someone who typed nothing), estimated like any other."""
    m = small(cls)
    stat = m.aggregate(m.privatize_many(["", "", "apple"], rng=1))
    assert m.estimate_from(stat).domain == ("apple", "banana", "")
    assert m.estimate_values(stat, [""]).n == 3


@kinds
def test_utf8_bytes_are_their_text(cls: Any) -> None:
    m = small(cls)
    text = m.privatize_many(["é🙂"] * 50, rng=7)
    raw = m.privatize_many(["é🙂".encode()] * 50, rng=7)
    assert np.array_equal(text, raw)


@kinds
def test_bad_values_name_the_value(cls: Any) -> None:
    m = small(cls)
    with pytest.raises(ValueError, match=r"values\[1\] is not valid UTF-8"):
        m.privatize_many(["ok", b"\xff\xfe"])
    with pytest.raises(TypeError, match=r"values\[2\] must be a string .*got int 5"):
        m.privatize_many(["a", "b", 5])
    with pytest.raises(TypeError, match=r"values\[0\] .*got NoneType"):
        m.privatize_many([None])
    with pytest.raises(TypeError, match="single str"):
        m.privatize_many("apple")
    with pytest.raises(TypeError, match=r"value must be a string .*got float 3.5"):
        m.privatize(3.5)
    with pytest.raises(TypeError, match=r"values\[1\]"):
        m.estimate_values(m.aggregate([]), ["a", 1])
    unhashable = r"^values\[1\] must be a string \(str, or UTF-8 bytes\); got list \['b'\]$"
    with pytest.raises(TypeError, match=unhashable):  # named as any other type, not by the lookup's TypeError
        m.privatize_many(["a", ["b"]])


@kinds
def test_bad_parameters(cls: Any) -> None:
    with pytest.raises(ValueError, match="width must be a power of two"):
        cls(epsilon=1, width=100)
    with pytest.raises(ValueError, match="rows must be an integer"):
        cls(epsilon=1, rows=0)
    with pytest.raises(ValueError, match="seed must be 32 bytes"):
        cls(epsilon=1, seed=b"short")
    with pytest.raises(ValueError, match="seed must be 32 bytes"):
        cls(epsilon=1, seed="not hex")
    with pytest.raises(ValueError, match="categories must be distinct"):
        cls(["a", "a"], epsilon=1)
    with pytest.raises(TypeError, match=r"categories\[1\]"):
        cls(["a", 2], epsilon=1)
    with pytest.raises(ValueError, match="epsilon"):
        cls(epsilon=0)


def test_malformed_reports_are_named() -> None:
    m = small(dn.CountMeanSketch)
    good = m.reports_to_json(m.privatize_many(["apple", "x"], rng=2))
    assert set(good[0]) == {"row", "bits"} and len(good[0]["bits"]) == 16
    cases = [
        ({"row": 8, "bits": good[0]["bits"]}, "row must be in 0..7"),
        ({"row": -1, "bits": good[0]["bits"]}, "row must be a non-negative integer"),
        ({"row": True, "bits": good[0]["bits"]}, "row must be a non-negative integer"),
        ({"row": 0, "bits": good[0]["bits"][:-2]}, "bits must be 16 hex digits"),
        ({"row": 0, "bits": "zz" * 8}, "bits must be 16 hex digits"),
        ({"row": 0}, "must be an object with fields"),
        ([0, good[0]["bits"]], "must be an object with fields"),
    ]
    for bad, reason in cases:
        with pytest.raises(ReportError, match=reason) as info:
            m.reports_from_json([good[0], bad, good[1]])
        assert info.value.index == 1


def test_malformed_hcms_reports_are_named() -> None:
    m = small(dn.HadamardCountMeanSketch)
    good = m.reports_to_json(m.privatize_many(["apple"], rng=2))[0]
    assert set(good) == {"row", "index", "bit"}
    for field, value, reason in [("bit", 2, "bit must be in 0..1"), ("index", 64, "index must be in 0..63"),
                                 ("row", 8, "row must be in 0..7"), ("index", "3", "index must be a non-negative")]:
        with pytest.raises(ReportError, match=reason) as info:
            m.reports_from_json([good, {**good, field: value}])
        assert info.value.index == 1
    with pytest.raises(ValueError, match="need the fields"):
        m.aggregate(np.zeros(3, dtype=[("row", "<u4"), ("value", "<u4")]))


# ----------------------------------------------------------------- wire
@kinds
def test_config_round_trip(cls: Any) -> None:
    m = small(cls, epsilon=3.0)
    config = m.to_config()
    assert config["params"]["seed"] == SEED.hex() and config["params"]["hash"] == "blake2b-gf2"
    assert config["domain"] == ["apple", "banana", ""]
    back = dn.from_config(config)
    assert back == m and back.fingerprint == m.fingerprint and back.epsilon == m.epsilon <= 3.0
    assert np.array_equal(back._masks, m._masks)
    reports = m.privatize_many(["apple"] * 20 + ["new"] * 5, rng=3)
    wire = m.reports_to_json(reports)
    assert back.aggregate(back.reports_from_json(wire)) == m.aggregate(reports)
    for bad in ({"seed": "00" * 31}, {"hash": "sha256"}, {"width": 48}):
        with pytest.raises(ConfigError):
            dn.from_config({**config, "params": {**config["params"], **bad}})
    with pytest.raises(ConfigError, match="epsilon"):
        dn.from_config({**config, "epsilon": 1.0})


@kinds
def test_aggregates_merge_and_travel(cls: Any) -> None:
    m = small(cls)
    values = ["apple"] * 30 + ["banana"] * 20 + [str(i) for i in range(50)]
    reports = m.privatize_many(values, rng=4)
    whole = m.aggregate(reports)
    parts = m.aggregate(reports[:37]) + m.aggregate(reports[37:])
    assert parts == whole == sum([m.aggregate(reports[:10]), m.aggregate(reports[10:])])
    assert whole.n == 100 and m.aggregate([]).n == 0
    assert m.aggregate_from_json(whole.to_json()) == whole
    assert m.estimate(reports).frequencies.tolist() == m.estimate_from(parts).frequencies.tolist()
    other = small(cls, seed=bytes(32))
    with pytest.raises(AggregateError):
        other.estimate_from(whole)
    with pytest.raises(AggregateError):
        whole + other.aggregate([])
    broken = {**whole.to_json(), "n": 99}
    with pytest.raises(AggregateError, match="row_counts"):
        m.aggregate_from_json(broken)
    with pytest.raises(AggregateError, match="table"):
        m.aggregate_from_json({**whole.to_json(), "table": [[0]]})
    with pytest.raises(TypeError, match="SketchCounts"):
        m.estimate_from(dn.SupportCounts(m.fingerprint, np.zeros(3, dtype=np.int64), 0))


@kinds
def test_estimate_values_agrees_with_listed(cls: Any) -> None:
    m = small(cls)
    stat = m.aggregate(m.privatize_many(["apple"] * 60 + ["z"] * 40, rng=5))
    listed = m.estimate_from(stat)
    asked = m.estimate_values(stat, ["banana", "apple", "apple", "never"])
    assert asked.domain == ("banana", "apple", "apple", "never")
    assert asked.frequencies[1] == asked.frequencies[2] == listed.frequencies[0]
    assert asked.std_errors is not None and listed.std_errors is not None
    assert asked.std_errors[0] == listed.std_errors[1]
    empty = m.estimate_from(m.aggregate([]))
    assert empty.n == 0 and np.isnan(empty.frequencies).all()


@kinds
def test_supports_matches_support_counts(cls: Any) -> None:
    m = small(cls)
    reports = m.privatize_many(["apple"] * 30 + ["q"] * 30, rng=6)
    stat = m.aggregate(reports)
    for value in ("apple", "q", "zzz"):
        assert m.supports(reports, value).sum() == m.estimate_values(stat, [value]).support_counts[0]


def test_registered_as_sketches() -> None:
    from deniable.mechanisms import registry

    assert {e.cls for e in registry.entries("sketch").values()} == set(KINDS)
    assert isinstance(small(dn.CountMeanSketch).aggregate([]), SketchCounts)
    assert dn.CountMeanSketch(epsilon=2, rows=256, width=1024).report_bits == 8 + 1024
    assert dn.HadamardCountMeanSketch(epsilon=2, rows=256, width=1024).report_bits == 8 + 10 + 1


# ------------------------------------------------------ checks in whole messages
def test_sketch_counts_from_json_checks_in_whole_messages() -> None:
    """Row counts: a non-empty list of non-negative ints (zeros allowed); the table: one list per row, of
    ints in -n..n (n itself allowed); both read as int64."""
    m = small(dn.CountMeanSketch)  # 8 rows of 64 buckets
    fp = m.aggregate([]).to_json()["fingerprint"]
    rows = [5] + [0] * 7
    table = [[5] + [0] * 63] + [[0] * 64] * 7
    good = {"fingerprint": fp, "n": 5, "row_counts": rows, "table": table}
    back = m.aggregate_from_json(good)
    assert back.n == 5 and back.table[0, 0] == 5 and back.row_counts.tolist() == rows
    assert back.table.dtype == np.int64 and back.row_counts.dtype == np.int64
    empty_rows = SketchCounts.from_json({"fingerprint": fp, "n": 0, "row_counts": [0, 0], "table": [[], []]})
    assert empty_rows.table.dtype == np.int64 and empty_rows.table.shape == (2, 0)
    row_message = r"^aggregate field 'row_counts' must be a non-empty list of non-negative integers$"
    for bad in ([], "5", [5.0] + [0] * 7, [6, -1] + [0] * 6, [True] * 5 + [0] * 3):
        with pytest.raises(AggregateError, match=row_message):
            m.aggregate_from_json({**good, "row_counts": bad, "n": 0 if bad == [] else 5, "table": table})
    with pytest.raises(AggregateError, match=r"^aggregate field 'row_counts' must add up to n=4; got 5$"):
        m.aggregate_from_json({**good, "n": 4})
    table_message = r"^aggregate field 'table' must be 8 equal lists of integers in -n\.\.n \(n=5\)$"
    for bad_table in (
        table[:7], [[5] + [0] * 63] + [[0] * 63] * 7, [tuple(r) for r in table], [[5.0] + [0] * 63] + table[1:],
        [[6] + [0] * 63] + table[1:], [[-6] + [0] * 63] + table[1:], "x" * 8,
    ):
        with pytest.raises(AggregateError, match=table_message):
            m.aggregate_from_json({**good, "table": bad_table})
    assert m.aggregate_from_json({**good, "table": [[-5] + [0] * 63] + table[1:]}).table[0, 0] == -5


def test_merging_sketches_of_other_shapes_names_them() -> None:
    a = SketchCounts("f", np.zeros((2, 8), dtype=np.int64), np.zeros(2, dtype=np.int64))
    b = SketchCounts("f", np.zeros((3, 8), dtype=np.int64), np.zeros(3, dtype=np.int64))
    with pytest.raises(AggregateError, match=r"^cannot merge sketches of shapes \(2, 8\) and \(3, 8\)$"):
        a + b


def test_sketch_counts_are_equal_field_by_field() -> None:
    table, rows = np.arange(16, dtype=np.int64).reshape(2, 8), np.array([3, 4], dtype=np.int64)
    a = SketchCounts("f", table, rows)
    assert a == SketchCounts("f", table.copy(), rows.copy())
    assert a != SketchCounts("g", table, rows)
    assert a != SketchCounts("f", table + 1, rows)
    assert a != SketchCounts("f", table, rows + 1)
    assert a != (a.fingerprint, table, rows) and a != "f"


@kinds
def test_report_fields_are_checked_in_whole_messages(cls: Any) -> None:
    """Fields are non-negative ints below 2**32 (numpy integers too), named with the report's index."""
    m = small(cls)
    name = cls.__name__
    fields = m.report_fields
    good = m.privatize_many(["apple"], rng=1)[0]
    values = [good[f] for f in fields]
    as_numpy = [tuple(np.int64(v) if f != "bits" else v for f, v in zip(fields, values, strict=True))]
    assert np.array_equal(m.aggregate(as_numpy).table, m.aggregate(m.privatize_many(["apple"], rng=1)).table)
    for bad in (-1, 2**32, 2**33, 1.0, True):
        item = tuple([bad, *values[1:]])
        with pytest.raises(ValueError, match=rf"^{name} report 1: row must be a non-negative integer; got {bad}$"):
            m.aggregate([tuple(values), item])
        wire = m.reports_to_json(m.privatize_many(["apple"], rng=1))[0]
        with pytest.raises(ReportError, match=rf"^{name} report 1: row must be a non-negative integer; got {bad}$"):
            m.reports_from_json([wire, {**wire, "row": bad}])


def test_cms_bits_are_checked_in_whole_messages() -> None:
    """The bits: exactly 2 m / 8 hex digits, or a uint8 array of m / 8 bytes."""
    m = small(dn.CountMeanSketch, width=32)  # 4 bytes
    ok = np.array([1, 2, 3, 4], dtype=np.uint8)
    assert m.aggregate([(0, ok)]).table[0].tolist() == np.unpackbits(ok, bitorder="little").tolist()
    assert m.aggregate([(0, "01020304")]) == m.aggregate([(0, ok)])
    for bad in ("zzzzzzzz", "010203", "0102030405", np.zeros(4, dtype=np.int64), np.zeros(5, dtype=np.uint8),
                np.zeros((2, 2), dtype=np.uint8), b"\x01\x02\x03\x04"):
        with pytest.raises(ValueError, match=r"^CountMeanSketch report 1: bits must be 8 hex digits \(m=32 bits\)"):
            m.aggregate([(0, ok), (0, bad)])


@kinds
def test_one_report_is_the_first_of_a_batch(cls: Any) -> None:
    m = small(cls)
    for value in ("apple", "", "é🙂".encode()):
        assert m.privatize(value, rng=9) == m.privatize_many([value], rng=9)[0]
    assert m.privatize("apple", rng=9).dtype == m.dtype


@kinds
def test_groups_are_checked_in_whole_messages(cls: Any) -> None:
    m = small(cls)
    reports = m.privatize_many(["apple", "x", "y"], rng=3)
    parts = m.aggregate_groups(reports, np.array([1, 0, 1], dtype=np.uint8), 2)
    assert parts[0] == m.aggregate(reports[1:2]) and parts[1] == m.aggregate(reports[[0, 2]])
    message = r"^groups must hold one integer in 0\.\.1 per report$"
    for bad in ([0, 1, 2], [0, -1, 1], [0.0, 1.0, 1.0], [0, 1], [[0, 1, 1]]):
        with pytest.raises(ValueError, match=message):
            m.aggregate_groups(reports, np.array(bad), 2)
    assert [g.n for g in m.aggregate_groups(reports[:0], np.array([], dtype=np.int64), 2)] == [0, 0]


@kinds
def test_one_value_is_named_value_in_messages(cls: Any) -> None:
    m = small(cls)
    reports = m.privatize_many(["apple"], rng=1)
    message = r"^value\[0\] must be a string \(str, or UTF-8 bytes\); got int 5$"
    with pytest.raises(TypeError, match=message):
        m.hash(0, 5)
    with pytest.raises(TypeError, match=message):
        m.supports(reports, 5)


@kinds
def test_another_hash_family_is_refused_by_name(cls: Any) -> None:
    config = small(cls).to_config()
    with pytest.raises(ConfigError, match=r"^params: hash must be 'blake2b-gf2'; got 'sha256'$"):
        dn.from_config({**config, "params": {**config["params"], "hash": "sha256"}})


@kinds
def test_a_sketch_pickles_before_its_lookup_tables_are_built(cls: Any) -> None:
    import pickle

    m = small(cls)
    assert "_lut" not in m.__dict__
    back = pickle.loads(pickle.dumps(m))
    assert back == m and back.hash(0, "apple") == m.hash(0, "apple")


@kinds
def test_defaults_and_epsilon_named_in_whole_messages(cls: Any) -> None:
    m = cls(epsilon=1.0)
    assert (m.rows, m.width, len(m.seed), m.categories) == (256, 1024, 32, ())
    with pytest.raises(ValueError, match=rf"^epsilon must be a positive finite number for {cls.__name__}; got 0$"):
        cls(epsilon=0)


def test_hcms_numerators_fill_the_32_bit_word_and_are_checked() -> None:
    """``a + b`` (the keep draw's denominator) within 2**32 and as close as fits; ``0 < b < a``."""
    m = small(dn.HadamardCountMeanSketch, epsilon=1.0)
    params = m.to_config()["params"]
    a, b = params["keep_numerator"], params["other_numerator"]
    assert (1 << 32) - 4 < a + b <= 1 << 32 and m.epsilon == pytest.approx(1.0, abs=1e-8)
    assert dn.HadamardCountMeanSketch._from_params([], {**params, "other_numerator": 1})._b == 1
    message = r"^HadamardCountMeanSketch params need 0 < other_numerator < keep_numerator$"
    for other in (0, a, a + 1):
        with pytest.raises(ValueError, match=message):
            dn.HadamardCountMeanSketch._from_params([], {**params, "other_numerator": other})


@kinds
def test_reports_of_other_shapes_are_named_in_whole_messages(cls: Any) -> None:
    m = small(cls)
    name, fields = cls.__name__, list(m.report_fields)
    good = tuple(m.privatize_many(["apple"], rng=1)[0].tolist())
    for bad in (good[:-1], (*good, 0), "ab", 5, None):
        with pytest.raises(ValueError, match=rf"^{name} report 1 must have the fields {re.escape(str(fields))}; got "):
            m.aggregate([good, bad])


def test_keyed_digests_need_a_key_and_1_to_8_bytes() -> None:
    from deniable.mechanisms._sketch import keyed_digests

    assert keyed_digests([b"a"], SEED, b"p", 8).dtype == np.uint64
    for key, size in ((b"", 8), (SEED, 0), (SEED, 9)):
        message = rf"^keyed_digests needs a key and a digest of 1\.\.8 bytes; got {len(key)} and {size}$"
        with pytest.raises(ValueError, match=message):
            keyed_digests([b"a"], key, b"p", size)


@kinds
def test_shape_and_seed_checks_at_their_bounds_in_whole_messages(cls: Any) -> None:
    """rows in 1..65536, width a power of two in 8..2**20, a seed of 32 bytes or their hex; named by owner."""
    name = cls.__name__
    assert cls(epsilon=1, rows=1 << 16, width=8, seed=SEED).rows == 1 << 16
    assert cls(epsilon=1, rows=1, width=1 << 20, seed=SEED).width == 1 << 20
    assert cls(epsilon=1, rows=1, width=8, seed=SEED.hex()).seed == SEED
    for rows in (0, (1 << 16) + 1, True, 2.0):
        with pytest.raises(ValueError, match=rf"^{name}: rows must be an integer in 1\.\.65536; got {rows!r}$"):
            cls(epsilon=1, rows=rows, width=8, seed=SEED)
    for width in (4, 12, 1 << 21, True, 8.0):
        with pytest.raises(ValueError, match=rf"^{name}: width must be a power of two in 8\.\.2\*\*20; got {width!r}$"):
            cls(epsilon=1, rows=1, width=width, seed=SEED)
    for seed in (b"short", "zz", SEED + b"x", 5):
        with pytest.raises(ValueError, match=rf"^{name}: seed must be 32 bytes or their hex; got "):
            cls(epsilon=1, rows=1, width=8, seed=seed)


def test_cms_flip_numerator_is_checked_at_its_bounds() -> None:
    params = small(dn.CountMeanSketch).to_config()["params"]
    for flip in (1, (1 << 31) - 1):
        assert dn.CountMeanSketch._from_params([], {**params, "flip_numerator": flip}).flip_numerator == flip
    for flip in (0, 1 << 31, 1 << 32):
        message = rf"^CountMeanSketch: flip_numerator must be in 1\.\.2\*\*31-1; got {flip}$"
        with pytest.raises(ValueError, match=message):
            dn.CountMeanSketch._from_params([], {**params, "flip_numerator": flip})


def test_values_in_a_numpy_array_are_their_list() -> None:
    from deniable.mechanisms._sketch import text_bytes

    data, inverse = text_bytes(np.array(["b", "a", "b"]))
    assert data == [b"b", b"a"] and inverse.tolist() == [0, 1, 0]
    data, inverse = text_bytes(np.array(["b", "a", "b"], dtype=object))
    assert data == [b"b", b"a"] and inverse.tolist() == [0, 1, 0]
