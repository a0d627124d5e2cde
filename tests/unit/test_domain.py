"""Categorical domains: positions, and categories of different types kept apart."""

from __future__ import annotations

import numpy as np
import pytest
from mechanism_grid import K_ORACLES

import deniable as dn


def test_mixed_type_domain_keeps_true_and_one_apart() -> None:
    m = dn.GRR([1, True, "1"], epsilon=1.0)
    np.testing.assert_array_equal(m.domain_obj.encode([1, True, "1", True]), [0, 1, 2, 1])
    assert m.aggregate([True, True, 1]).counts.tolist() == [1, 2, 0]
    with pytest.raises(ValueError, match="not in the domain"):
        m.privatize(1.5)
    assert dn.from_config(m.to_config()) == m


@pytest.mark.parametrize("cls", K_ORACLES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    ("categories", "exc", "message"),
    [(1, ValueError, "k must be >= 2"), (True, TypeError, "int k"), ([], ValueError, "at least 2"),
     (["x"], ValueError, "at least 2"), (["x", "y", "x"], ValueError, "duplicate")],
)
def test_bad_domains_everywhere(cls, categories, exc, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message):
        cls(categories, epsilon=1.0)


@pytest.mark.parametrize(
    ("m", "value"),
    [
        (dn.GRR(4, epsilon=1.0), 4),
        (dn.GRR(4, epsilon=1.0), -1),
        (dn.GRR(4, epsilon=1.0), 1.0),
        (dn.GRR(4, epsilon=1.0), True),
        (dn.GRR(4, epsilon=1.0), "1"),
        (dn.GRR(["A", "B"], epsilon=1.0), "C"),
        (dn.GRR(["A", "B"], epsilon=1.0), None),
        (dn.BinaryRR(prob=0.75), 1),
        (dn.BinaryRR(prob=0.75), "yes"),
        (dn.OUE([False, True], epsilon=1.0), 0),
        (dn.OLH(["x", "y", "z"], epsilon=1.0), ["x"]),
        (dn.SubsetSelection(5, epsilon=1.0), 5),
        (dn.HadamardResponse(5, epsilon=1.0), np.int64(7)),
    ],
)
def test_value_outside_domain(m, value) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="not in the domain"):
        m.privatize(value)
    if value is True and m.domain_obj.is_range:
        return  # np.asarray([0, True]) is an int array: a list cannot tell True from 1
    with pytest.raises(ValueError, match="not in the domain|1-D sequence of categories"):
        m.privatize_many([m.domain[0], value])


def test_values_must_be_one_dimensional() -> None:
    m = dn.GRR(4, epsilon=1.0)
    with pytest.raises(ValueError, match="1-D"):
        m.privatize_many([[0, 1], [2, 3]])
    with pytest.raises(ValueError, match="1-D"):
        m.privatize_many(2)


@pytest.mark.parametrize(
    ("categories", "values", "index", "value"),
    [
        (4, [0, 3, 4, -1], 2, 4),  # int range, vectorized
        (4, [0, 1, 2.5], 2, 2.5),  # int range, a value of another type
        (["A", "B"], np.array(["A", "B", "C", "D"]), 2, "C"),  # strings, vectorized
        ([1, True, "1"], [True, "1", 2], 2, 2),  # mixed types, one at a time
        ([False, True], [True, False, 1], 2, 1),
    ],
)
def test_encode_error_names_the_first_bad_position(categories, values, index, value) -> None:  # type: ignore[no-untyped-def]
    m = dn.GRR(categories, epsilon=1.0)
    with pytest.raises(dn.CategoryError, match="not in the domain") as info:
        m.privatize_many(values)
    assert (info.value.index, info.value.value) == (index, value)
    assert isinstance(info.value, ValueError) and isinstance(info.value, dn.DeniableError)
    with pytest.raises(dn.CategoryError) as one:
        m.privatize(value)
    assert one.value.index is None and one.value.value == value
