"""The one registry: every mechanism once, every recipe builds what it names."""

from __future__ import annotations

import pytest

import deniable as dn
from deniable.mechanisms import FrequencyOracle, NumericMechanism, registry

FREQUENCY_PARAMS = {"epsilon": 1.0}
RECIPE_PARAMS = {
    "forced-response": {"p_truth": 0.5, "p_yes": 0.5},
    "gaussian": {"epsilon": 1.0, "delta": 1e-6},
    "l-grr": {"epsilon_perm": 2.0, "epsilon_1": 1.0},
    "l-osue": {"epsilon_perm": 2.0, "epsilon_1": 1.0},
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
    domain = (0.0, 10.0) if entry.kind == "numeric" else ["a", "b", "c"]
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
