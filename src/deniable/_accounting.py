"""Privacy accounting of a device that reports in rounds (daily collection, a weekly panel).

A survey with rounds asks the same devices again and again; what protects a
device is its privacy loss over *all* its reports. This module is the pure
arithmetic of that loss (numbers in, numbers out); the collection server
(:mod:`deniable.server._rounds`) keeps the counts per device and refuses a
report that would take a device over the survey's lifetime budget.

**One question.** A mechanism's report is ``epsilon``-LDP (``m.epsilon``,
the per-report epsilon; L-GRR's and L-OSUE's ``epsilon_1``). ``r`` reports
of a device cost

* ``r * epsilon`` (basic sequential composition) for a mechanism with fresh
  randomness in every report (GRR, OUE, a survey design, ...), and
* ``min(r * epsilon, epsilon_lifetime)`` for a mechanism whose device
  memoizes its permanent randomization (RAPPOR's permanent response, the
  first round of L-GRR and L-OSUE, dBitFlip's and 1BitMean's memoized
  answers): every report of one value is a function of one memoized draw,
  an ``epsilon_lifetime``-LDP release (post-processing), and also ``r``
  reports of ``epsilon`` each (composition); both bounds hold, so their
  minimum does. ``epsilon_lifetime`` is the lifetime loss of **one** value:
  RAPPOR's ``epsilon_infinity``, ``m.lifetime_epsilon(1)`` otherwise
  (L-GRR/L-OSUE: ``epsilon_perm``; dBitFlip and 1BitMean: ``epsilon``, since
  their reports of one value repeat exactly, or with output perturbation
  ``gamma`` their memoized bits' ``epsilon_perm``).

That cap **assumes** that the device reported the same value every time
and kept its memoized state (``m.client(state=...)``). It does not protect a
value that changes: each distinct value has its own memoized draw and costs
up to another ``epsilon_lifetime`` (``m.lifetime_epsilon(d)`` for ``d``
distinct values), and a device that lost its state starts new draws. The
collector cannot tell (fresh noise hides whether the value changed), so
:func:`spent_fresh`, the uncapped ``r * epsilon`` sum, is given beside
:func:`spent`: it holds whatever the values and whatever the device kept.

**A device.** Its questions compose sequentially, so a device's loss is the
sum over questions of each question's cost for the number of reports the
device made to it (:func:`spent`). Under ``allocation: sample`` a round
answers one question drawn independently of the answers; charging only the
answered question is sound because which question was drawn carries no
information about the values.

>>> cost = ReportCost(per_report=1.0, lifetime=2.5)
>>> [cost.after(r) for r in range(5)]
[0.0, 1.0, 2.0, 2.5, 2.5]
>>> ReportCost(per_report=0.5).after(3)
1.5
>>> round_index(now=1_000.0, start=100.0, every=300)
3
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ReportCost", "report_cost", "spent", "spent_fresh", "round_index", "TOLERANCE"]

TOLERANCE = 1e-12
"""Relative float slack of budget comparisons: epsilons are rounded up, so their sums carry noise."""


@dataclass(frozen=True)
class ReportCost:
    """What a device's reports to one question cost: ``per_report`` each, at most ``lifetime`` in all.

    ``lifetime`` is ``None`` for a mechanism that does not memoize (every
    report costs ``per_report``); otherwise the loss of all reports of one
    unchanged value (see the module docstring for what that assumes).
    """

    per_report: float
    lifetime: float | None = None

    def __post_init__(self) -> None:
        if not self.per_report >= 0:  # NaN too
            raise ValueError(f"per_report must be a non-negative epsilon; got {self.per_report!r}")
        if self.lifetime is not None and not self.lifetime >= 0:
            raise ValueError(f"lifetime must be a non-negative epsilon or None; got {self.lifetime!r}")

    def after(self, reports: int) -> float:
        """Privacy loss of ``reports`` reports: ``r * per_report``, capped at ``lifetime`` if memoized."""
        if reports < 0:
            raise ValueError(f"reports must be >= 0; got {reports}")
        if reports == 0:
            return 0.0
        fresh = reports * self.per_report
        return fresh if self.lifetime is None else min(fresh, self.lifetime)

    def fresh(self, reports: int) -> float:
        """``reports * per_report``: the loss whatever the values (basic composition, no cap)."""
        return 0.0 if reports == 0 else reports * self.per_report


def report_cost(mechanism: Any) -> ReportCost:
    """The :class:`ReportCost` of a mechanism from its epsilon attributes.

    ``per_report`` is ``mechanism.epsilon``. The lifetime bound of one value
    is ``epsilon_infinity`` (RAPPOR) or ``lifetime_epsilon(1)`` (L-GRR, L-OSUE,
    dBitFlip, 1BitMean); a mechanism with neither does not memoize. An object
    with only ``epsilon`` (a survey design) costs ``epsilon`` per report.
    """
    per_report = float(mechanism.epsilon)
    lifetime: float | None = None
    if hasattr(mechanism, "epsilon_infinity"):
        lifetime = float(mechanism.epsilon_infinity)
    elif callable(getattr(mechanism, "lifetime_epsilon", None)):
        lifetime = float(mechanism.lifetime_epsilon(1))
    return ReportCost(per_report, lifetime)


def spent(costs: Mapping[str, ReportCost], reports: Mapping[str, int]) -> float:
    """A device's loss: the sum over questions of ``costs[q].after(reports[q])`` (sequential composition).

    ``reports`` counts the device's reports per question id (missing: none).
    """
    return math.fsum(cost.after(reports.get(qid, 0)) for qid, cost in costs.items())


def spent_fresh(costs: Mapping[str, ReportCost], reports: Mapping[str, int]) -> float:
    """A device's loss without the memoization cap: ``sum_q reports[q] * per_report[q]``.

    An upper bound whatever values the device reported and whether it kept
    its memoized state (basic composition of every report).
    """
    return math.fsum(cost.fresh(reports.get(qid, 0)) for qid, cost in costs.items())


def round_index(now: float, start: float, every: float) -> int:
    """The 0-based round at time ``now`` (seconds) of rounds of ``every`` seconds from ``start``.

    ``floor((now - start) / every)``: negative before ``start``.
    """
    if not every > 0:
        raise ValueError(f"every must be a positive number of seconds; got {every!r}")
    return math.floor((now - start) / every)
