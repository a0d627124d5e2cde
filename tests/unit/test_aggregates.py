"""Mergeable aggregates: combiner laws, JSON that rejects what no batch of reports could give.

Reports here come from a fixed simulation seed; every assertion is an exact
identity that holds for any reports, so no statistical tolerance is involved.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_grid import N_REPORTS, Case, params, reports_for

import deniable as dn
from deniable._aggregates import BLOB_MAGIC, BLOB_VERSION, MeanStat, SupportCounts
from deniable.errors import AggregateError

GOOD_MEAN = {"fingerprint": "f" * 16, "n": 3, "total": 1.5, "total_sq": 1.25}


def test_round_trips() -> None:
    m = dn.SquareWave(0, 1, epsilon=1.0, bins=16)
    stat = m.aggregate(m.privatize_many([0.1, 0.5, 0.9], rng=np.random.default_rng(1)))
    assert MeanStat.from_json(stat.to_json()) == stat
    g = dn.GRR(3, epsilon=1.0)
    counts = g.aggregate([0, 1, 1])
    assert SupportCounts.from_json(counts.to_json()) == counts


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ("x", "JSON object with fields"),
        ({k: v for k, v in GOOD_MEAN.items() if k != "n"}, "JSON object with fields"),
        (GOOD_MEAN | {"extra": 1}, "'extra' is not known"),
        (GOOD_MEAN | {"fingerprint": 7}, "'fingerprint' must be a string"),
        (GOOD_MEAN | {"n": -1}, "'n' must be a non-negative integer"),
        (GOOD_MEAN | {"n": 2.0}, "'n' must be a non-negative integer"),
        (GOOD_MEAN | {"total": "1"}, "'total' must be a finite number"),
        (GOOD_MEAN | {"total_sq": float("nan")}, "'total_sq' must be a finite number"),
        (GOOD_MEAN | {"total_sq": -0.5}, "inconsistent"),
        (GOOD_MEAN | {"total": 3.0, "total_sq": 1.0}, "inconsistent"),  # total^2 > n total_sq
        (GOOD_MEAN | {"cell_counts": [1, -1, 3]}, "'cell_counts' must be a list of integers"),
        (GOOD_MEAN | {"cell_counts": [1, 1]}, "must add up to n=3"),
    ],
)
def test_mean_stat_from_json_rejects(data: Any, match: str) -> None:
    with pytest.raises(AggregateError, match=match):
        MeanStat.from_json(data)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"fingerprint": "f", "n": 2}, "JSON object with fields"),
        ({"fingerprint": "f", "n": 2, "counts": [3]}, "integers in 0..n=2"),
        ({"fingerprint": "f", "n": 2, "counts": [-1]}, "integers in 0..n=2"),
        ({"fingerprint": "f", "n": 2, "counts": [1], "x": 0}, "'x' is not known"),
    ],
)
def test_support_counts_from_json_rejects(data: Any, match: str) -> None:
    with pytest.raises(AggregateError, match=match):
        SupportCounts.from_json(data)


def test_merging_other_configurations_is_refused() -> None:
    a, b = dn.GRR(3, epsilon=1.0), dn.GRR(3, epsilon=2.0)
    with pytest.raises(AggregateError, match="different mechanisms"):
        a.aggregate([0]) + b.aggregate([1])
    assert sum([a.aggregate([0]), a.aggregate([1])]) == a.aggregate([0, 1])


@params()
@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(0, N_REPORTS), min_size=1, max_size=5))
def test_chunked_aggregation_equals_one_shot(case: Case, cuts: list[int]) -> None:
    m, reports = reports_for(case)
    bounds = [0, *sorted(cuts), N_REPORTS]
    parts = [m.aggregate(reports[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    whole = m.aggregate(reports)
    assert sum(parts) == whole
    assert sum(reversed(parts)) == whole
    merged = parts[0]
    for part in parts[1:]:
        merged = merged + part
    assert merged == whole and merged.n == N_REPORTS
    np.testing.assert_array_equal(m.estimate_from(merged).frequencies, m.estimate(reports).frequencies)
    np.testing.assert_array_equal(m.estimate_from(merged).std_errors, m.estimate(reports).std_errors)


@params()
def test_merge_laws_and_identity(case: Case) -> None:
    m, reports = reports_for(case)
    a, b, c = (m.aggregate(reports[i::3]) for i in range(3))
    empty = m.aggregate([])
    assert empty.n == 0 and not empty.counts.any() and empty.counts.shape == (m.k,)
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a
    assert a + empty == a == empty + a
    assert SupportCounts.from_json(json.loads(json.dumps((a + b).to_json()))) == a + b


def test_mixing_mechanisms_raises() -> None:
    m1, m2 = dn.GRR(4, epsilon=1.0), dn.GRR(4, epsilon=2.0)
    m3 = dn.GRR(["A", "B", "C", "D"], epsilon=1.0)
    s1, s2 = m1.aggregate([0, 1, 2]), m2.aggregate([0, 1, 2])
    with pytest.raises(ValueError, match="different mechanisms"):
        s1 + s2
    with pytest.raises(ValueError, match="another mechanism"):
        m2.estimate_from(s1)
    with pytest.raises(ValueError, match="another mechanism"):
        m3.estimate_from(s1)
    with pytest.raises(TypeError, match="SupportCounts"):
        m1.estimate_from({"counts": [1, 2, 3, 4], "n": 10})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s1 + 1  # type: ignore[operator]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"counts": [1, 2, 3, 4], "n": 10}, "fields"),
        ([1, 2], "fields"),
        ({"fingerprint": 5, "counts": [1, 2, 3, 4], "n": 10}, "fingerprint"),
        ({"fingerprint": "x", "counts": [1, 2, 3, 4], "n": "10"}, "'n'"),
        ({"fingerprint": "x", "counts": [1, 2, 3, 4], "n": -1}, "'n'"),
        ({"fingerprint": "x", "counts": [1, 2, 3, 40], "n": 10}, "counts"),
        ({"fingerprint": "x", "counts": [1, 2, -3, 4], "n": 10}, "counts"),
        ({"fingerprint": "x", "counts": [1.5, 2, 3, 4], "n": 10}, "counts"),
        ({"fingerprint": "x", "counts": "1234", "n": 10}, "counts"),
    ],
)
def test_aggregate_json_validated(data, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field):
        SupportCounts.from_json(data)


def test_aggregate_of_wrong_length_refused() -> None:
    m = dn.GRR(4, epsilon=1.0)
    with pytest.raises(ValueError, match="k=4"):
        m.estimate_from(SupportCounts(m.fingerprint, np.array([1, 2, 3]), 10))


def test_equality_tells_aggregates_apart() -> None:
    """``==`` is False as soon as one field differs, so the merge laws above compare something."""
    base = SupportCounts("a" * 16, np.array([1, 2, 0]), 3)
    assert base == SupportCounts("a" * 16, np.array([1, 2, 0]), 3)
    for other in (
        SupportCounts("b" * 16, np.array([1, 2, 0]), 3),
        SupportCounts("a" * 16, np.array([1, 2, 0]), 4),
        SupportCounts("a" * 16, np.array([2, 1, 0]), 3),
        SupportCounts("a" * 16, np.array([1, 2]), 3),
        MeanStat("a" * 16, 3, 1.0, 1.0),
        "a" * 16,
    ):
        assert base != other and not base == other
    stat = MeanStat("a" * 16, 3, 1.5, 1.25, np.array([1, 2]))
    assert stat == MeanStat("a" * 16, 3, 1.5, 1.25, np.array([1, 2]))
    for other in (
        MeanStat("b" * 16, 3, 1.5, 1.25, np.array([1, 2])),
        MeanStat("a" * 16, 4, 1.5, 1.25, np.array([1, 2])),
        MeanStat("a" * 16, 3, 1.0, 1.25, np.array([1, 2])),
        MeanStat("a" * 16, 3, 1.5, 1.0, np.array([1, 2])),
        MeanStat("a" * 16, 3, 1.5, 1.25, np.array([2, 1])),
        MeanStat("a" * 16, 3, 1.5, 1.25, None),
        base,
    ):
        assert stat != other and other != stat
    assert MeanStat("a" * 16, 3, 1.5, 1.25) == MeanStat("a" * 16, 3, 1.5, 1.25)


def test_merge_adds_every_field() -> None:
    a = MeanStat("f" * 16, 2, 0.5, 0.25, np.array([1, 1]))
    b = MeanStat("f" * 16, 3, -1.0, 2.0, np.array([3, 0]))
    assert a + b == MeanStat("f" * 16, 5, -0.5, 2.25, np.array([4, 1]))
    assert a + MeanStat("f" * 16, 3, -1.0, 2.0) == MeanStat("f" * 16, 5, -0.5, 2.25)
    assert sum([a, b]) == a + b and 0 + a is a
    s = SupportCounts("f" * 16, np.array([1, 0]), 1) + SupportCounts("f" * 16, np.array([1, 1]), 2)
    assert s == SupportCounts("f" * 16, np.array([2, 1]), 3)
    with pytest.raises(TypeError):
        a + s
    with pytest.raises(AggregateError, match=r"cannot merge aggregates of different mechanisms \(ffff"):
        a + MeanStat("g" * 16, 1, 0.0, 0.0)


def test_require_names_the_kind_and_the_configuration() -> None:
    s = SupportCounts("f" * 16, np.array([1, 0]), 1)
    s.require(SupportCounts, "f" * 16)
    with pytest.raises(TypeError, match="estimate_from needs a MeanStat aggregate; got SupportCounts"):
        s.require(MeanStat, "f" * 16)
    with pytest.raises(AggregateError, match=r"another mechanism configuration \(ffff+, this is gggg+\)"):
        s.require(SupportCounts, "g" * 16)


def test_json_boundaries_accepted() -> None:
    """n = 0, counts equal to n, total^2 = n total_sq exactly, cell counts adding up to n: all valid."""
    assert SupportCounts.from_json({"fingerprint": "f", "n": 0, "counts": [0, 0]}).n == 0
    assert SupportCounts.from_json({"fingerprint": "f", "n": 2, "counts": [2, 0]}).counts.tolist() == [2, 0]
    stat = MeanStat.from_json({"fingerprint": "f", "n": 4, "total": 2.0, "total_sq": 1.0, "cell_counts": [4, 0]})
    assert stat == MeanStat("f", 4, 2.0, 1.0, np.array([4, 0]))
    assert MeanStat.from_json({"fingerprint": "f", "n": 1, "total": 0, "total_sq": 0}).total_sq == 0.0
    with pytest.raises(AggregateError, match=r"'counts' must be a list of integers in 0..n=2"):
        SupportCounts.from_json({"fingerprint": "f", "n": 2, "counts": [3, 0]})
    with pytest.raises(AggregateError, match=r"fields 'fingerprint', 'n' and 'counts'"):
        SupportCounts.from_json({"fingerprint": "f", "n": 2})


def test_mean_stat_cauchy_schwarz_tolerance() -> None:
    """total^2 <= n total_sq (1 + 1e-9) + 1e-9: equality passes; 1% above is refused; no cell counts stay None."""
    edge = 3.1622776601683795e-05  # edge * edge == 1e-9 exactly in binary64
    assert edge * edge == 1e-9
    stat = MeanStat.from_json({"fingerprint": "f", "n": 1, "total": edge, "total_sq": 0.0})
    assert stat.cell_counts is None and stat.total == edge
    with pytest.raises(AggregateError, match="inconsistent with n=1 reports"):
        MeanStat.from_json({"fingerprint": "f", "n": 1, "total": 1.0, "total_sq": 0.99})


def test_empty_count_lists_are_integers() -> None:
    assert SupportCounts.from_json({"fingerprint": "f", "n": 0, "counts": []}).counts.dtype == np.int64
    assert SupportCounts.from_json({"fingerprint": "f", "n": 5, "counts": [5]}).counts.dtype == np.int64


@params()
def test_bytes_round_trip(case: Case) -> None:
    m, reports = reports_for(case)
    whole = m.aggregate(reports)
    blob = whole.to_bytes()
    assert blob[:4] == BLOB_MAGIC and blob[4] == BLOB_VERSION
    back = m.aggregate([]).from_bytes(blob)
    assert back == whole and back.to_bytes() == blob
    assert back + whole == whole + whole
    np.testing.assert_array_equal(m.estimate_from(back).frequencies, m.estimate(reports).frequencies)


def test_bytes_round_trip_of_numeric_and_discovery_aggregates() -> None:
    rng = np.random.default_rng(7)
    for m in (dn.SquareWave(0, 1, epsilon=1.0, bins=16), dn.Duchi(0, 1, epsilon=1.0)):
        stat = m.aggregate(m.privatize_many([0.1, 0.5, 0.9], rng=rng))
        assert m.aggregate([]).from_bytes(stat.to_bytes()) == stat
    for method in ("pem", "sfp"):
        hh = dn.HeavyHitters(epsilon=4.0, method=method, max_length=4, rows=2, width=8, seed=bytes(32))
        stat = hh.aggregate([hh.privatize(w, rng=rng) for w in ("ab", "abc", "b")])
        assert hh.aggregate(hh.reports_from_json([])).from_bytes(stat.to_bytes()) == stat


def test_bytes_of_another_configuration_or_length_are_refused() -> None:
    g3, g4 = dn.GRR(3, epsilon=1.0), dn.GRR(4, epsilon=1.0)
    blob = g3.aggregate([0, 1, 1]).to_bytes()
    with pytest.raises(AggregateError, match="not one of"):
        dn.GRR(3, epsilon=2.0).aggregate([]).from_bytes(blob)
    with pytest.raises(AggregateError, match="not one of"):
        g4.aggregate([]).from_bytes(blob)
    with pytest.raises(AggregateError, match="not one of"):
        g3.aggregate([]).from_bytes(blob + bytes(8))
