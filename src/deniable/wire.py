"""Versioned JSON for mechanism configurations and reports.

A configuration is what a device needs to randomize: the mechanism id, its
domain and its exact integer parameters (so a browser or another language
samples with exactly the same probabilities), plus the realised epsilon::

    {"format": "deniable.mechanism", "version": 1, "mechanism": "grr",
     "domain": ["A", "B", "C", "D"], "epsilon": 2.1972245773362196,
     "params": {"truth_numerator": 9, "other_numerator": 1}}

Rules (append-only, as for Google's ``dp_event``): a mechanism id or a field
never changes meaning; new mechanisms and fields get new names; version 1
readers reject what they do not understand.

Reports travel as JSON arrays, one element per report: BinaryRR ``true`` /
``false``; GRR the category value; SUE/OUE a hex string of the packed bits;
BLH/OLH ``{"seed": int, "value": int}``; Hadamard response an int; subset
selection the sorted list of category positions.
"""

from __future__ import annotations

import json
import math
from typing import Any

from deniable.errors import ConfigError
from deniable.mechanisms import registry
from deniable.mechanisms.contract import CONFIG_FORMAT, CONFIG_VERSION

__all__ = ["from_config", "to_json", "from_json", "CONFIG_FORMAT", "CONFIG_VERSION", "MAX_BATCH"]

DISCOVERY_FORMAT = "deniable.discovery"
"""The ``format`` of heavy-hitter discovery's configurations (:meth:`deniable.HeavyHitters.to_config`)."""

MAX_BATCH = 10_000
"""Responses per batch request to the collection service (the server refuses more; clients split)."""


def from_config(config: dict[str, Any] | str) -> Any:
    """Rebuild a mechanism from ``m.to_config()`` (a dict or its JSON text).

    Raises :class:`~deniable.errors.ConfigError` (a ValueError) naming the
    field when the config is malformed, of an unknown version or mechanism,
    or claims an epsilon its parameters do not give.
    """
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"mechanism config is not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"mechanism config must be a JSON object; got {type(config).__name__}")
    if config.get("format") == DISCOVERY_FORMAT:  # HeavyHitters.to_config, read by the class itself
        return registry.entry("heavy-hitters").cls.from_config(config)
    if config.get("format") != CONFIG_FORMAT:
        raise ConfigError(f"config field 'format' must be {CONFIG_FORMAT!r}; got {config.get('format')!r}")
    if config.get("version") != CONFIG_VERSION:
        raise ConfigError(
            f"config field 'version' must be {CONFIG_VERSION} (this reader's version); "
            f"got {config.get('version')!r}"
        )
    name = config.get("mechanism")
    known = registry.entries()
    if not isinstance(name, str) or name not in known:
        raise ConfigError(f"config field 'mechanism' must be one of {sorted(known)}; got {name!r}")
    params = config.get("params")
    if not isinstance(params, dict):
        raise ConfigError("config field 'params' must be an object")
    try:
        mechanism = known[name].cls._from_params(config.get("domain"), params)
    except KeyError as exc:
        raise ConfigError(f"config 'params' for {name}: missing field(s) [{exc.args[0]!r}]") from None
    except TypeError as exc:
        raise ConfigError(f"config 'params' for {name} are malformed: {exc!r}") from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    _check_params(name, params, mechanism._params(), getattr(known[name].cls, "param_defaults", {}))
    claimed = config.get("epsilon")
    if claimed is not None:
        if not isinstance(claimed, (int, float)) or not math.isclose(
            float(claimed), mechanism.epsilon, rel_tol=1e-12, abs_tol=0.0
        ):
            raise ConfigError(
                f"config field 'epsilon' says {claimed!r} but the parameters give "
                f"{mechanism.epsilon!r}"
            )
    return mechanism


def _same_kind(got: Any, want: Any) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            _same_kind(g, w) for g, w in zip(got, want, strict=True)
        )
    if isinstance(want, float):
        return isinstance(got, (int, float))
    return type(got) is type(want)


def _describe(want: Any) -> str:
    if isinstance(want, str):
        return repr(want)
    if isinstance(want, bool):
        return "a boolean"
    if isinstance(want, int):
        return "an integer"
    if isinstance(want, float):
        return "a number"
    if isinstance(want, list):
        return f"a list of {len(want)} " + ("integers" if all(type(w) is int for w in want) else "values")
    return f"a JSON {type(want).__name__}"


def _check_params(
    name: str, params: dict[str, Any], expected: dict[str, Any], defaults: dict[str, Any] | None = None
) -> None:
    """Version 1 readers reject what they do not understand: unknown or missing
    fields, values of the wrong JSON type (``"9"``, ``9.5`` or ``true`` for an
    integer) and a different value of a fixed string field (e.g. the hash family).

    ``defaults`` are fields added after a mechanism's first configs were written
    (the class's ``param_defaults``): a config without one means that default."""
    given = set(params) | set(defaults or {})
    unknown, missing = sorted(set(params) - set(expected)), sorted(set(expected) - given)
    if unknown or missing:
        raise ConfigError(
            f"config 'params' for {name}: unknown field(s) {unknown}, missing field(s) {missing}"
        )
    for key, want in expected.items():
        got = params.get(key, (defaults or {}).get(key))
        if not _same_kind(got, want) or (isinstance(want, str) and got != want):
            raise ConfigError(f"config field 'params.{key}' for {name} must be {_describe(want)}; got {got!r}")


def to_json(mechanism: Any) -> str:
    """The configuration as canonical JSON text."""
    return json.dumps(mechanism.to_config(), sort_keys=True)


def from_json(text: str) -> Any:
    """Inverse of :func:`to_json`."""
    return from_config(text)
