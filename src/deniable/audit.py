"""Empirical privacy audit: a black-box lower confidence bound on epsilon.

For neighbouring inputs ``x, x'`` the audit runs the mechanism's real
``privatize_many`` path ``trials`` times on each, maps every report to a
small output event, and for each event ``E`` bounds
``P[E | x]`` from below and ``P[E | x']`` from above with Clopper-Pearson
intervals at level ``alpha / (number of comparisons)`` (Bonferroni). Then
``ln(lower / upper) <= epsilon`` holds for a correct mechanism with
probability at least ``1 - alpha``; the audit's ``epsilon_lower`` is the
largest such bound. A mechanism that is ``passed`` did not show more privacy
loss than it claims; one whose true epsilon is 20% above its claim is caught
with ``trials = 10^5`` (DP-Auditorium's shape; Arcolezi & Gambs 2023).

Default events for frequency oracles: whether the report supports ``x`` and
whether it supports ``x'`` (four cells). For every pure oracle these cells
carry the mechanism's full privacy loss between ``x`` and ``x'``. A mechanism
with another structure supplies ``audit_events(reports, x, x')`` (RAPPOR does),
and one whose loss depends on which inputs are compared ``audit_pairs()``
(RAPPOR: two categories whose Bloom filters realise its epsilon).

This module is ``dn.audit``; calling it calls :func:`audit`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._callable_module import make_callable
from deniable._intervals import clopper_pearson_lower, clopper_pearson_upper
from deniable.mechanisms._numeric.base import NumericMechanism

__all__ = ["AuditResult", "audit", "clopper_pearson"]

EventFn = Callable[[Any, Any, Any, Any], NDArray[np.int64]]


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """Two *one-sided* ``1 - alpha`` Clopper-Pearson bounds ``(lower, upper)`` on a binomial rate.

    ``(clopper_pearson_lower(...), clopper_pearson_upper(...))`` of
    :mod:`deniable._intervals`, kept here under its old name; the two-sided
    interval is :func:`deniable._intervals.clopper_pearson`.
    """
    return float(clopper_pearson_lower(successes, trials, alpha)), float(
        clopper_pearson_upper(successes, trials, alpha)
    )


@dataclass(frozen=True)
class AuditResult:
    r"""Outcome of :func:`audit`.

    ``epsilon_lower`` is a ``1 - alpha`` lower confidence bound on the
    mechanism's true epsilon; ``passed`` is ``epsilon_lower <= epsilon_claimed``.

    Parameters
    ----------
    epsilon_claimed : float
        The mechanism's own epsilon.
    epsilon_lower : float
        The largest :math:`\ln(\underline{P}[E \mid x] / \overline{P}[E \mid x'])`
        over the events and input pairs, with Clopper-Pearson bounds at level
        ``alpha / comparisons``.
    alpha : float
        The probability that a correct mechanism fails the audit.
    trials : int
        Reports drawn per input.
    worst : tuple or None
        ``(x, x', event)`` that gave ``epsilon_lower``; None if no event
        gave a finite bound.
    comparisons : int
        The number of one-sided bounds (the Bonferroni divisor).
    details : list of dict, optional
        One record per comparison (not shown by ``repr``).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> result = dn.audit(m, trials=2000, pairs=[("a", "b")], rng=np.random.default_rng(0))
    >>> result.passed, result.comparisons, round(result.epsilon_lower, 3)
    (True, 8, 0.708)
    """

    epsilon_claimed: float
    epsilon_lower: float
    alpha: float
    trials: int
    worst: tuple[Any, Any, int] | None
    comparisons: int
    details: list[dict[str, Any]] = field(default_factory=list, repr=False)

    @property
    def passed(self) -> bool:
        return self.epsilon_lower <= self.epsilon_claimed

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"{verdict}: claimed epsilon {self.epsilon_claimed:.6g}, measured lower bound "
            f"{self.epsilon_lower:.6g} (alpha={self.alpha:g}, {self.trials} trials per input, "
            f"{self.comparisons} comparisons)"
        )


def _support_events(mechanism: Any, reports: Any, x: Any, other: Any) -> NDArray[np.int64]:
    return 2 * mechanism.supports(reports, x).astype(np.int64) + mechanism.supports(reports, other)


def default_pairs(mechanism: Any) -> list[tuple[Any, Any]]:
    """Extreme and middle neighbouring pairs of a frequency oracle's categories (``domain``).

    For a numeric mechanism the values are its range's endpoints ``bounds``:
    the pairs ``(low, high)`` and ``(high, low)``. A mechanism with
    ``audit_pairs()`` chooses its own.
    """
    chosen = getattr(mechanism, "audit_pairs", None)
    if chosen is not None:
        return list(chosen())
    d = list(mechanism.bounds if isinstance(mechanism, NumericMechanism) else mechanism.domain)
    k = len(d)
    picks = [(0, 1), (0, k - 1), (k // 2, k // 2 - 1 if k > 2 else 0)]
    seen: list[tuple[Any, Any]] = []
    for i, j in picks:
        if i != j and (d[i], d[j]) not in seen:
            seen.append((d[i], d[j]))
    return seen


def audit(
    mechanism: Any,
    trials: int = 100_000,
    rng: Any = None,
    *,
    pairs: Sequence[tuple[Any, Any]] | None = None,
    events: EventFn | None = None,
    n_events: int = 4,
    alpha: float = 1e-6,
) -> AuditResult:
    """Empirical lower confidence bound on ``mechanism``'s epsilon.

    ``rng=None`` audits the secure device path itself. ``events(m, reports,
    x, x')`` may map reports to event codes ``0..n_events-1`` (defaults to
    the support cells). ``alpha`` is the probability that a correct mechanism
    fails the audit.
    """
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 100:
        raise ValueError(f"trials must be an int >= 100; got {trials!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    pairs = list(pairs) if pairs is not None else default_pairs(mechanism)
    if events is None:
        custom = getattr(mechanism, "audit_events", None)
        events = (lambda m, r, a, b: custom(r, a, b)) if custom else _support_events
    event_fn = events
    comparisons = 2 * len(pairs) * n_events
    level = alpha / comparisons
    best = -math.inf
    worst: tuple[Any, Any, int] | None = None
    details: list[dict[str, Any]] = []
    for x, other in pairs:
        counts = {}
        for value in (x, other):
            reports = mechanism.privatize_many([value] * trials, rng=rng)
            codes = event_fn(mechanism, reports, x, other)
            counts[value] = np.bincount(codes, minlength=n_events)
        for a, b in ((x, other), (other, x)):
            for event in range(n_events):
                low = clopper_pearson_lower(int(counts[a][event]), trials, level)
                high = clopper_pearson_upper(int(counts[b][event]), trials, level)
                bound = math.log(low / high) if low > 0 else -math.inf
                details.append({"x": a, "x_prime": b, "event": event, "bound": bound})
                if bound > best:
                    best, worst = bound, (a, b, event)
    return AuditResult(
        epsilon_claimed=float(mechanism.epsilon),
        epsilon_lower=max(best, 0.0),
        alpha=alpha,
        trials=trials,
        worst=worst,
        comparisons=comparisons,
        details=details,
    )


make_callable(__name__)
