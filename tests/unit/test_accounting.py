"""The privacy accounting of devices reporting in rounds (deniable._accounting).

Exact checks: the cost of ``r`` reports of one unchanged value through a
memoizing mechanism is an upper bound on the exact privacy loss of those
``r`` reports together (the max log-ratio of their joint distribution), and
the cap at the lifetime bound is what makes it bounded in ``r``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import deniable as dn
from deniable._accounting import ReportCost, report_cost, round_index, spent, spent_fresh


def test_report_costs_of_the_mechanisms() -> None:
    assert report_cost(dn.GRR(4, epsilon=1.0)) == ReportCost(dn.GRR(4, epsilon=1.0).epsilon, None)
    lgrr = dn.LGRR(3, epsilon_perm=2.0, epsilon_1=0.5)
    assert report_cost(lgrr) == ReportCost(lgrr.epsilon, lgrr.epsilon_perm)
    losue = dn.LOSUE(3, epsilon_perm=2.0, epsilon_1=0.5)
    assert report_cost(losue) == ReportCost(losue.epsilon, losue.epsilon_perm)
    flip = dn.DBitFlip(4, epsilon=1.0, d=2)
    assert report_cost(flip) == ReportCost(flip.epsilon, flip.epsilon)  # its reports of one value repeat
    rappor = dn.RAPPOR(["a", "b"], epsilon=2.0, p=0.25, q=0.75, num_cohorts=4)
    assert report_cost(rappor) == ReportCost(rappor.epsilon, rappor.epsilon_infinity)
    mean = dn.OneBitMean(0, 10, epsilon=1.0)
    assert report_cost(mean) == ReportCost(mean.epsilon, mean.epsilon)


def test_cost_after_rounds() -> None:
    fresh = ReportCost(0.5)
    assert [fresh.after(r) for r in range(4)] == [0.0, 0.5, 1.0, 1.5]
    capped = ReportCost(0.5, lifetime=1.2)
    assert [capped.after(r) for r in range(5)] == [0.0, 0.5, 1.0, 1.2, 1.2]
    assert capped.after(10**9) == 1.2 and capped.fresh(4) == 2.0
    assert ReportCost(math.inf).after(0) == 0.0 and ReportCost(math.inf).after(1) == math.inf
    costs = {"a": ReportCost(1.0), "b": capped, "plain": ReportCost(0.0)}
    assert spent(costs, {"a": 2, "b": 3, "plain": 3}) == pytest.approx(3.2)
    assert spent_fresh(costs, {"a": 2, "b": 3}) == pytest.approx(3.5)
    assert spent(costs, {}) == 0.0


@pytest.mark.parametrize("bad", [-1.0, math.nan])
def test_bad_costs_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="per_report"):
        ReportCost(bad)
    with pytest.raises(ValueError, match="lifetime"):
        ReportCost(1.0, lifetime=bad)
    with pytest.raises(ValueError, match="reports"):
        ReportCost(1.0).after(-1)


def test_round_index() -> None:
    assert round_index(100.0, 100.0, 60) == 0
    assert round_index(159.999, 100.0, 60) == 0
    assert round_index(160.0, 100.0, 60) == 1
    assert round_index(99.0, 100.0, 60) == -1
    with pytest.raises(ValueError, match="every"):
        round_index(0.0, 0.0, 0)


def _joint_loss_lgrr(m: dn.LGRR, reports: int) -> float:
    """Exact privacy loss of ``reports`` reports of one value from one memoized first round.

    ``P(y_1..y_r | x) = sum_z P1(z | x) prod_i P2(y_i | z)``; the loss is the
    largest ``log P(y | x) / P(y | x')`` over outputs ``y`` and inputs ``x, x'``.
    """
    (p1, q1), (p2, q2) = m.rounds
    k = m.k
    first = np.full((k, k), float(q1)) + np.eye(k) * float(p1 - q1)
    second = np.full((k, k), float(q2)) + np.eye(k) * float(p2 - q2)
    loss = 0.0
    for ys in itertools.product(range(k), repeat=reports):
        given_z = np.prod([second[:, y] for y in ys], axis=0)  # P(ys | z), per z
        p = first @ given_z  # P(ys | x), per x
        loss = max(loss, math.log(p.max() / p.min()))
    return loss


@pytest.mark.parametrize(("perm", "one"), [(1.0, 0.5), (2.0, 0.9)])
def test_the_capped_cost_bounds_the_exact_loss_of_repeated_lgrr_reports(perm: float, one: float) -> None:
    """For one unchanged value, ``min(r epsilon_1, epsilon_perm)`` bounds the exact loss of ``r`` reports.

    Power: the cap binds (``r epsilon_1 > epsilon_perm`` for the larger
    ``r``), so it is the cap, not composition, that is checked there; and the
    exact loss grows past one report's, so a cost that stayed at
    ``epsilon_1`` would fail.
    """
    m = dn.LGRR(3, epsilon_perm=perm, epsilon_1=one)
    cost = report_cost(m)
    losses = [_joint_loss_lgrr(m, r) for r in range(1, 7)]
    for r, loss in enumerate(losses, start=1):
        assert loss <= cost.after(r) * (1 + 1e-12), (r, loss, cost.after(r))
    assert losses[0] == pytest.approx(m.epsilon, rel=1e-9)
    assert 6 * m.epsilon > m.epsilon_perm  # the cap binds at r = 6
    assert losses[-1] > m.epsilon * 1.2  # repeated reports do leak more than one
    assert losses == sorted(losses)
