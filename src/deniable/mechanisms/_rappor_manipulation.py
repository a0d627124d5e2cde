"""How far fake reports can move RAPPOR's least-squares estimates: its manipulation sensitivity.

RAPPOR's decode (:meth:`deniable.RAPPOR.estimate_from`) regresses the
per-cohort debiased bit rates ``r_j = (c_j / N_j - p*) / (q* - p*)`` on the
candidates' Bloom filters ``B_j`` (``num_bits x k`` per cohort ``j``), each
cohort weighted by ``N_j^2``. With cohorts of equal size (``N_j = N / m``,
``m`` cohorts, as a uniform cohort draw gives up to sampling) it is the mean
over the ``N`` reports of one report's debiased contribution: a report in
cohort ``c`` with bits ``s`` contributes

    ``z(c, s) = m G^+ B_c' (s - p* 1) / (q* - p*)``,  ``G = sum_j B_j' B_j``,

exactly as a frequency oracle's report contributes ``(1[v in S] - q*)/(p* - q*)``.
``z_v`` is affine in the bits, with weights ``w_c = m B_c G^+ e_v / (q* - p*)``,
so its extremes over the ``2^num_bits`` reports of a cohort are closed-form:
``sum_i max(w_ci, 0) - p* sum_i w_ci`` (set exactly the bits of positive
weight) and ``sum_i min(w_ci, 0) - p* sum_i w_ci``. Hence, per category, in
units of ``1/N`` per fake report (:class:`deniable.Manipulation`):

* ``output``: the most one chosen report adds, ``max_c max_s z_v(c, s)``;
* ``input``: 1, a fake user with a chosen value run through the honest
  randomizer (a uniform cohort: ``E z = m G^+ mean_c(B_c' B_c) e_x = e_x``);
* ``spread``: ``max_{c,s} z_v - min_{c,s} z_v``, the realised worst case;
* ``target_gain`` for targets ``T``: the maximal-gain attack with its fakes
  spread evenly over the cohorts (fake ``i`` in cohort ``i mod m``, setting
  the bits of positive weight ``m B_c G^+ 1_T``), ``mean_c max_s sum_{t in T} z_t(c, s)``.
  Spread evenly, the fakes keep the cohorts equal and the decode linear, so
  the expected overall gain is exactly ``beta (target_gain - f_T)``
  (:meth:`deniable.Manipulation.gain`) at any fraction ``beta`` of fakes.
  Fakes crowded into the best cohort gain up to ``output`` per report for a
  single target, but only to first order: they also raise that cohort's
  weight, and the decode is no longer a mean.

The figures are exact for equal cohorts and hold to first order in
``sqrt(m / N)`` otherwise. An underdetermined decode (more candidates than
``cohorts x num_bits`` equations) selects candidates first and is not linear;
its sensitivity is not derived.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable._manipulation import Manipulation, target_positions

__all__ = ["contributions", "report_extremes", "rappor_manipulation", "best_bits", "uniform_gain"]


def contributions(mechanism: Any) -> NDArray[np.float64]:
    """``(cohorts, num_bits, k)``: ``m B_c G^+ / (q* - p*)``, the weight of each reported bit in each
    category's debiased contribution (module docstring); computed once per mechanism."""
    cached = mechanism.__dict__.get("_contributions")
    if cached is not None:
        return np.asarray(cached)
    if mechanism.k > mechanism.num_cohorts * mechanism.num_bits:
        raise NotImplementedError(
            f"RAPPOR with {mechanism.k} candidates over {mechanism.num_cohorts * mechanism.num_bits} equations "
            "selects candidates before least squares: its manipulation sensitivity is not derived (more cohorts "
            "or bits make the decode linear)"
        )
    pattern = mechanism._design(np.ones(mechanism.num_cohorts))  # the 0/1 filters, (cohorts * bits, k)
    inverse = np.linalg.pinv((pattern.T @ pattern).toarray())
    gap = float(mechanism.q_star - mechanism.p_star)
    weights = np.asarray(pattern @ inverse) * (mechanism.num_cohorts / gap)
    weights = weights.reshape(mechanism.num_cohorts, mechanism.num_bits, mechanism.k)
    weights.setflags(write=False)
    mechanism.__dict__["_contributions"] = weights
    return weights


def report_extremes(mechanism: Any, weights: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per cohort (axis 0), the largest and smallest ``sum_i w_i (s_i - p*)`` over the bits ``s``."""
    base = float(mechanism.p_star) * weights.sum(axis=1)
    return np.clip(weights, 0, None).sum(axis=1) - base, np.clip(weights, None, 0).sum(axis=1) - base


def best_bits(mechanism: Any, positions: NDArray[np.int64]) -> NDArray[np.bool_]:
    """``(cohorts, num_bits)``: the bits of a report that raise the targets' summed estimate the most."""
    return contributions(mechanism)[:, :, positions].sum(axis=2) > 0


def uniform_gain(mechanism: Any, positions: NDArray[np.int64]) -> float:
    """The targets' summed contribution of a report drawn uniformly (uniform cohort, each bit 1 w.p. 1/2):
    ``mean_c sum_i w_ci (1/2 - p*)``."""
    weights = contributions(mechanism)[:, :, positions].sum(axis=2)
    return float(((0.5 - float(mechanism.p_star)) * weights.sum(axis=1)).mean())


def rappor_manipulation(mechanism: Any, targets: Any = None) -> Manipulation:
    """RAPPOR's :class:`~deniable.Manipulation` (module docstring), with ``target_gain`` for ``targets``."""
    weights = contributions(mechanism)
    high, low = report_extremes(mechanism, weights)  # (cohorts, k)
    output = high.max(axis=0)
    gain, chosen = None, ()
    if targets is not None:
        positions = target_positions(mechanism, targets)
        gain = float(report_extremes(mechanism, weights[:, :, positions].sum(axis=2))[0].mean())
        chosen = tuple(mechanism.domain[i] for i in positions)
    return Manipulation(
        mechanism.name, output, np.ones_like(output), output - low.min(axis=0), chosen, gain, mechanism.domain
    )
