"""Undoing a fake-report attack: the genuine frequencies from a poisoned estimate.

With ``m`` fakes among ``N`` reports (``beta = m / N``) the unbiased
estimate is, in expectation,

    ``f~_v = (1 - beta) f_v + beta z_v``

where ``f`` is the genuine frequencies and ``z_v`` one fake report's
expected contribution to ``v``'s estimate
(:func:`deniable.attacks.fake_contribution`): for a pure oracle
``z_v = (s_v - q*_v) / (p*_v - q*_v)`` with ``s_v`` the probability that a
fake report supports ``v`` (:func:`deniable.attacks.fake_support`). The
relation is exact for the pure oracles and DBitFlip (their estimates are
means of per-report terms) and, for RAPPOR's least-squares decode, exact
when the cohorts hold equal numbers of reports and to first order in the
cohorts' relative imbalance otherwise (the decode weights cohort ``j`` by
``N_j^2``; fakes spread evenly over the cohorts keep them balanced).
:func:`recover` inverts it,

    ``f_v = (f~_v - beta z_v) / (1 - beta)``,

and then (by default) projects onto the probability simplex, the
constrained inference of LDPRecover (Sun et al., 2024) with the attack's
statistics as its constraints. **Assumptions, plainly:** the fakes'
contribution ``z`` (the attack and its targets) and their fraction ``beta``
are known or estimated; a wrong ``z`` leaves a bias of
``beta (z_true - z) / (1 - beta)`` per category, and the recovery is only as
good as the model of the attack. For the memoizing mechanisms (L-GRR,
L-OSUE, DBitFlip, RAPPOR) a fake device sends the same chosen report every
round, so a model read off one round holds for the next.
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


def _fake_contribution(estimate: Any, fake_support: ArrayLike | None, contribution: ArrayLike | None) -> Any:
    """``z``: one fake report's expected debiased contribution per category, given directly or, for a pure
    oracle, as ``(s_v - q*)/(p* - q*)`` from the support rates ``s``."""
    k = len(estimate.domain)
    if (fake_support is None) == (contribution is None):
        raise ValueError("give exactly one of fake_support (a pure oracle's support rates) and contribution")
    if contribution is not None:
        z = np.asarray(contribution, dtype=float)
        if z.shape != (k,) or not np.all(np.isfinite(z)):
            raise ValueError(f"contribution must hold {k} finite numbers, one per category")
        return z
    s = np.asarray(fake_support, dtype=float)
    if s.shape != (k,) or np.any((s < 0) | (s > 1)):
        raise ValueError(f"fake_support must hold {k} probabilities, one per category")
    if not np.all(np.isfinite(estimate.p_star)):
        raise NotImplementedError(
            f"{estimate.mechanism} is decoded by least squares: give contribution= "
            "(deniable.attacks.fake_contribution), not support rates"
        )
    return (s - estimate.q_star) / (estimate.p_star - estimate.q_star)


def recover(
    estimate: Any, fake_support: ArrayLike | None = None, fake_fraction: float | None = None, *,
    contribution: ArrayLike | None = None, project: bool = True,
) -> Any:
    r"""The genuine frequencies under a stated model of the attack (an :class:`deniable.Estimate`).

    ``f = (f~ - beta z) / (1 - beta)`` with ``z = contribution`` (one fake
    report's expected contribution per category) or, for a pure oracle,
    ``z = (s - q*)/(p* - q*)`` with ``s = fake_support`` (one probability
    per category), and ``beta = fake_fraction`` (fakes among the
    estimate's ``n`` reports), then the
    projection onto the simplex unless ``project=False``. Without the
    projection the result is unbiased for the genuine frequencies when the
    model is right, with standard errors ``se / (1 - beta)`` (the fakes'
    own spread neglected); with it, it is post-processed and carries none.

    Parameters
    ----------
    estimate : Estimate
        The unbiased (not post-processed) estimate from the poisoned reports.
    fake_support : array_like, optional
        :math:`s_v`, the probability that one fake report supports each
        category (:func:`deniable.attacks.fake_support`; pure oracles).
    fake_fraction : float
        :math:`\beta`, the share of fakes among the estimate's reports, in
        ``[0, 1)`` (required).
    contribution : array_like, optional
        :math:`z_v` directly (:func:`deniable.attacks.fake_contribution`;
        every mechanism, DBitFlip and RAPPOR included), in place of
        ``fake_support``.
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
        A post-processed estimate, a ``fake_fraction`` missing or outside
        ``[0, 1)``, neither or both of ``fake_support`` and
        ``contribution``, or either of the wrong shape.
    NotImplementedError
        ``fake_support`` for a mechanism decoded by least squares (RAPPOR:
        give ``contribution``).

    Notes
    -----
    :math:`f_v = (\tilde f_v - \beta z_v) / (1 - \beta)` with
    :math:`z_v = (s_v - q^*_v) / (p^*_v - q^*_v)` for a pure oracle.

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
    >>> d = dn.DBitFlip(8, d=2, epsilon=2.0)
    >>> genuine = d.privatize_many(rng.choice(7, size=4000), rng=rng)
    >>> fakes = attacks.maximal_gain(d, [7], 400, rng=rng)
    >>> poisoned = d.estimate(np.concatenate([genuine, fakes]))
    >>> z = attacks.fake_contribution(d, "maximal-gain", [7])
    >>> round(float(poisoned.frequencies[7]), 2)  # nobody holds 7
    0.58
    >>> round(float(dn.recover(poisoned, fake_fraction=400 / 4400, contribution=z).frequencies[7]), 2)
    0.0
    """
    if estimate.post_processing != "none":
        raise ValueError("recover needs the unbiased estimate, not a post-processed one")
    if fake_fraction is None:
        raise ValueError("recover needs fake_fraction, the share of fakes among the estimate's reports")
    beta = float(fake_fraction)
    if not 0 <= beta < 1:
        raise ValueError(f"fake_fraction must be in [0, 1); got {fake_fraction!r}")
    z = _fake_contribution(estimate, fake_support, contribution)
    genuine = (estimate.frequencies - beta * z) / (1 - beta)
    if project:
        return replace(estimate, frequencies=project_simplex(genuine), std_errors=None,
                       post_processing="recovered+norm-sub")
    errors = None if estimate.std_errors is None else estimate.std_errors / (1 - beta)
    return replace(estimate, frequencies=genuine, std_errors=errors, post_processing="recovered")


def estimate_fake_fraction(
    before: Any, after: Any, fake_support: ArrayLike | None = None, targets: Any = None, *,
    contribution: ArrayLike | None = None,
) -> float:
    """``beta`` from the rise of the targets' summed estimate since a clean round.

    With the population unchanged, ``sum_T (f~_after - f_before) =
    beta (sum_T z_fake - sum_T f)``, so
    ``beta = gain / (sum_T z_fake - sum_T f_before)`` with ``z_fake`` the
    fakes' contribution (``fake_support`` or ``contribution`` as in
    :func:`recover`), clipped to
    ``[0, 1)``. Its error is the two rounds' sampling error over that denominator.

    Parameters
    ----------
    before : Estimate
        The estimate of a clean earlier round.
    after : Estimate
        The estimate of the poisoned round, over the same categories.
    fake_support : array_like, optional
        The probability that one fake report supports each category (pure
        oracles).
    targets : sequence
        The categories the attack promotes (required).
    contribution : array_like, optional
        One fake report's expected contribution per category, in place of
        ``fake_support`` (:func:`deniable.attacks.fake_contribution`).

    Returns
    -------
    float
        The estimated share of fakes, in ``[0, 1)``.

    Raises
    ------
    ValueError
        Different categories, no targets, neither or both of
        ``fake_support`` and ``contribution``, or fakes that as modelled do
        not raise the targets.

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
    if targets is None:
        raise ValueError("estimate_fake_fraction needs the targets the attack promotes")
    index = {v: i for i, v in enumerate(after.domain)}
    rows = [index[t] for t in targets]
    z = _fake_contribution(after, fake_support, contribution)
    gain = float(np.sum(after.frequencies[rows] - before.frequencies[rows]))
    denominator = float(np.sum(z[rows]) - np.sum(before.frequencies[rows]))
    if denominator <= 0:
        raise ValueError("the fakes as modelled do not raise these targets; beta cannot be read from them")
    return float(min(max(gain / denominator, 0.0), 1 - 1e-12))
