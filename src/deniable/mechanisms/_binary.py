"""Binary randomized response: Warner (1965) and the forced-response designs.

A respondent holding ``x in {False, True}`` reports ``True`` with probability
``P(yes | x)``. Warner's symmetric design keeps the truth with probability
``prob``: ``P(yes|True) = prob``, ``P(yes|False) = 1 - prob`` and
``epsilon = ln(prob / (1 - prob))`` (ln 3 for prob = 3/4).

The forced-response (two-coin) design answers truthfully with probability
``p_truth`` and is otherwise forced to "yes" with probability ``p_yes``:
``P(yes|True) = t + (1-t) y``, ``P(yes|False) = (1-t) y`` and
``epsilon = ln max(P(yes|T)/P(yes|F), P(no|F)/P(no|T))``. With
``p_truth = p_yes = 1/2`` this is Warner with prob 3/4.

Any other pair ``(P(yes|T), P(yes|F))`` is a :meth:`BinaryRR.channel`: the
classic survey designs (crosswise, triangular, Mangat, unrelated question,
stochastic lie detector, ...) are such channels, and where an answer is
impossible under one truth, ``epsilon`` is infinite: that answer reveals it.

Estimator: with ``lambda`` the share of "yes",
``pi = (lambda - P(yes|F)) / (P(yes|T) - P(yes|F))``; for Warner this is
``(lambda + p - 1) / (2p - 1)`` and for the fair two-coin design ``2 lambda - 1/2``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts, tallied_counts
from deniable._randomness import Source
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._frequency import FrequencyOracle
from deniable.mechanisms.registry import add_recipe, register

__all__ = ["BinaryRR"]

_HALF = Fraction(1, 2)


@register(
    decode_cost="O(n)", browser=True, required=set(), optional={"prob", "epsilon"}, binary_only=True,
    build=lambda domain, params: BinaryRR(**params),
)
class BinaryRR(FrequencyOracle):
    r"""Warner's randomized response for a yes/no question.

    Give exactly one of ``prob`` (``P(report == truth)``, in (0.5, 1)),
    ``epsilon`` (> 0) or ``gamma`` (``prob - 1/2``, in (0, 0.5)). Other
    yes/no channels (the forced-response and survey designs) come from
    :meth:`forced_response` and :meth:`channel`.

    Parameters
    ----------
    prob : float or Fraction, optional
        The probability that the report is the true answer, in ``(0.5, 1)``.
    epsilon : float, optional
        The privacy loss of one report, ``> 0``; ``prob`` follows.
    gamma : float, optional
        ``prob - 1/2``, in ``(0, 0.5)``.

    Raises
    ------
    TypeError
        Not exactly one of ``prob``, ``epsilon`` and ``gamma``.
    ValueError
        A value out of its range.

    Notes
    -----
    :math:`p^* = \pi` (``prob``) and :math:`q^* = 1 - \pi`, so
    :math:`\varepsilon = \ln \frac{\pi}{1 - \pi}`; Warner's estimate of the share of
    "yes" is :math:`\hat f = (\lambda + \pi - 1) / (2\pi - 1)` for :math:`\lambda` the
    share of "yes" reports, and :math:`V^* = e^\varepsilon / (e^\varepsilon - 1)^2`.

    Examples
    --------
    >>> import numpy as np
    >>> m = BinaryRR(prob=0.75)
    >>> round(m.epsilon, 12)
    1.098612288668
    >>> rng = np.random.default_rng(0)
    >>> answers = rng.random(20_000) < 0.3  # 30% would answer yes
    >>> est = m.estimate(m.privatize_many(answers, rng=rng))
    >>> bool(abs(est.frequencies[1] - answers.mean()) < 5 * est.std_errors[1])
    True
    """

    wire_id = "binary-rr"
    report_kind = "bool"

    def __init__(
        self,
        *,
        prob: float | Fraction | None = None,
        epsilon: float | None = None,
        gamma: float | None = None,
    ) -> None:
        given = [name for name, v in (("prob", prob), ("epsilon", epsilon), ("gamma", gamma))
                 if v is not None]
        if len(given) != 1:
            raise TypeError(
                "BinaryRR needs exactly one of prob, epsilon or gamma; "
                f"got {', '.join(given) if given else 'none'}"
            )
        if prob is not None:
            p = privacy.check_probability(prob, "prob", _HALF, Fraction(1), "BinaryRR")
        elif gamma is not None:
            p = _HALF + privacy.check_probability(gamma, "gamma", Fraction(0), _HALF, "BinaryRR")
        else:
            p = privacy.binary_prob(privacy.check_epsilon(epsilon, owner="BinaryRR"))
        self._init_channel(p, 1 - p)

    def _init_channel(self, yes_if_true: Fraction, yes_if_false: Fraction) -> None:
        self.domain_obj = Domain((False, True), "BinaryRR")
        (self._yes_false, self._yes_true), self._denominator = privacy.integer_probabilities(
            [yes_if_false, yes_if_true]
        )
        self._thresholds = np.array([self._yes_false, self._yes_true], dtype=np.uint64)
        d = self._denominator
        self._epsilon = max(
            _log_ratio(self._yes_true, self._yes_false), _log_ratio(d - self._yes_true, d - self._yes_false)
        )

    @classmethod
    def forced_response(cls, p_truth: float, p_yes: float) -> BinaryRR:
        """The forced-response design: truthful w.p. ``p_truth``, else "yes" w.p. ``p_yes``.

        ``forced_response(0.5, 0.5)`` is the two-coin design:
        P(yes|yes) = 3/4, P(yes|no) = 1/4, epsilon = ln 3.
        """
        t = privacy.check_probability(p_truth, "p_truth", Fraction(0), Fraction(1), "forced_response")
        y = privacy.check_probability(p_yes, "p_yes", Fraction(0), Fraction(1), "forced_response")
        return cls._from_channel(t + (1 - t) * y, (1 - t) * y)

    @classmethod
    def channel(cls, p_yes_given_yes: float | Fraction | str, p_yes_given_no: float | Fraction | str) -> BinaryRR:
        """Any binary channel: ``P(yes | True)`` and ``P(yes | False)``, exact, in [0, 1] and different.

        Every classic yes/no survey design is one such channel per group
        (see :mod:`deniable.survey`). Where one answer is impossible under
        one truth (a probability of 0 or 1), that answer reveals the truth
        and ``epsilon`` is infinite.

        >>> BinaryRR.channel(1, "1/3")
        BinaryRR(P(yes|yes)=1, P(yes|no)=0.333333, epsilon=inf: an answer reveals the truth)
        """
        yt = privacy.exact_probability(p_yes_given_yes, "p_yes_given_yes", "BinaryRR.channel")
        yf = privacy.exact_probability(p_yes_given_no, "p_yes_given_no", "BinaryRR.channel")
        if yt == yf:
            raise ValueError(
                f"p_yes_given_yes and p_yes_given_no must differ for BinaryRR.channel (else the answer "
                f"carries no information); got both {yt}"
            )
        return cls._from_channel(yt, yf)

    @classmethod
    def _from_channel(cls, yes_if_true: Fraction, yes_if_false: Fraction) -> BinaryRR:
        self = cls.__new__(cls)
        self._init_channel(yes_if_true, yes_if_false)
        return self

    # ------------------------------------------------------------- properties
    @property
    def p_yes_given_yes(self) -> Fraction:
        return Fraction(self._yes_true, self._denominator)

    @property
    def p_yes_given_no(self) -> Fraction:
        return Fraction(self._yes_false, self._denominator)

    @property
    def prob(self) -> Fraction:
        """``P(report == truth)`` of a symmetric (Warner) design."""
        if self._yes_true + self._yes_false != self._denominator:
            raise ValueError(
                "this forced-response design is not symmetric; see p_yes_given_yes "
                "and p_yes_given_no"
            )
        return self.p_yes_given_yes

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        yt, yf = self.p_yes_given_yes, self.p_yes_given_no
        # category False is supported by a "no", category True by a "yes"
        return [1 - yf, yt], [1 - yt, yf]

    # -------------------------------------------------------------- sampling
    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.bool_]:
        draws = randomness.uniform_below(self._denominator, idx.size, source)
        return draws < self._thresholds[idx]

    def _sample_one(self, position: int, source: Source) -> bool:
        return randomness.scalar_below(self._denominator, source) < int(self._thresholds[position])

    # --------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.bool_]:
        arr = np.asarray(reports)
        if arr.ndim != 1:
            raise ValueError(f"BinaryRR reports must be a 1-D array of booleans; got shape {arr.shape}")
        if arr.size and arr.dtype != np.bool_:
            # the values as given: numpy turns [True, "x"] into the strings ["True", "x"]
            given = reports.tolist() if isinstance(reports, np.ndarray) else list(reports)
            bad = next((i for i, v in enumerate(given) if not isinstance(v, (bool, np.bool_))), None)
            if bad is None:
                return arr.astype(bool)
            raise ValueError(f"BinaryRR reports must be booleans (true/false); got {given[bad]!r}")
        return arr.astype(bool, copy=False)

    def _support_counts(self, reports: NDArray[np.bool_]) -> NDArray[np.int64]:
        yes = int(np.count_nonzero(reports))
        return np.array([reports.size - yes, yes], dtype=np.int64)

    def _aggregate_coded(self, cells: NDArray[np.bool_], codes: NDArray[np.integer]) -> SupportCounts:
        """``[no, yes]`` from the tallies of the cells that are no (0) and yes (1)."""
        return SupportCounts(self.fingerprint, tallied_counts(cells.astype(np.intp), codes, 2), int(codes.size))

    def _supports(self, reports: NDArray[np.bool_], position: int) -> NDArray[np.bool_]:
        return reports if position == 1 else ~reports

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """A report supports one of the two answers: 1."""
        return 1

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        yt, yf = float(self.p_yes_given_yes), float(self.p_yes_given_no)
        return [False, True], np.array([[1 - yf, yf], [1 - yt, yt]])

    def simulate_support_counts(
        self, true_counts: NDArray[np.int64], rng: np.random.Generator
    ) -> NDArray[np.int64]:
        n_false, n_true = (int(c) for c in true_counts)
        yes = rng.binomial(n_true, float(self.p_yes_given_yes)) + rng.binomial(
            n_false, float(self.p_yes_given_no)
        )
        return np.array([n_false + n_true - yes, yes], dtype=np.int64)

    # ------------------------------------------------------------------ wire
    def _params(self) -> dict[str, Any]:
        return {
            "denominator": self._denominator,
            "yes_numerators": [self._yes_false, self._yes_true],
        }

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> BinaryRR:
        d = int(params["denominator"])
        yf, yt = (int(v) for v in params["yes_numerators"])
        if not (0 <= yf <= d and 0 <= yt <= d and yf != yt):
            raise ValueError(
                "BinaryRR params need two different yes_numerators in [0, denominator]; "
                f"got {params!r}"
            )
        return cls._from_channel(Fraction(yt, d), Fraction(yf, d))

    def _report_to_json(self, report: Any) -> bool:
        return bool(report)

    @property
    def report_bits(self) -> int:
        return 1

    def __repr__(self) -> str:
        reveals = "" if math.isfinite(self.epsilon) else ": an answer reveals the truth"
        return (
            f"BinaryRR(P(yes|yes)={float(self.p_yes_given_yes):.6g}, "
            f"P(yes|no)={float(self.p_yes_given_no):.6g}, epsilon={self.epsilon:.6g}{reveals})"
        )


def _log_ratio(a: int, b: int) -> float:
    """``|ln(a / b)|`` rounded up; infinite when exactly one of ``a``, ``b`` is 0 (never both)."""
    if a == b:
        return 0.0
    if a == 0 or b == 0:
        return math.inf
    return privacy.ln_up(Fraction(max(a, b), min(a, b)))


add_recipe(
    "forced-response", BinaryRR.wire_id,
    lambda domain, params: BinaryRR.forced_response(p_truth=params["p_truth"], p_yes=params["p_yes"]),
    required={"p_truth", "p_yes"}, binary_only=True,
)
