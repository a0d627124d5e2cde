"""Deterministic API contracts: combiner laws, configs and report JSON round trips.

Reports here come from a fixed simulation seed; every assertion is an exact
identity that holds for any reports, so no statistical tolerance is involved.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_grid import Case, params, sample_values

import deniable as dn
from deniable import wire
from deniable.estimate import SupportCounts

N_REPORTS = 400
_REPORTS: dict[str, tuple[object, np.ndarray]] = {}


def reports_for(case: Case):  # type: ignore[no-untyped-def]
    """Fixed simulated reports per case (cached: Hypothesis reuses them across examples)."""
    if case.id not in _REPORTS:
        m = case.make()
        gen = np.random.default_rng(12345)
        _REPORTS[case.id] = (m, m.privatize_many(sample_values(m, N_REPORTS, gen), rng=gen))
    return _REPORTS[case.id]


# ------------------------------------------------------------ combiner laws
@params()
@settings(max_examples=10, deadline=None)
@given(cuts=st.lists(st.integers(0, N_REPORTS), min_size=1, max_size=5))
def test_chunked_aggregation_equals_one_shot(case: Case, cuts: list[int]) -> None:
    m, reports = reports_for(case)
    bounds = [0, *sorted(cuts), N_REPORTS]
    parts = [m.aggregate(reports[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    whole = m.aggregate(reports)
    assert sum(parts) == whole
    assert sum(reversed(parts)) == whole
    merged = parts[0]
    for part in parts[1:]:
        merged = merged + part
    assert merged == whole and merged.n == N_REPORTS
    np.testing.assert_array_equal(m.estimate_from(merged).frequencies, m.estimate(reports).frequencies)
    np.testing.assert_array_equal(m.estimate_from(merged).std_errors, m.estimate(reports).std_errors)


@params()
def test_merge_laws_and_identity(case: Case) -> None:
    m, reports = reports_for(case)
    a, b, c = (m.aggregate(reports[i::3]) for i in range(3))
    empty = m.aggregate([])
    assert empty.n == 0 and not empty.counts.any() and empty.counts.shape == (m.k,)
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a
    assert a + empty == a == empty + a
    assert SupportCounts.from_json(json.loads(json.dumps((a + b).to_json()))) == a + b


def test_mixing_mechanisms_raises() -> None:
    m1, m2 = dn.GRR(4, epsilon=1.0), dn.GRR(4, epsilon=2.0)
    m3 = dn.GRR(["A", "B", "C", "D"], epsilon=1.0)
    s1, s2 = m1.aggregate([0, 1, 2]), m2.aggregate([0, 1, 2])
    with pytest.raises(ValueError, match="different mechanisms"):
        s1 + s2
    with pytest.raises(ValueError, match="another mechanism"):
        m2.estimate_from(s1)
    with pytest.raises(ValueError, match="another mechanism"):
        m3.estimate_from(s1)
    with pytest.raises(TypeError, match="SupportCounts"):
        m1.estimate_from({"counts": [1, 2, 3, 4], "n": 10})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        s1 + 1  # type: ignore[operator]


def test_estimate_of_nothing() -> None:
    m = dn.OUE(5, epsilon=1.0)
    est = m.estimate_from(m.aggregate([]))
    assert est.n == 0 and np.all(np.isnan(est.frequencies))
    with pytest.raises(ValueError, match="n >= 1"):
        est.ci(0.95)


# ------------------------------------------------------------------ configs
@params()
def test_config_round_trip(case: Case) -> None:
    m = case.make()
    cfg = m.to_config()
    assert cfg["format"] == "deniable.mechanism" and cfg["version"] == 1
    assert cfg["epsilon"] == m.epsilon
    back = dn.from_config(cfg)
    assert back == m and hash(back) == hash(m) and back.fingerprint == m.fingerprint
    assert back.epsilon == m.epsilon and back.domain == m.domain
    text = json.dumps(cfg)
    assert dn.from_config(text) == m
    assert wire.from_json(wire.to_json(m)) == m
    # the rebuilt mechanism decodes the original's aggregate
    _, reports = reports_for(case)
    np.testing.assert_array_equal(back.estimate(reports).frequencies, m.estimate(reports).frequencies)


@params()
def test_tampered_config_rejected(case: Case) -> None:
    m = case.make()
    cfg = m.to_config()
    bad = json.loads(json.dumps(cfg))
    bad["epsilon"] = m.epsilon * 0.9
    with pytest.raises(ValueError, match="epsilon"):
        dn.from_config(bad)
    # a parameter change that moves the realised epsilon is caught by the epsilon field
    caught = 0
    for key, value in cfg["params"].items():
        if isinstance(value, bool) or key in ("bits", "K", "g", "omega"):
            continue
        bad = json.loads(json.dumps(cfg))
        if isinstance(value, list):
            bad["params"][key] = [value[0], value[1] + 1]
        elif isinstance(value, int):
            bad["params"][key] = value + 1
        else:
            continue
        unclaimed = {k: v for k, v in bad.items() if k != "epsilon"}
        try:
            realised = dn.from_config(unclaimed).epsilon
        except ValueError:
            realised = None  # invalid parameters: rejected outright
        if realised != m.epsilon:
            caught += 1
            with pytest.raises(ValueError):
                dn.from_config(bad)
    assert caught >= 1


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda c: c.update(format="other"), "format"),
        (lambda c: c.update(version=2), "version"),
        (lambda c: c.update(mechanism="laplace-v0"), "mechanism"),
        (lambda c: c.update(params=[9, 1]), "params"),
        (lambda c: c["params"].pop("truth_numerator"), "params"),
        (lambda c: c.update(epsilon="2.19"), "epsilon"),
        (lambda c: c["params"].update(truth_numerator=1, other_numerator=9), "other_numerator"),
        (lambda c: c.update(domain=["A"]), "at least 2"),
        (lambda c: c.update(domain=["A", "A", "B", "C"]), "duplicate"),
    ],
)
def test_malformed_config_names_the_field(mutate, field: str) -> None:  # type: ignore[no-untyped-def]
    cfg = dn.GRR(["A", "B", "C", "D"], prob=0.75).to_config()
    mutate(cfg)
    with pytest.raises((ValueError, TypeError), match=field):
        dn.from_config(cfg)


def test_config_not_json() -> None:
    with pytest.raises(ValueError, match="not valid JSON"):
        dn.from_config("{not json")
    with pytest.raises(ValueError, match="JSON object"):
        dn.from_config("[1, 2]")


# ------------------------------------------------------------ report JSON
@params()
def test_reports_json_round_trip(case: Case) -> None:
    m, reports = reports_for(case)
    items = m.reports_to_json(reports)
    assert len(items) == N_REPORTS
    text = json.dumps(items)  # plain JSON types only
    back = m.reports_from_json(json.loads(text))
    assert m.aggregate(back) == m.aggregate(reports)
    assert m.reports_to_json(back) == items
    assert m.reports_from_json([]).shape[0] == 0


@params()
def test_single_reports_fit_the_batch_shape(case: Case) -> None:
    """A report from ``privatize`` is accepted wherever a batch report is, and serializes alike."""
    m = case.make()
    values = list(m.domain[:3])
    singles = [m.privatize(v) for v in values]
    seeded = [m.privatize(v, rng=7) for v in values]
    for reports in (singles, seeded):
        stat = m.aggregate(reports)
        assert stat.n == len(values)
        items = m.reports_to_json(reports)
        assert json.loads(json.dumps(items)) == items
        assert m.aggregate(m.reports_from_json(items)) == stat
        assert m.report_to_json(reports[0]) == items[0]


@params()
def test_seeded_batches_are_reproducible(case: Case) -> None:
    m = case.make()
    values = sample_values(m, 50, np.random.default_rng(1))
    a = m.privatize_many(values, rng=99)
    b = m.privatize_many(values, rng=np.random.default_rng(99))
    assert m.reports_to_json(a) == m.reports_to_json(b)
    assert m.privatize_many([], rng=1).shape[0] == 0


def test_domain_alignment_and_frame() -> None:
    m = dn.GRR(["red", "green", "blue"], epsilon=2.0)
    est = m.estimate(["red", "red", "blue", "green", "red"])
    assert est.domain == ("red", "green", "blue")
    frame = est.to_frame()
    assert list(frame.index) == ["red", "green", "blue"]
    np.testing.assert_array_equal(frame["estimate"].to_numpy(), est.frequencies)
    assert "GRR" in repr(est) and "red" in repr(est)
    assert est.counts.sum() == pytest.approx(est.n)  # GRR estimates sum to 1 exactly


def test_supports_public_helper() -> None:
    m = dn.OUE(["a", "b", "c"], epsilon=1.0)
    reports = np.array([[1, 0, 1], [0, 1, 0]], dtype=np.uint8)
    np.testing.assert_array_equal(m.supports(reports, "a"), [True, False])
    np.testing.assert_array_equal(m.supports(reports, "b"), [False, True])
    with pytest.raises(ValueError, match="not in the domain"):
        m.supports(reports, "z")


def test_mixed_type_domain_keeps_true_and_one_apart() -> None:
    m = dn.GRR([1, True, "1"], epsilon=1.0)
    np.testing.assert_array_equal(m.domain_obj.encode([1, True, "1", True]), [0, 1, 2, 1])
    assert m.aggregate([True, True, 1]).counts.tolist() == [1, 2, 0]
    with pytest.raises(ValueError, match="not in the domain"):
        m.privatize(1.5)
    assert dn.from_config(m.to_config()) == m


@params()
def test_fast_decode_equals_definition(case: Case) -> None:
    """The support counts of ``aggregate`` (bit sums, Walsh-Hadamard transforms) equal the
    definition ``C_v = #{reports y : v in S(y)}`` evaluated report by report."""
    m, reports = reports_for(case)
    direct = [int(m.supports(reports, v).sum()) for v in m.domain]
    assert m.aggregate(reports).counts.tolist() == direct


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"counts": [1, 2, 3, 4], "n": 10}, "fields"),
        ([1, 2], "fields"),
        ({"fingerprint": 5, "counts": [1, 2, 3, 4], "n": 10}, "fingerprint"),
        ({"fingerprint": "x", "counts": [1, 2, 3, 4], "n": "10"}, "'n'"),
        ({"fingerprint": "x", "counts": [1, 2, 3, 4], "n": -1}, "'n'"),
        ({"fingerprint": "x", "counts": [1, 2, 3, 40], "n": 10}, "counts"),
        ({"fingerprint": "x", "counts": [1, 2, -3, 4], "n": 10}, "counts"),
        ({"fingerprint": "x", "counts": [1.5, 2, 3, 4], "n": 10}, "counts"),
        ({"fingerprint": "x", "counts": "1234", "n": 10}, "counts"),
    ],
)
def test_aggregate_json_validated(data, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=field):
        SupportCounts.from_json(data)


def test_aggregate_of_wrong_length_refused() -> None:
    m = dn.GRR(4, epsilon=1.0)
    with pytest.raises(ValueError, match="k=4"):
        m.estimate_from(SupportCounts(m.fingerprint, np.array([1, 2, 3]), 10))


@params()
def test_config_params_are_strict(case: Case) -> None:
    """Unknown, missing or mistyped params are refused with the field named (version-1 rule:
    reject what is not understood), as is another hash family for local hashing."""
    cfg = case.make().to_config()
    key, value = next(iter(cfg["params"].items()))
    mutations = [
        ("unknown", lambda p: p.update(surprise=1)),
        (f"missing field\\(s\\) \\['{key}'\\]", lambda p: p.pop(key)),
        (key, lambda p: p.update({key: str(value)})),
        (key, lambda p: p.update({key: True})),  # refused by type, or as an invalid value
    ]
    if isinstance(value, int):
        mutations.append((key, lambda p: p.update({key: value + 0.5})))
    if "hash" in cfg["params"]:
        mutations.append(("params.hash", lambda p: p.update(hash="xxhash64")))
    for message, mutate in mutations:
        bad = json.loads(json.dumps(cfg))
        mutate(bad["params"])
        with pytest.raises(ValueError, match=message):
            dn.from_config(bad)
