"""The one registry: every mechanism once, every recipe builds what it names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable.mechanisms import FrequencyOracle, NumericMechanism, registry

FREQUENCY_PARAMS = {"epsilon": 1.0}
RECIPE_PARAMS = {
    "forced-response": {"p_truth": 0.5, "p_yes": 0.5},
    "gaussian": {"epsilon": 1.0, "delta": 1e-6},
    "l-grr": {"epsilon_perm": 2.0, "epsilon_1": 1.0},
    "l-osue": {"epsilon_perm": 2.0, "epsilon_1": 1.0},
    "set-valued": {"epsilon": 1.0, "max_items": 2},
    "pckv-ue": {"epsilon": 1.0, "max_pairs": 2},
    "pckv-grr": {"epsilon": 1.0, "max_pairs": 2, "ell": 1},
}


def test_every_public_mechanism_is_registered_once() -> None:
    entries = registry.entries()
    classes = [e.cls for e in entries.values()]
    assert len(set(classes)) == len(classes)
    for name in dn.__all__:
        obj = getattr(dn, name)
        if isinstance(obj, type) and issubclass(obj, (FrequencyOracle, NumericMechanism)):
            if obj in (FrequencyOracle, NumericMechanism):
                continue
            assert obj in classes, f"{name} is not registered"
            assert entries[obj.wire_id].cls is obj


def test_kinds_and_the_planner_order() -> None:
    assert all(issubclass(e.cls, FrequencyOracle) for e in registry.entries("frequency").values())
    assert all(issubclass(e.cls, NumericMechanism) for e in registry.entries("numeric").values())
    # simplest first: the planner breaks ties in this order
    assert list(registry.entries("frequency"))[:3] == ["binary-rr", "grr", "sue"]


@pytest.mark.parametrize("name", list(registry.recipes()))
def test_every_recipe_builds_the_mechanism_it_names(name: str) -> None:
    recipe = registry.recipe(name)
    entry = registry.entry(recipe.wire_id)
    params = RECIPE_PARAMS.get(name, FREQUENCY_PARAMS)
    assert recipe.required <= set(params) <= recipe.allowed
    domain = (0.0, 10.0) if entry.kind in ("numeric", "range") else ["a", "b", "c"]
    m = recipe.build(domain, params)
    assert type(m) is entry.cls
    assert registry.entry_of(m) is entry
    assert m.epsilon <= params.get("epsilon", m.epsilon)
    assert entry.report_bits(m) == m.report_bits


def test_unknown_names_raise_key_error() -> None:
    with pytest.raises(KeyError):
        registry.entry("nope")
    with pytest.raises(KeyError):
        registry.recipe("nope")


def test_registering_a_wire_id_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        registry.register()(dn.GRR)


# ------------------------------------------------ registering, on copies of the registry's tables

class _Fake:
    """A stand-in class to register: records what it was built with."""

    wire_id = "test-fake"
    report_bits = np.int64(5)

    def __init__(self, *args: Any, **params: Any) -> None:
        self.args, self.params = args, params


@pytest.fixture
def scratch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations in a test go to copies of the tables, dropped after it."""
    registry.entries()  # every real mechanism registered first
    monkeypatch.setattr(registry, "_ENTRIES", dict(registry._ENTRIES))
    monkeypatch.setattr(registry, "_RECIPES", dict(registry._RECIPES))


def test_register_defaults(scratch: None) -> None:
    assert registry.register()(_Fake) is _Fake
    e = registry.entry("test-fake")
    assert (e.wire_id, e.cls, e.kind, e.decode_cost, e.candidate, e.browser, e.recipes) == (
        "test-fake", _Fake, "frequency", "O(n)", False, False, ())
    assert "test-fake" not in registry.recipes()
    assert list(registry.entries())[-1] == "test-fake"
    assert type(e.report_bits(_Fake())) is int and e.report_bits(_Fake()) == 5


def test_register_a_frequency_recipe(scratch: None) -> None:
    registry.register(decode_cost="O(n d)", candidate=True, browser=True, required={"epsilon"})(_Fake)
    e = registry.entry("test-fake")
    assert (e.kind, e.decode_cost, e.candidate, e.browser) == ("frequency", "O(n d)", True, True)
    (r,) = e.recipes
    assert registry.recipe("test-fake") is r and registry.recipes("frequency")["test-fake"] is r
    assert (r.name, r.wire_id, r.required, r.optional, r.binary_only) == (
        "test-fake", "test-fake", frozenset({"epsilon"}), frozenset(), False)
    assert type(r.required) is frozenset and type(r.optional) is frozenset
    m = r.build(["a", "b"], {"epsilon": 1.0})
    assert (m.args, m.params) == ((["a", "b"],), {"epsilon": 1.0})
    assert registry.entry_of(m) is e


def test_register_a_numeric_recipe_with_a_name(scratch: None) -> None:
    registry.register(kind="numeric", required={"epsilon"}, optional={"k"}, name="fake", binary_only=True)(_Fake)
    e = registry.entry("test-fake")
    (r,) = e.recipes
    assert (e.kind, r.name, r.wire_id, r.optional, r.allowed, r.binary_only) == (
        "numeric", "fake", "test-fake", frozenset({"k"}), frozenset({"epsilon", "k"}), True)
    assert type(r.optional) is frozenset
    assert registry.recipes("numeric")["fake"] is r and "fake" not in registry.recipes("frequency")
    assert registry.entries("numeric")["test-fake"] is e and "test-fake" not in registry.entries("frequency")
    m = r.build((0.0, 10.0), {"epsilon": 1.0})
    assert (m.args, m.params) == ((0.0, 10.0), {"epsilon": 1.0})


def test_register_with_a_builder_and_another_recipe(scratch: None) -> None:
    def build(domain: Any, params: Any) -> Any:
        return ("built", domain, params)

    registry.register(kind="sketch", required=set(), build=build)(_Fake)
    assert registry.recipe("test-fake").build is build
    registry.add_recipe("fake-two", "test-fake", build, required={"a"}, optional=frozenset({"b"}), binary_only=True)
    e = registry.entry("test-fake")
    assert (e.wire_id, e.cls, e.kind, e.decode_cost, e.candidate, e.browser) == (
        "test-fake", _Fake, "sketch", "O(n)", False, False)
    assert [r.name for r in e.recipes] == ["test-fake", "fake-two"]
    two = registry.recipe("fake-two")
    assert e.recipes[1] is two and list(registry.recipes())[-1] == "fake-two"
    assert (two.wire_id, two.required, two.optional, two.build, two.binary_only) == (
        "test-fake", frozenset({"a"}), frozenset({"b"}), build, True)
    assert type(two.required) is frozenset
    registry.add_recipe("fake-three", "test-fake", build, required={"a"})
    assert (registry.recipe("fake-three").optional, registry.recipe("fake-three").binary_only) == (frozenset(), False)
    assert list(registry.recipes("sketch")) == ["test-fake", "fake-two", "fake-three"]


def test_registering_twice_in_whole_messages(scratch: None) -> None:
    with pytest.raises(ValueError, match=r"^mechanism wire id 'grr' is registered twice$"):
        registry.register()(dn.GRR)
    with pytest.raises(ValueError, match=r"^mechanism recipe 'grr' is registered twice$"):
        registry.register(required=set(), name="grr")(_Fake)
    with pytest.raises(ValueError, match=r"^mechanism recipe 'forced-response' is registered twice$"):
        registry.add_recipe("forced-response", "grr", lambda d, p: None, required=set())
