"""Anytime-valid confidence sequences: intervals that may be looked at after every round.

A 95% interval computed after each of 50 rounds misses the truth at *some*
round far more often than 5% of the time (the peeking problem). A confidence
sequence ``(C_t)`` covers the truth at every look at once:
``P(for all t: truth in C_t) >= 1 - alpha``, so a dashboard may show it after
every round and stop whenever it likes.

Construction (Waudby-Smith, Wu & Ramdas 2023, "Locally private
nonparametric confidence intervals and sequences", the normal-mixture
sequence of their NPRR estimators, applied to every mechanism whose
reports are bounded). Each report gives an observation ``X_i`` in ``[0, 1]``
whose mean is affine in the estimand, ``E[X_i] = c + s theta``:

* a frequency oracle's category ``v``: ``X_i = 1{v in S(y_i)}``, ``c = q*``,
  ``s = p* - q*`` (NPRR's ``r``);
* a numeric mechanism: the report rescaled from its range, ``X_i = (y_i -
  y_min) / (y_max - y_min)`` with the mechanism's debias ``E[y] = mid + half
  (b0 + b1 t)``.

Bounded observations are 1/2-sub-Gaussian, so for any ``lambda``
``exp(lambda S_t - lambda^2 t / 8)`` is a nonnegative supermartingale
(``S_t = sum (X_i - E X_i)``); mixing ``lambda`` over ``N(0, 4 beta^2)``
gives ``M_t = (1 + t beta^2)^(-1/2) exp(2 beta^2 S_t^2 / (1 + t beta^2))`` and
Ville's inequality ``P(exists t: M_t >= 1/alpha) <= alpha``. Hence, with
``X_bar_t`` the mean of the first ``t`` observations,

``C_t = (X_bar_t - c) / s  ±  B_t / |s|``,
``B_t = sqrt((1 + t beta^2) / (2 t^2 beta^2) · log(sqrt(1 + t beta^2) / alpha))``,

two-sided at level ``alpha`` for all ``t`` together (clipped to the estimand's
range). ``beta`` is chosen before any data to make ``B`` smallest at
``planned_n`` reports (the width grows only like ``sqrt(log t / t)`` elsewhere).
It needs the reports i.i.d. (population target) or independent (then it covers
the running mean of the respondents' own values: target respondents). Per
category; ``simultaneous=True`` spends ``alpha / k`` on each of ``k``.

Only counts and sums enter, so a round's merged aggregate is all a look needs.

>>> import numpy as np, deniable as dn
>>> m = dn.BinaryRR(epsilon=1.0)
>>> rng = np.random.default_rng(3)
>>> rounds = [m.privatize_many(rng.random(500) < 0.3, rng=rng) for _ in range(10)]
>>> cs = m.confidence_sequence(rounds, alpha=0.05, planned_n=5000)
>>> bool(np.all((cs.low[:, 1] <= 0.3) & (0.3 <= cs.high[:, 1]))), cs.n.tolist()[:3]
(True, [500, 1000, 1500])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from deniable._aggregates import Mergeable
from deniable._estimate import check_target
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level

__all__ = ["ConfidenceSequence", "confidence_sequence", "mixture_boundary", "best_beta", "LOOKS"]

LOOKS = 50
"""Looks taken in a flat array of reports when none are given: after each fiftieth of them."""


def mixture_boundary(t: Any, beta: float, alpha: float) -> NDArray[np.float64]:
    """``B_t``: the normal-mixture half-width for the mean of ``t`` observations in [0, 1] (module docstring)."""
    t = np.asarray(t, dtype=float)
    grow = 1 + t * beta * beta
    return np.asarray(np.sqrt(grow / (2 * t * t * beta * beta) * np.log(np.sqrt(grow) / alpha)), dtype=float)


def best_beta(planned_n: int, alpha: float) -> float:
    """The mixture's ``beta`` that makes :func:`mixture_boundary` smallest at ``planned_n`` observations."""
    from scipy.optimize import minimize_scalar

    found = minimize_scalar(lambda b: float(mixture_boundary(planned_n, math.exp(b), alpha)),
                            bounds=(-12.0, 4.0), method="bounded", options={"xatol": 1e-6})
    return math.exp(float(found.x))


@dataclass(frozen=True, eq=False)
class ConfidenceSequence(Result):
    r"""A confidence sequence: one interval per look, all covering together with probability ``1 - alpha``.

    ``m.confidence_sequence(reports, alpha, looks=...)`` makes it.

    Parameters
    ----------
    mechanism : str
        The mechanism's name.
    epsilon : float
        Its privacy loss per report.
    labels : tuple
        The categories (``("mean",)`` for a numeric mechanism).
    n : numpy.ndarray
        Reports seen at each look (cumulative).
    estimate, low, high : numpy.ndarray
        Per look (rows) and category (columns; one column for a mean): the
        estimate from the reports so far and the sequence's interval,
        clipped to the estimand's range.
    alpha : float
        The probability that some look misses (per category unless
        ``simultaneous``).
    beta : float
        The normal mixture's parameter.
    planned_n : int
        The number of reports ``beta`` was tuned for.
    simultaneous : bool
        Whether ``alpha`` holds for all the categories together.
    target : str
        ``"population"`` or ``"respondents"``.

    Notes
    -----
    :math:`C_t = (\bar X_t - c) / s \pm B_t / |s|` with
    :math:`B_t = \sqrt{\frac{1 + t\beta^2}{2 t^2 \beta^2} \log \frac{\sqrt{1 + t\beta^2}}{\alpha}}`
    (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.BinaryRR(prob=0.75)
    >>> reports = m.privatize_many(rng.random(3000) < 0.3, rng=rng)
    >>> cs = m.confidence_sequence(reports, looks=[1000, 2000, 3000])
    >>> cs.n.tolist(), cs.labels
    ([1000, 2000, 3000], (False, True))
    >>> bool(np.all((cs.low[:, 1] < 0.3) & (0.3 < cs.high[:, 1])))
    True
    """

    mechanism: str
    epsilon: float
    labels: tuple[Any, ...]
    n: NDArray[np.int64]
    estimate: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    alpha: float
    beta: float
    planned_n: int
    simultaneous: bool
    target: str

    ci_methods: ClassVar[tuple[str, ...]] = ("mixture",)

    def _default_level(self) -> float:
        return 1 - self.alpha

    def confidence_interval(self, confidence_level: float | None = None, method: str | None = None
                            ) -> ConfidenceInterval:
        """The last look's interval: valid at level ``1 - alpha`` whenever one stops (no other level)."""
        level = 1 - self.alpha if confidence_level is None else check_level(confidence_level)
        self._method(method)
        if not math.isclose(level, 1 - self.alpha):
            raise ValueError(f"confidence_level must be 1 - alpha = {1 - self.alpha:g} for this sequence; "
                             f"got {level!r} (make another with alpha={1 - level:g})")
        return ConfidenceInterval(self.low[-1], self.high[-1])

    def covers(self, truth: Any) -> NDArray[np.bool_]:
        """Whether every look's interval holds ``truth`` (per category)."""
        t = np.asarray(truth, dtype=float)
        return np.asarray(np.all((self.low <= t) & (t <= self.high), axis=0))

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        """Long form: one row per look and category: ``n``, ``category``, ``estimate``, ``ci_low``, ``ci_high``."""
        self.confidence_interval(confidence_level, method)  # refuses any other level
        looks, k = self.estimate.shape
        columns = {"n": np.repeat(self.n, k), "category": list(self.labels) * looks,
                   "estimate": self.estimate.ravel(), "ci_low": self.low.ravel(), "ci_high": self.high.ravel()}
        fields = {"mechanism": self.mechanism, "epsilon": self.epsilon, "alpha": self.alpha, "beta": self.beta,
                  "planned_n": self.planned_n, "simultaneous": self.simultaneous, "target": self.target}
        return ResultTable(fields, columns, "look", np.repeat(np.arange(1, looks + 1), k).tolist(), "looks")

    def _caption(self) -> str:
        return (f"{self.mechanism}, \u03b5 = {self.epsilon:.4g}: confidence sequence at alpha = {self.alpha:g}, "
                f"{len(self.n)} looks, n = {int(self.n[-1]):,}")


def _batches(mechanism: Any, reports: Any, looks: Any) -> list[Any]:
    """The aggregate of each look's new reports (``reports``: a sequence of batches or aggregates, or one
    array split at the cumulative sizes ``looks``)."""
    if isinstance(reports, (list, tuple)) and reports and (
            isinstance(reports[0], Mergeable) or not np.isscalar(reports[0]) and np.ndim(reports[0]) >= 1
            and not isinstance(reports[0], np.void)):
        if looks is not None:
            raise ValueError("looks applies to one array of reports, not to batches (each batch is a look)")
        return [r if isinstance(r, Mergeable) else mechanism.aggregate(r) for r in reports]
    checked = mechanism._checked(reports)
    n = len(checked)
    if n == 0:
        raise ValueError("reports: a confidence sequence needs at least one report")
    cuts = (np.ceil(n * np.arange(1, LOOKS + 1) / LOOKS).astype(np.int64) if looks is None
            else np.asarray(looks, dtype=np.int64))
    if cuts.ndim != 1 or cuts.size == 0 or np.any(np.diff(cuts) < 0) or cuts[0] < 1 or cuts[-1] > n:
        raise ValueError(f"looks must be increasing report counts in 1..{n}; got {looks!r:.80}")
    cuts = np.unique(cuts)
    starts = np.concatenate([[0], cuts[:-1]])
    return [mechanism._aggregate_checked(checked[a:b]) for a, b in zip(starts, cuts, strict=True)]


def _observations(mechanism: Any, stats: Sequence[Any]) -> tuple[NDArray[np.int64], NDArray[np.float64],
                                                                   NDArray[np.float64], NDArray[np.float64],
                                                                   tuple[Any, ...], tuple[float, float]]:
    """``(n, sums, c, s, labels, bounds)``: cumulative counts and sums of the observations ``X`` in [0, 1]
    at each look, the affine map ``E X = c + s theta`` and the estimand's range."""
    n = np.cumsum([st.n for st in stats]).astype(np.int64)
    if hasattr(mechanism, "support_rates"):
        p, q = mechanism.support_rates()
        sums = np.cumsum(np.array([st.counts for st in stats], dtype=float), axis=0)
        return n, sums, q, p - q, tuple(mechanism.domain), (0.0, 1.0)
    if not hasattr(mechanism, "report_range"):
        raise TypeError(f"confidence_sequence needs a frequency oracle or a numeric mechanism; got {mechanism.name}")
    lo, hi = mechanism.report_range
    mid, half = (mechanism.high + mechanism.low) / 2, (mechanism.high - mechanism.low) / 2
    ut_lo, width = (lo - mid) / half, (hi - lo) / half
    totals = np.cumsum([st.total for st in stats])
    sums = ((totals - n * ut_lo) / width)[:, None]
    # E[y_t] = b0 + b1 t and E X = (E[y_t] - ut_lo) / width; the mean is mid + half t
    b0, b1 = mechanism._b0, mechanism._b1
    c = np.array([mid + half * (ut_lo - b0) / b1])
    s = np.array([half * width / b1])
    # E X = (theta - c) / s  <=>  theta = c + s E X: return it as E X = c' + s' theta
    return n, sums, -c / s, 1 / s, ("mean",), (mechanism.low, mechanism.high)


def confidence_sequence(mechanism: Any, reports: Any, alpha: float = 0.05, *, looks: Any = None,
                        planned_n: int = 10_000, simultaneous: bool = False,
                        target: str = "population") -> ConfidenceSequence:
    """The anytime-valid confidence sequence of ``reports`` (module docstring); ``m.confidence_sequence``.

    ``reports``: a sequence of batches (arrays of reports, or their
    aggregates: one per round), each a look; or one array of reports in
    arrival order, looked at after the cumulative counts ``looks`` (default:
    after each fiftieth). ``planned_n``: the number of reports the width is
    tuned for, fixed before the data (default 10,000). ``target``: what the
    sequence covers (``"population"``: the population's share or mean;
    ``"respondents"``: the running share or mean of the respondents so far).
    """
    check_target(target)
    if isinstance(alpha, bool) or not 0 < float(alpha) < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    if isinstance(planned_n, bool) or not isinstance(planned_n, (int, np.integer)) or planned_n < 1:
        raise ValueError(f"planned_n must be a positive int; got {planned_n!r}")
    stats = _batches(mechanism, reports, looks)
    n, sums, c, s, labels, (low, high) = _observations(mechanism, stats)
    if n[0] == 0:
        raise ValueError("reports: the first look has no report")
    each = alpha / len(labels) if simultaneous else alpha
    beta = best_beta(int(planned_n), each)
    mean_x = sums / n[:, None]
    estimate = (mean_x - c) / s
    half_width = mixture_boundary(n, beta, each)[:, None] / np.abs(s)
    return ConfidenceSequence(
        mechanism.name, float(mechanism.epsilon), labels, n, estimate,
        np.clip(estimate - half_width, low, high), np.clip(estimate + half_width, low, high),
        float(alpha), beta, int(planned_n), bool(simultaneous), target,
    )
