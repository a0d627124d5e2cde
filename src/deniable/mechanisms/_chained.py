"""Longitudinal frequency oracles L-GRR and L-OSUE: a memoized round chained with a fresh one.

Arcolezi, Couchot, Al Bouna, Xiao, "Improving the utility of locally
differentially private protocols for longitudinal and multidimensional
frequency estimates" (Digital Communications and Networks, 2022/2023). Each
device randomizes its value twice:

1. the **permanent** round (PRR), with ``(p1, q1)`` for ``epsilon_perm``,
   drawn once per (device, value) and memoized by the device's
   :meth:`client`;
2. the **instantaneous** round (IRR), with ``(p2, q2)``, drawn fresh for
   every report from the PRR.

Each round is the same kind of randomized response (L-GRR: GRR then GRR on
the ``k`` categories; L-OSUE: OUE then SUE on each bit of the one-hot
vector), so one report supports category ``v`` with probability

    p* = p1 p2 + (1 - p1) q2   if the value is v,
    q* = q1 p2 + (1 - q1) q2   otherwise,

and the chain is a pure frequency oracle (:mod:`deniable._estimate`): the
unbiased estimate is ``f_v = (C_v / n - q*) / (p* - q*)`` with
``p* - q* = (p1 - q1)(p2 - q2)`` (the paper's
``(C_v - n q1 (p2 - q2) - n q2) / (n (p1 - q1)(p2 - q2))``) and, for the
respondents of one collection, variance formula (A) of MECHANISMS.md,
``q*(1-q*)/(n (p*-q*)^2) + f (1-p*-q*)/(n (p*-q*))``; at ``f = 0`` it is the
paper's ``sigma (1 - sigma) / (n (p1-q1)^2 (p2-q2)^2)`` with ``sigma = q*``.

Privacy, the paper's two numbers:

* ``epsilon`` (the paper's ``epsilon_1``): one report, the chained channel,
  ``ln(p*/q*)`` for L-GRR and ``ln(p*(1-q*)/((1-p*) q*))`` for L-OSUE;
* ``epsilon_perm`` (``epsilon_infinity``): any number of reports of one
  value, since they are functions of one memoized PRR:
  ``ln(p1/q1)`` and ``ln(p1(1-q1)/((1-p1) q1))``. Every other value the
  device reports gets its own PRR, so ``r`` distinct values cost at most
  ``r epsilon_perm`` (:meth:`lifetime_epsilon`).

The second round is chosen so that the chained report realises
``epsilon_1``. L-OSUE uses ``p1 = 1/2``, ``q1 = 1/(e^eps_perm + 1)`` and
``p2 = (1 - e^(eps_1 + eps_perm)) / (e^eps_1 - e^eps_perm - e^(eps_1 + eps_perm) + 1)``,
``q2 = 1 - p2`` (the paper's closed form). For L-GRR, with
``p1 = e^eps_perm / (e^eps_perm + k - 1)``, solving ``p*/q* = e^eps_1`` gives
the round-2 GRR ratio

    e^eps_2 = p2 / q2 = (e^eps_1 (1 - q1) - (1 - p1)) / (p1 - e^eps_1 q1),

which for ``k = 2`` is the paper's closed form; for ``k > 2`` the paper's
(and multi-freq-ldpy's) closed form realises less than ``epsilon_1``
(0.92 for ``epsilon_1 = 1``, ``k = 10``, ``epsilon_perm = 4``), wasting
accuracy, so it is solved exactly here.

As everywhere in deniable, every probability is an integer ratio, sampled
exactly, and both epsilons are computed from those integers and rounded up:
never above what was asked, and within 1% of it (or the constructor refuses).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._client_state import StateLike
from deniable._randomness import Source
from deniable.mechanisms._domain import Domain
from deniable.mechanisms._kary import GRR, randomize
from deniable.mechanisms._permanent import PermanentClient
from deniable.mechanisms._unary import UnaryEncoding, oue_q_numerator
from deniable.mechanisms.registry import register

__all__ = ["LGRR", "LOSUE", "LongitudinalClient"]

_BITS = 32
_ONE = 1 << _BITS
_CLOSE = 1e-2  # realised epsilons within 1% of the request, or refused


def _epsilons(owner: str, epsilon_perm: object, epsilon_1: object) -> tuple[float, float]:
    perm = privacy.check_epsilon(epsilon_perm, "epsilon_perm", owner)
    one = privacy.check_epsilon(epsilon_1, "epsilon_1", owner)
    if not one < perm:
        raise ValueError(
            f"epsilon_1 must be below epsilon_perm for {owner} (one report cannot leak more than all of "
            f"them); got epsilon_1={epsilon_1!r}, epsilon_perm={epsilon_perm!r}"
        )
    return perm, one


def _check_close(owner: str, name: str, realised: float, requested: float) -> None:
    if realised < requested * (1 - _CLOSE):
        raise ValueError(
            f"{name}={requested!r} cannot be realised by {owner} with its integer probabilities "
            f"(it would give {realised:.4g}); choose epsilon_1 further from epsilon_perm"
        )


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest ``x`` in ``[low, high]`` with ``fits(x)``, by bisection; ``fits`` is monotone (true up to
    some point) and ``fits(low)`` holds."""
    if fits(high):
        return high
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid):
            low = mid
        else:
            high = mid
    return low


class _Chained:
    """What L-GRR and L-OSUE share: two rounds, the memoizing client, the lifetime budget.

    A subclass supplies ``_permanent(positions, source)`` (the first round,
    from category positions to its internal report form) and
    ``_instantaneous(prr, source)`` (the second round, same form), plus
    ``epsilon_perm`` and ``epsilon_irr``.
    """

    epsilon_perm: float
    epsilon_irr: float

    def _permanent(self, idx: NDArray[np.int64], source: Source) -> NDArray[Any]:
        raise NotImplementedError

    def _instantaneous(self, prr: NDArray[Any], source: Source) -> NDArray[Any]:
        raise NotImplementedError

    def client(self, state: StateLike | None = None, *, secret: bytes | None = None) -> LongitudinalClient:
        """A device-side client: a memoized first round per value, a fresh second round per report.

        ``state`` (a file path or a store) keeps the device's secret across
        restarts (:mod:`deniable.mechanisms._permanent`).
        """
        return LongitudinalClient(self, state, secret=secret)

    def lifetime_epsilon(self, distinct: int = 1) -> float:
        """Privacy loss of all reports of a device whose value took ``distinct`` different values.

        ``distinct * epsilon_perm``: each value's reports are functions of
        its own memoized first round (an ``epsilon_perm``-LDP randomization,
        drawn independently per value). That compares two value histories
        that change value at the same reports; when the value changed is not
        protected (the reports' distribution changes then).
        """
        if isinstance(distinct, bool) or not isinstance(distinct, int) or distinct < 1:
            raise ValueError(f"distinct must be an int >= 1; got {distinct!r}")
        return distinct * self.epsilon_perm


@register(decode_cost="O(n + k)", browser=True, required={"epsilon_perm", "epsilon_1"})
class LGRR(_Chained, GRR):
    r"""L-GRR: GRR memoized at ``epsilon_perm``, then GRR again, fresh, so that one report is ``epsilon_1``-LDP.

    ``LGRR(categories, epsilon_perm=4.0, epsilon_1=1.0)``. Reports are
    categories, as GRR's; one report is exactly GRR with ``p*, q*`` (module
    docstring), so everything GRR's estimator, intervals and MLE do holds.
    ``privatize_many`` simulates both rounds for many devices (one report
    each); a device that reports repeatedly uses :meth:`client`.

    Parameters
    ----------
    categories : int or sequence
        ``k`` (the ints ``0 .. k-1``) or the list of categories (at least 2).
    epsilon_perm : float
        The privacy loss of any number of reports of one value (the
        memoized first round), ``> 0``.
    epsilon_1 : float
        The privacy loss of one report (the chained channel), ``> 0`` and
        below ``epsilon_perm``.

    Raises
    ------
    ValueError
        Fewer than two categories, or epsilons out of range or not
        realisable within 1%.

    Notes
    -----
    One report supports :math:`v` with :math:`p^* = p_1 p_2 + (1 - p_1) q_2`
    if the value is :math:`v` and :math:`q^* = q_1 p_2 + (1 - q_1) q_2`
    otherwise, so :math:`\hat f_v = (C_v / n - q^*) / (p^* - q^*)` with
    :math:`p^* - q^* = (p_1 - q_1)(p_2 - q_2)`. L-GRR's first round is GRR with
    :math:`p_1 = e^{\varepsilon_\infty} / (e^{\varepsilon_\infty} + k - 1)`; the second solves
    :math:`p^* / q^* = e^{\varepsilon_1}` exactly.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.LGRR(["a", "b", "c", "d"], epsilon_perm=2.0, epsilon_1=1.0)
    >>> m
    LGRR(k=4, epsilon_perm=2, epsilon_1=1)
    >>> values = rng.choice(["a", "b", "c", "d"], size=20_000, p=[0.4, 0.3, 0.2, 0.1])
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(np.all(np.abs(est.frequencies - [0.4, 0.3, 0.2, 0.1]) < 5 * est.std_errors))
    True
    """

    wire_id = "l-grr"

    def __init__(self, categories: Any, *, epsilon_perm: float, epsilon_1: float) -> None:
        domain = Domain(categories, "L-GRR")
        perm, one = _epsilons("L-GRR", epsilon_perm, epsilon_1)
        k = domain.k
        a1, b1 = privacy.exp_ratio(perm, k - 1)
        d1 = a1 + (k - 1) * b1
        p1, q1 = Fraction(a1, d1), Fraction(b1, d1)
        e1 = math.exp(one)
        ratio = (e1 * (1 - float(q1)) - (1 - float(p1))) / (float(p1) - e1 * float(q1))
        try:
            a2, b2 = privacy.exp_ratio(math.log(ratio), k - 1)
        except ValueError:
            raise ValueError(
                f"epsilon_1={epsilon_1!r} is too close to epsilon_perm={epsilon_perm!r} (or too small) for "
                "L-GRR to realise with integer probabilities"
            ) from None
        a2 = _largest(b2, a2, lambda a: privacy.ln_up(_grr_chain(a1, b1, a, b2, k)) <= one)
        if a2 <= b2:
            raise ValueError(f"epsilon_1={epsilon_1!r} is too small for L-GRR to realise")
        self._chain(domain, a1, b1, a2, b2)
        _check_close("L-GRR", "epsilon_perm", self.epsilon_perm, perm)
        _check_close("L-GRR", "epsilon_1", self.epsilon, one)

    def _chain(self, domain: Domain, a1: int, b1: int, a2: int, b2: int) -> None:
        k = domain.k
        d1 = a1 + (k - 1) * b1
        # one report: A / (d1 d2) for the truth, B / (d1 d2) for each other category
        self._setup(domain, a1 * a2 + (d1 - a1) * b2, b1 * a2 + (d1 - b1) * b2)
        self._rounds = (a1, b1, a2, b2)
        self.epsilon_perm = privacy.ln_up(Fraction(a1, b1))
        self.epsilon_irr = privacy.ln_up(Fraction(a2, b2))

    @property
    def rounds(self) -> tuple[tuple[Fraction, Fraction], tuple[Fraction, Fraction]]:
        """``((p1, q1), (p2, q2))``: each round's probability of keeping the input and of each other category."""
        a1, b1, a2, b2 = self._rounds
        d1, d2 = a1 + (self.k - 1) * b1, a2 + (self.k - 1) * b2
        return (Fraction(a1, d1), Fraction(b1, d1)), (Fraction(a2, d2), Fraction(b2, d2))

    def _permanent(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.int64]:
        a1, b1, _, _ = self._rounds
        return randomize(idx, a1, b1, self.k, source)

    def _instantaneous(self, prr: NDArray[np.int64], source: Source) -> NDArray[np.int64]:
        _, _, a2, b2 = self._rounds
        return randomize(prr, a2, b2, self.k, source)

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[Any]:
        return self.domain_obj.decode(self._instantaneous(self._permanent(idx, source), source))

    def _sample_one(self, position: int, source: Source) -> Any:
        return self._sample(np.array([position], dtype=np.int64), source)[0]

    def _params(self) -> dict[str, Any]:
        a1, b1, a2, b2 = self._rounds
        return {
            "perm_truth_numerator": a1, "perm_other_numerator": b1,
            "irr_truth_numerator": a2, "irr_other_numerator": b2,
        }

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> LGRR:
        a1, b1 = int(params["perm_truth_numerator"]), int(params["perm_other_numerator"])
        a2, b2 = int(params["irr_truth_numerator"]), int(params["irr_other_numerator"])
        if not (0 < b1 < a1 and 0 < b2 < a2):
            raise ValueError(f"L-GRR params need 0 < other_numerator < truth_numerator in each round; got {params!r}")
        dom = Domain(domain, "L-GRR")
        for a, b in ((a1, b1), (a2, b2)):
            if a + (dom.k - 1) * b > randomness.TWO64:
                raise ValueError(f"L-GRR params give a round denominator above 2**64; got {params!r}")
        self = cls.__new__(cls)
        self._chain(dom, a1, b1, a2, b2)
        return self

    def __repr__(self) -> str:
        return (
            f"LGRR(k={self.k}, epsilon_perm={self.epsilon_perm:.6g}, epsilon_1={self.epsilon:.6g})"
        )


def _grr_chain(a1: int, b1: int, a2: int, b2: int, k: int) -> Fraction:
    """``p*/q*`` of two chained GRRs with integer ratios ``a1:b1`` and ``a2:b2`` over ``k`` categories."""
    d1 = a1 + (k - 1) * b1
    return Fraction(a1 * a2 + (d1 - a1) * b2, b1 * a2 + (d1 - b1) * b2)


def _ue_chain(p1: int, q1: int, p2: int) -> tuple[Fraction, Fraction]:
    """Per-bit ``(p*, q*)`` of OUE-like ``(p1, q1)`` then SUE ``(p2, 1 - p2)``, numerators over 2**32."""
    q2 = _ONE - p2
    square = _ONE * _ONE
    return Fraction(p1 * p2 + (_ONE - p1) * q2, square), Fraction(q1 * p2 + (_ONE - q1) * q2, square)


def _ue_epsilon(p: Fraction, q: Fraction) -> float:
    return privacy.ln_up(p * (1 - q) / ((1 - p) * q))


@register(decode_cost="O(n k) bit sums", browser=True, required={"epsilon_perm", "epsilon_1"})
class LOSUE(_Chained, UnaryEncoding):
    r"""L-OSUE: OUE memoized at ``epsilon_perm``, then SUE on each bit, fresh, so one report is ``epsilon_1``-LDP.

    ``LOSUE(categories, epsilon_perm=4.0, epsilon_1=1.0)``; the authors'
    recommended default. Reports are OUE/SUE's packed bits; one report is a
    unary encoding with per-bit ``p*, q*`` (module docstring). The first
    round's numerators over 2**32 are ``p1 = 2**31`` and ``q1`` (OUE's for
    ``epsilon_perm``); the second keeps each bit with ``p2`` (over 2**32),
    the largest whose chained report stays within ``epsilon_1``.

    Parameters
    ----------
    categories : int or sequence
        ``k`` (the ints ``0 .. k-1``) or the list of categories (at least 2).
    epsilon_perm : float
        The privacy loss of any number of reports of one value (the
        memoized first round), ``> 0``.
    epsilon_1 : float
        The privacy loss of one report (the chained channel), ``> 0`` and
        below ``epsilon_perm``.

    Raises
    ------
    ValueError
        Fewer than two categories, or epsilons out of range or not
        realisable within 1%.

    Notes
    -----
    One report supports :math:`v` with :math:`p^* = p_1 p_2 + (1 - p_1) q_2`
    if the value is :math:`v` and :math:`q^* = q_1 p_2 + (1 - q_1) q_2`
    otherwise, so :math:`\hat f_v = (C_v / n - q^*) / (p^* - q^*)` with
    :math:`p^* - q^* = (p_1 - q_1)(p_2 - q_2)`. L-OSUE's first round is OUE
    (:math:`p_1 = 1/2`, :math:`q_1 = 1 / (e^{\varepsilon_\infty} + 1)`), its second SUE on each bit.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> rng = np.random.default_rng(0)
    >>> m = dn.LOSUE(["a", "b", "c", "d"], epsilon_perm=2.0, epsilon_1=1.0)
    >>> m
    LOSUE(k=4, epsilon_perm=2, epsilon_1=1)
    >>> values = rng.choice(["a", "b", "c", "d"], size=20_000, p=[0.4, 0.3, 0.2, 0.1])
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(np.all(np.abs(est.frequencies - [0.4, 0.3, 0.2, 0.1]) < 5 * est.std_errors))
    True
    """

    wire_id = "l-osue"

    def __init__(self, categories: Any, *, epsilon_perm: float, epsilon_1: float) -> None:
        domain = Domain(categories, "L-OSUE")
        perm, one = _epsilons("L-OSUE", epsilon_perm, epsilon_1)
        p1, q1 = _ONE // 2, oue_q_numerator(perm)
        # 2**31 always qualifies (epsilon 0); the largest p2 that does
        low = _largest(_ONE // 2, _ONE - 1, lambda p2: _ue_epsilon(*_ue_chain(p1, q1, p2)) <= one)
        if low == _ONE // 2:
            raise ValueError(f"epsilon_1={epsilon_1!r} is too small for L-OSUE to realise")
        self._chain(domain, p1, q1, low)
        _check_close("L-OSUE", "epsilon_perm", self.epsilon_perm, perm)
        _check_close("L-OSUE", "epsilon_1", self.epsilon, one)

    def _chain(self, domain: Domain, p1: int, q1: int, p2: int) -> None:
        self._set_domain(domain)
        # _p, _q: the first (memoized) round, as UnaryEncoding samples them
        self._p, self._q, self._p2 = p1, q1, p2
        self._chained = _ue_chain(p1, q1, p2)
        self._epsilon = _ue_epsilon(*self._chained)
        self.epsilon_perm = _ue_epsilon(Fraction(p1, _ONE), Fraction(q1, _ONE))
        self.epsilon_irr = privacy.ln_up(Fraction(p2, _ONE - p2) ** 2)

    @property
    def p(self) -> Fraction:
        """``p*``: probability that a report's bit of the true category is 1."""
        return self._chained[0]

    @property
    def q(self) -> Fraction:
        """``q*``: probability that a report's bit of another category is 1."""
        return self._chained[1]

    @property
    def rounds(self) -> tuple[tuple[Fraction, Fraction], tuple[Fraction, Fraction]]:
        """``((p1, q1), (p2, q2))``: each round's probability of a 1-bit given a 1 / a 0 input bit."""
        return (
            (Fraction(self._p, _ONE), Fraction(self._q, _ONE)),
            (Fraction(self._p2, _ONE), Fraction(_ONE - self._p2, _ONE)),
        )

    def _permanent(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.uint8]:
        return UnaryEncoding._sample(self, idx, source)

    def _instantaneous(self, prr: NDArray[np.uint8], source: Source) -> NDArray[np.uint8]:
        n, width = prr.shape
        flips = randomness.bernoulli_packed(_ONE - self._p2, _BITS, n * width * 8, source).reshape(n, width)
        flips[:, -1] &= self._last_byte
        return np.bitwise_xor(prr, flips)

    def _sample(self, idx: NDArray[np.int64], source: Source) -> NDArray[np.uint8]:
        return self._instantaneous(self._permanent(idx, source), source)

    def _params(self) -> dict[str, Any]:
        return {"bits": _BITS, "perm_p_numerator": self._p, "perm_q_numerator": self._q, "irr_p_numerator": self._p2}

    @classmethod
    def _from_params(cls, domain: Any, params: dict[str, Any]) -> LOSUE:
        if int(params["bits"]) != _BITS:
            raise ValueError(f"L-OSUE params: bits must be {_BITS}; got {params['bits']!r}")
        p1, q1, p2 = int(params["perm_p_numerator"]), int(params["perm_q_numerator"]), int(params["irr_p_numerator"])
        if not (0 < q1 < p1 < _ONE and _ONE // 2 < p2 < _ONE):
            raise ValueError(
                f"L-OSUE params need 0 < perm_q_numerator < perm_p_numerator < 2**32 and "
                f"2**31 < irr_p_numerator < 2**32; got {params!r}"
            )
        self = cls.__new__(cls)
        self._chain(Domain(domain, "L-OSUE"), p1, q1, p2)
        return self

    def __repr__(self) -> str:
        return (
            f"LOSUE(k={self.k}, epsilon_perm={self.epsilon_perm:.6g}, epsilon_1={self.epsilon:.6g})"
        )


class LongitudinalClient(PermanentClient):
    """One device of L-GRR / L-OSUE: the first round memoized per value, the second fresh.

    The first-round response to a value is drawn from the client's keyed
    stream for that category (:mod:`deniable.mechanisms._permanent`), so every
    report of the value reuses it; the second round reads the OS CSPRNG each
    time. Reports of one value therefore leak at most ``epsilon_perm`` in
    total, and each single report ``epsilon_1``. ``LGRR.client`` and
    ``LOSUE.client`` make it.

    Parameters
    ----------
    mechanism : LGRR or LOSUE
        The mechanism configuration.
    state : str, os.PathLike or StateStore, optional
        Where the device keeps its secret across restarts
        (:mod:`deniable.mechanisms._permanent`).
    secret : bytes, optional
        The secret itself (at least 16 bytes), instead of ``state``; with
        neither, a fresh one for this process only.

    Raises
    ------
    TypeError
        Both ``state`` and ``secret``.
    StateError
        A ``state`` written for another configuration.

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.LGRR(["a", "b", "c", "d"], epsilon_perm=2.0, epsilon_1=1.0)
    >>> device = m.client(dn.MemoryStore())
    >>> type(device).__name__, bool((device.permanent("a") == device.permanent("a")).all())
    ('LongitudinalClient', True)
    >>> device.privatize("a") in ("a", "b", "c", "d")
    True
    """

    def permanent(self, value: Any) -> Any:
        """The memoized first-round response to ``value`` (internal form: a position or packed bits)."""
        m = self.mechanism
        position = m.domain_obj.encode_one(value)
        return m._permanent(np.array([position], dtype=np.int64), self._stream(f"value {position}"))

    def privatize(self, value: Any) -> Any:
        """One report of ``value``: its memoized first round through a fresh second round."""
        m = self.mechanism
        report = m._instantaneous(self.permanent(value), randomness.SECURE)
        return m._public(report)[0]

