"""Fuzz every registered mechanism's report check: only ReportError may come out.

A device controls every byte of a report, so ``reports_from_json`` (what the
server checks a batch with) must answer any JSON value with either checked
reports, one per item, or a :class:`~deniable.errors.ReportError` naming the
first bad item; never another exception (the server would answer 500). The
inputs are arbitrary JSON values, batches mixing valid reports with them, and
valid reports with one part replaced.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import deniable as dn
from deniable.errors import ReportError
from deniable.mechanisms import registry

MECHANISMS: dict[str, Any] = {
    "binary-rr": dn.BinaryRR(epsilon=1.0),
    "grr": dn.GRR(["a", "b", "c"], epsilon=1.0),
    "sue": dn.SUE(10, epsilon=1.0),
    "oue": dn.OUE(12, epsilon=1.0),
    "blh": dn.BLH(6, epsilon=1.0),
    "olh": dn.OLH(10, epsilon=1.0),
    "hadamard": dn.HadamardResponse(10, epsilon=1.0),
    "subset": dn.SubsetSelection(10, epsilon=1.0, omega=3),
    "rappor": registry.entry("rappor").cls(8, epsilon=1.0, num_bits=16, num_cohorts=4),
    "cms": registry.entry("cms").cls(list("abcdefgh"), epsilon=1.0, rows=4, width=16),
    "hcms": registry.entry("hcms").cls(list("abcdefgh"), epsilon=1.0, rows=4, width=16),
    "laplace": registry.entry("laplace").cls(0, 10, epsilon=1.0),
    "gaussian": registry.entry("gaussian").cls(0, 10, epsilon=1.0, delta=1e-6),
    "duchi": registry.entry("duchi").cls(0, 10, epsilon=1.0),
    "piecewise": registry.entry("piecewise").cls(0, 10, epsilon=1.0),
    "square-wave": registry.entry("square-wave").cls(0, 10, epsilon=1.0, bins=16),
    "hybrid": registry.entry("hybrid").cls(0, 10, epsilon=1.0),
    "l-grr": dn.LGRR(["a", "b", "c", "d"], epsilon_perm=3.0, epsilon_1=1.0),
    "l-osue": dn.LOSUE(6, epsilon_perm=3.0, epsilon_1=1.0),
    "dbitflip": dn.DBitFlip(6, d=2, epsilon=1.0),
    "one-bit-mean": dn.OneBitMean(0, 10, epsilon=1.0),
    "rr-design": dn.survey.design("CDM", [0.3, 0.6]),
    "heavy-hitters": dn.HeavyHitters(epsilon=4.0, method="sfp", max_length=3, top_k=4, rows=4, width=8),
    "joint": dn.Joint(["a", "b"], [1, 2, 3], epsilon=1.0, mechanism="oue"),
    "marginal-release": dn.MarginalRelease(["a", "b"], [1, 2, 3], 9, epsilon=1.0, mechanism="oue"),
    "hierarchical-histogram": dn.HierarchicalHistogram(0, 10, bins=16, epsilon=1.0),
    "haar-hrr": dn.HaarHRR(0, 10, bins=16, epsilon=1.0),
    "set-valued": dn.SetValued(["a", "b", "c"], epsilon=1.0, max_items=2, oracle="oue"),
    "pckv": dn.PCKV(["a", "b", "c"], epsilon=1.0, max_pairs=2, variant="grr"),
}
NAMES = sorted(MECHANISMS)

STRINGS = st.one_of(st.text(max_size=12), st.sampled_from(["", "\ud800", "\x00", "a", "ff", "0x1", "1e5", "NaN"]))
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), STRINGS,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(STRINGS, inner, max_size=4)
    ),
    max_leaves=12,
)


def _valid(name: str, n: int) -> list[Any]:
    m = MECHANISMS[name]
    gen = np.random.default_rng(n)
    if registry.entry(name).kind in ("numeric", "range"):
        values = gen.uniform(m.low, m.high, n).tolist()
    elif registry.entry(name).kind == "set":
        values = [[m.domain[i]] for i in gen.integers(0, len(m.domain), n)]
    elif registry.entry(name).kind == "keyvalue":
        values = [{m.keys[i]: 0.5} for i in gen.integers(0, len(m.keys), n)]
    elif registry.entry(name).kind == "discovery":
        values = [["", "a", "bc", "xyz"][i] for i in gen.integers(0, 4, n)]
    else:
        domain = list(getattr(m, "categories", None) or m.domain)
        values = [domain[i] for i in gen.integers(0, len(domain), n)]
    return list(m.reports_to_json(m.privatize_many(values, rng=gen)))


VALID = {name: _valid(name, 6) for name in NAMES}


def _mutate(value: Any, junk: Any, path: list[int]) -> Any:
    """``value`` with the part at ``path`` (indices into lists / dict values) replaced by ``junk``."""
    if not path or not isinstance(value, (list, dict)) or not value:
        return junk
    if isinstance(value, list):
        i = path[0] % len(value)
        return [*value[:i], _mutate(value[i], junk, path[1:]), *value[i + 1 :]]
    key = sorted(value, key=str)[path[0] % len(value)]
    return {**value, key: _mutate(value[key], junk, path[1:])}


def _check(name: str, items: list[Any]) -> None:
    m = MECHANISMS[name]
    try:
        checked = m.reports_from_json(items)
    except ReportError as exc:
        assert 0 <= exc.index < max(len(items), 1), (exc.index, len(items))
        assert exc.reason
        return
    assert len(checked) == len(items)
    again = m.reports_to_json(checked)
    assert len(again) == len(items)
    m.aggregate(checked)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_registry_is_covered() -> None:
    assert set(NAMES) == set(registry.entries())


@FUZZ
@given(name=st.sampled_from(NAMES), items=st.lists(JSON, max_size=4))
def test_any_json_reports(name: str, items: list[Any]) -> None:
    _check(name, items)


@FUZZ
@given(name=st.sampled_from(NAMES), junk=JSON, at=st.integers(0, 5),
       path=st.lists(st.integers(0, 40), max_size=3), whole=st.booleans())
def test_valid_batch_with_one_bad_part(name: str, junk: Any, at: int, path: list[int], whole: bool) -> None:
    items = list(VALID[name])
    items[at] = junk if whole else _mutate(items[at], junk, path)
    _check(name, items)


def test_empty_and_nested_empty_reports() -> None:
    """The cases the server's random fuzz found (Hadamard ``[]`` and ``[[]]`` gave 500s)."""
    for name in NAMES:
        for items in ([[]], [[[]]], [VALID[name][0], []], [[], VALID[name][0]], [{}], [math.nan]):
            _check(name, items)
