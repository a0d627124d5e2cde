"""Layer C for the numeric mechanisms: black-box privacy audits.

``deniable.audit`` runs the real ``privatize_many`` path on the range's two
endpoints (the pair with the largest privacy loss for every mechanism here)
and bins the reports with ``m.binned_events()``: below the range, 8 slices of
the range, above it. A correct mechanism fails with probability at most
alpha = 1e-6 per audit (Clopper-Pearson bounds, Bonferroni inside the
audit); one whose true epsilon is 20% above its claim must fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from numeric_cases import HIGH, LOW, PURE, ClaimsLess

import deniable as dn

pytestmark = pytest.mark.audit

TRIALS = 100_000


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("name", list(PURE))
def test_secure_path_passes_the_audit(name: str, eps: float) -> None:
    m = PURE[name](eps)
    events, n_events = m.binned_events()
    result = dn.audit(m, TRIALS, None, pairs=[(LOW, HIGH)], events=events, n_events=n_events)
    assert result.passed, str(result)
    assert result.epsilon_lower > 0.8 * eps, f"audit too weak to mean anything: {result}"


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("name", list(PURE))
def test_audit_catches_epsilon_20_percent_too_weak(
    name: str, eps: float, rng: np.random.Generator
) -> None:
    m = PURE[name](eps)
    events, n_events = m.binned_events()
    bug = ClaimsLess(PURE[name](1.2 * eps), claimed=m.epsilon)
    result = dn.audit(bug, TRIALS, rng, pairs=[(LOW, HIGH)], events=events, n_events=n_events)
    assert not result.passed, str(result)


@pytest.mark.parametrize("name", list(PURE))
def test_audit_defaults_work_for_numeric_mechanisms(name: str, rng: np.random.Generator) -> None:
    """``dn.audit(m)``: the range's endpoints and four cells; power as above."""
    m = PURE[name](1.0)
    result = dn.audit(m, TRIALS)
    assert result.passed, str(result)
    assert result.worst is not None and result.epsilon_lower > 0.8
    strong = PURE[name](1.2)
    assert not dn.audit(ClaimsLess(strong, m.epsilon), TRIALS, rng, pairs=[(LOW, HIGH)],
                        events=lambda _, r, a, b: strong.audit_events(r, a, b)).passed
