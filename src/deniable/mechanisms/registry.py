"""The one list of mechanisms: every reader of mechanism names asks here.

Each mechanism class registers itself (``@register(...)`` in its own module)
with its wire id, its decode cost, whether the planner considers it and
whether the browser client implements it, and the *recipes* that build it
from survey or command-line parameters (a recipe's name is what a survey's
``mechanism:`` field and ``deniable --mechanism`` accept). The server,
the command line, the planner and the browser-client fixtures read this
registry, so a new mechanism registers in one place. The registry is
complete whenever it can be read: importing this module first runs
``deniable``'s ``__init__``, which imports :mod:`deniable.mechanisms` (every
mechanism module), :mod:`deniable.survey` (the survey designs, wire id
``"rr-design"``), :mod:`deniable.heavy` (heavy-hitter discovery,
``"heavy-hitters"``), :mod:`deniable._joint` (joint questions, ``"joint"``) and
:mod:`deniable._marginal_release` (``"marginal-release"``).

>>> from deniable.mechanisms import registry
>>> registry.entry("grr").cls.__name__
'GRR'
>>> registry.recipe("forced-response").wire_id
'binary-rr'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from deniable.wire import _config as wire_config

__all__ = ["Entry", "Recipe", "register", "entry", "entries", "recipe", "recipes", "entry_of"]

Kind = Literal["frequency", "numeric", "sketch", "design", "discovery", "joint", "range", "set", "keyvalue"]
Builder = Callable[[Any, Mapping[str, Any]], Any]
T = TypeVar("T", bound=type)


@dataclass(frozen=True)
class Recipe:
    """How to build a mechanism from survey / command-line parameters.

    ``build(domain, params)`` gets the question's categories (frequency
    oracles) or ``(low, high)`` (numeric mechanisms) and the parameters, all
    numbers, already checked against ``required`` and ``optional``.
    ``binary_only``: the recipe is for yes/no questions only.
    """

    name: str
    wire_id: str
    required: frozenset[str]
    optional: frozenset[str]
    build: Builder
    binary_only: bool = False

    @property
    def allowed(self) -> frozenset[str]:
        return self.required | self.optional


@dataclass(frozen=True)
class Entry:
    """A registered mechanism: its class and what the rest of deniable needs to know of it."""

    wire_id: str
    cls: Any  # a Mechanism subclass; constructors differ by kind
    kind: Kind
    decode_cost: str
    candidate: bool  # the planner compares it (plan.candidates)
    browser: bool  # the browser client (deniable.js) implements it
    recipes: tuple[Recipe, ...] = field(default=())

    def report_bits(self, mechanism: Any) -> int:
        """Bits a device uploads per report of ``mechanism``."""
        return int(mechanism.report_bits)


_ENTRIES: dict[str, Entry] = {}
_RECIPES: dict[str, Recipe] = {}


def _default_build(cls: type, kind: Kind) -> Builder:
    if kind in ("numeric", "range"):
        return lambda domain, params: cls(domain[0], domain[1], **params)
    return lambda domain, params: cls(domain, **params)


def register(
    *,
    kind: Kind = "frequency",
    decode_cost: str = "O(n)",
    candidate: bool = False,
    browser: bool = False,
    required: frozenset[str] | set[str] | None = None,
    optional: frozenset[str] | set[str] = frozenset(),
    name: str | None = None,
    binary_only: bool = False,
    build: Builder | None = None,
) -> Callable[[T], T]:
    """Class decorator: register a mechanism by its ``wire_id``.

    ``required`` (None: no recipe) and ``optional`` are the survey / CLI
    parameters of its default recipe, named ``name`` (default: the wire id)
    and built by ``build`` (default: ``cls(domain, **params)``, or
    ``cls(low, high, **params)`` for numeric mechanisms).
    """

    def decorate(cls: T) -> T:
        wire_id: str = cls.wire_id  # type: ignore[attr-defined]
        if wire_id in _ENTRIES:
            raise ValueError(f"mechanism wire id {wire_id!r} is registered twice")
        recipes: tuple[Recipe, ...] = ()
        if required is not None:
            recipes = (Recipe(
                name or wire_id, wire_id, frozenset(required), frozenset(optional),
                build or _default_build(cls, kind), binary_only,
            ),)
        _ENTRIES[wire_id] = Entry(wire_id, cls, kind, decode_cost, candidate, browser, recipes)
        for r in recipes:
            _add_recipe(r)
        return cls

    return decorate


def add_recipe(
    name: str, wire_id: str, build: Builder, *, required: set[str], optional: frozenset[str] = frozenset(),
    binary_only: bool = False,
) -> None:
    """Register another recipe for an already registered mechanism (e.g. ``forced-response``)."""
    r = Recipe(name, wire_id, frozenset(required), frozenset(optional), build, binary_only)
    current = _ENTRIES[wire_id]
    _ENTRIES[wire_id] = Entry(
        current.wire_id, current.cls, current.kind, current.decode_cost, current.candidate,
        current.browser, (*current.recipes, r),
    )
    _add_recipe(r)


def _add_recipe(r: Recipe) -> None:
    if r.name in _RECIPES:
        raise ValueError(f"mechanism recipe {r.name!r} is registered twice")
    _RECIPES[r.name] = r


def entry(wire_id: str) -> Entry:
    """The registered mechanism with this wire id (KeyError if none)."""
    return _ENTRIES[wire_id]


def entry_of(mechanism: Any) -> Entry:
    """The registry entry of a mechanism instance."""
    return entry(type(mechanism).wire_id)


def entries(kind: Kind | None = None) -> dict[str, Entry]:
    """Every registered mechanism (of one ``kind``), by wire id, in registration order."""
    return {k: e for k, e in _ENTRIES.items() if kind is None or e.kind == kind}


def recipe(name: str) -> Recipe:
    """The recipe a survey or ``--mechanism`` names (KeyError if none)."""
    return _RECIPES[name]


def recipes(kind: Kind | None = None) -> dict[str, Recipe]:
    """Every recipe (of mechanisms of one ``kind``), by name, in registration order."""
    return {n: r for n, r in _RECIPES.items() if kind is None or _ENTRIES[r.wire_id].kind == kind}


wire_config.use_registry(entries)  # the one config reader (deniable.wire.from_config) dispatches here
