"""HeavyHitters: items, bad input, merging, identify's filters and frame."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn
from deniable.errors import AggregateError
from deniable.heavy import HeavyStat


def make(**kw: object) -> dn.HeavyHitters:
    return dn.HeavyHitters(epsilon=kw.pop("epsilon", 6.0), max_length=kw.pop("max_length", 4),  # type: ignore[arg-type]
                           top_k=8, rows=16, width=256, seed=bytes(32), **kw)  # type: ignore[arg-type]


def test_items_mark_end_and_cut() -> None:
    hh = make()
    items, inverse = hh.items(["ab", "", "abcd", "abcde", "abcdé", "ab"])
    assert items[0] == b"ab\xff\xff\xff" and items[1] == b"\xff" * 5 and items[2] == b"abcd\xff"
    assert items[3] == b"abcd\xfe"  # cut after 4 bytes, flagged: not the same item as "abcd"
    assert items[4] == b"abcd\xfe"  # "é" does not fit: cut at the character boundary
    assert inverse.tolist() == [0, 1, 2, 3, 4, 0]
    assert make(max_length=5).items(["abcdé"])[0][0] == b"abcd\xfe\xff"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="method must be one of \\['pem'\\]; got 'sfp'"):
        dn.HeavyHitters(epsilon=1, method="sfp")
    with pytest.raises(ValueError, match="max_length must be an integer in 1..254"):
        dn.HeavyHitters(epsilon=1, max_length=0)
    with pytest.raises(ValueError, match="top_k"):
        dn.HeavyHitters(epsilon=1, top_k=0)
    hh = make()
    with pytest.raises(ValueError, match=r"values\[1\] is not valid UTF-8"):
        hh.privatize_many(["a", b"\xc3"])
    with pytest.raises(TypeError, match=r"values\[0\] must be a string"):
        hh.privatize_many([3])
    reports = hh.privatize_many(["a"] * 5, rng=1)
    bad = reports.copy()
    bad["level"][2] = 9
    with pytest.raises(ValueError, match="report 2: level must be in 1..5; got 9"):
        hh.aggregate(bad)
    with pytest.raises(ValueError, match="structured array with fields"):
        hh.aggregate(np.zeros(3))
    with pytest.raises(TypeError, match="HeavyStat"):
        hh.identify(hh.oracle.aggregate([]))  # type: ignore[arg-type]


def test_levels_merge_and_refuse_other_configs() -> None:
    hh = make()
    reports = hh.privatize_many(["x", "yy", "zzz"] * 100, rng=2)
    whole = hh.aggregate(reports)
    assert isinstance(whole, HeavyStat) and whole.n == 300 and len(whole.levels) == 5
    merged = hh.aggregate(reports[:123]) + hh.aggregate(reports[123:])
    assert all(a == b for a, b in zip(merged.levels, whole.levels, strict=True))
    assert sorted(set(reports["level"].tolist())) == [1, 2, 3, 4, 5]
    back = hh.aggregate_from_json(whole.to_json())
    assert all(a == b for a, b in zip(back.levels, whole.levels, strict=True))
    with pytest.raises(AggregateError, match="levels"):
        hh.aggregate_from_json({**whole.to_json(), "levels": whole.to_json()["levels"][:2]})
    with pytest.raises(AggregateError, match="fields 'fingerprint' and 'levels'"):
        hh.aggregate_from_json([])
    other = dn.HeavyHitters(epsilon=6.0, max_length=4, top_k=8, rows=16, width=256, seed=bytes(range(32)))
    with pytest.raises(AggregateError):
        other.identify(whole)


def test_identify_filters_and_frame() -> None:
    hh = make()
    values = ["apple"] * 2000 + ["pear"] * 1500 + [""] * 1000 + [f"t{i}" for i in range(500)]
    stat = hh.aggregate(hh.privatize_many(values, rng=3))
    found = hh.identify(stat)
    assert found.values[:3] == ("appl", "pear", "") and found.truncated[:3].tolist() == [True, False, False]
    assert hh.identify(stat, top=1).values == ("appl",)
    assert len(hh.identify(stat, threshold=10**9)) == 0
    frame = found.to_frame()
    assert list(frame.columns) == ["value", "count", "std_error", "ci_low", "ci_high", "truncated"]
    assert (frame["ci_low"] < frame["count"]).all() and (frame["count"] < frame["ci_high"]).all()
    assert len(hh.identify(hh.aggregate(hh.privatize_many([], rng=4)))) == 0
