"""Estimates by slice (``m.estimate(reports, by=labels)``): each slice is the estimate of its own reports,
the long-form table, the small-slice rule, and bad labels refused naming ``by``."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import deniable as dn
from deniable._slices import SMALL_SLICE_MIN, small_slice_threshold
from tests.randomizers import RANDOMIZERS, Randomizer


def _quiet(m, reports, by, **kw):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dn.DeniableWarning)
        return m.estimate(reports, by=by, **kw)


@pytest.mark.parametrize("entry", [r for r in RANDOMIZERS if r.wire_id != "heavy-hitters"], ids=lambda r: r.id)
def test_each_slice_is_the_estimate_of_its_own_reports(entry: Randomizer, rng: np.random.Generator) -> None:
    m = entry.build()
    reports = m.privatize_many([entry.value] * 60, rng=rng)
    labels = np.array(["b", "a", "c"] * 20)
    sliced = _quiet(m, reports, labels)
    assert sliced.labels == ("a", "b", "c") and list(sliced.n) == [20, 20, 20]
    for label in "abc":
        alone = m.estimate(reports[labels == label])
        assert sliced[label].to_dict() == alone.to_dict()


def test_long_form_table_and_mapping(rng: np.random.Generator) -> None:
    m = dn.GRR(["x", "y", "z"], epsilon=2.0)
    reports = m.privatize_many(rng.choice(["x", "y", "z"], 3000), rng=rng)
    version = pd.Series(rng.choice(["v1", "v2"], 3000), name="app_version")
    sliced = m.estimate(reports, by=version, target="respondents")
    frame = sliced.to_frame()
    assert list(frame.columns[:2]) == ["slice", "category"] and len(frame) == 6
    assert {"estimate", "std_error", "ci_low", "ci_high", "n", "small"} <= set(frame.columns)
    assert frame.attrs["by"] == "app_version" and sliced.by == "app_version"
    assert list(frame["n"]) == [sliced.n[0]] * 3 + [sliced.n[1]] * 3
    v2 = frame[frame["slice"] == "v2"]
    np.testing.assert_array_equal(v2["estimate"], sliced["v2"].frequencies)
    np.testing.assert_array_equal(v2["ci_low"], sliced["v2"].ci()[0])
    data = sliced.to_dict(0.9)
    assert data["by"] == "app_version" and data["target"] == "respondents" and data["confidence_level"] == 0.9
    assert data["slices"] == ["v1"] * 3 + ["v2"] * 3 and data["category"] == ["x", "y", "z"] * 2
    assert set(sliced) == {"v1", "v2"} and len(sliced) == 2 and "v3" not in sliced
    low, high = sliced.confidence_interval(0.9, "wilson")
    assert low.shape == (6,) and np.all(low <= high)
    assert sliced.std_errors.shape == (6,)
    assert "<table" in sliced._repr_html_() and "v2" in repr(sliced)
    with pytest.raises(KeyError, match="no slice 'v3'"):
        sliced["v3"]


def test_mean_slices_have_one_row_each(rng: np.random.Generator) -> None:
    m = dn.Duchi(0, 10, epsilon=1.0)
    arm = rng.choice([0, 1], 4000)
    sliced = m.estimate(m.privatize_many(np.where(arm == 1, 7.0, 3.0), rng=rng), by=arm)
    frame = sliced.to_frame()
    assert list(frame["slice"]) == [0, 1] and "category" not in frame.columns
    assert frame["estimate"][1] > frame["estimate"][0]


def test_small_slice_rule_and_warning(rng: np.random.Generator) -> None:
    """The rule of :mod:`deniable._slices`: max(30, z^2 V / 0.1^2), V the worst per-report variance."""
    m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    p, q = m.support_rates()
    a, b = q[0] * (1 - q[0]) / (p[0] - q[0]) ** 2, (1 - p[0] - q[0]) / (p[0] - q[0])
    f = min(1.0, max(0.0, (1 + b) / 2))
    z = 1.959963984540054
    expected = math.ceil(z * z * (a + b * f + f * (1 - f)) / 0.01 - 1e-9)
    assert small_slice_threshold(m) == expected == dn.sample_size(m, margin=0.1)
    assert small_slice_threshold(dn.GRR(2, epsilon=8.0), "respondents") == SMALL_SLICE_MIN
    duchi = dn.Duchi(0, 10, epsilon=1.0)
    assert small_slice_threshold(duchi) == math.ceil(z * z * (duchi.variance(1) + 25) / 1.0 - 1e-9)
    labels = np.array(["big"] * (expected + 5) + ["tiny"] * 40)
    reports = m.privatize_many(["a"] * labels.size, rng=rng)
    with pytest.warns(dn.DeniableWarning, match=r"1 slice\(s\) .* fewer than \d+ reports.*\['tiny'\]"):
        sliced = m.estimate(reports, by=labels)
    assert list(sliced.small) == [False, True] and sliced.min_n == expected
    assert list(sliced.to_frame()["small"]) == [False] * 3 + [True] * 3


def test_bad_labels_are_refused_naming_by(rng: np.random.Generator) -> None:
    m = dn.GRR(["a", "b"], epsilon=1.0)
    reports = m.privatize_many(["a"] * 10, rng=rng)
    with pytest.raises(ValueError, match=r"by must hold one label per report: 10 reports, got labels of shape \(9,\)"):
        m.estimate(reports, by=["x"] * 9)
    with pytest.raises(ValueError, match="by must hold one label per report"):
        m.estimate(reports, by=np.zeros((10, 2)))
    with pytest.raises(ValueError, match="by has a missing label"):
        m.estimate(reports, by=[1.0] * 9 + [np.nan])
    unused = pd.Categorical(["x"] * 10, categories=["x", "y"])
    with pytest.raises(ValueError, match="by: the slice 'y' has no reports"):
        m.estimate(reports, by=unused)
    with pytest.raises(ValueError, match="by: no reports"):
        m.estimate(reports[:0], by=[])
    duchi = dn.Duchi(0, 1, epsilon=1.0)
    with pytest.raises(ValueError, match=r"by: slice 'one' \(1 reports\): an estimate needs at least 2"):
        _quiet(duchi, duchi.privatize_many([0.5] * 5, rng=rng), ["one"] + ["four"] * 4)


def test_categorical_order_is_kept(rng: np.random.Generator) -> None:
    m = dn.BinaryRR(epsilon=2.0)
    arm = pd.Series(pd.Categorical(["treatment", "control"] * 50, categories=["treatment", "control"]), name="arm")
    sliced = _quiet(m, m.privatize_many([True] * 100, rng=rng), arm)
    assert sliced.labels == ("treatment", "control") and sliced.by == "arm"
