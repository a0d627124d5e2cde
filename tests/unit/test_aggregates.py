"""Mergeable aggregates travel as JSON and reject what no batch of reports could give."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable.aggregates import MeanStat, SupportCounts
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
        (GOOD_MEAN | {"counts": [1, -1, 3]}, "'counts' must be a list of integers"),
        (GOOD_MEAN | {"counts": [1, 1]}, "must add up to n=3"),
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
