"""Mechanism configurations: the one reader of every configuration format.

:func:`from_config` reads a configuration dict (or its JSON text) of any
format and returns the randomizer it configures. The format is dispatched
through the mechanism registry (:mod:`deniable.mechanisms.registry`):

* ``"format": "deniable.mechanism"`` (frequency oracles, numeric mechanisms,
  sketches and the survey designs, ``"mechanism": "rr-design"``): the
  registered class of the ``mechanism`` field rebuilds it from ``params``;
* any other format (the heavy-hitter discovery's ``"deniable.discovery"``):
  the registered class that lists it in its ``config_formats`` reads it
  with its own ``from_config``.

The registry hands itself to this module (:func:`use_registry`) when it is
imported, so the wire layer depends on no mechanism.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from deniable.errors import ConfigError
from deniable.wire._codecs import MAX_SAFE_INTEGER, WIRE_VERSIONS, decimal

__all__ = ["CONFIG_FORMAT", "CONFIG_VERSION", "from_config", "to_json", "from_json", "to_version", "use_registry"]

CONFIG_FORMAT = "deniable.mechanism"
"""The ``format`` field of every mechanism configuration."""
CONFIG_VERSION = 1
"""The ``version`` a configuration is written in by default (``to_config(wire_version=2)`` writes version 2)."""

_registry: Callable[[], Mapping[str, Any]] = dict


def use_registry(entries: Callable[[], Mapping[str, Any]]) -> None:
    """Where :func:`from_config` finds the mechanisms: ``entries()`` gives the registry entries by wire id."""
    global _registry
    _registry = entries


def from_config(config: dict[str, Any] | str) -> Any:
    """Rebuild a randomizer from its configuration (``m.to_config()``, a dict or its JSON text).

    Reads wire versions 1 and 2. Raises :class:`~deniable.errors.ConfigError`
    (a ValueError) naming the field when the config is malformed, of an
    unknown format, version or mechanism, or claims an epsilon its
    parameters do not give.

    Parameters
    ----------
    config : dict or str
        A mechanism configuration, as ``m.to_config()`` gives it, or its
        JSON text.

    Returns
    -------
    Mechanism
        A mechanism equal to the one that wrote the configuration (same
        probabilities, same fingerprint).

    Raises
    ------
    ConfigError
        The configuration cannot be read, naming the field at fault.

    Examples
    --------
    >>> import json
    >>> import deniable as dn
    >>> m = dn.GRR(["a", "b", "c"], epsilon=1.0)
    >>> again = dn.from_config(json.dumps(m.to_config()))
    >>> again == m, again.fingerprint == m.fingerprint
    (True, True)
    """
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"mechanism config is not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"mechanism config must be a JSON object; got {type(config).__name__}")
    known = _registry()
    fmt = config.get("format")
    if fmt != CONFIG_FORMAT:
        reader = next((e.cls for e in known.values() if fmt in getattr(e.cls, "config_formats", ())), None)
        if reader is None:
            raise ConfigError(f"config field 'format' must be {CONFIG_FORMAT!r}; got {fmt!r}")
        return reader.from_config(config)
    version = config.get("version")
    if isinstance(version, bool) or version not in WIRE_VERSIONS:
        raise ConfigError(
            f"config field 'version' must be {' or '.join(map(str, WIRE_VERSIONS))} (this reader's versions); "
            f"got {version!r}"
        )
    name = config.get("mechanism")
    if not isinstance(name, str) or name not in known:
        raise ConfigError(f"config field 'mechanism' must be one of {sorted(known)}; got {name!r}")
    params = config.get("params")
    if not isinstance(params, dict):
        raise ConfigError("config field 'params' must be an object")
    if version == 2:
        params = {key: _wide(value) for key, value in params.items()}
    cls = known[name].cls
    try:
        mechanism = cls._from_params(config.get("domain"), params)
    except KeyError as exc:
        raise ConfigError(f"config 'params' for {name}: missing field(s) [{exc.args[0]!r}]") from None
    except TypeError as exc:
        raise ConfigError(f"config 'params' for {name} are malformed: {exc!r}") from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    _check_params(name, params, mechanism._params(), getattr(cls, "param_defaults", {}))
    claimed = config.get("epsilon")
    if claimed is not None:
        if not isinstance(claimed, (int, float)) or not any(
            math.isclose(float(claimed), e, rel_tol=1e-12, abs_tol=0.0) for e in mechanism._claimable_epsilons()
        ):
            raise ConfigError(
                f"config field 'epsilon' says {claimed!r} but the parameters give "
                f"{mechanism.epsilon!r}"
            )
    return mechanism


def _wide(value: Any) -> Any:
    """A version-2 parameter as version 1 has it: decimal strings of wide integers read as integers."""
    if isinstance(value, list):
        return [_wide(v) for v in value]
    n = decimal(value)
    return value if n is None else n


def _unwide(value: Any) -> Any:
    """A parameter in version 2: integers beyond ``MAX_SAFE_INTEGER`` as decimal strings."""
    if isinstance(value, list):
        return [_unwide(v) for v in value]
    if type(value) is int and abs(value) > MAX_SAFE_INTEGER:
        return str(value)
    return value


def to_version(config: dict[str, Any], version: int) -> dict[str, Any]:
    """A mechanism configuration in wire ``version``: in version 2 the wide integers of ``params``
    as decimal strings, in version 1 as integers; every other field as it is. A configuration
    already in ``version``, or of another format (heavy-hitter discovery's, which has one
    version), is returned as it is."""
    if isinstance(version, bool) or version not in WIRE_VERSIONS:
        raise ValueError(f"wire_version must be one of {list(WIRE_VERSIONS)}; got {version!r}")
    if config.get("format") != CONFIG_FORMAT or config.get("version") == version:
        return config
    convert = _wide if version == 1 else _unwide
    return {**config, "version": version, "params": {k: convert(v) for k, v in config["params"].items()}}


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


def to_json(mechanism: Any, wire_version: int = 1) -> str:
    """The configuration as canonical JSON text (in wire version ``wire_version``)."""
    return json.dumps(to_version(mechanism.to_config(), wire_version), sort_keys=True)


def from_json(text: str) -> Any:
    """Inverse of :func:`to_json`."""
    return from_config(text)
