"""Mechanism configurations on the wire: round trips, tampering and strict version-1 reading."""

from __future__ import annotations

import json

import numpy as np
import pytest
from mechanism_grid import Case, params, reports_for

import deniable as dn
from deniable import wire


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
        (lambda c: c.update(version=3), "version"),
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
