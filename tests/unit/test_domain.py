"""Categorical domains: positions, and categories of different types kept apart."""

from __future__ import annotations

import re

import numpy as np
import pytest
from mechanism_grid import K_ORACLES

import deniable as dn
from deniable.errors import CategoryError
from deniable.mechanisms._domain import Domain


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


# ---------------------------------------------------------------- the Domain class itself, whole messages

def _raises(exc: type[Exception], message: str):  # type: ignore[no-untyped-def]
    return pytest.raises(exc, match="^" + re.escape(message) + "$")


def test_domain_construction_checks_in_whole_messages() -> None:
    kinds = "must be an int k >= 2 or a sequence of categories"
    with _raises(TypeError, f"domain for mechanism {kinds}; got True"):
        Domain(True)
    with _raises(TypeError, f"domain for Q {kinds}; got {np.True_!r}"):
        Domain(np.True_, owner="Q")
    with _raises(ValueError, "domain size k must be >= 2 for mechanism; got 1"):
        Domain(1)
    with _raises(ValueError, "domain size k must be >= 2 for Q; got 1"):
        Domain(np.int64(1), owner="Q")
    for bad in ("ab", b"ab", 2.0, None):
        with _raises(TypeError, f"domain for Q {kinds}; got {bad!r}"):
            Domain(bad, owner="Q")  # type: ignore[arg-type]
    with _raises(ValueError, "domain for Q needs at least 2 categories; got ['x']"):
        Domain(["x"], owner="Q")
    with _raises(ValueError, "domain for mechanism needs at least 2 categories; got []"):
        Domain([])
    with _raises(TypeError, "category [1] of Q is not a usable category"):
        Domain(["a", [1]], owner="Q")
    with _raises(TypeError, "category nan of Q is not a usable category"):
        Domain([1.5, float("nan")], owner="Q")
    with _raises(ValueError, "domain for Q has duplicate category 'x'"):
        Domain(["x", "y", "x"], owner="Q")
    with _raises(ValueError, "domain for mechanism has duplicate category 1.0"):
        Domain([1, True, 1.0])  # 1.0 == 1; True is a category of its own


def test_domain_kinds() -> None:
    two = Domain(2)
    assert (two.values, two.k, two.is_range, two.is_bool, two.owner) == ((0, 1), 2, True, False, "mechanism")
    assert Domain(np.int64(3)).values == (0, 1, 2)
    listed = Domain([np.int64(0), np.int64(1), np.int64(2)], owner="Q")
    assert listed.is_range and [type(v) for v in listed.values] == [int, int, int] and listed.owner == "Q"
    assert not Domain([0, 2]).is_range and not Domain([1, 0]).is_range
    assert not Domain([0.0, 1.0]).is_range and not Domain([0, 1.0]).is_range
    assert not Domain([False, True]).is_range and not Domain([0, True]).is_range
    assert Domain([False, True]).is_bool and Domain([np.False_, np.True_]).is_bool
    assert not Domain([0, 1]).is_bool and not Domain([True, False]).is_bool and not Domain([False, 1]).is_bool
    assert not Domain([0, True]).is_bool
    assert Domain([1.5, 2]).values == (1.5, 2)


def test_describe_and_the_not_in_message() -> None:
    assert Domain(4).describe() == "integers 0..3"
    assert Domain(["a", "b"]).describe() == "['a', 'b']"
    twelve = [f"c{i}" for i in range(12)]
    assert Domain(twelve).describe() == "[" + ", ".join(repr(c) for c in twelve) + "]"
    assert Domain([*twelve, "z"]).describe() == "[" + ", ".join(repr(c) for c in twelve) + ", ... (13 in all)]"
    with _raises(CategoryError, "value 4 is not in the domain of Q: integers 0..3") as info:
        Domain(4, owner="Q").encode_one(4)
    assert (info.value.value, info.value.index) == (4, None)
    with _raises(CategoryError, "value 'c' is not in the domain of mechanism: ['a', 'b']"):
        Domain(["a", "b"]).encode_one("c")


def test_encode_one() -> None:
    r = Domain(4)
    assert [r.encode_one(v) for v in (0, 3, np.int64(2), np.uint8(1))] == [0, 3, 2, 1]
    for bad in (4, -1, True, 1.0, "1", None):
        with pytest.raises(CategoryError):
            r.encode_one(bad)
    b = Domain([False, True])
    assert [b.encode_one(v) for v in (False, True, np.True_)] == [0, 1, 1]
    for bad in (0, 1, 1.0):
        with _raises(CategoryError, f"value {bad!r} is not in the domain of mechanism: [False, True]"):
            b.encode_one(bad)
    m = Domain([1, True, "1", 2.5])
    assert [m.encode_one(v) for v in (1, True, "1", 2.5, np.float64(2.5), np.True_)] == [0, 1, 2, 3, 3, 1]
    with _raises(CategoryError, "value [1] is not in the domain of mechanism: [1, True, '1', 2.5]") as info:
        m.encode_one([1])  # unhashable: not a category either
    assert info.value.value == [1]
    with _raises(CategoryError, "value False is not in the domain of mechanism: [1, True, '1', 2.5]"):
        m.encode_one(False)


def test_encode_shapes_in_whole_messages() -> None:
    d = Domain(4, owner="Q")
    with _raises(ValueError, "values for Q must be a 1-D sequence of categories"):
        d.encode([[0, 1], [2]])
    with _raises(ValueError, "values for Q must be 1-D; got shape (2, 2)"):
        d.encode([[0, 1], [2, 3]])
    with _raises(ValueError, "values for Q must be a 1-D sequence; got a scalar"):
        d.encode(2)  # type: ignore[arg-type]
    for domain in (d, Domain(["a", "b"]), Domain([1, "a"])):
        empty = domain.encode([])
        assert empty.dtype == np.int64 and empty.shape == (0,)


def test_encode_int_ranges_vectorized() -> None:
    d = Domain(4)
    out = d.encode(np.array([3, 0, 2], dtype=np.uint8))
    assert out.dtype == np.int64 and out.tolist() == [3, 0, 2]
    assert d.encode([0, 1, 2, 3]).tolist() == [0, 1, 2, 3]
    positions = np.array([1, 3, 0], dtype=np.int64)
    assert np.shares_memory(d.encode(positions), positions)  # int64 positions are taken without a copy
    for values, index, value in (([0, 4, 5], 1, 4), ([1, -1, 0], 1, -1), ([-2, 9], 0, -2), ([3, 3, 4], 2, 4)):
        with _raises(CategoryError, f"value {value} is not in the domain of mechanism: integers 0..3") as info:
            d.encode(values)
        assert (info.value.index, info.value.value) == (index, value)
        assert type(info.value.value) is int
    with _raises(CategoryError, "value 0.0 is not in the domain of mechanism: integers 0..3") as info:
        d.encode([0.0, 1.0])  # floats go one at a time
    assert info.value.index == 0
    with _raises(CategoryError, "value '0' is not in the domain of mechanism: integers 0..3") as info:
        d.encode(np.array(["0", "1"]))
    assert info.value.index == 0


def test_encode_bools_and_strings_vectorized() -> None:
    b = Domain([False, True])
    out = b.encode(np.array([True, False, True]))
    assert out.dtype == np.int64 and out.tolist() == [1, 0, 1]
    with _raises(CategoryError, "value 1 is not in the domain of mechanism: [False, True]") as info:
        b.encode([False, 1])
    assert info.value.index == 1
    s = Domain(["m", "b", "x"], owner="Q")  # not sorted: positions follow the domain's order
    out = s.encode(np.array(["x", "b", "m", "b"]))
    assert out.dtype == np.int64 and out.tolist() == [2, 1, 0, 1]
    for values, index, value in ((["b", "zz"], 1, "zz"), (["a", "b"], 0, "a"), (["m", "c", "n"], 1, "c")):
        with _raises(CategoryError, f"value {value!r} is not in the domain of Q: ['m', 'b', 'x']") as info:
            s.encode(values)
        assert (info.value.index, info.value.value) == (index, value)
        assert type(info.value.value) is str


def test_encode_mixed_types_one_at_a_time() -> None:
    m = Domain([1, True, "1"])
    assert m.encode(np.array([True, 1, "1"], dtype=object)).tolist() == [1, 0, 2]
    out = m.encode((True, "1", 1))
    assert out.dtype == np.int64 and out.tolist() == [1, 2, 0]
    with _raises(CategoryError, "value 2 is not in the domain of mechanism: [1, True, '1']") as info:
        m.encode(np.array([1, True, 2], dtype=object))
    assert (info.value.index, info.value.value) == (2, 2)


def test_decode_and_array() -> None:
    r = Domain(4).decode(np.array([3, 1], dtype=np.uint8))
    assert r.dtype == np.int64 and r.tolist() == [3, 1]
    b = Domain([False, True]).decode([1, 0])  # type: ignore[arg-type]
    assert b.dtype == bool and b.tolist() == [True, False]
    s = Domain(["m", "b"]).decode(np.array([1, 0, 1]))
    assert s.dtype.kind == "U" and s.tolist() == ["b", "m", "b"]
    ints = Domain([5, 3])
    assert ints.array.dtype == np.int64 and ints.array.tolist() == [5, 3]
    assert ints.decode(np.array([1, 1])).tolist() == [3, 3]
    mixed = Domain([1, True, "1"])
    arr = mixed.array
    assert arr.dtype == object and arr.shape == (3,) and [type(v) for v in arr] == [int, bool, str]
    assert mixed.decode(np.array([2, 1, 0])).tolist() == ["1", True, 1]
    assert Domain([0, True]).array.dtype == object
    assert Domain(["a", "b"]).array.dtype.kind == "U"


def test_to_json_eq_hash_and_repr() -> None:
    assert Domain(3).to_json() == 3
    assert Domain([1, True, "a", 2.5]).to_json() == [1, True, "a", 2.5]
    for bad in ((1, 2), None):
        message = f"category {bad!r} of Q cannot be written to JSON; use str, int, float or bool categories"
        with _raises(TypeError, message):
            Domain(["a", bad], owner="Q").to_json()
    assert Domain([0, 1, 2]) == Domain(3) and Domain(["a", "b"]) == Domain(["a", "b"], owner="other")
    assert Domain([False, True]) != Domain(2) and Domain([1, True]) != Domain([True, 1])
    assert Domain(["a", "b"]) != Domain(["b", "a"]) and Domain(2) != (0, 1) and Domain(2) != Domain(3)
    assert hash(Domain(3)) == hash((0, 1, 2)) and hash(Domain(["a", "b"])) == hash(("a", "b"))
    assert repr(Domain(3)) == "Domain(3)" and repr(Domain(["a", 1])) == "Domain(['a', 1])"
    assert repr(Domain([0, 1])) == "Domain(2)"
