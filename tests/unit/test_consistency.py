"""Consistency post-processing: exact properties (Hypothesis over estimate vectors)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

import deniable as dn
from deniable import _consistency as consistency

vectors = st.integers(2, 40).flatmap(
    lambda k: arrays(np.float64, k, elements=st.floats(-2.0, 3.0, allow_nan=False, allow_infinity=False))
)


def on_simplex(x: np.ndarray) -> bool:
    return bool(np.all(x >= 0) and abs(x.sum() - 1) <= 1e-12)


@given(vectors)
@settings(max_examples=150, deadline=None)
def test_norm_sub_is_the_simplex_projection(f: np.ndarray) -> None:
    sub, proj = consistency.norm_sub(f), consistency.project_simplex(f)
    np.testing.assert_allclose(sub, proj, rtol=0, atol=1e-12)
    assert on_simplex(sub) and on_simplex(proj)
    np.testing.assert_allclose(consistency.project_simplex(proj), proj, rtol=0, atol=1e-12)


@given(vectors, st.data())
@settings(max_examples=100, deadline=None)
def test_projection_never_moves_away_from_a_simplex_point(f: np.ndarray, data: st.DataObject) -> None:
    """Projection onto a convex set is non-expansive towards any point of the set (e.g. the truth)."""
    w = np.array(data.draw(st.lists(st.floats(0, 1), min_size=f.size, max_size=f.size)))
    truth = w / w.sum() if w.sum() > 0 else np.full(f.size, 1 / f.size)
    proj = consistency.project_simplex(f)
    assert np.linalg.norm(proj - truth) <= np.linalg.norm(f - truth) + 1e-12


@given(vectors)
@settings(max_examples=100, deadline=None)
def test_other_methods(f: np.ndarray) -> None:
    assert np.all(consistency.clip(f) >= 0)
    np.testing.assert_array_equal(consistency.clip(f)[f > 0], f[f > 0])
    assert abs(consistency.normalize(f).sum() - 1) <= 1e-12
    np.testing.assert_allclose(np.diff(consistency.normalize(f)), np.diff(f), atol=1e-12)
    assert on_simplex(consistency.norm_mul(f))
    se = np.full(f.size, 0.1)
    cut = consistency.base_cut(f, se)
    threshold = stats.norm.isf(0.05 / f.size) * 0.1
    np.testing.assert_array_equal(cut, np.where(f >= threshold, f, 0.0))


def test_projection_examples() -> None:
    np.testing.assert_allclose(consistency.project_simplex(np.array([0.5, 0.5])), [0.5, 0.5])
    np.testing.assert_allclose(consistency.project_simplex(np.array([-1.0, -2.0])), [1.0, 0.0])
    np.testing.assert_allclose(consistency.norm_sub(np.array([-1.0, -2.0])), [1.0, 0.0])
    np.testing.assert_allclose(consistency.project_simplex(np.array([0.8, 0.6, -0.2])), [0.6, 0.4, 0.0])
    np.testing.assert_allclose(consistency.norm_mul(np.array([-1.0, -2.0])), [0.5, 0.5])


def test_nothing_is_applied_by_default() -> None:
    """The estimate is the unbiased one: it may be negative and (for OUE) not sum to 1."""
    m = dn.OUE(50, epsilon=1.0)
    est = dn.simulate(m, [0.6, 0.4] + [0.0] * 48, 2000, rng=11)  # 48 zero shares: some estimate < 0
    assert est.post_processing == "none" and est.std_errors is not None
    assert (est.frequencies < 0).any()
    assert est.frequencies.sum() != pytest.approx(1.0, abs=1e-9)
    fixed = est.consistent()
    assert fixed.post_processing == "norm-sub" and fixed.std_errors is None
    assert on_simplex(fixed.frequencies)
    np.testing.assert_array_equal(fixed.observed, est.observed)
    np.testing.assert_array_equal(est.consistent("project").frequencies, fixed.frequencies)
    with pytest.raises(ValueError, match="post-processed"):
        fixed.ci(0.95)
    low, high = fixed.ci(0.95, method="clopper-pearson")  # from the support counts, still valid
    np.testing.assert_array_equal(low, est.ci(0.95, method="clopper-pearson")[0])
    assert fixed.consistent("clip").post_processing == "norm-sub+clip"
    assert "norm-sub" in repr(fixed)
    with pytest.raises(ValueError, match="standard errors"):
        fixed.consistent("base-cut")
    assert est.consistent("base-cut").std_errors is None


def test_norm_mul_examples() -> None:
    """Clip negatives, then scale: [0.6, -0.2, 0.2] -> [0.75, 0, 0.25]; nothing positive left -> uniform."""
    np.testing.assert_allclose(consistency.norm_mul(np.array([0.6, -0.2, 0.2])), [0.75, 0.0, 0.25], rtol=1e-15)
    np.testing.assert_allclose(consistency.norm_mul(np.array([1.5, 0.5, 0.0, -3.0])), [0.75, 0.25, 0, 0], rtol=1e-15)
    np.testing.assert_array_equal(consistency.norm_mul(np.array([0.0, -1.0, 0.0, -0.5])), [0.25] * 4)


def test_normalize_and_clip_examples() -> None:
    np.testing.assert_allclose(consistency.normalize(np.array([1.0, -0.2, 0.5])), [0.9, -0.3, 0.4], atol=1e-15)
    np.testing.assert_array_equal(consistency.clip(np.array([0.6, -0.2, 0.0])), [0.6, 0.0, 0.0])


def test_base_cut_keeps_estimates_at_the_threshold_and_needs_standard_errors() -> None:
    """Bonferroni threshold Phi^-1(1 - alpha/k) SE, one-sided; an estimate equal to it is kept."""
    threshold = stats.norm.isf(0.01 / 4) * 0.1
    f = np.array([threshold, np.nextafter(threshold, 0), 0.5, -0.1])
    np.testing.assert_array_equal(consistency.base_cut(f, np.full(4, 0.1), alpha=0.01), [f[0], 0, 0.5, 0])
    with pytest.raises(ValueError, match="^base-cut needs the unbiased estimate.s standard errors$"):
        consistency.base_cut(f, None)


def test_apply_by_name() -> None:
    f = np.array([0.6, -0.2, 0.2])
    se = np.full(3, 0.01)
    for name, fn in [
        ("clip", consistency.clip), ("normalize", consistency.normalize), ("norm-mul", consistency.norm_mul),
        ("norm-sub", consistency.norm_sub), ("project", consistency.project_simplex),
    ]:
        np.testing.assert_array_equal(consistency.apply(name, f), fn(f))
    np.testing.assert_array_equal(consistency.apply("base-cut", f, se), consistency.base_cut(f, se))
    with pytest.raises(ValueError, match=r"consistency method must be one of \['base-cut', .*got 'norm'"):
        consistency.apply("norm", f)
