"""Allocation helpers: the device's question draw, E[1/n_j], the planner's comparison, input checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import deniable as dn
from deniable import testing
from deniable._allocation import (
    assign_questions,
    check_allocation,
    compare_allocations,
    inverse_count_mean,
    sampled_estimate,
)


@pytest.mark.stat
def test_secure_assignment_is_uniform() -> None:
    draws = assign_questions(7, 70_000)  # the OS CSPRNG, as on a device
    assert draws.dtype == np.int64 and draws.min() >= 0 and draws.max() < 7
    r = testing.chi_square_gof(np.bincount(draws, minlength=7), np.full(7, 1 / 7), alpha=1e-6)
    assert r.passed, r.message
    one = assign_questions(3)
    assert isinstance(one, int) and 0 <= one < 3
    assert assign_questions(1, 5).tolist() == [0] * 5


@pytest.mark.parametrize("n,d", [(1, 2), (5, 3), (40, 4), (200, 10)])
def test_inverse_count_mean_is_exact(n: int, d: int) -> None:
    k = np.arange(1, n + 1)
    pmf = stats.binom.pmf(k, n, 1 / d)
    assert inverse_count_mean(n, d) == pytest.approx(float(np.dot(pmf, 1 / k) / pmf.sum()), rel=1e-12)


def test_inverse_count_mean_large_n_is_the_delta_method() -> None:
    n, d = 1_000_000, 5
    assert inverse_count_mean(n, d) == pytest.approx(d / n * (1 + (d - 1) / n), rel=1e-9)
    assert inverse_count_mean(10, 1) == 0.1


def test_comparison_limits() -> None:
    """Small epsilon: sampling wins by about d; large epsilon: the sampling term makes split win."""
    small = compare_allocations([2] * 4, 0.1, 100_000)
    assert small.recommended == "sample"
    assert small.ratio == pytest.approx(np.full(4, 4.0), rel=0.05)
    large = compare_allocations([2] * 4, 12.0, 100_000)
    assert large.recommended == "split" and np.all(large.ratio < 1)
    # with all shares at 0 there is no sampling term: the per-respondent variances decide
    at_zero = compare_allocations([8, 8], 1.0, 10_000, frequency=0.0)
    v_split = at_zero.split_mechanisms[0].variance(1, np.zeros(8))[0]
    v_sample = at_zero.sample_mechanisms[0].variance(1, np.zeros(8))[0]
    assert at_zero.ratio[0] == pytest.approx(v_split / 10_000 / (inverse_count_mean(10_000, 2) * v_sample), rel=1e-9)
    assert "recommended=" in repr(at_zero)


def test_respondents_target_adds_the_subsample_term() -> None:
    pop = compare_allocations([3, 3], 1.0, 1000, target="population", frequency=0.5)
    resp = compare_allocations([3, 3], 1.0, 1000, target="respondents", frequency=0.5)
    inv = inverse_count_mean(1000, 2)
    gap = pop.sample_variance[0] - resp.sample_variance[0]
    assert gap == pytest.approx(0.25 * (inv - (1000 * inv - 1) / 999), rel=1e-9)
    assert resp.split_variance[0] == pytest.approx(pop.split_variance[0] - 0.25 / 1000, rel=1e-9)


def test_sampled_estimate_standard_errors() -> None:
    m = dn.GRR(3, epsilon=1.0)
    stat = m.aggregate(m.privatize_many([0] * 300 + [1] * 200, rng=1))
    pop = sampled_estimate(m, stat, 1500, "population")
    assert np.array_equal(pop.std_errors, m.estimate_from(stat).std_errors)
    resp = sampled_estimate(m, stat, 1500, "respondents")
    base = m.estimate_from(stat, target="respondents")
    f = np.clip(base.frequencies, 0, 1)
    assert resp.std_errors == pytest.approx(np.sqrt(base.std_errors**2 + 1000 / 1499 * f * (1 - f) / 500))
    everyone = sampled_estimate(m, stat, 500, "respondents")  # n_j = n: no subsample term
    assert np.allclose(everyone.std_errors, base.std_errors)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: check_allocation("random"), "allocation must be 'split' or 'sample'"),
        (lambda: assign_questions(0), "d must be an int >= 1"),
        (lambda: inverse_count_mean(0, 2), "n must be an int >= 1"),
        (lambda: compare_allocations([], 1.0, 100), "at least one question"),
        (lambda: compare_allocations([2], math.inf, 100), "finite"),
        (lambda: compare_allocations([2], 1.0, 1), "n must be an int >= 2"),
        (lambda: compare_allocations([2], 1.0, 10, frequency=2), "frequency must be in"),
        (
            lambda: sampled_estimate(dn.GRR(2, epsilon=1), dn.GRR(2, epsilon=1).aggregate([0, 1]), 1),
            "respondents must be an int >= the question's reports",
        ),
    ],
)
def test_bad_input_is_refused(call, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        call()
