"""best_mechanism(robust=c): the stated rule, the sensitivities beside the variances, refusals. Deterministic."""

from __future__ import annotations

import numpy as np
import pytest

import deniable as dn


def test_robust_choice_is_the_lowest_variance_within_the_factor() -> None:
    plain = dn.best_mechanism(1024, 1.0)
    robust = dn.best_mechanism(1024, 1.0, robust=1.2)
    assert plain.rule == "lowest Var*" and "within 1.2x the smallest" in robust.rule
    assert robust.sensitivities["GRR"] == pytest.approx(float(dn.GRR(1024, epsilon=1.0).manipulation().output[0]))
    least = min(robust.sensitivities.values())
    allowed = [n for n, s in robust.sensitivities.items() if s <= 1.2 * least * (1 + 1e-9)]
    assert robust.name == min(allowed, key=robust.variances.__getitem__) == "SUE"
    assert plain.name != robust.name and robust.variances[plain.name] < robust.variances[robust.name]
    # factor large enough: the plain choice; factor 1: only the least sensitive
    assert dn.best_mechanism(1024, 1.0, robust=1000).name == plain.name
    assert robust.sensitivities[dn.best_mechanism(1024, 1.0, robust=1).name] == pytest.approx(least)
    assert "within 1.2x" in repr(robust)


def test_each_sensitivity_is_the_mechanism_s_own() -> None:
    choice = dn.best_mechanism(16, 2.0)
    for name, m in dn._plan.candidates(16, 2.0).items():
        assert choice.sensitivities[name] == pytest.approx(float(np.max(m.manipulation().output)))


def test_robust_refusals() -> None:
    with pytest.raises(ValueError, match="robust must be a factor >= 1"):
        dn.best_mechanism(8, 1.0, robust=0.5)
    with pytest.raises(TypeError, match="robust= weighs frequency oracles"):
        dn.best_mechanism(epsilon=1.0, low=0, high=1, robust=2)
