"""best_mechanism answers both questions: k categories, or a numeric range."""

from __future__ import annotations

import pytest

import deniable as dn


def test_numeric_range_dispatches_to_the_numeric_comparison() -> None:
    got = dn.best_mechanism(epsilon=1.0, low=0.0, high=120.0)
    direct = dn.best_numeric_mechanism(1.0, 0.0, 120.0)
    assert got.name == direct.name == "Hybrid"
    assert got.variances == direct.variances
    assert (got.mechanism.low, got.mechanism.high) == (0.0, 120.0)


def test_categorical_call_is_unchanged() -> None:
    assert dn.best_mechanism(k=10, epsilon=1.0).name == "SubsetSelection"
    assert dn.best_mechanism(4, 3.0).name == "GRR"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": 1.0}, "needs k"),
        ({"k": 4}, "needs epsilon"),
        ({"k": 4, "epsilon": 1.0, "low": 0.0, "high": 1.0}, "not both"),
        ({"epsilon": 1.0, "low": 0.0}, "needs k"),
    ],
)
def test_ambiguous_or_missing_arguments_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        dn.best_mechanism(**kwargs)
