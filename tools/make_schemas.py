"""Write the wire format's JSON Schemas into src/deniable/wire/schemas/ (run after changing the wire format).

    python tools/make_schemas.py          # write the files
    python tools/make_schemas.py --check  # exit 1 if a file differs from what would be written

The configuration schema checks each wire id's ``params``: their names and
JSON types come from ``_params()`` of the randomizers of
``tests/randomizers.py`` (one configured instance of every registered wire
id). The survey and results schemas are the server's own types of them
(``bodies.SurveyIn``, ``answers.ResultsOut``), so each document is typed
once. tests/unit/test_wire_schemas.py fails when a file is out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "deniable" / "wire" / "schemas"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
DECIMAL = "^-?(0|[1-9][0-9]*)$"
WIDE = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^(0|[1-9][0-9]*)$"}],
        "description": "a JSON integer (wire version 1) or its decimal string (wire version 2)"}
COUNT = {"type": "integer", "minimum": 0}
HEX = {"type": "string", "pattern": "^([0-9a-fA-F]{2})+$"}


def _kind(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"$ref": "#/$defs/integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        kinds = [_kind(v) for v in value]
        return {"type": "array", "items": kinds[0] if kinds and all(k == kinds[0] for k in kinds) else {}}
    if isinstance(value, dict) and "format" in value:  # a nested configuration (Joint's oracle)
        return {"$ref": "#/$defs/mechanism"}
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: _kind(v) for k, v in sorted(value.items())},
                "required": sorted(value), "additionalProperties": False}
    raise TypeError(f"no JSON kind for {value!r}")


def _params(examples: list[Any]) -> dict[str, Any]:
    """The params schema of one wire id: every field of its examples, required when all have it."""
    seen = [m._params() for m in examples]
    fields = sorted({k for p in seen for k in p})
    defaults = getattr(type(examples[0]), "param_defaults", {})
    return {
        "type": "object",
        "properties": {k: _kind(next(p[k] for p in seen if k in p)) for k in fields},
        "required": [k for k in fields if all(k in p for p in seen) and k not in defaults],
        "additionalProperties": False,
    }


def config_schema() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from randomizers import RANDOMIZERS  # noqa: PLC0415  (the tests' one instance of every wire id)

    by_id: dict[str, list[Any]] = {}
    for r in RANDOMIZERS:
        by_id.setdefault(r.wire_id, []).append(r.build())
    mechanism = {
        "type": "object",
        "required": ["format", "version", "mechanism", "domain", "params"],
        "properties": {
            "format": {"const": "deniable.mechanism"},
            "version": {"enum": [1, 2]},
            "mechanism": {"enum": sorted(by_id)},
            "domain": {"type": ["array", "integer", "object", "null"],
                       "description": "categories, their number, [low, high], or a discovery's value space"},
            "epsilon": {"type": ["number", "null"]},
            "delta": {"type": "number"},
            "params": {"type": "object"},
        },
        "additionalProperties": False,
        "allOf": [
            {"if": {"properties": {"mechanism": {"const": wid}}},
             "then": {"properties": {"params": {"$ref": f"#/$defs/params.{wid}"}}}}
            for wid in sorted(by_id)
        ],
    }
    discovery = {
        "type": "object",
        "description": "heavy-hitter discovery's own format (what HeavyHitters.to_config writes)",
        "required": ["format", "version", "method", "kind", "max_length", "top_k", "epsilon", "sketch"],
        "properties": {
            "format": {"const": "deniable.discovery"},
            "version": {"const": 1},
            "method": {"enum": ["pem", "sfp"]},
            "kind": {"enum": ["text", "integer"]},
            "max_length": COUNT,
            "top_k": COUNT,
            "epsilon": {"type": "number"},
            "alphabet": {"type": "string"},
            "sketch": {"$ref": "#/$defs/mechanism"},
            "word": {"$ref": "#/$defs/mechanism"},
        },
        "additionalProperties": False,
    }
    return {
        "$schema": DRAFT,
        "title": "deniable mechanism configuration",
        "description": "What a device needs to randomize (deniable.wire); integers of params beyond 2**53 are "
                       "decimal strings in wire version 2.",
        "anyOf": [{"$ref": "#/$defs/mechanism"}, {"$ref": "#/$defs/discovery"}],
        "$defs": {
            "mechanism": mechanism,
            "discovery": discovery,
            "integer": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": DECIMAL}]},
            **{f"params.{wid}": _params(examples) for wid, examples in sorted(by_id.items())},
        },
    }


def _obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": sorted(properties), "additionalProperties": False}


REPORTS: dict[str, dict[str, Any]] = {
    "bool": {"type": "boolean"},
    "category": {"type": ["string", "integer", "boolean"]},
    "int": COUNT,
    "float": {"type": "number"},
    "bits": HEX,
    "seed-value": _obj({"seed": WIDE, "value": COUNT}),
    "subset": {"type": "array", "items": COUNT, "minItems": 1, "uniqueItems": True},
    "rappor": _obj({"cohort": COUNT, "bits": WIDE}),
    "cms": _obj({"row": COUNT, "bits": HEX}),
    "hcms": _obj({"row": COUNT, "index": COUNT, "bit": {"enum": [0, 1]}}),
    "dbitflip": _obj({"buckets": {"type": "array", "items": COUNT, "minItems": 1},
                      "bits": {"type": "array", "items": {"enum": [0, 1]}, "minItems": 1}}),
    "two-group": _obj({"group": {"enum": [1, 2]}, "answer": {"type": "boolean"}}),
    "level": _obj({"level": COUNT, "report": {"description": "the level oracle's report (OUE: hex bits; OLH: "
                                                               "{seed, value})"}}),
    "haar": _obj({"level": COUNT, "index": COUNT, "bit": {"enum": [0, 1]}}),
    "view-report": _obj({"view": COUNT, "report": {"description": "the view's oracle's report of the view's cell "
                                                                 "(GRR: the cell's index; unary encoding: hex bits)"}}),
    "discovery": {
        "type": "object", "required": ["level", "sketch"], "additionalProperties": False,
        "description": "a heavy-hitter discovery report: the level (prefix length, or fragment position) and its "
                       "sketch report(s)",
        "properties": {"level": COUNT, "sketch": {"type": "object"}, "word": {"type": "object"}},
    },
}


def report_schema(kind: str) -> dict[str, Any]:
    return {"$schema": DRAFT, "title": f"deniable report ({kind})", **REPORTS[kind]}


def survey_schema() -> dict[str, Any]:
    """The survey definition: the server's one type of it, ``bodies.SurveyIn`` (the OpenAPI body of
    ``POST /admin/surveys``), as a standalone schema."""
    from deniable.server._bodies import SurveyIn  # noqa: PLC0415  (the server extra)

    return {"$schema": DRAFT, **SurveyIn.model_json_schema(),
            "title": "deniable survey definition (POST /admin/surveys)"}


def results_schema() -> dict[str, Any]:
    """The results document: the server's one type of it, ``answers.ResultsOut`` (the OpenAPI answer of
    ``GET /surveys/{id}/results``, which FastAPI checks every answer against)."""
    from deniable.server._answers import ResultsOut  # noqa: PLC0415  (the server extra)

    return {"$schema": DRAFT, **ResultsOut.model_json_schema(),
            "title": "deniable survey results (GET /surveys/{id}/results)"}


def schemas() -> dict[str, dict[str, Any]]:
    """Every schema file's content, by name."""
    out = {"config": config_schema(), "survey": survey_schema(), "results": results_schema()}
    out.update({f"report.{kind}": report_schema(kind) for kind in REPORTS})
    return out


def text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    stale = []
    for name, schema in schemas().items():
        path = OUT / f"{name}.json"
        if "--check" in argv:
            if not path.exists() or path.read_text(encoding="utf-8") != text(schema):
                stale.append(name)
        else:
            path.write_text(text(schema), encoding="utf-8")
    if stale:
        print(f"out of date (run python tools/make_schemas.py): {stale}")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
