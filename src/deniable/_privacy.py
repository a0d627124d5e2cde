"""Privacy parameters: epsilon <-> probability conversions, composition, budgets.

Every mechanism samples with *integer* probabilities (ratios of integers),
and its ``epsilon`` is computed from those integers, rounded up to the next
float, so the claim is never optimistic. When a mechanism is built from an
``epsilon``, the integers are chosen so that the realised privacy loss is as
close as possible to, and never above, the requested value.

Natural logarithms throughout: ``e = exp(epsilon)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction

from deniable.errors import BudgetError

__all__ = [
    "ln_up",
    "exp_ratio",
    "check_epsilon",
    "check_probability",
    "exact_probability",
    "binary_prob",
    "binary_epsilon",
    "grr_epsilon",
    "compose",
    "PrivacyBudget",
]

_PREC = 60


def _decimal(x: Fraction) -> Decimal:
    return Decimal(x.numerator) / Decimal(x.denominator)


def ln_up(x: Fraction | int) -> float:
    """The smallest float that is ``>= ln(x)`` for a positive rational ``x``."""
    x = Fraction(x)
    if x <= 0:
        raise ValueError(f"ln_up needs a positive number; got {x}")
    if x == 1:
        return 0.0
    with localcontext() as ctx:
        ctx.prec = _PREC
        exact = _decimal(x).ln()
        value = float(exact)
        if Decimal(value) < exact:
            value = math.nextafter(value, math.inf)
    return value


def check_epsilon(epsilon: object, name: str = "epsilon", owner: str = "") -> float:
    """Validate a privacy parameter: a finite, positive real number."""
    where = f" for {owner}" if owner else ""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
        try:
            import numpy as np

            if isinstance(epsilon, (np.floating, np.integer)) and not isinstance(epsilon, np.bool_):
                epsilon = float(epsilon)
            else:
                raise TypeError
        except TypeError:
            raise TypeError(
                f"{name} must be a positive finite number{where}; got {epsilon!r}"
            ) from None
    value = float(epsilon)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number{where}; got {epsilon!r}")
    return value


def check_probability(
    prob: object, name: str, low: Fraction, high: Fraction, owner: str = "", closed: bool = False
) -> Fraction:
    """Validate ``prob`` in the interval (low, high) ([low, high] if ``closed``) and return it exactly.

    Floats are taken as the decimal they print as: ``0.3`` means ``3/10``.
    """
    where = f" for {owner}" if owner else ""
    allowed = f"[{float(low):g}, {float(high):g}]" if closed else f"({float(low):g}, {float(high):g})"
    if isinstance(prob, bool) or not isinstance(prob, (int, float, Fraction)):
        try:
            import numpy as np

            if isinstance(prob, np.floating):
                prob = float(prob)
            else:
                raise TypeError
        except TypeError:
            raise TypeError(f"{name} must be a number{where}; got {prob!r}") from None
    if isinstance(prob, float) and not math.isfinite(prob):
        raise ValueError(f"{name} must be in {allowed}{where}; got {prob!r}")
    # a float is read as the decimal it prints as (0.3 is 3/10, not the binary
    # double nearest to it), so products of probabilities keep small denominators
    exact = Fraction(repr(float(prob))) if isinstance(prob, float) else Fraction(prob)
    if not (low <= exact <= high if closed else low < exact < high):
        raise ValueError(f"{name} must be in {allowed}{where}; got {prob!r}")
    return exact


def exact_probability(prob: object, name: str, owner: str = "") -> Fraction:
    """A probability in [0, 1], exactly (see :func:`check_probability`).

    Also reads a string as an exact fraction or decimal (``"1/6"``, ``"0.25"``),
    as survey files and command lines write them.
    """
    if isinstance(prob, str):
        where = f" for {owner}" if owner else ""
        try:
            prob = Fraction(prob.strip())
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{name} must be a number or a fraction like 1/6{where}; got {prob!r}") from None
    return check_probability(prob, name, Fraction(0), Fraction(1), owner, closed=True)


def check_realisable(epsilon: float, largest: float, owner: str, smallest: float = 0.0) -> float:
    """The rule for every mechanism: a requested epsilon is realised to within 1% (never above), or refused.

    ``largest`` (``smallest``) is the largest (smallest) epsilon up to (from)
    which the mechanism's integer probabilities realise every request to
    within 1% (its tests scan the range); outside it the constructor refuses
    rather than realise less.
    """
    if epsilon > largest:
        raise ValueError(
            f"{owner} realises epsilon to within 1% only up to {largest:g} (its integer probabilities "
            f"run out of bits); got epsilon={epsilon!r}"
        )
    if epsilon < smallest:
        raise ValueError(
            f"{owner} realises epsilon to within 1% only from {smallest:g} (its integer probabilities "
            f"run out of bits); got epsilon={epsilon!r}"
        )
    return epsilon


def exp_ratio(epsilon: float, others: int, word_bits: int = 32) -> tuple[int, int]:
    """Integers ``(a, b)`` with ``a / b <= exp(epsilon)``, as close as fits.

    They are scaled so that ``a + others * b`` (the denominator of a
    randomized-response draw) stays within ``2**word_bits`` (64 bits are used
    instead when 32 would leave ``b`` too coarse, or ``ln(a / b)`` more than 1%
    short). The realised privacy loss ``ln(a / b)`` never exceeds ``epsilon``
    and is within 1% of it, or the request is refused.
    """
    if epsilon >= 64 * math.log(2):
        raise ValueError(
            f"epsilon={epsilon} is too large to realise with 63-bit integer probabilities"
        )
    with localcontext() as ctx:
        ctx.prec = _PREC
        growth = Decimal(epsilon).exp()
        for bits in (word_bits, 63):
            b = int(Decimal(1 << bits) / (growth + others))
            a = int(growth * b)
            while b >= 1 and ln_up(Fraction(a, b)) > epsilon:
                a -= 1
            # 64-bit words when 32 leave b too coarse, or ln(a / b) more than 1% short of epsilon
            if bits == 63 or (b >= 1 << 16 and a > b and ln_up(Fraction(a, b)) >= 0.99 * epsilon):
                break
        if b < 1:
            raise ValueError(
                f"epsilon={epsilon} is too large to realise with 63-bit integer probabilities"
            )
    if a <= b or ln_up(Fraction(a, b)) < 0.99 * epsilon:
        raise ValueError(
            f"epsilon={epsilon} is too small to realise with 63-bit integer probabilities"
        )
    return a, b


def integer_probabilities(probs: list[Fraction], limit: int = 1 << 63) -> tuple[list[int], int]:
    """Numerators and a common denominator ``D <= limit`` for exact probabilities.

    Exact when the probabilities' least common denominator fits (every float
    and every small rational does); raises otherwise, so that a mechanism never
    silently samples with probabilities other than the ones it reports.
    """
    denominator = math.lcm(*(p.denominator for p in probs))
    if denominator > limit:
        raise ValueError(
            f"probabilities {[str(p) for p in probs]} need a denominator of {denominator}, "
            f"above the sampler's limit 2**{limit.bit_length() - 1}; pass simpler values"
        )
    return [int(p * denominator) for p in probs], denominator


def binary_prob(epsilon: float) -> Fraction:
    """Binary RR truth probability for ``epsilon``: ``p = e/(1+e)`` (realised exactly)."""
    a, b = exp_ratio(check_epsilon(epsilon), 1)
    return Fraction(a, a + b)


def binary_epsilon(prob: Fraction | float) -> float:
    """``ln(p / (1 - p))``, rounded up."""
    p = Fraction(prob)
    return ln_up(p / (1 - p))


def grr_epsilon(prob: Fraction | float, k: int) -> float:
    """``ln(p (k - 1) / (1 - p))``, rounded up."""
    p = Fraction(prob)
    return ln_up(p * (k - 1) / (1 - p))


def compose(epsilons: Iterable[float]) -> float:
    r"""Basic sequential composition: the epsilons add up.

    Answering several questions with mechanisms of privacy loss
    :math:`\varepsilon_1, \dots, \varepsilon_m` on the same respondent is
    :math:`\sum_i \varepsilon_i`-LDP.

    Parameters
    ----------
    epsilons : iterable of float
        The privacy losses of the releases, each ``> 0``.

    Returns
    -------
    float
        Their sum (computed with ``math.fsum``).

    Raises
    ------
    ValueError
        An epsilon that is not a positive finite number.

    Examples
    --------
    >>> from deniable import compose
    >>> compose([0.5, 1.0, 0.25])
    1.75
    """
    return math.fsum(check_epsilon(e) for e in epsilons)


@dataclass
class PrivacyBudget:
    """A total epsilon that a set of questions or releases may not exceed.

    Spends add up by basic composition (:func:`compose`); ``used`` is their
    sum and ``remaining`` what is left of ``total``.

    Parameters
    ----------
    total : float
        The budget, a positive epsilon.
    spent : list of (str, float), optional
        The spends recorded so far as ``(label, epsilon)`` pairs; empty by
        default.

    Raises
    ------
    ValueError
        ``total`` is not a positive finite number.

    Examples
    --------
    >>> from deniable import PrivacyBudget
    >>> budget = PrivacyBudget(2.0)
    >>> budget.spend(1.0, "q1")
    >>> budget.remaining
    1.0
    >>> budget.spend(1.5, "q2")
    Traceback (most recent call last):
    ...
    deniable.errors.BudgetError: privacy budget exceeded: spending epsilon=1.5 for q2 ...
    """

    total: float
    spent: list[tuple[str, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.total = check_epsilon(self.total, "total budget")

    @property
    def used(self) -> float:
        return math.fsum(e for _, e in self.spent)

    @property
    def remaining(self) -> float:
        return self.total - self.used

    def spend(self, epsilon: float, label: str = "") -> None:
        """Record a spend; refuse one that would exceed the total.

        Raises :class:`~deniable.errors.BudgetError` (a ValueError) naming the
        spend, the total it would reach and what was already spent.
        """
        epsilon = check_epsilon(epsilon)
        after = self.used + epsilon
        # tolerate float noise from summing rounded-up epsilons
        if after > self.total * (1 + 1e-12):
            spent = ", ".join(f"{name or '?'}={e:.6g}" for name, e in self.spent)
            raise BudgetError(
                f"privacy budget exceeded: spending epsilon={epsilon:.6g} for "
                f"{label or 'this release'} brings the total to {after:.6g}, above the budget "
                f"{self.total:.6g} (already spent: {spent or 'nothing'})"
            )
        self.spent.append((label, epsilon))
