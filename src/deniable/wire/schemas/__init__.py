"""JSON Schemas (draft 2020-12) of the wire format, shipped with the package.

One file per schema, ``<name>.json`` in this folder:

* ``config``: a mechanism configuration (``"format": "deniable.mechanism"``,
  wire version 1 or 2), its ``params`` checked per wire id;
* ``report.<kind>``: one report of a report kind (:data:`deniable.wire.codecs.KINDS`),
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

__all__ = ["names", "schema"]


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
