"""Mechanism choice and sample-size planning.

A frequency oracle is chosen by ``Var* = lim_{f -> 0} n Var(f_v)``, its
per-respondent variance for a rare category (``q*(1-q*) / (p*-q*)^2`` for a
pure oracle; Wang et al. 2017); a numeric mechanism by its worst-case
variance of the mean. Sample sizes come from the normal interval's
half-width ``z sqrt(Var(f))``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from deniable._estimate import Target, check_target, worst_per_user_variance
from deniable._intervals import z_for
from deniable._privacy import check_epsilon
from deniable.mechanisms import GRR, SubsetSelection, registry

__all__ = ["MechanismChoice", "best_mechanism", "sample_size", "candidates", "report_bits"]


def candidates(k: int, epsilon: float) -> dict[str, Any]:
    """Every registered frequency oracle the planner compares that can realise ``epsilon`` for ``k``.

    A mechanism whose integer probabilities cannot realise ``epsilon`` (e.g.
    unary encoding above epsilon ~ 20) is left out rather than approximated.
    """
    out: dict[str, Any] = {}
    for entry in registry.entries("frequency").values():
        if not entry.candidate or (entry.cls is SubsetSelection and k < 3):
            continue  # with k = 2 subset selection is GRR
        try:
            out[entry.cls.__name__] = entry.cls(k, epsilon=epsilon)
        except ValueError:
            if entry.cls is GRR:
                raise  # GRR realises every epsilon the others can: the request itself is bad
    return out


def report_bits(mechanism: Any) -> int:
    """Bits a device uploads per report."""
    return registry.entry_of(mechanism).report_bits(mechanism)


def decode_cost(mechanism: Any) -> str:
    """Server-side cost of estimating from n reports, in O-notation."""
    return registry.entry_of(mechanism).decode_cost


@dataclass(frozen=True)
class MechanismChoice:
    r"""The chosen mechanism and what it was compared with.

    ``variances`` maps each candidate's name to ``Var*`` (n times the variance of
    one category's estimate as its frequency goes to 0); ``sensitivities``
    (frequency oracles) to its manipulation sensitivity, the most one fake
    report raises a share, times ``N`` (``(1 - q*)/(p* - q*)``,
    :class:`deniable.Manipulation`); ``rule`` says how the choice was made.

    Parameters
    ----------
    mechanism : Mechanism
        The chosen mechanism, ready to use.
    name : str
        Its name among the candidates.
    variances : dict of str to float
        Every candidate's :math:`V^*` (frequency oracles) or worst-case
        per-respondent variance (numeric mechanisms).
    bits : dict of str to int, optional
        Every candidate's report size in bits.
    sensitivities : dict of str to float, optional
        Every frequency oracle's manipulation sensitivity,
        :math:`(1 - q^*) / (p^* - q^*)`.
    rule : str, default "lowest Var*"
        How the choice was made.

    Examples
    --------
    >>> import deniable as dn
    >>> choice = dn.best_mechanism(k=1024, epsilon=1.0)
    >>> choice.name, choice.rule
    ('SubsetSelection', 'lowest Var*')
    >>> choice.variances["SubsetSelection"] < choice.variances["GRR"]
    True
    """

    mechanism: Any
    name: str
    variances: dict[str, float]
    bits: dict[str, int] = field(default_factory=dict)
    sensitivities: dict[str, float] = field(default_factory=dict)
    rule: str = "lowest Var*"

    def __repr__(self) -> str:
        rows = ", ".join(f"{k}={v:.4g}" for k, v in sorted(self.variances.items(), key=lambda kv: kv[1]))
        return f"MechanismChoice({self.name}: {rows}; {self.rule})"


def best_mechanism(
    k: int | None = None,
    epsilon: float | None = None,
    *,
    low: float | None = None,
    high: float | None = None,
    max_report_bits: int | None = None,
    robust: float | None = None,
) -> MechanismChoice:
    r"""The mechanism with the lowest variance at ``epsilon`` (among those that resist fake reports, if asked).

    Categorical: ``best_mechanism(k=1024, epsilon=1.0)`` compares every
    frequency oracle by ``Var*`` for ``k`` categories; ``max_report_bits``
    drops candidates whose reports are larger (e.g. unary encoding's k bits
    on a constrained uplink). ``robust=c`` (``c >= 1``) weighs manipulation
    too, by the rule: *the lowest Var* among the candidates whose manipulation
    sensitivity is at most c times the smallest* (the sensitivity is the most
    one fake report raises a share, times the number of reports: 596 for GRR
    and 3.2 for OUE at k = 1,024, epsilon = 1). Numeric: ``best_mechanism(epsilon=1.0, low=0,
    high=120)`` compares the numeric mechanisms by the worst-case variance
    of the mean (:func:`best_numeric_mechanism`).

    Parameters
    ----------
    k : int, optional
        The number of categories (at least 2), for a frequency oracle.
    epsilon : float
        The privacy loss of one report, ``> 0`` (required).
    low, high : float, optional
        The range of a numeric answer, instead of ``k``.
    max_report_bits : int, optional
        Drop the frequency oracles whose reports take more bits.
    robust : float, optional
        A factor ``c >= 1``: keep only the oracles whose manipulation
        sensitivity is at most ``c`` times the smallest.

    Returns
    -------
    MechanismChoice
        The chosen mechanism and every candidate's variance.

    Raises
    ------
    TypeError
        No ``epsilon``, neither ``k`` nor ``low`` and ``high``, or both.
    ValueError
        A bad ``k`` or ``robust``, or no candidate within
        ``max_report_bits``.

    Notes
    -----
    :math:`V^* = \lim_{f \to 0} n \operatorname{Var}(\hat f_v)`; for a pure
    oracle it is :math:`q^* (1 - q^*) / (p^* - q^*)^2`.

    Examples
    --------
    >>> import deniable as dn
    >>> dn.best_mechanism(k=1024, epsilon=1.0, max_report_bits=32).name
    'OLH'
    >>> dn.best_mechanism(epsilon=1.0, low=0, high=120).name
    'Hybrid'
    """
    if epsilon is None:
        raise TypeError("best_mechanism needs epsilon")
    if robust is not None and not (isinstance(robust, (int, float)) and robust >= 1):
        raise ValueError(f"robust must be a factor >= 1 (or None); got {robust!r}")
    if k is None:
        if low is None or high is None:
            raise TypeError("best_mechanism needs k (categories) or low and high (a numeric range)")
        if robust is not None:
            raise TypeError("robust= weighs frequency oracles; give k")
        return best_numeric_mechanism(epsilon, low, high)
    if low is not None or high is not None:
        raise TypeError("give k for categories or low/high for numbers, not both")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an int >= 2; got {k!r}")
    eps = check_epsilon(epsilon)
    built = candidates(int(k), eps)
    variances = {name: float(m.variance(1)[0]) for name, m in built.items()}
    bits = {name: report_bits(m) for name, m in built.items()}
    sensitivities = {name: float(np.max(m.manipulation().output)) for name, m in built.items()}
    allowed = [n for n in built if max_report_bits is None or bits[n] <= max_report_bits]
    if not allowed:
        raise ValueError(f"no mechanism fits max_report_bits={max_report_bits}; smallest is {min(bits.values())}")
    rule = "lowest Var*"
    if robust is not None:
        least = min(sensitivities[n] for n in allowed)
        allowed = [n for n in allowed if sensitivities[n] <= robust * least * (1 + 1e-9)]
        rule = f"lowest Var* with a manipulation sensitivity within {robust:g}x the smallest ({least:.4g})"
    # equal variances (SubsetSelection with omega = 1 is GRR): the smaller report, then the simpler
    lowest = min(variances[n] for n in allowed)
    tied = [n for n in allowed if variances[n] <= lowest * (1 + 1e-9)]
    name = min(tied, key=lambda n: (bits[n], list(built).index(n)))
    return MechanismChoice(built[name], name, variances, bits, sensitivities, rule)


def sample_size(
    mechanism: Any,
    margin: float,
    level: float = 0.95,
    *,
    frequency: float | None = None,
    target: Target = "population",
    simultaneous: bool = False,
) -> int:
    r"""Respondents needed so the ``level`` interval's half-width is at most ``margin``.

    ``n >= z^2 (n Var(f) [+ f(1-f)]) / margin^2`` with ``n Var`` the mechanism's
    fixed-population variance times n. ``frequency=None`` plans for the worst case over ``f`` in [0, 1].
    ``target="population"`` (the default) is the share in the population
    the respondents are sampled from (adds ``f(1-f)``, Warner's formula);
    ``"respondents"`` the share among the respondents themselves
    (:mod:`deniable._estimate`). ``simultaneous=True`` makes the margin hold
    for all k categories at once (Bonferroni).

    Binary RR at epsilon = ln 3, margin 0.01: 38,415 respondents.

    Parameters
    ----------
    mechanism : FrequencyOracle
        The planned mechanism.
    margin : float
        The largest half-width wanted, in ``(0, 1)``.
    level : float, default 0.95
        The interval's confidence level.
    frequency : float, optional
        The expected share of the category; the worst case over
        ``[0, 1]`` if None.
    target : {"population", "respondents"}, default "population"
        What the share estimates (:mod:`deniable._estimate`).
    simultaneous : bool, default False
        Make the margin hold for all ``k`` categories at once (Bonferroni).

    Returns
    -------
    int
        The number of respondents.

    Raises
    ------
    ValueError
        ``margin``, ``level`` or ``frequency`` out of range.

    Notes
    -----
    :math:`n = \lceil z^2 \, (V(f) + f (1 - f)) / m^2 \rceil` for the
    population target, with :math:`z` the normal quantile at
    :math:`1 - \alpha / 2`, :math:`m` the margin and :math:`V(f)` n times the
    fixed-population variance.

    Examples
    --------
    >>> import deniable as dn
    >>> dn.sample_size(dn.BinaryRR(prob=0.75), 0.01)
    38415
    >>> dn.sample_size(dn.GRR(4, epsilon=1.0), 0.02, simultaneous=True)
    43078
    """
    if not 0 < margin < 1:
        raise ValueError(f"margin must be in (0, 1); got {margin!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    target = check_target(target)
    alpha = 1 - level
    if simultaneous:
        alpha /= mechanism.k
    z = z_for(alpha)
    if frequency is not None and not 0 <= frequency <= 1:
        raise ValueError(f"frequency must be in [0, 1]; got {frequency!r}")
    worst = worst_per_user_variance(mechanism, frequency, target)
    return math.ceil(z * z * worst / margin**2 - 1e-9)


# --------------------------------------------------------------------- numeric
__all__ += ["best_numeric_mechanism", "numeric_candidates"]


def numeric_candidates(epsilon: float, low: float, high: float, delta: float | None = None) -> dict[str, Any]:
    """Every registered numeric mechanism the planner compares, built for ``[low, high]`` at ``epsilon``;
    with a ``delta``, also those whose recipe requires exactly ``epsilon`` and ``delta`` (Gaussian)."""
    built = {}
    for e in registry.entries("numeric").values():
        if e.candidate:
            built[e.cls.__name__] = e.cls(low, high, epsilon=epsilon)
        elif delta is not None and e.recipes and e.recipes[0].required == {"epsilon", "delta"}:
            built[e.cls.__name__] = e.cls(low, high, epsilon=epsilon, delta=delta)
    return built


def best_numeric_mechanism(epsilon: float, low: float, high: float, *, delta: float | None = None) -> MechanismChoice:
    """The numeric mechanism with the lowest worst-case variance of the mean at ``epsilon``.

    ``variances`` maps each candidate (Laplace, Duchi, Piecewise, Hybrid, and
    Gaussian when a ``delta`` is given) to its worst-case per-respondent
    variance over ``[low, high]`` (original units squared; divide by n for the
    mean); ``bits`` to the size of one report's index. Hybrid wins or ties at
    every epsilon (Wang et al., ICDE 2019: it mixes Piecewise and Duchi to
    minimise the worst-case variance); Gaussian, whose noise scale grows as
    ``sqrt(ln(1/delta)) / epsilon``, loses to it at every usual ``delta``.

    Parameters
    ----------
    epsilon : float
        The privacy loss of one report, ``> 0``.
    low, high : float
        The range of the answers, ``low < high``.
    delta : float, optional
        With a ``delta`` in ``(0, 1)``, Gaussian built with it (an
        ``(epsilon, delta)`` guarantee, weaker than the others' pure
        ``epsilon``) joins the candidates; default: pure-``epsilon``
        mechanisms only.

    Returns
    -------
    MechanismChoice
        The chosen mechanism, every candidate's worst-case per-respondent
        variance and report size.

    Examples
    --------
    >>> import deniable as dn
    >>> choice = dn.best_numeric_mechanism(1.0, 0, 120)
    >>> choice.name, {k: round(v / 1000, 1) for k, v in choice.variances.items()}
    ('Hybrid', {'Laplace': 28.8, 'Duchi': 16.9, 'Piecewise': 18.9, 'Hybrid': 15.5})
    >>> with_gaussian = dn.best_numeric_mechanism(1.0, 0, 120, delta=1e-6)
    >>> with_gaussian.name, round(with_gaussian.variances["Gaussian"] / 1000, 1)
    ('Hybrid', 258.0)
    """
    eps = check_epsilon(epsilon)
    built = numeric_candidates(eps, low, high, delta)
    variances = {name: float(m.variance(1)) for name, m in built.items()}
    bits = {name: int(m.report_bits) for name, m in built.items()}
    name = min(built, key=lambda n: (variances[n], bits[n]))
    return MechanismChoice(built[name], name, variances, bits)
