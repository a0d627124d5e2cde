"""Undoing a fake-report attack: the genuine frequencies from a poisoned estimate.

With ``m`` fakes among ``N`` reports (``beta = m / N``) the unbiased
estimate of a pure oracle is, exactly in expectation,

    ``f~_v = (1 - beta) f_v + beta (s_v - q*_v) / (p*_v - q*_v)``

where ``f`` is the genuine frequencies and ``s_v`` the probability that a
fake report supports ``v`` (:func:`deniable.attacks.fake_support` for the
attacks of Cao et al.). :func:`recover` inverts it,

    ``f_v = (f~_v - beta (s_v - q*_v)/(p*_v - q*_v)) / (1 - beta)``,

and then (by default) projects onto the probability simplex, the
constrained inference of LDPRecover (Sun et al., 2024) with the attack's
statistics as its constraints. **Assumptions, plainly:** the fakes' support
rates ``s`` and their fraction ``beta`` are known or estimated; a wrong ``s``
leaves a bias of ``beta (s_true - s)/(p* - q*)`` per category, and the
recovery is only as good as the model of the attack.
:func:`estimate_fake_fraction` estimates ``beta`` from a clean earlier
round (the population assumed unchanged); the count of reports that
support every target (:func:`deniable.supporting_all_test`) estimates the
number of fakes of a maximal-gain attack directly.

Two more defences need no model of the attack: normalization
(``estimate.consistent("norm-sub")``, Cao et al.'s "Norm"), which only
removes the mass pushed below 0 and above 1, and dropping the reports a
detection flags and estimating again (Cao et al.'s "Detect":
``mechanism.estimate(reports[~detection.detail["mask"]])``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from deniable._consistency import project_simplex

__all__ = ["recover", "estimate_fake_fraction"]


def _fake_contribution(estimate: Any, fake_support: ArrayLike) -> Any:
    """``(s_v - q*)/(p* - q*)``: one fake report's expected debiased contribution per category."""
    s = np.asarray(fake_support, dtype=float)
    if s.shape != (len(estimate.domain),) or np.any((s < 0) | (s > 1)):
        raise ValueError(f"fake_support must hold {len(estimate.domain)} probabilities, one per category")
    if not np.all(np.isfinite(estimate.p_star)):
        raise NotImplementedError(f"{estimate.mechanism} is decoded by least squares; no recovery")
    return (s - estimate.q_star) / (estimate.p_star - estimate.q_star)


def recover(estimate: Any, fake_support: ArrayLike, fake_fraction: float, *, project: bool = True) -> Any:
    r"""The genuine frequencies under a stated model of the attack (an :class:`deniable.Estimate`).

    ``f = (f~ - beta (s - q*)/(p* - q*)) / (1 - beta)`` with ``s =
    fake_support`` (one probability per category) and ``beta =
    fake_fraction`` (fakes among the estimate's ``n`` reports), then the
    projection onto the simplex unless ``project=False``. Without the
    projection the result is unbiased for the genuine frequencies when the
    model is right, with standard errors ``se / (1 - beta)`` (the fakes'
    own spread neglected); with it, it is post-processed and carries none.

    Parameters
    ----------
    estimate : Estimate
        The unbiased (not post-processed) estimate from the poisoned reports.
    fake_support : array_like
        :math:`s_v`, the probability that one fake report supports each
        category (:func:`deniable.attacks.fake_support`).
    fake_fraction : float
        :math:`\beta`, the share of fakes among the estimate's reports, in
        ``[0, 1)``.
    project : bool, default True
        Project the result onto the probability simplex.

    Returns
    -------
    Estimate
        The estimate with the recovered frequencies, ``post_processing``
        ``"recovered+norm-sub"`` (no standard errors) or ``"recovered"``.

    Raises
    ------
    ValueError
        A post-processed estimate, a ``fake_fraction`` outside ``[0, 1)``
        or ``fake_support`` of the wrong shape.
    NotImplementedError
        A mechanism decoded by least squares.

    Notes
    -----
    :math:`f_v = (\tilde f_v - \beta (s_v - q^*_v) / (p^*_v - q^*_v)) / (1 - \beta)`.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(1)
    >>> m = dn.OUE(8, epsilon=2.0)
    >>> genuine = m.privatize_many(rng.choice(8, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [7], 400, rng=rng)
    >>> poisoned = m.estimate(np.concatenate([genuine, fakes]))
    >>> s = attacks.fake_support(m, "maximal-gain", [7])
    >>> round(float(poisoned.frequencies[7]), 2)
    0.33
    >>> fixed = dn.recover(poisoned, s, 400 / 4400)
    >>> round(float(fixed.frequencies[7]), 2), fixed.post_processing
    (0.13, 'recovered+norm-sub')
    """
    if estimate.post_processing != "none":
        raise ValueError("recover needs the unbiased estimate, not a post-processed one")
    beta = float(fake_fraction)
    if not 0 <= beta < 1:
        raise ValueError(f"fake_fraction must be in [0, 1); got {fake_fraction!r}")
    genuine = (estimate.frequencies - beta * _fake_contribution(estimate, fake_support)) / (1 - beta)
    if project:
        return replace(estimate, frequencies=project_simplex(genuine), std_errors=None,
                       post_processing="recovered+norm-sub")
    errors = None if estimate.std_errors is None else estimate.std_errors / (1 - beta)
    return replace(estimate, frequencies=genuine, std_errors=errors, post_processing="recovered")


def estimate_fake_fraction(before: Any, after: Any, fake_support: ArrayLike, targets: Any) -> float:
    """``beta`` from the rise of the targets' summed estimate since a clean round.

    With the population unchanged, ``sum_T (f~_after - f_before) =
    beta (sum_T z_fake - sum_T f)``, so
    ``beta = gain / (sum_T z_fake - sum_T f_before)`` with ``z_fake`` the
    fakes' contribution (``fake_support`` as in :func:`recover`), clipped to
    ``[0, 1)``. Its error is the two rounds' sampling error over that denominator.

    Parameters
    ----------
    before : Estimate
        The estimate of a clean earlier round.
    after : Estimate
        The estimate of the poisoned round, over the same categories.
    fake_support : array_like
        The probability that one fake report supports each category.
    targets : sequence
        The categories the attack promotes.

    Returns
    -------
    float
        The estimated share of fakes, in ``[0, 1)``.

    Raises
    ------
    ValueError
        Different categories, or fakes that as modelled do not raise the
        targets.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> from deniable import attacks
    >>> rng = np.random.default_rng(1)
    >>> m = dn.OUE(8, epsilon=2.0)
    >>> genuine = m.privatize_many(rng.choice(8, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(m, [7], 400, rng=rng)
    >>> before, after = m.estimate(genuine), m.estimate(np.concatenate([genuine, fakes]))
    >>> s = attacks.fake_support(m, "maximal-gain", [7])
    >>> round(dn.estimate_fake_fraction(before, after, s, [7]), 3)  # 400 / 4400
    0.091
    """
    if tuple(before.domain) != tuple(after.domain):
        raise ValueError("the two estimates must be over the same categories")
    index = {v: i for i, v in enumerate(after.domain)}
    rows = [index[t] for t in targets]
    contribution = _fake_contribution(after, fake_support)
    gain = float(np.sum(after.frequencies[rows] - before.frequencies[rows]))
    denominator = float(np.sum(contribution[rows]) - np.sum(before.frequencies[rows]))
    if denominator <= 0:
        raise ValueError("the fakes as modelled do not raise these targets; beta cannot be read from them")
    return float(min(max(gain / denominator, 0.0), 1 - 1e-12))
