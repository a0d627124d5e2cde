"""Deterministic invariants of the numeric mechanisms, over generated parameters (Hypothesis).

No statistical assertion here: Hypothesis draws ranges, epsilons and
partitions, never a seed.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import deniable as dn
from deniable.mechanisms._numeric import MeanStat
from deniable.mechanisms._numeric.window import calibrate_window, window_epsilon

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
epsilons = st.floats(min_value=0.05, max_value=8.0)
cheap = st.sampled_from(["Duchi", "Piecewise", "Hybrid", "SquareWave"])


@settings(max_examples=40, deadline=None)
@given(cheap, finite, st.floats(min_value=1e-3, max_value=1e6), epsilons)
def test_realised_epsilon_never_exceeds_the_request_and_configs_round_trip(
    name: str, low: float, width: float, eps: float
) -> None:
    m = getattr(dn, name)(low, low + width, epsilon=eps)
    assert 0 < m.epsilon <= eps
    assert m.epsilon >= eps * (1 - 1e-5) or name == "Hybrid" and eps <= 0.61
    again = dn.from_config(m.to_config())
    assert again == m and again.epsilon == m.epsilon
    lo, hi = m.report_range
    assert lo <= low and hi >= low + width  # reports can always leave the range


@settings(max_examples=30, deadline=None)
@given(
    st.integers(min_value=2, max_value=1 << 12).map(lambda g: g),
    st.integers(min_value=0, max_value=2000),
    st.sampled_from([16, 32]),
    epsilons,
)
def test_window_calibration_is_the_smallest_uniform_share(cells: int, w: int, k: int, eps: float) -> None:
    window = min(2 * (w % cells) + 1, cells - 1 if (cells - 1) % 2 else cells - 2)
    if window < 1:
        return
    num = calibrate_window(cells, window, k, eps)
    assert window_epsilon(cells, window, k, num) <= eps
    assert num == 1 or window_epsilon(cells, window, k, num - 1) > eps


@settings(max_examples=40, deadline=None)
@given(st.lists(finite, min_size=3, max_size=60), st.data())
def test_merging_aggregates_in_any_grouping_gives_the_same_statistic(values, data) -> None:
    m = dn.Duchi(-1e6, 1e6, epsilon=1.0)
    reports = m.privatize_many(values, rng=0)
    cut = sorted(data.draw(st.lists(st.integers(0, len(values)), min_size=2, max_size=2)))
    parts = [m.aggregate(reports[: cut[0]]), m.aggregate(reports[cut[0] : cut[1]]), m.aggregate(reports[cut[1] :])]
    whole = m.aggregate(reports)
    for merged in (parts[0] + parts[1] + parts[2], parts[2] + (parts[1] + parts[0])):
        assert merged.n == whole.n
        assert math.isclose(merged.total, whole.total, rel_tol=1e-12, abs_tol=1e-9)
        assert math.isclose(merged.total_sq, whole.total_sq, rel_tol=1e-12)
    assert MeanStat.from_json(whole.to_json()) == whole


@settings(max_examples=40, deadline=None)
@given(finite, st.floats(min_value=1e-3, max_value=1e6), st.floats(min_value=-2e6, max_value=2e6))
def test_expected_report_is_the_clamped_value(low: float, width: float, value: float) -> None:
    """The exact law's debiased mean is the clamped value (Duchi and Piecewise)."""
    high = low + width
    for m in (dn.Duchi(low, high, epsilon=1.0), dn.Piecewise(low, high, epsilon=2.0)):
        support, probs = m.report_distribution(value)
        assert math.isclose(float(np.dot(support, probs)), min(high, max(low, value)),
                            rel_tol=1e-9, abs_tol=2e-7 * width)
