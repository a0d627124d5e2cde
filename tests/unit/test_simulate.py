"""Simulated surveys: huge populations by joint binomial draws, reproducible from a seed."""

from __future__ import annotations

import time

import numpy as np
import pytest

import deniable as dn
from deniable import testing


@pytest.mark.stat
@pytest.mark.parametrize("make", [lambda: dn.GRR(10, epsilon=1.0), lambda: dn.OUE(10, epsilon=1.0)],
                         ids=["GRR", "OUE"])
def test_simulate_a_billion_respondents(make, rng: np.random.Generator) -> None:  # type: ignore[no-untyped-def]
    """n = 10^9 in well under a second (joint binomial draws), and the estimate is within
    z sd of the truth per category (alpha 5e-7 per mechanism, Bonferroni over its 10 categories)."""
    m = make()
    truth = np.array([0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.0, 0.0])
    start = time.perf_counter()
    est = dn.simulate(m, truth, 10**9, rng=rng, target="respondents")
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"simulate took {elapsed:.2f} s"
    assert est.n == 10**9 and est.support_counts.sum() > 0
    np.testing.assert_allclose(est.truth, truth, atol=1e-9)
    sd = np.sqrt(m.variance(10**9, est.truth, "respondents"))
    assert (res := testing.estimate_check(est.frequencies, est.truth, sd, 1e-6 / 2)), res.message
    assert est.std_errors is not None and np.all(est.std_errors < 1e-3)


def test_simulate_is_reproducible_and_rounds_population() -> None:
    m = dn.OLH(5, epsilon=1.0)
    a = dn.simulate(m, [0.2] * 5, 1000, rng=5)
    b = dn.simulate(m, [0.2] * 5, 1000, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.frequencies, b.frequencies)
    est = dn.simulate(dn.GRR(3, epsilon=1.0), [1 / 3] * 3, 10, rng=1, target="respondents")
    assert sorted((est.truth * 10).round().astype(int).tolist()) == [3, 3, 4]
