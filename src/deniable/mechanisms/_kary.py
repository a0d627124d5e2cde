"""Generalized (k-ary) randomized response, GRR / k-RR / direct encoding.

The device reports its own category with probability ``p`` and each of the
other ``k - 1`` categories with probability ``q = (1 - p) / (k - 1)``;
``epsilon = ln(p / q) = ln(p (k - 1) / (1 - p))`` and, from ``epsilon``,
``p = e / (e + k - 1)``. Support: ``S(y) = {y}``, so ``p* = p``, ``q* = q``
and ``f_v = (C_v / n - q) / (p - q)``, which sums to 1 exactly.

Sampling is one exact integer draw ``r`` below ``D = a + (k - 1) b`` (with
``p = a / D``, ``q = b / D``): the truth if ``r < a``, otherwise the other
category number ``(r - a) // b``, skipping the truth's own number: each other
category gets exactly ``b`` of the ``D`` outcomes.
"""

from __future__ import annotations

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
from deniable.mechanisms.registry import register

__all__ = ["GRR"]


def randomize(
    truth: NDArray[np.int64], a: int, b: int, k: int, source: Source
) -> NDArray[np.int64]:
    """k-ary randomized response on positions ``0..k-1``: keep w.p. ``a/D``, else another.

    One exact draw ``r`` below ``D = a + (k - 1) b`` per value: the truth if
    ``r < a``, otherwise the ``((r - a) // b)``-th of the other ``k - 1``.
    """
    r = randomness.words_below(a + (k - 1) * b, truth.size, source)
    other = r - r.dtype.type(a)  # in the words drawn; wraps where r < a, rows that keep the truth
    other //= r.dtype.type(b)
    other += other >= truth
    return np.where(r < a, truth, other.view(np.int64) if other.dtype == np.uint64 else other)


@register(decode_cost="O(n + k)", candidate=True, browser=True, required=set(), optional={"prob", "epsilon"})
class GRR(FrequencyOracle):
    r"""k-ary randomized response over any categories.

    ``GRR(["A", "B", "C", "D"], prob=0.75)`` keeps the truth with probability
    0.75 (epsilon = ln 9); ``GRR(10, epsilon=1.0)`` works on the ints 0..9.
    The device reports its own category w.p. ``prob`` and each other one
    w.p. ``(1 - prob) / (k - 1)``, sampled as one exact uniform integer.

    Parameters
    ----------
    categories : int or sequence
        ``k`` (the categories are the ints ``0 .. k-1``) or the list of
        categories, any hashable values (at least 2).
    epsilon : float, optional
        The privacy loss of one report, ``> 0``; ``prob`` follows. Give
        exactly one of ``epsilon`` and ``prob``.
    prob : float or Fraction, optional
        The probability of reporting the truth, in ``(1/k, 1)``.

    Raises
    ------
    TypeError
        Neither or both of ``epsilon`` and ``prob``.
    ValueError
        Fewer than two categories, repeated categories, or an epsilon or
        ``prob`` out of range.

    Notes
    -----
    With :math:`e = e^\varepsilon`, :math:`p^* = e / (e + k - 1)` and
    :math:`q^* = (1 - p^*) / (k - 1)`, so :math:`\varepsilon = \ln (p^* / q^*)`;
    the estimate :math:`\hat f_v = (C_v / n - q^*) / (p^* - q^*)` sums to 1 exactly,
    and :math:`V^* = (e + k - 2) / (e - 1)^2` grows linearly in ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable import GRR
    >>> m = GRR(["A", "B", "C", "D"], prob=0.75)
    >>> round(m.epsilon, 6)  # ln 9
    2.197225
    >>> rng = np.random.default_rng(0)
    >>> values = rng.choice(["A", "B", "C", "D"], size=10_000, p=[0.4, 0.3, 0.2, 0.1])
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> round(float(est.frequencies.sum()), 12)
    1.0
    >>> bool(np.all(np.abs(est.frequencies - [0.4, 0.3, 0.2, 0.1]) < 5 * est.std_errors))
    True
    """

    wire_id = "grr"
    report_kind = "category"

    def __init__(
        self,
        categories: Any,
        *,
        epsilon: float | None = None,
        prob: float | Fraction | None = None,
    ) -> None:
        domain = Domain(categories, "GRR")
        if (epsilon is None) == (prob is None):
            raise TypeError("GRR needs exactly one of epsilon or prob")
        k = domain.k
        if prob is not None:
            p = privacy.check_probability(prob, "prob", Fraction(1, k), Fraction(1), "GRR")
            (a, b), _ = privacy.integer_probabilities([p, (1 - p) / (k - 1)])
        else:
            a, b = privacy.exp_ratio(privacy.check_epsilon(epsilon, owner="GRR"), k - 1)
        self._setup(domain, a, b)

    def _setup(self, domain: Domain, a: int, b: int) -> None:
        self.domain_obj = domain
        self._a, self._b = a, b
        self._denominator = a + (domain.k - 1) * b
        self._epsilon = privacy.ln_up(Fraction(a, b))

    @property
    def prob(self) -> Fraction:
        """``P(report == truth)``."""
        return Fraction(self._a, self._denominator)

    def support_probabilities(self) -> tuple[list[Fraction], list[Fraction]]:
        return [self.prob] * self.k, [Fraction(self._b, self._denominator)] * self.k

    # -------------------------------------------------------------- sampling
    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[Any]:
        return self.domain_obj.decode(randomize(idx, self._a, self._b, self.k, source))

    def _sample_one(self, position: int, source: Source) -> Any:
        r = randomness.scalar_below(self._denominator, source)
        if r < self._a:
            out = position
        else:
            out = (r - self._a) // self._b
            out += out >= position
        return self.domain_obj.values[out]

    # --------------------------------------------------------------- reports
    def _validate(self, reports: Any) -> NDArray[np.int64]:
        try:
            return self.domain_obj.encode(reports)
        except ValueError as exc:
            raise ValueError(f"GRR report rejected: {exc}") from None

    def _support_counts(self, positions: NDArray[np.int64]) -> NDArray[np.int64]:
        return np.bincount(positions, minlength=self.k)

    def _aggregate_coded(self, cells: NDArray[np.int64], codes: NDArray[np.integer]) -> SupportCounts:
        """A report is its category: ``C_v`` adds up the tallies of the cells that are ``v``."""
        return SupportCounts(self.fingerprint, tallied_counts(cells, codes, self.k), int(codes.size))

    def _supports(self, positions: NDArray[np.int64], position: int) -> NDArray[np.bool_]:
        return positions == position

    def max_support(self, positions: NDArray[np.int64]) -> int:
        """A report supports only itself: 1."""
        return 1

    def transition_matrix(self) -> tuple[list[Any], NDArray[np.float64]]:
        p, q = float(self.prob), self._b / self._denominator
        matrix = np.full((self.k, self.k), q)
        np.fill_diagonal(matrix, p)
        return list(self.domain), matrix

    def simulate_support_counts(
        self, true_counts: NDArray[np.int64], rng: np.random.Generator
    ) -> NDArray[np.int64] | None:
        if self.k > 2048:
            return None
        kept = rng.binomial(true_counts, float(self.prob))
        moved = rng.multinomial(true_counts - kept, np.full(self.k - 1, 1.0 / (self.k - 1)))
        # moved[x, j] goes to the j-th category other than x
        j = np.arange(self.k - 1)[None, :]
        destination = j + (j >= np.arange(self.k)[:, None])
        counts = kept.astype(np.int64)
        np.add.at(counts, destination.ravel(), moved.ravel())
        return counts

    # ------------------------------------------------------------------ wire
    def _params(self) -> dict[str, Any]:
        return {"truth_numerator": self._a, "other_numerator": self._b}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> GRR:
        a, b = int(params["truth_numerator"]), int(params["other_numerator"])
        if not 0 < b < a:
            raise ValueError(f"GRR params need 0 < other_numerator < truth_numerator; got {params!r}")
        self = cls.__new__(cls)
        self._setup(Domain(domain, "GRR"), a, b)
        return self

    def _public(self, checked: NDArray[np.int64]) -> NDArray[Any]:
        # validation yields category positions; reports are the category values
        return self.domain_obj.decode(checked)

    def _checked_to_json(self, checked: NDArray[np.int64]) -> list[Any]:
        return list(self._public(checked).tolist())
