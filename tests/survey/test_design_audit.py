"""Empirical privacy audit of every design's device path (the OS CSPRNG, as a respondent's device runs it).

For each finite-epsilon design and each group, :func:`deniable.audit` bounds
epsilon from below with Clopper-Pearson intervals over the answers of
compliant carriers and non-carriers (all pairs of categories for FR with m
categories). A correct design fails with probability at most alpha = 1e-7
per audit (about 12 audits here: under 2e-6 for the file). Power: the same
audit fails a design whose claim is 20% below its real epsilon, and it finds
the truth-revealing answer of an infinite-epsilon design.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from survey_cases import CASES, IDS, build

import deniable as dn
import deniable.survey as sv

ALPHA = 1e-7
TRIALS = 100_000


class _GroupPath:
    """A design's real ``privatize_many`` for respondents of one group, as the audit calls a mechanism."""

    def __init__(self, design: sv.Design, group: int, claim: float | None = None) -> None:
        self.design, self.group = design, group
        self.epsilon = design.epsilon if claim is None else claim

    def privatize_many(self, values: Any, rng: Any = None) -> np.ndarray:
        groups = None if self.design.groups == 1 else [self.group] * len(values)
        return self.design.privatize_many(values, groups, rng=rng)


def _audit(design: sv.Design, group: int, claim: float | None = None) -> dn.AuditResult:
    states = list(range(design.m)) if isinstance(design, sv.ForcedResponse) and design.m > 2 else [False, True]
    return dn.audit(
        _GroupPath(design, group, claim),
        trials=TRIALS,
        pairs=list(itertools.combinations(states, 2)),
        events=lambda m, reports, a, b: np.asarray(reports, dtype=np.int64),
        n_events=len(design.responses),
        alpha=ALPHA,
    )


FINITE = [(case, name) for case, name in zip(CASES, IDS, strict=True) if math.isfinite(build(*case[:3]).epsilon)]


@pytest.mark.audit
@pytest.mark.parametrize("case", [c for c, _ in FINITE], ids=[n for _, n in FINITE])
def test_design_does_not_leak_more_than_its_epsilon(case: tuple[Any, ...]) -> None:
    model, p, cards, _ = case
    d = build(model, p, cards)
    for g in range(1, d.groups + 1):
        result = _audit(d, g)
        assert result.passed, f"{model} group {g}: {result}"


@pytest.mark.audit
def test_audit_catches_an_understated_epsilon() -> None:
    for d in (sv.Warner(0.75), sv.Kuk((0.7, 0.3), cards=3), sv.ForcedResponse((0.1, 0.15, 0.05))):
        assert not _audit(d, 1, claim=d.epsilon / 1.2).passed, d


@pytest.mark.audit
@pytest.mark.parametrize(
    "d", [sv.Mangat(0.6), sv.Triangular(0.3), sv.StochasticLieDetector((0.3, 0.7))], ids=["Mangat", "Triangular", "SLD"]
)
def test_infinite_epsilon_is_found(d: sv.Design) -> None:
    """Where an answer reveals the truth, the audit's lower bound exceeds any modest finite claim."""
    result = _audit(d, 1, claim=5.0)
    assert not result.passed and result.epsilon_lower > 5
