"""The grid of mechanism configurations the test suite runs over.

Every frequency oracle appears with k = 2, a small and a large k, string,
int and bool categories, and several epsilons. ``requested`` is the epsilon
(or None when the mechanism was built from a probability) so tests can check
that the realised epsilon never exceeds it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import deniable as dn

LETTERS = [chr(ord("A") + i) for i in range(26)]


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[], Any]
    requested: float | None = None
    heavy: bool = False  # large reports or slow sampling: marked ``slow`` in sampling tests

    def make(self) -> Any:
        return self.build()


def _case(cls: Any, categories: Any, eps: float, label: str, heavy: bool = False, **kw: Any) -> Case:
    return Case(f"{cls.__name__}-{label}-eps{eps:g}", lambda: cls(categories, epsilon=eps, **kw), eps, heavy)


CASES: list[Case] = [
    # Binary randomized response and forced response
    Case("BinaryRR-prob0.75", lambda: dn.BinaryRR(prob=0.75)),
    Case("BinaryRR-eps0.5", lambda: dn.BinaryRR(epsilon=0.5), 0.5),
    Case("BinaryRR-eps3", lambda: dn.BinaryRR(epsilon=3.0), 3.0),
    Case("BinaryRR-gamma0.1", lambda: dn.BinaryRR(gamma=0.1)),
    Case("BinaryRR-forced-0.5-0.5", lambda: dn.BinaryRR.forced_response(0.5, 0.5)),
    Case("BinaryRR-forced-0.3-0.8", lambda: dn.BinaryRR.forced_response(0.3, 0.8)),
    # GRR
    Case("GRR-ABCD-prob0.75", lambda: dn.GRR(["A", "B", "C", "D"], prob=0.75)),
    _case(dn.GRR, 2, 1.0, "k2"),
    _case(dn.GRR, [False, True], 0.5, "bool"),
    _case(dn.GRR, 10, 1.0, "k10"),
    _case(dn.GRR, LETTERS[:3], 5.0, "str3"),
    _case(dn.GRR, 100, 3.0, "k100"),
    # unary encodings
    _case(dn.SUE, 2, 1.0, "k2"),
    _case(dn.SUE, LETTERS[:5], 0.5, "str5"),
    _case(dn.SUE, 12, 3.0, "k12"),
    _case(dn.SUE, 70, 1.0, "k70", heavy=True),
    _case(dn.OUE, 2, 1.0, "k2"),
    _case(dn.OUE, [False, True], 2.0, "bool"),
    _case(dn.OUE, LETTERS[:9], 1.0, "str9"),
    _case(dn.OUE, 12, 0.5, "k12"),
    _case(dn.OUE, 130, 2.0, "k130", heavy=True),
    # local hashing
    _case(dn.BLH, 2, 1.0, "k2"),
    _case(dn.BLH, LETTERS[:6], 0.5, "str6"),
    _case(dn.BLH, 100, 2.0, "k100"),
    _case(dn.OLH, 2, 1.0, "k2"),
    _case(dn.OLH, LETTERS[:6], 2.0, "str6"),
    _case(dn.OLH, 10, 1.0, "k10-g4", g=4),
    _case(dn.OLH, 100, 3.0, "k100"),
    _case(dn.OLH, 1000, 1.0, "k1000", heavy=True),
    # Hadamard response
    _case(dn.HadamardResponse, 2, 1.0, "k2"),
    _case(dn.HadamardResponse, LETTERS[:3], 0.5, "str3"),
    _case(dn.HadamardResponse, 8, 2.0, "k8"),
    _case(dn.HadamardResponse, 100, 1.0, "k100"),
    # subset selection
    _case(dn.SubsetSelection, 2, 1.0, "k2"),
    _case(dn.SubsetSelection, 3, 1.0, "k3"),
    _case(dn.SubsetSelection, LETTERS[:6], 0.5, "str6"),
    _case(dn.SubsetSelection, 10, 1.0, "k10-w1", omega=1),
    _case(dn.SubsetSelection, 12, 2.0, "k12-w5", omega=5),
    _case(dn.SubsetSelection, 20, 1.0, "k20"),
    _case(dn.SubsetSelection, 100, 1.0, "k100", heavy=True),
    _case(dn.SubsetSelection, 60, 0.1, "k60", heavy=True),
]


def params(cases: list[Case] | None = None) -> Any:
    """``pytest.mark.parametrize`` arguments over cases, with readable ids."""
    chosen = CASES if cases is None else cases
    marked = [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.heavy else []) for c in chosen]
    return pytest.mark.parametrize("case", marked)


def by_name(*names: str) -> list[Case]:
    table = {c.id: c for c in CASES}
    return [table[n] for n in names]


def sample_values(m: Any, n: int, rng: Any) -> list[Any]:
    """``n`` values spread over the whole domain, as the caller would pass them."""
    positions = rng.integers(0, m.k, size=n)
    return [m.domain[i] for i in positions]


def e_of(m: Any) -> float:
    """``exp(epsilon)`` of the realised epsilon."""
    return math.exp(m.epsilon)


N_REPORTS = 400
_REPORTS: dict[str, tuple[Any, Any]] = {}


def reports_for(case: Case) -> tuple[Any, Any]:
    """Fixed simulated reports per case (cached: Hypothesis reuses them across examples)."""
    if case.id not in _REPORTS:
        m = case.make()
        gen = np.random.default_rng(12345)
        _REPORTS[case.id] = (m, m.privatize_many(sample_values(m, N_REPORTS, gen), rng=gen))
    return _REPORTS[case.id]


# The frequency oracles built from ``(categories, epsilon=...)``: cross-mechanism parameter tables.
K_ORACLES = [dn.SUE, dn.OUE, dn.BLH, dn.OLH, dn.HadamardResponse, dn.SubsetSelection, dn.GRR]
_NOT_POSITIVE = r"^epsilon must be a positive finite number for {name}; got "
# (epsilon, exception, whole message with ``{name}`` for the mechanism's class name)
BAD_EPSILONS = [
    *[(eps, ValueError, _NOT_POSITIVE + re.escape(repr(eps)) + "$")
      for eps in (float("nan"), float("inf"), -float("inf"), -1.0, 0.0, 0)],
    *[(eps, TypeError, _NOT_POSITIVE + re.escape(repr(eps)) + "$") for eps in (True, "1.0", Fraction(1, 2), [1.0])],
    (None, TypeError, _NOT_POSITIVE + "None$|^{name} needs exactly one of "),  # GRR and BinaryRR: no parameter given
    (1e-300, ValueError, r"^epsilon=\S+ is too small to realise with 63-bit integer probabilities$"),
    (1e6, ValueError, r"^epsilon=\S+ is too large to realise with 63-bit integer probabilities$"),
]


def matrix_of(m: Any) -> Any:
    """``(outputs, P)``: the enumerated outputs and the exact transition matrix of ``m``."""
    return m.transition_matrix()


def _enumerates(case: Case) -> bool:
    try:
        case.make().transition_matrix()
    except NotImplementedError:
        return False
    return True


# mechanisms whose output space is small enough to enumerate exactly
ENUMERABLE = [case for case in CASES if _enumerates(case)]


def as_reports(m: Any, outputs: Any) -> Any:
    """The enumerated outputs in a form ``m.validate`` accepts."""
    kind = type(m).__name__
    if kind in ("SUE", "OUE"):
        return np.array(outputs, dtype=np.uint8)
    if kind == "SubsetSelection":
        return np.array(outputs, dtype=np.int64).reshape(len(outputs), m.omega)
    return outputs
