"""Frequency oracles' and numeric mechanisms' estimates from a complex sample (weights, strata, clusters).

``m.estimate(reports, weights=w, strata=s, cluster=c, ...)`` takes the
complex-sample arguments of :mod:`deniable._sample_design` (R ``survey``'s).

**Frequencies.** With ``s_iv = 1`` where report ``i`` supports category
``v``, the weighted support share ``lambda_v = sum_i w_i s_iv / W`` gives
``f_v = (lambda_v - q*_v) / (p*_v - q*_v)``, and each report's influence
contribution is ``z_iv = w_i (s_iv - lambda_v) / (W (p*_v - q*_v))``.

**Means.** With ``t_i`` the debiased report (``E[t_i] = x_i`` scaled to
[-1, 1]) the weighted mean ``mid + half sum_i w_i t_i / W``, and ``z_i = half
w_i (t_i - tbar) / W``.

The standard errors are the design's (linearization of ``z``, or the
replicates), with the design effect beside each. With an ``fpc`` the
randomization's variance, which no sampling fraction reduces, is added
back: ``sum_i f_i Var(z_i | x_i)``, estimated without bias from each report
(frequencies: ``Var(s_iv | x) = q(1-q) + (p(1-p) - q(1-q)) [x = v]`` with
``[x = v]`` estimated by ``(s_iv - q) / (p - q)``; means: the mechanism's
unit variance ``v0 + v1 x + v2 x^2`` with ``x^2`` estimated by ``(t^2 - v0 -
v1 t) / (1 + v2)``, or the largest unit variance over [-1, 1] where ``1 + v2 = 0``, as
for Duchi's mechanism, whose reports carry nothing on ``x^2``). The target is the population (``target="population"``):
weights describe how the respondents were sampled from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._estimate import Estimate, MeanEstimate

__all__ = ["WeightedEstimate", "WeightedMeanEstimate", "weighted_frequencies", "weighted_mean"]


@dataclass(frozen=True, eq=False)
class WeightedEstimate(Estimate):
    r"""An :class:`~deniable.Estimate` from a complex sample: weighted frequencies, design-based standard errors,
    normal intervals only; ``support_counts`` are the weighted support counts, ``design_effect`` per category
    and ``sample`` says how the respondents were sampled.

    ``m.estimate(reports, weights=..., strata=..., cluster=...)`` makes it. Its parameters are those of
    :class:`~deniable.Estimate` and the two below.

    Parameters
    ----------
    design_effect : numpy.ndarray, optional
        Per category, the design's variance over that of a simple random
        sample of the same size.
    sample : str, default ""
        How the respondents were sampled, and how the standard errors were
        computed.
    Notes
    -----
    With :math:`s_{iv} = 1` where report :math:`i` supports :math:`v` and
    :math:`W = \sum_i w_i`, :math:`\hat f_v = (\sum_i w_i s_{iv} / W - q^*_v) / (p^*_v - q^*_v)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(1)
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> x = rng.choice(["a", "b", "c"], size=3000, p=[0.5, 0.3, 0.2])
    >>> est = m.estimate(m.privatize_many(x, rng=rng), weights=np.where(x == "a", 1.0, 2.0))
    >>> type(est).__name__  # weighted shares 1/3, 2/5 and 4/15
    'WeightedEstimate'
    >>> bool(np.all(np.abs(est.frequencies - [1 / 3, 2 / 5, 4 / 15]) < 5 * est.std_errors))
    True
    >>> est.sample
    'weighted; design-based SEs by linearization'
    """

    design_effect: NDArray[np.float64] | None = None
    sample: str = ""

    ci_methods = ("normal",)
    _methods_note = "binomial intervals need unweighted counts"


@dataclass(frozen=True, eq=False)
class WeightedMeanEstimate(MeanEstimate):
    r"""A :class:`~deniable.MeanEstimate` from a complex sample: the weighted mean, its design-based standard
    error, ``design_effect`` and ``sample``. Its parameters are those of :class:`~deniable.MeanEstimate` and the
    two below.

    Parameters
    ----------
    design_effect : float, default nan
        The design's variance over that of a simple random sample of the
        same size.
    sample : str, default ""
        How the respondents were sampled, and how the standard error was
        computed.
    Notes
    -----
    With :math:`t_i` the debiased report scaled to :math:`[-1, 1]`, the mean
    is :math:`\mathrm{mid} + \mathrm{half} \sum_i w_i t_i / \sum_i w_i`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(1)
    >>> m = dn.Laplace(0, 10, epsilon=1.0)
    >>> reports = m.privatize_many(rng.uniform(0, 10, 3000), rng=rng)
    >>> est = m.estimate(reports, weights=np.ones(3000))
    >>> type(est).__name__, round(est.design_effect, 2)
    ('WeightedMeanEstimate', 1.0)
    """

    design_effect: float = math.nan
    sample: str = ""


def _design(n: int, target: str, arguments: dict[str, Any]) -> Any:
    from deniable._sample_design import sample_design

    sample = sample_design(n, **arguments)
    if sample is not None and target != "population":
        raise ValueError("target must be 'population' with weights, strata or clusters: they describe how the "
                         f"respondents were sampled from it; got {target!r}")
    return sample


def weighted_frequencies(mechanism: Any, checked: NDArray[Any], target: str, arguments: dict[str, Any]
                         ) -> WeightedEstimate:
    """The frequency oracle's estimate from validated reports of a complex sample (module docstring)."""
    sample = _design(len(checked), target, arguments)
    supports = np.column_stack([mechanism._supports(checked, v) for v in range(mechanism.k)]).astype(np.float64)
    p, q = mechanism.support_rates()
    gap = p - q

    def frequencies(w: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray((w @ supports / w.sum() - q) / gap)

    w = sample.weights
    total = float(w.sum())
    observed = w @ supports / total
    z = w[:, None] * (supports - observed) / (total * gap)
    added = None
    if sample.fraction is not None and sample.repweights is None:
        f = sample.fraction[sample.strata]
        given = q * (1 - q) + (p * (1 - p) - q * (1 - q)) * (supports - q) / gap
        added = np.diag(((f * (w / total) ** 2) @ given) / gap**2)
    freqs = frequencies(w)
    cov, deff = sample.covariance(z, frequencies, freqs, w, added)
    return WeightedEstimate(
        mechanism=mechanism.name, epsilon=mechanism.epsilon, domain=mechanism.domain, frequencies=freqs,
        std_errors=np.sqrt(np.maximum(np.diag(cov), 0.0)), n=len(checked), observed=observed,
        support_counts=w @ supports, p_star=p, q_star=q, target="population", design_effect=deff,
        sample=sample.describe(),
    )


def weighted_mean(mechanism: Any, y: NDArray[np.float64], target: str, arguments: dict[str, Any]
                  ) -> WeightedMeanEstimate:
    """The numeric mechanism's mean from validated reports of a complex sample (module docstring)."""
    sample = _design(len(y), target, arguments)
    t = ((y - mechanism._mid) / mechanism._half - mechanism._b0) / mechanism._b1
    half = mechanism._half

    def mean(w: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([mechanism._mid + half * float(w @ t) / float(w.sum())])

    w = sample.weights
    total = float(w.sum())
    t_bar = float(w @ t) / total
    z = (half * w * (t - t_bar) / total)[:, None]
    added = None
    if sample.fraction is not None and sample.repweights is None:
        v0, v1, v2 = mechanism._coefficients
        if 1 + v2 > 1e-9:
            given = v0 + v1 * t + v2 * (t**2 - v0 - v1 * t) / (1 + v2)
        else:  # a report's square carries nothing on x^2 (Duchi's t = +-C): the largest unit variance
            grid = np.linspace(-1.0, 1.0, 201)
            given = np.full(t.size, float(np.max(v0 + v1 * grid + v2 * grid**2)))
        added = np.array([[float(sample.fraction[sample.strata] * (half * w / total) ** 2 @ given)]])
    full = mean(w)
    cov, deff = sample.covariance(z, mean, full, w, added)
    se = math.sqrt(max(float(cov[0, 0]), 0.0))
    return WeightedMeanEstimate(
        mechanism=mechanism.name, epsilon=mechanism.epsilon, delta=mechanism.delta, mean=float(full[0]),
        std_error=se, sample_std_error=se, n=len(y), low=mechanism.low, high=mechanism.high, target="population",
        design_effect=float(deff[0]), sample=sample.describe(),
    )
