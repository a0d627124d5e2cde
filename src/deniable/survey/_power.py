"""Power and sample size for detecting a prevalence different from ``pi0`` with a design.

The test is the Wald test of :func:`~deniable.survey._prevalence`: reject
``H0: pi = pi0`` when ``|pi_hat - pi0| > z SE_hat`` (two-sided, ``z =
Phi^-1(1 - alpha/2)``), or the one-sided analogue. With the design's
asymptotic standard error ``SE(pi) = s(pi) / sqrt(n)`` at the truth (the
delta-method SE of the estimator at the expected answer shares, respondents
split evenly between the groups of a two-group design),

    power = Phi(d - z) + Phi(-d - z),   d = (pi - pi0) / SE(pi)

(one-sided: ``Phi(d - z)`` for ``alternative="greater"``, ``Phi(-d - z)``
for ``"less"``). A design with a larger ``s`` (more randomization, smaller
epsilon) needs more respondents: ``n = ((z + z_power) s / (pi - pi0))^2``,
rounded up to the first n whose power reaches the target.

This is the normal approximation, and the real test differs from it: the
plug-in SE moves with the estimate, and an estimate outside ``[0, 1]`` is
moved to the boundary by maximum likelihood. Its accuracy was measured
against :func:`simulated_power` (the real test, as RRreg's ``RRsimu``
simulates it) on a grid of every design, prevalences from 0.05 to 0.9 and n
from 60 to 10,000 (406 points, 2,000 to 4,000 simulated surveys each;
``tools/power_accuracy.py``). The rule: with at least :data:`MIN_N` = 100
respondents and every parameter's expected estimate at least :data:`MARGIN`
= 2 standard errors inside ``(0, 1)`` (:func:`approximation_margin`), the
formula was within 0.053 of the real power on all 245 such points (the
largest: Mangat, pi = 0.8 against 0.9, n = 200), so :data:`TOLERANCE` =
0.06 with the simulation's noise. Outside it the formula was off by up to
0.11 (Warner and the unrelated question at n = 60 and pi = 0.9; the
stochastic lie detector at a few hundred respondents, where the estimate of
its extra parameter often sits on its boundary, by up to 0.12), and
:func:`prevalence_power` and :func:`prevalence_sample_size` warn
(:class:`~deniable.errors.PowerApproximationWarning`): use
:func:`simulated_power` there.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import PowerApproximationWarning
from deniable.survey._designs import Design
from deniable.survey._prevalence import moment_estimate, prevalence_from_counts

__all__ = [
    "MARGIN",
    "MIN_N",
    "TOLERANCE",
    "approximation_margin",
    "prevalence_power",
    "prevalence_sample_size",
    "simulated_power",
    "standard_error",
]

MARGIN = 2.0
"""Standard errors between every expected estimate and the boundary of ``[0, 1]`` for the formula to be used."""
MIN_N = 100
"""The fewest respondents for the formula to be used."""
TOLERANCE = 0.06
"""The largest difference between the formula and the real power inside the rule (0.053 measured, with noise)."""

_ALTERNATIVES = ("two-sided", "greater", "less")


def _truth(design: Design, pi: float, extra: float | None) -> dict[str, float]:
    if not 0 <= pi <= 1:
        raise ValueError(f"pi must be in [0, 1]; got {pi!r}")
    if design.extra is None:
        if extra is not None:
            raise ValueError(f"{design.model} has no extra parameter; got extra={extra!r}")
        if len(design.param_names) > 1:
            raise ValueError(
                f"power is for a yes/no attribute; {design.model} with {len(design.param_names)} "
                "categories has a share per category"
            )
        return {"pi": pi}
    if extra is None:
        raise ValueError(f"{design.model} needs extra= (the expected {design.extra})")
    if design.extra == "gamma" and pi + extra > 1:
        raise ValueError(
            f"pi + extra must be at most 1 for {design.model} (the shares of guilty, cheating and innocent "
            f"respondents add to 1); got pi={pi!r}, extra={extra!r}"
        )
    return {"pi": pi, design.extra: extra}


def _asymptotic(design: Design, pi: float, n: int, extra: float | None) -> tuple[dict[str, float], NDArray[Any]]:
    """The truth's parameters and the delta-method covariance of their estimates at the expected answer shares."""
    if n < 2 * design.groups:
        raise ValueError(f"n must be at least {2 * design.groups} for {design.model}; got {n}")
    params = _truth(design, pi, extra)
    sizes = [n / design.groups] * design.groups
    expected = np.array([size * design.response_probabilities(params, g + 1) for g, size in enumerate(sizes)])
    _, cov = moment_estimate(design, expected, ddof=0)
    return params, cov


def standard_error(design: Design, pi: float, n: int, extra: float | None = None) -> float:
    """The asymptotic standard error of the prevalence estimate from ``n`` respondents at the truth ``pi``."""
    _, cov = _asymptotic(design, pi, n, extra)
    return float(math.sqrt(cov[0, 0]))


def approximation_margin(design: Design, pi: float, n: int, extra: float | None = None) -> float:
    """How far inside ``(0, 1)`` the estimates fall, in standard errors: ``min_j min(theta_j, 1 - theta_j) / SE_j``.

    ``theta_j`` runs over the design's parameters at the truth (the
    prevalence ``pi``, the design's extra parameter if any, and for the
    cheating designs the innocent share ``1 - pi - gamma``), ``SE_j`` over
    their asymptotic standard errors at ``n`` respondents. The power
    formula is within :data:`TOLERANCE` of the real test's power where this
    is at least :data:`MARGIN` (measured; see the module's notes).

    >>> from deniable.survey import ForcedResponse
    >>> round(approximation_margin(ForcedResponse(("1/6", "1/6")), pi=0.1, n=500), 2)
    3.52
    """
    params, cov = _asymptotic(design, pi, n, extra)
    values, se = list(params.values()), list(np.sqrt(np.diag(cov)))
    if design.extra == "gamma":  # the innocent share 1 - pi - gamma is bounded by 0 too
        values.append(1 - params["pi"] - params["gamma"])
        se.append(math.sqrt(max(cov[0, 0] + cov[1, 1] + 2 * cov[0, 1], 0.0)))
    return float(min(min(v, 1 - v) / s if s > 0 else math.inf for v, s in zip(values, se, strict=True)))


def _warn_outside(design: Design, pi: float, n: int, extra: float | None, what: str) -> None:
    margin = approximation_margin(design, pi, n, extra)
    if margin < MARGIN or n < MIN_N:
        why = (
            f"an estimate of {design.model} lies {margin:.2g} standard errors from the boundary of [0, 1] "
            f"(under {MARGIN:g})" if margin < MARGIN else f"fewer than {MIN_N} respondents"
        )
        warnings.warn(
            f"{what}: at n={n:,} {why}, where the normal approximation may be off by more than "
            f"{TOLERANCE:g}; simulated_power gives the real test's power",
            PowerApproximationWarning,
            stacklevel=3,
        )


def _z(level: float, alternative: str) -> float:
    from deniable._intervals import z_for

    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(_ALTERNATIVES)}; got {alternative!r}")
    return z_for(1 - level, two_sided=alternative == "two-sided")


def _power(d: float, z: float, alternative: str) -> float:
    """``Phi(d - z)``, the mirror image, or both: the rejection probability at standardized distance ``d``."""
    from scipy.stats import norm

    if alternative == "greater":
        return float(norm.cdf(d - z))
    if alternative == "less":
        return float(norm.cdf(-d - z))
    return float(norm.cdf(d - z) + norm.cdf(-d - z))


def prevalence_power(
    design: Design,
    pi: float,
    n: int,
    pi0: float = 0.0,
    level: float = 0.95,
    alternative: str = "two-sided",
    extra: float | None = None,
    null_se: bool = False,
) -> float:
    """Probability that the Wald test at ``level`` rejects ``pi = pi0`` when the prevalence is ``pi``.

    ``null_se=True`` puts the critical value at ``pi0 + z SE(pi0)`` (the
    standard error under the null), ``power = Phi((pi - pi0 - z SE(pi0)) /
    SE(pi))``: the convention of rr's ``power.rr.test``.

    Warns (:class:`~deniable.errors.PowerApproximationWarning`) where
    :func:`approximation_margin` is under :data:`MARGIN` or ``n`` under
    :data:`MIN_N`: the formula may be off by more than :data:`TOLERANCE` there.

    >>> from deniable.survey import ForcedResponse
    >>> round(prevalence_power(ForcedResponse(("1/6", "1/6")), pi=0.1, n=500), 3)
    0.941
    """
    _warn_outside(design, pi, n, extra, "prevalence_power")
    return _formula_power(design, pi, n, pi0, level, alternative, extra, null_se)


def _formula_power(
    design: Design, pi: float, n: int, pi0: float, level: float, alternative: str, extra: float | None,
    null_se: bool = False,
) -> float:
    z = _z(level, alternative)
    se = standard_error(design, pi, n, extra)
    if null_se:
        z *= standard_error(design, pi0, n, extra) / se
    return _power((pi - pi0) / se, z, alternative)


def prevalence_sample_size(
    design: Design,
    pi: float,
    pi0: float = 0.0,
    power: float = 0.8,
    level: float = 0.95,
    alternative: str = "two-sided",
    extra: float | None = None,
) -> int:
    """The smallest number of respondents whose :func:`prevalence_power` reaches ``power``.

    Warns as :func:`prevalence_power` does where the formula is unreliable at the answer.
    """
    if not 0 < power < 1:
        raise ValueError(f"power must be in (0, 1); got {power!r}")
    if pi == pi0:
        raise ValueError(f"pi and pi0 must differ to have power; got both {pi!r}")
    z = _z(level, alternative)
    from deniable._intervals import z_for

    unit = standard_error(design, pi, 10_000 * design.groups, extra) * math.sqrt(10_000 * design.groups)
    n = max(2 * design.groups, math.ceil(((z + z_for(1 - power, two_sided=False)) * unit / abs(pi - pi0)) ** 2))
    n += (-n) % design.groups
    while _formula_power(design, pi, n, pi0, level, alternative, extra) < power:
        n += design.groups
    while (
        n > 2 * design.groups
        and _formula_power(design, pi, n - design.groups, pi0, level, alternative, extra) >= power
    ):
        n -= design.groups
    _warn_outside(design, pi, n, extra, "prevalence_sample_size")
    return n


def simulated_power(
    design: Design,
    pi: float,
    n: int,
    pi0: float = 0.0,
    level: float = 0.95,
    alternative: str = "two-sided",
    extra: float | None = None,
    replicates: int = 1000,
    rng: int | np.random.Generator | None = None,
) -> float:
    """The share of ``replicates`` simulated surveys whose Wald test rejects ``pi = pi0`` (RRsimu's way).

    Each survey's answer counts are drawn from the design's answer
    probabilities at the truth (respondents split evenly between groups),
    then estimated with :func:`~deniable.survey.prevalence_from_counts`.
    """
    z = _z(level, alternative)
    params = _truth(design, pi, extra)
    gen = np.random.default_rng(rng)  # simulation only: a seed or a Generator
    size = n // design.groups
    counts = np.stack(
        [
            gen.multinomial(size, design.response_probabilities(params, g + 1), size=replicates)
            for g in range(design.groups)
        ],
        axis=1,
    )
    rejected = 0
    for table in counts:
        fit = prevalence_from_counts(table, design)
        d = (
            (fit.params["pi"] - pi0) / fit.bse["pi"]
            if fit.bse["pi"] > 0
            else math.copysign(math.inf, fit.params["pi"] - pi0)
        )
        rejected += _rejects(d, z, alternative)
    return rejected / replicates


def _rejects(d: float, z: float, alternative: str) -> bool:
    if alternative == "greater":
        return d > z
    if alternative == "less":
        return d < -z
    return abs(d) > z
