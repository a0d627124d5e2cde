"""Several questions under one privacy budget: split it, or sample one question per respondent.

A survey of ``d`` questions with a budget ``epsilon`` per respondent can

* **split** the budget (basic composition): every respondent answers every
  question, question ``j`` with a mechanism at ``epsilon_j``,
  ``sum_j epsilon_j <= epsilon`` (the planner compares the equal split
  ``epsilon / d``). Question ``j`` has all ``n`` reports.
* **sample** one question per respondent (Wang et al., "Collecting and
  analyzing multidimensional data with local differential privacy", ICDE
  2019; "SMP" in Arcolezi et al., "Random sampling plus fake data", CIKM
  2021): the device draws ``J``
  uniformly from ``0..d-1`` with its own secure randomness and answers only
  question ``J``, with a mechanism at up to the whole ``epsilon``. ``J`` is
  independent of the answers, so ``P(J = j, y | x) = P_j(y | x_j) / d`` and the
  pair ``(J, y)`` is ``max_j epsilon_j``-LDP. Question ``j`` has
  ``n_j ~ Binomial(n, 1/d)`` reports.

Estimation under sampling (:func:`sampled_estimate`). Given ``n_j``, the
respondents of question ``j`` are a uniformly random subset of size ``n_j``
of the ``n`` respondents (the assignments are exchangeable), so the
question's ordinary estimate from its ``n_j`` reports is unbiased for both
targets, and

* ``"population"``: the ``n_j`` respondents are themselves a random sample of
  the population; the variance is the mechanism's ``V_pop / n_j``
  (:func:`deniable._estimate.pure_variance`), unchanged;
* ``"respondents"`` (the share among all ``n`` respondents, not only the
  ``n_j`` who answered): the randomization variance ``A / n_j`` plus the
  variance of a simple random sample of ``n_j`` out of ``n``,
  ``(n - n_j) / (n - 1) * f (1 - f) / n_j`` (finite-population correction).

Unconditionally (for planning, :func:`compare_allocations`) question ``j``'s
variance is ``E[1 / n_j | n_j >= 1] v(epsilon)`` for the per-respondent
variance ``v``, about ``d v(epsilon) / n (1 + (d - 1) / n)``, against
``v(epsilon / d) / n`` for the split. ``v`` falls like ``1 / epsilon^2`` at small
epsilon, so sampling wins by about a factor ``d`` there; at large epsilon ``v``
tends to the sampling variance ``f (1 - f)`` and splitting wins, sampling
paying ``d`` times fewer respondents per question.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts
from deniable._estimate import Estimate, Target, check_target
from deniable._plan import best_mechanism
from deniable._privacy import check_epsilon

__all__ = [
    "Allocation",
    "ALLOCATIONS",
    "check_allocation",
    "assign_questions",
    "inverse_count_mean",
    "sampled_estimate",
    "AllocationComparison",
    "compare_allocations",
]

Allocation = Literal["split", "sample"]
"""How a survey spends its budget over its questions: split it, or sample one question per respondent."""
ALLOCATIONS: tuple[Allocation, ...] = ("split", "sample")
"""The values of :data:`Allocation`."""

_GRID = np.linspace(0.0, 1.0, 201)  # shares over which the planner takes the worst case
_TAIL = 1e-15  # binomial mass left out of E[1/n_j] on each side (bounded by it)


def check_allocation(allocation: object) -> Allocation:
    """Validate an allocation: ``"split"`` or ``"sample"``."""
    if isinstance(allocation, str) and allocation in ALLOCATIONS:
        return allocation
    raise ValueError(f"allocation must be 'split' or 'sample'; got {allocation!r}")


def assign_questions(d: int, size: int | None = None, rng: randomness.RNGLike = None) -> Any:
    """The question(s) a device answers under sampling: uniform on ``0..d-1``, exactly.

    ``rng=None`` (a device) draws from the OS CSPRNG (:mod:`secrets` for one,
    rejection sampling of 32-bit words for ``size``); a seed is for simulation.
    Returns an int, or an int64 array of ``size`` draws.
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be an int >= 1 (the number of questions); got {d!r}")
    source = randomness.resolve(rng)
    if size is None:
        return randomness.scalar_below(int(d), source)
    return randomness.uniform_below(int(d), int(size), source).astype(np.int64)


def inverse_count_mean(n: int, d: int) -> float:
    """``E[1 / n_j | n_j >= 1]`` for ``n_j ~ Binomial(n, 1/d)``: a sampled question's ``1/n``.

    Summed exactly over the binomial's support outside tails of mass
    ``1e-15`` (so within about ``1e-15`` of the true value); about
    ``d / n (1 + (d - 1) / n)`` for large ``n / d``. ``d = 1`` gives ``1 / n``.
    """
    from scipy import stats

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an int >= 1 (respondents); got {n!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be an int >= 1 (questions); got {d!r}")
    if d == 1:
        return 1.0 / n
    p = 1.0 / d
    low = max(1, int(stats.binom.ppf(_TAIL, n, p)))
    high = int(stats.binom.isf(_TAIL, n, p)) + 1
    counts = np.arange(low, min(high, n) + 1)
    mass = stats.binom.pmf(counts, n, p)
    answered = -math.expm1(n * math.log1p(-p))  # P(n_j >= 1)
    return float(np.dot(mass, 1.0 / counts) / answered)


def sampled_estimate(
    mechanism: Any, stat: SupportCounts, respondents: int, target: Target = "population"
) -> Estimate:
    """A sampled question's estimate from its ``stat.n`` reports out of ``respondents`` in all.

    The point estimate is the mechanism's (unbiased given ``n_j``). For
    ``"population"`` the standard errors are the mechanism's; for
    ``"respondents"`` (the share among all ``respondents``) they add the
    finite-population sampling term ``(n - n_j) / (n - 1) f (1 - f) / n_j``
    at ``f = clip(estimate, 0, 1)`` (module docstring).
    """
    target = check_target(target)
    est: Estimate = mechanism.estimate_from(stat, target=target)
    n_j = int(stat.n)
    if isinstance(respondents, bool) or not isinstance(respondents, (int, np.integer)) or respondents < n_j:
        raise ValueError(
            f"respondents must be an int >= the question's reports ({n_j}); got {respondents!r}"
        )
    if target == "population" or n_j == 0 or respondents <= 1 or est.std_errors is None:
        return est
    f = np.clip(est.frequencies, 0.0, 1.0)
    extra = (respondents - n_j) / (respondents - 1) * f * (1 - f) / n_j
    return replace(est, std_errors=np.sqrt(est.std_errors**2 + extra))


def _respondent_variance(mechanism: Any, shares: NDArray[np.float64]) -> NDArray[np.float64]:
    """``n Var`` of the worst category for a fixed set of respondents, at each share in ``shares``."""
    return np.array([float(np.max(mechanism.variance(1, np.full(mechanism.k, f), "respondents"))) for f in shares])


@dataclass(frozen=True)
class AllocationComparison:
    """Variance per question of splitting the budget against sampling one question per respondent.

    ``split_variance[j]`` is question ``j``'s variance with all ``n``
    respondents at ``epsilon / d``; ``sample_variance[j]`` with
    ``n_j ~ Binomial(n, 1/d)`` respondents at ``epsilon``
    (``E[1/n_j | n_j >= 1]`` times the per-respondent variance); both at
    ``frequency``, or the worst case over the share when it is None, for
    ``target``. ``split_mechanisms`` / ``sample_mechanisms`` are the
    lowest-variance oracles chosen at each epsilon. ``recommended`` has the
    lower total variance over the questions.

    Parameters
    ----------
    epsilon : float
        The budget of one respondent.
    n : int
        The number of respondents.
    categories : tuple of int
        The number of categories of each of the ``d`` questions.
    target : {"population", "respondents"}
        What the shares estimate.
    frequency : float or None
        The share the variances are computed at; None for the worst case.
    split_mechanisms, sample_mechanisms : tuple of Mechanism
        Per question, the oracle chosen at ``epsilon / d`` and at
        ``epsilon``.
    split_variance, sample_variance : numpy.ndarray
        Per question, the variance under each allocation.

    Examples
    --------
    >>> import deniable as dn
    >>> c = dn.compare_allocations([2, 4], epsilon=2.0, n=5_000)
    >>> c.d, c.recommended in ("split", "sample"), c.split_variance.shape
    (2, True, (2,))
    """

    epsilon: float
    n: int
    categories: tuple[int, ...]
    target: Target
    frequency: float | None
    split_mechanisms: tuple[Any, ...]
    sample_mechanisms: tuple[Any, ...]
    split_variance: NDArray[np.float64]
    sample_variance: NDArray[np.float64]

    @property
    def d(self) -> int:
        return len(self.categories)

    @property
    def ratio(self) -> NDArray[np.float64]:
        """``split_variance / sample_variance`` per question (> 1: sampling is better)."""
        return self.split_variance / self.sample_variance

    @property
    def recommended(self) -> Allocation:
        return "sample" if self.sample_variance.sum() < self.split_variance.sum() else "split"

    def __repr__(self) -> str:
        ratios = ", ".join(f"{r:.3g}" for r in self.ratio)
        return (
            f"AllocationComparison(d={self.d}, epsilon={self.epsilon:g}, n={self.n}, "
            f"split/sample variance = [{ratios}], recommended={self.recommended!r})"
        )


def compare_allocations(
    categories: Sequence[int],
    epsilon: float,
    n: int,
    *,
    target: Target = "population",
    frequency: float | None = None,
) -> AllocationComparison:
    """Compare split and sampled allocation for questions with ``categories[j]`` categories each.

    For a mechanism with per-respondent fixed-population variance ``r(f)``
    (its variance for ``n = 1`` and ``target="respondents"``), question
    ``j``'s variance is

    * split: ``(r_{epsilon/d}(f) + s(f)) / n``,
    * sample: ``E⁻ r_epsilon(f) + s(f) E⁻`` for the population and
      ``E⁻ r_epsilon(f) + s(f) (n E⁻ - 1) / (n - 1)`` for the respondents,

    with ``s(f) = f (1 - f)`` for the population target (0 in the split's
    respondents target), ``E⁻ = E[1 / n_j | n_j >= 1]``
    (:func:`inverse_count_mean`), each oracle chosen by
    :func:`deniable.best_mechanism` at its epsilon, and the worst case over
    ``f`` on a grid of 201 shares unless ``frequency`` is given.

    Parameters
    ----------
    categories : sequence of int
        The number of categories of each question (each at least 2).
    epsilon : float
        One respondent's whole budget, ``> 0``.
    n : int
        The number of respondents.
    target : {"population", "respondents"}, default "population"
        What the shares estimate (:mod:`deniable._estimate`).
    frequency : float, optional
        The share to compare at; the worst case over a grid if None.

    Returns
    -------
    AllocationComparison
        Both allocations' variances per question and the recommendation.

    Raises
    ------
    ValueError
        No questions, a question with fewer than 2 categories, or a bad
        ``epsilon``, ``n`` or ``frequency``.

    Examples
    --------
    >>> from deniable import compare_allocations
    >>> c = compare_allocations([2, 2, 2, 2], epsilon=1.0, n=10_000)
    >>> c.recommended, round(float(c.ratio[0]), 2)
    ('sample', 3.45)
    """
    target = check_target(target)
    eps = check_epsilon(epsilon)
    if not math.isfinite(eps):
        raise ValueError("epsilon must be finite to compare allocations")
    ks = tuple(int(k) for k in categories)
    if not ks:
        raise ValueError("categories needs at least one question")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an int >= 2 (respondents); got {n!r}")
    if frequency is not None and not 0 <= frequency <= 1:
        raise ValueError(f"frequency must be in [0, 1]; got {frequency!r}")
    d = len(ks)
    shares = _GRID if frequency is None else np.array([float(frequency)])
    sampling = shares * (1 - shares)
    inverse = inverse_count_mean(int(n), d)
    split_m = tuple(best_mechanism(k, eps / d).mechanism for k in ks)
    sample_m = tuple(best_mechanism(k, eps).mechanism for k in ks)
    split_v, sample_v = [], []
    for m_split, m_sample in zip(split_m, sample_m, strict=True):
        pop = target == "population"
        split = (_respondent_variance(m_split, shares) + (sampling if pop else 0.0)) / n
        subset = sampling * (inverse if pop else (n * inverse - 1) / (n - 1))
        sample = inverse * _respondent_variance(m_sample, shares) + subset
        split_v.append(float(np.max(split)))
        sample_v.append(float(np.max(sample)))
    return AllocationComparison(
        eps, int(n), ks, target, frequency, split_m, sample_m, np.array(split_v), np.array(sample_v)
    )
