"""Range mechanisms: configuration, reports, aggregates, the linear algebra of the estimate, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import deniable as dn
from deniable.errors import CategoryError, ReportError

MECHANISMS = [
    dn.HierarchicalHistogram(0, 100, bins=64, epsilon=1.0, branching=4),
    dn.HierarchicalHistogram(0, 100, bins=8, epsilon=1.0, branching=2, oracle="olh"),
    dn.HaarHRR(0, 100, bins=32, epsilon=2.0),
]
IDS = ["hh-oue", "hh-olh", "haar"]


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_config_round_trip_and_merge(m: dn.RangeMechanism) -> None:
    again = dn.from_config(json.loads(json.dumps(m.to_config())))
    assert again == m and again.fingerprint == m.fingerprint
    rng = np.random.default_rng(3)
    values = rng.uniform(0, 100, 3000)
    reports = m.privatize_many(values, rng=rng)
    whole = m.aggregate(reports)
    assert whole == m.aggregate(reports[:1000]) + m.aggregate(reports[1000:])
    assert m.aggregate_from_json(whole.to_json()) == whole
    back = m.reports_from_json(json.loads(json.dumps(m.reports_to_json(reports))))
    assert m.aggregate(back) == whole
    est = m.estimate_from(whole)
    assert est.frequencies.sum() == pytest.approx(1.0)
    assert est.cdf(100).estimate == pytest.approx(1.0) and est.cdf(0).estimate == pytest.approx(0.0)
    assert est.range(0, 100).std_error == pytest.approx(0.0, abs=1e-12)  # the total is known exactly


def test_hierarchical_query_weights_reproduce_the_estimate() -> None:
    """The adjoint's weights ``u_l`` applied to the level estimates give the consistent leaves' queries."""
    m = dn.HierarchicalHistogram(0, 1, bins=27, epsilon=1.0, branching=3)
    rng = np.random.default_rng(4)
    ys = [rng.normal(size=o.k) for o in m.oracles]
    alpha = m._alphas(np.array([100, 250, 400]))
    leaves = m._consistent(ys, alpha)
    w = rng.normal(size=(27, 5))
    weights, constant = m._adjoint(w, alpha)
    direct = sum(u.T @ y for u, y in zip(weights, ys, strict=True)) + constant
    assert np.allclose(direct, w.T @ leaves)
    # consistent: every node is the sum of its children, the root is 1
    assert leaves.sum() == pytest.approx(1.0)


def test_hierarchical_consistency_is_least_squares() -> None:
    """With equal level variances, constrained inference is the least-squares projection (Hay et al.)."""
    m = dn.HierarchicalHistogram(0, 1, bins=4, epsilon=1.0, branching=2)
    rng = np.random.default_rng(5)
    ys = [rng.normal(size=2), rng.normal(size=4)]
    leaves = m._consistent(ys, m._alphas(np.array([50, 50])))
    # minimise |A x - y|^2 subject to sum x = 1, A stacking the level sums
    a = np.vstack([np.kron(np.eye(2), np.ones(2)), np.eye(4)])
    y = np.concatenate(ys)
    kkt = np.block([[2 * a.T @ a, np.ones((4, 1))], [np.ones((1, 4)), np.zeros((1, 1))]])
    solution = np.linalg.solve(kkt, np.concatenate([2 * a.T @ y, [1.0]]))[:4]
    assert np.allclose(leaves, solution)


def test_query_answers_and_intervals() -> None:
    m = dn.HaarHRR(0, 1000, bins=64, epsilon=2.0)
    rng = np.random.default_rng(6)
    values = rng.gamma(3.0, 80.0, 30_000).clip(0, 1000)
    est = m.estimate(m.privatize_many(values, rng=rng))
    r = est.range(100, 250)
    low, high = r.confidence_interval(0.95)
    assert low < r.estimate < high and r.std_error > 0
    c = est.cdf([100, 300])
    assert c.estimate.shape == (2,) and c.std_error.shape == (2,)
    q = est.quantile(0.5)
    lo, hi = q.confidence_interval(0.9)
    assert lo <= q.value <= hi
    assert q.to_dict()["estimate"] == pytest.approx(q.value)
    assert set(est.to_dict()) >= {"bins", "estimate", "std_error", "ci_low", "ci_high"}


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_bad_input_names_the_argument(m: dn.RangeMechanism) -> None:
    rng = np.random.default_rng(7)
    with pytest.raises(CategoryError, match="outside the domain"):
        m.privatize_many([50, 101], rng=rng)
    est = m.estimate(m.privatize_many(rng.uniform(0, 100, 2000), rng=rng))
    with pytest.raises(ValueError, match="^a must be in the domain"):
        est.range(-1, 50)
    with pytest.raises(ValueError, match="^b must be in the domain"):
        est.range(10, 150)
    with pytest.raises(ValueError, match="a must not exceed b"):
        est.range(60, 50)
    with pytest.raises(ValueError, match="^x must be in the domain"):
        est.cdf(float("nan"))
    for q in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match=r"^q must be in \(0, 1\)"):
            est.quantile(q)
    with pytest.raises(ValueError, match="respondents"):
        m.estimate(m.privatize_many([1.0], rng=rng), target="respondents")


def test_bad_parameters_and_reports() -> None:
    with pytest.raises(ValueError, match="bins must be a power of branching=4"):
        dn.HierarchicalHistogram(0, 1, bins=32, epsilon=1.0, branching=4)
    with pytest.raises(ValueError, match="bins must be a power of two"):
        dn.HaarHRR(0, 1, bins=48, epsilon=1.0)
    with pytest.raises(ValueError, match="low must be below high"):
        dn.HaarHRR(1, 1, bins=8, epsilon=1.0)
    with pytest.raises(ValueError, match="oracle must be"):
        dn.HierarchicalHistogram(0, 1, bins=16, epsilon=1.0, oracle="grr")
    m = dn.HaarHRR(0, 1, bins=8, epsilon=1.0)
    with pytest.raises(ReportError, match="level must be in 1..3") as info:
        m.reports_from_json([{"level": 1, "index": 0, "bit": 1}, {"level": 4, "index": 0, "bit": 1}])
    assert info.value.index == 1
    with pytest.raises(ReportError, match="index must be below"):
        m.reports_from_json([{"level": 2, "index": 2, "bit": 1}])
    h = dn.HierarchicalHistogram(0, 1, bins=16, epsilon=1.0)
    with pytest.raises(ReportError, match="level"):
        h.reports_from_json([{"level": 3, "report": "0000"}])
    with pytest.raises(ReportError, match="hex string"):
        h.reports_from_json([{"level": 2, "report": "00"}])


def test_a_level_without_reports_gives_no_standard_error() -> None:
    m = dn.HierarchicalHistogram(0, 1, bins=16, epsilon=1.0)
    one = m.privatize_many([0.3], rng=np.random.default_rng(8))
    est = m.estimate(one)
    assert np.isnan(est.cdf(0.5).std_error)
    assert est.frequencies.sum() == pytest.approx(1.0)


def test_the_planner_follows_the_variances() -> None:
    """Cormode et al.: the Haar mechanism wins at small epsilon, a hierarchy (branching 4 to 8, OUE) at
    larger ones; the choice is the candidate with the lowest mean query variance."""
    small = dn.best_range_mechanism(0, 1, bins=1024, epsilon=0.5, queries="long")
    assert small.name == "HaarHRR" and isinstance(small.mechanism, dn.HaarHRR)
    large = dn.best_range_mechanism(0, 1, bins=1024, epsilon=2.0, queries="short")
    assert isinstance(large.mechanism, dn.HierarchicalHistogram) and large.mechanism.branching in (2, 4)
    assert large.variances[large.name] == min(large.variances.values())
    assert set(large.variances) == {"HaarHRR", "HierarchicalHistogram(B=2, OUE)", "HierarchicalHistogram(B=4, OUE)"}
    explicit = dn.best_range_mechanism(0, 10, bins=64, epsilon=1.0, queries=[(1, 2), (3, 9)])
    assert explicit.variances[explicit.name] == min(explicit.variances.values())
    with pytest.raises(ValueError, match="bins must be a power of 2, 4, 8 or 16"):
        dn.best_range_mechanism(0, 1, bins=100, epsilon=1.0)
    with pytest.raises(ValueError, match="queries must be one of"):
        dn.best_range_mechanism(0, 1, bins=64, epsilon=1.0, queries="medium")
