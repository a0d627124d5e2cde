"""JSON Schemas (draft 2020-12) of the wire format, shipped with the package.

One file per schema, ``<name>.json`` in this folder:

* ``config``: a mechanism configuration (``"format": "deniable.mechanism"``,
  wire version 1 or 2), its ``params`` checked per wire id;
* ``report.<kind>``: one report of a report kind (``bool``, ``category``, ``bits``, ...; :func:`names` lists them),
  in wire version 1 or 2;
* ``survey``: a survey definition as ``POST /admin/surveys`` takes it;
* ``results``: the results document of ``GET /surveys/{id}/results``.

The files are generated (``python tools/make_schemas.py`` writes them; a test
fails when they differ from what it would write).

>>> from deniable.wire.schemas import schema
>>> schema("report.bool")["type"]
'boolean'
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["names", "schema", "openapi_components"]


@cache
def _load(name: str) -> dict[str, Any]:
    if name not in names():
        raise KeyError(f"no wire schema {name!r}; the schemas are {list(names())}")
    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def names() -> tuple[str, ...]:
    """The names of the shipped schemas (``"config"``, ``"report.bool"``, ...), sorted."""
    files = resources.files(__name__).iterdir()
    return tuple(sorted(f.name.removesuffix(".json") for f in files if f.name.endswith(".json")))


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema ``name`` as a dict (a copy: change it freely); KeyError for an unknown name."""
    return copy.deepcopy(_load(name))


def openapi_components(prefix: str = "deniable.") -> dict[str, Any]:
    """The configuration and report schemas as OpenAPI 3.1 components, named ``<prefix><name>``.

    Each schema's ``$defs`` become components of their own (``<prefix><name>.<def>``) and its
    ``#/$defs/...`` references point to them, so the schemas can live in one document.
    (``survey`` and ``results`` are the server's own models, already in its document.)
    """
    out: dict[str, Any] = {}
    for name in names():
        if name in ("survey", "results"):
            continue
        document = schema(name)
        defs = document.pop("$defs", {})
        document.pop("$schema", None)
        target = f"#/components/schemas/{prefix}{name}."
        out[f"{prefix}{name}"] = _relinked(document, target)
        out.update({f"{prefix}{name}.{key}": _relinked(value, target) for key, value in defs.items()})
    return out


def _relinked(value: Any, target: str) -> Any:
    """``value`` with every ``{"$ref": "#/$defs/x"}`` pointing to ``target + x``."""
    if isinstance(value, dict):
        return {k: (target + v.removeprefix("#/$defs/") if k == "$ref" and isinstance(v, str)
                    and v.startswith("#/$defs/") else _relinked(v, target)) for k, v in value.items()}
    if isinstance(value, list):
        return [_relinked(v, target) for v in value]
    return value
