"""HeavyHitters as a mechanism: wire id ``heavy-hitters``, its configuration, the older discovery format."""

from __future__ import annotations

import json

import numpy as np
import pytest

import deniable as dn
from deniable.errors import ConfigError
from deniable.heavy import HeavyStat
from deniable.mechanisms import registry
from deniable.mechanisms._contract import CheckedReports, Mechanism

CASES = [
    {"method": "pem"},
    {"method": "sfp", "oracle": "hcms"},
    {"method": "pem", "kind": "integer"},
    {"method": "pem", "alphabet": "abc"},
]


def make(**kw: object) -> dn.HeavyHitters:
    return dn.HeavyHitters(epsilon=4.0, max_length=kw.pop("max_length", 3), top_k=4, rows=16,  # type: ignore[arg-type]
                           width=64, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: "-".join(map(str, kw.values())))
def test_both_forms_of_the_config_give_the_same_discovery(kw: dict[str, object]) -> None:
    """``to_config`` (the discovery format devices read) and the mechanism form (wire id ``heavy-hitters``)."""
    hh = make(**kw)
    discovery = json.loads(json.dumps(hh.to_config()))
    mechanism = json.loads(json.dumps(Mechanism.to_config(hh)))
    assert (discovery["format"], discovery["version"], discovery["method"]) == ("deniable.discovery", 1, hh.method)
    assert (mechanism["format"], mechanism["version"], mechanism["mechanism"]) == ("deniable.mechanism", 1,
                                                                                   "heavy-hitters")
    assert set(mechanism["params"]) == {"method", "top_k", "sketch"} and mechanism["epsilon"] == hh.epsilon
    assert mechanism["domain"]["kind"] == hh.kind and mechanism["domain"].get("alphabet") == hh.alphabet
    assert mechanism["params"]["sketch"] == discovery["sketch"]
    for back in (dn.from_config(mechanism), dn.HeavyHitters.from_config(mechanism),
                 dn.HeavyHitters.from_config(json.dumps(mechanism)), dn.HeavyHitters.from_config(discovery)):
        assert back == hh and hash(back) == hash(hh)
        assert back.fingerprint == hh.fingerprint and back.to_config() == hh.to_config()
    assert make(**kw) != hh  # another sketch seed


def test_the_fingerprint_is_what_it_was() -> None:
    """Stored aggregates carry it: the sketch's fingerprint, method, kind, length, top_k (and alphabet)."""
    hh = make(alphabet="ab")
    assert hh.fingerprint == f"{hh.oracle.fingerprint}:pem:text:3:4:alphabet=6162"
    stat = hh.aggregate(hh.privatize_many(["ab"] * 20, rng=1))
    assert dn.HeavyHitters.from_config(hh.to_config()).aggregate_from_json(stat.to_json()) == stat


def test_mechanism_config_refusals_name_the_field() -> None:
    config = Mechanism.to_config(make())
    grr = dn.GRR(["a", "b"], epsilon=1.0).to_config()
    for bad, words in [
        (grr, "'mechanism' must be 'heavy-hitters'; got 'grr'"),
        ({**config, "domain": ["text", 3]}, "'domain' must be an object with fields \\['kind', 'max_length'\\]"),
        ({**config, "domain": {"kind": "text", "max_length": 3, "alphabet": None}}, "alphabet must be a non-empty"),
        ({**config, "domain": {"kind": "float", "max_length": 3}}, "kind must be one of"),
        ({**config, "params": {**config["params"], "method": "tree"}}, "'method' must be one of"),
        ({**config, "params": {**config["params"], "top_k": 0}}, "top_k must be an integer in 1..4096"),
        ({**config, "params": {**config["params"], "sketch": grr}}, "'sketch' must configure one of"),
        ({**config, "params": {**config["params"], "extra": 1}}, "unknown field\\(s\\) \\['extra'\\]"),
        ({**config, "epsilon": 1.0}, "'epsilon' says 1.0"),
    ]:
        with pytest.raises(ConfigError, match=words):
            dn.HeavyHitters.from_config(bad)
        if bad is not grr:
            with pytest.raises(ConfigError, match=words):
                dn.from_config(bad)


def test_registered_for_no_recipe_planner_or_browser() -> None:
    e = registry.entry("heavy-hitters")
    assert (e.cls, e.kind, e.candidate, e.browser, e.recipes) == (dn.HeavyHitters, "discovery", False, False, ())
    assert registry.entry_of(make()) is e and "heavy-hitters" not in registry.recipes()


@pytest.mark.parametrize("method", ["pem", "sfp"])
def test_the_contract_on_reports(method: str) -> None:
    hh = make(method=method)
    one = hh.privatize("ab", rng=1)
    assert isinstance(one, np.void) and one.dtype == hh.dtype
    assert hh.report_to_json(one) == hh.reports_to_json(hh.privatize_many(["ab"], rng=1))[0]
    many = hh.privatize_many(["ab", "c"] * 300, rng=2)
    checked = hh.reports_from_json(json.loads(json.dumps(hh.reports_to_json(many))))
    assert type(checked) is CheckedReports and (checked == many).all()
    assert hh.aggregate(checked) == hh.aggregate(many) and hh.aggregate(checked) != hh.aggregate(many[:-1])
    stat = hh.aggregate(many)
    assert hh.estimate_from(stat).to_dict() == hh.identify(stat).to_dict() and hh.estimate(many).n == 600
    assert hh.report_bits == 2 + hh.oracle.report_bits * (1 if method == "pem" else 2)  # 4 levels: 2 bits
    with pytest.raises(ValueError, match="target 'population' only"):
        hh.estimate_from(stat, target="respondents")
    with pytest.raises(ValueError, match="target must be"):
        hh.estimate_from(stat, target="census")


def test_heavy_stats_are_equal_by_value() -> None:
    hh = make(method="sfp")
    a = hh.aggregate(hh.privatize_many(["ab"] * 5, rng=3))
    assert a == HeavyStat.from_json(a.to_json()) and a != hh.aggregate(hh.privatize_many(["ab"] * 5, rng=4))
    assert a != a.levels[0]
