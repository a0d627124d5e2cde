"""Local hashing: the Toeplitz hash family against its definition, the probabilities, bucket
count and sizes, and the report checks field by field (exact: no assertion depends on chance)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms._hashing import REPORT_DTYPE

OLH10 = dn.OLH(10, epsilon=1.0)


def test_structured_olh_reports_with_wrong_types() -> None:
    """A structured array with signed or float fields is checked, not silently cast."""
    bad_value = np.zeros(1, dtype=[("seed", "<u8"), ("value", "<f8")])
    bad_value["value"] = 1.5
    with pytest.raises(ValueError, match="value"):
        OLH10.aggregate(bad_value)
    good = np.zeros(2, dtype=REPORT_DTYPE)
    assert OLH10.aggregate(good).n == 2


# ------------------------------------------------------------ the hash family
# H(v) = T v XOR b over GF(2): T the m x L Toeplitz matrix whose entry (j, i) is seed bit i + j
# (the L + m - 1 low bits), b the m offset bits above them (module docstring; clients compute it).


def _toeplitz_hash(seed: int, v: int, hash_bits: int, m: int) -> int:
    """The definition, one bit at a time with Python integers."""
    offset = seed >> (hash_bits + m - 1)
    out = 0
    for j in range(m):
        bit = sum(((seed >> (i + j)) & 1) * ((v >> i) & 1) for i in range(hash_bits)) % 2
        out |= (bit ^ ((offset >> j) & 1)) << j
    return out


@pytest.mark.parametrize(("k", "g"), [(10, 4), (5, 2), (3, 8)])
def test_hash_is_the_toeplitz_matrix_product(k: int, g: int) -> None:
    m = dn.OLH(k, epsilon=1.0, g=g)
    assert m.hash_bits == max(1, (k - 1).bit_length()) and m.seed_bits == m.hash_bits + 2 * m.m - 1
    seeds = np.arange(1 << m.seed_bits, dtype=np.uint64)
    for v in range(k):
        want = [_toeplitz_hash(int(s), v, m.hash_bits, m.m) for s in seeds]
        np.testing.assert_array_equal(m.hash(seeds, v), want)


@pytest.mark.parametrize(("k", "g"), [(10, 4), (6, 2), (5, 8)])
def test_hash_family_is_pairwise_independent(k: int, g: int) -> None:
    """Over all seeds, each pair (H(v), H(x)) of distinct categories takes every value in
    [g]^2 equally often, so P[H(v) = H(x)] = 1/g exactly (what q* = 1/g rests on)."""
    m = dn.OLH(k, epsilon=1.0, g=g)
    seeds = np.arange(1 << m.seed_bits, dtype=np.uint64)
    hashes = [m.hash(seeds, v).astype(np.int64) for v in range(k)]
    for v in range(k):
        assert np.all(hashes[v] < g)
        for x in range(v + 1, k):
            cells = np.bincount(hashes[v] * g + hashes[x], minlength=g * g)
            assert cells.tolist() == [seeds.size // (g * g)] * (g * g), (v, x)


def test_transition_matrix_is_p_on_the_hashed_value_and_q_elsewhere() -> None:
    m = dn.OLH(5, epsilon=1.0, g=4)
    outputs, matrix = m.transition_matrix()
    s = 1 << m.seed_bits
    assert len(outputs) == s * m.g and outputs[:5] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    a, b = m._a, m._b
    p, q = a / (a + (m.g - 1) * b), b / (a + (m.g - 1) * b)
    for x in range(m.k):
        want = [(p if _toeplitz_hash(seed, x, m.hash_bits, m.m) == y else q) / s for seed, y in outputs]
        np.testing.assert_allclose(matrix[x], want, rtol=1e-15)
    big = dn.OLH(1000, epsilon=1.0, g=4)  # 10 + 3 seed bits and 2 value bits: 2^15 outputs
    with pytest.raises(NotImplementedError, match="^transition_matrix enumerates every"):
        big.transition_matrix()
    assert dn.OLH(500, epsilon=1.0, g=2).transition_matrix()[1].shape == (500, 1 << 11)  # 9 + 1 + 1 bits: 2^11


# --------------------------------------------------------- parameters and sizes


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_lh_variance_closed_forms(epsilon: float) -> None:
    """``q (1 - q) / (p - q)^2`` with ``q = 1/g``: BLH's is ``((e + 1) / (e - 1))^2``, and OLH's at
    ``g = e^eps + 1`` is ``4 e^eps / (e^eps - 1)^2`` (Wang et al. 2017)."""
    from deniable.mechanisms._hashing import lh_variance

    e = np.exp(epsilon)
    assert lh_variance(epsilon, 2) == pytest.approx(((e + 1) / (e - 1)) ** 2, rel=1e-12)
    g = 8
    p, q = e / (e + g - 1), 1 / g
    assert lh_variance(epsilon, g) == pytest.approx(q * (1 - q) / (p - q) ** 2, rel=1e-12)
    assert lh_variance(3.0, round(np.exp(3.0)) + 1) == pytest.approx(4 * np.exp(3.0) / (np.exp(3.0) - 1) ** 2, rel=0.01)


def test_olh_probabilities_and_sizes() -> None:
    """``P(y = H(x)) = a / (a + (g - 1) b)`` with ``(a, b) = exp_ratio(eps, g - 1)``; a report is the
    seed and the value: ``L + 2m - 1 + m`` bits."""
    from fractions import Fraction

    from deniable._privacy import exp_ratio, ln_up

    m = dn.OLH(10, epsilon=1.0, g=4)
    a, b = exp_ratio(1.0, 3)
    assert (m._a, m._b) == (a, b) and m.prob == Fraction(a, a + 3 * b)
    assert m.epsilon == ln_up(Fraction(a, b))
    assert m.support_probabilities() == ([m.prob] * 10, [Fraction(1, 4)] * 10)
    assert (m.hash_bits, m.seed_bits, m.report_bits) == (4, 7, 9)
    blh = dn.BLH(3, epsilon=2.0)
    assert (blh.g, blh.hash_bits, blh.seed_bits, blh.report_bits) == (2, 2, 3, 4)
    assert (blh._a, blh._b) == exp_ratio(2.0, 1)
    assert dn.OLH(2, epsilon=1.0, g=2).hash_bits == 1  # one category bit even for k = 2


def test_seeds_hold_at_most_64_bits() -> None:
    """``L + 2m - 1 <= 64``: k = 17 (L = 5) takes g = 2^30 (64 bits); k = 16 (L = 4) not 2^31 (65)."""
    assert dn.OLH(17, epsilon=1.0, g=1 << 30).seed_bits == 64
    with pytest.raises(ValueError, match=r"^OLH: k=16 with g=2147483648 needs a 65-bit seed \(at most 64\); "
                       r"use fewer buckets$"):
        dn.OLH(16, epsilon=1.0, g=1 << 31)


@pytest.mark.parametrize("g", [0, 1, 3, 6, 2.0, True, "4"])
def test_olh_g_must_be_a_power_of_two(g: object) -> None:
    with pytest.raises(ValueError, match=rf"^g must be a power of two >= 2 for OLH; got {g!r}$"):
        dn.OLH(5, epsilon=1.0, g=g)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"g": 3}, r"^OLH params: g must be a power of two >= 2; got 3$"),
        ({"g": 1}, r"^OLH params: g must be a power of two >= 2; got 1$"),
        ({"truth_numerator": 5, "other_numerator": 5}, r"^OLH params need 0 < other_numerator < truth_numerator$"),
        ({"other_numerator": 0}, r"^OLH params need 0 < other_numerator < truth_numerator$"),
    ],
)
def test_config_parameters_are_checked(params: dict, message: str) -> None:
    config = OLH10.to_config()
    config["params"] = {**config["params"], **params}
    with pytest.raises(ValueError, match=message):
        dn.from_config(config)


def test_config_round_trip_keeps_the_integers() -> None:
    for m in (OLH10, dn.BLH(["x", "y", "z"], epsilon=0.5), dn.OLH(4, epsilon=2.0, g=8)):
        again = dn.from_config(m.to_config())
        assert type(again) is type(m) and again.domain == m.domain
        fields = ("g", "_a", "_b", "seed_bits", "epsilon")
        assert [getattr(again, f) for f in fields] == [getattr(m, f) for f in fields]
    assert OLH10.to_config()["params"] == {
        "g": OLH10.g, "truth_numerator": OLH10._a, "other_numerator": OLH10._b, "hash": "toeplitz-gf2"
    }


# ------------------------------------------------------------- report checks


def test_report_messages_name_the_row_and_value() -> None:
    m = OLH10
    cases = [
        ([{"seed": 1, "value": 0}, {"seed": 2, "value": m.g}],
         rf"^OLH report 1: value must be in 0\.\.{m.g - 1}; got {m.g}$"),
        ([{"seed": 1, "value": 0}, {"seed": 1 << 64, "value": 0}],
         r"^OLH report 1: seed must be a non-negative integer; got 18446744073709551616$"),
        ([(0, 0), (0, True)], r"^OLH report 1: value must be a non-negative integer; got True$"),
        ([(0, 0), [1, 2, 3]], r"^OLH report 1 must be \{'seed': int, 'value': int\}; got \[1, 2, 3\]$"),
    ]
    for reports, message in cases:
        with pytest.raises(ValueError, match=message):
            m.aggregate(reports)
    assert m.aggregate([(np.uint64(3), np.int64(1)), [5, 0]]).n == 2  # numpy integers and pairs are read
    arr = np.zeros(3, dtype=REPORT_DTYPE)
    arr["seed"] = [0, 1, 1 << m.seed_bits]
    message = rf"^OLH report 2: seed must be below 2\*\*{m.seed_bits}; got {1 << m.seed_bits}$"
    with pytest.raises(ValueError, match=message):
        m.aggregate(arr)
    arr["seed"] = (1 << m.seed_bits) - 1
    arr["value"] = [0, m.g, m.g - 1]
    with pytest.raises(ValueError, match=rf"^OLH report 1: value must be in 0\.\.{m.g - 1}; got {m.g}$"):
        m.aggregate(arr)
    arr["value"] = m.g - 1
    assert m.aggregate(arr).n == 3  # the largest seed and value are reports


def test_structured_reports_need_exactly_the_two_fields_in_one_dimension() -> None:
    m = OLH10
    base = np.zeros((2, 2), dtype=REPORT_DTYPE)
    with pytest.raises(ValueError, match=r"^OLH reports need the fields 'seed' and 'value' in a 1-D array; got .* "
                       r"with shape \(2, 2\)$"):
        m.aggregate(base)
    extra = np.zeros(2, dtype=[("seed", "<u8"), ("value", "<u4"), ("x", "<u1")])
    with pytest.raises(ValueError, match="^OLH reports need the fields 'seed' and 'value'"):
        m.aggregate(extra)
    signed = np.zeros(2, dtype=[("seed", "<i8"), ("value", "<i4")])
    assert m.aggregate(signed).n == 2  # non-negative signed integers are reports
    signed["value"][1] = -1
    with pytest.raises(ValueError, match=r"^OLH reports: field 'value' must hold non-negative integers; "
                       r"got dtype int32$"):
        m.aggregate(signed)
    signed["value"][1], signed["seed"][0] = 0, -5
    with pytest.raises(ValueError, match=r"^OLH reports: field 'seed' must hold non-negative integers; "
                       r"got dtype int64$"):
        m.aggregate(signed)


def test_wire_reports_are_exactly_seed_and_value() -> None:
    m = OLH10
    assert len(m.reports_from_json([{"seed": 3, "value": 1}])) == 1
    for item in ({"seed": 3, "value": 1, "extra": 0}, {"seed": 3}, [3, 1]):
        with pytest.raises(ValueError, match=r"^OLH report 1 must be \{'seed': int, 'value': int\}; got "):
            m.reports_from_json([{"seed": 0, "value": 0}, item])
    report = m.privatize(4, rng=1)
    assert m.report_to_json(report) == {"seed": int(report["seed"]), "value": int(report["value"])}


def test_support_counts_of_no_report_and_of_one() -> None:
    """One report supports exactly the categories hashed to its value (here from the definition);
    no reports count zero, as integers."""
    m = dn.OLH(6, epsilon=1.0, g=4)
    report = np.zeros(1, dtype=REPORT_DTYPE)
    report["seed"], report["value"] = 0b10_1011, 2
    counts = m.aggregate(report).counts
    assert counts.tolist() == [int(_toeplitz_hash(0b10_1011, v, m.hash_bits, m.m) == 2) for v in range(6)]
    assert counts.sum() > 0 and counts.dtype == np.int64
    empty = m.aggregate([]).counts
    assert empty.tolist() == [0] * 6 and empty.dtype == np.int64


def test_counts_of_single_seeds_against_the_definition() -> None:
    """Every seed of OLH(5, g=4) with every value, one report each: each category's count is the
    number of (seed, value) pairs hashing it there, i.e. the number of seeds (once per seed)."""
    m = dn.OLH(5, epsilon=1.0, g=4)
    seeds = np.arange(1 << m.seed_bits, dtype=np.uint64)
    reports = np.zeros(seeds.size * m.g, dtype=REPORT_DTYPE)
    reports["seed"] = np.repeat(seeds, m.g)
    reports["value"] = np.tile(np.arange(m.g), seeds.size)
    assert m.aggregate(reports).counts.tolist() == [seeds.size] * 5
    half = reports[reports["value"] < 2]  # values 0 and 1 only: the seeds hashing v below 2
    want = [sum(_toeplitz_hash(int(s), v, m.hash_bits, m.m) < 2 for s in seeds) for v in range(5)]
    assert m.aggregate(half).counts.tolist() == want


def test_transition_matrix_size_limit_is_2_to_the_14_outputs() -> None:
    """OLH(257, g=4): 9 hash bits, 12 seed bits and 2 value bits, exactly 2^14 outputs: enumerated."""
    m = dn.OLH(257, epsilon=1.0, g=4)
    assert m.seed_bits + m.m == 14
    outputs, matrix = m.transition_matrix()
    assert matrix.shape == (257, 1 << 14)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-12)


def test_config_owner_names_and_the_smallest_numerators() -> None:
    from fractions import Fraction

    from deniable._privacy import ln_up

    config = dn.OLH(["a", "b", "c"], epsilon=1.0).to_config()
    config["params"].update(truth_numerator=3, other_numerator=1)
    config["epsilon"] = ln_up(Fraction(3))
    m = dn.from_config(config)
    assert (m._a, m._b) == (3, 1) and m.prob == Fraction(3, 3 + (m.g - 1))
    config["domain"] = ["a", "a", "c"]
    with pytest.raises(ValueError, match=r"^domain for OLH has duplicate category 'a'$"):
        dn.from_config(config)
    for cls in (dn.OLH, dn.BLH):
        with pytest.raises(ValueError, match=rf"^domain for {cls.__name__} has duplicate category 'a'$"):
            cls(["a", "b", "a"], epsilon=1.0)
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for BLH; got -1$"):
        dn.BLH(3, epsilon=-1)
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for OLH; got 0$"):
        dn.OLH(3, epsilon=0)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 1.5, 2.5, 4.0])
def test_olh_default_g_minimises_the_variance(epsilon: float) -> None:
    """The power of two ``g`` (from 2) with the least ``q (1 - q) / (p - q)^2``, ``p = e / (e + g - 1)``,
    ``q = 1 / g``: 2 at small epsilon (the textbook ``e^eps + 1`` is below 3)."""
    e = math.exp(epsilon)
    best = min((1 << b for b in range(1, 11)), key=lambda g: (1 / g) * (1 - 1 / g) / (e / (e + g - 1) - 1 / g) ** 2)
    assert dn.OLH(10, epsilon=epsilon).g == best
    assert epsilon >= 1.0 or best == 2
