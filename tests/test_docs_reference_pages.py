"""The generated reference pages (docs/hooks/generated.py) document every command, option,
survey key and HTTP route the code has, each with a description.

The pages are generated from the code at every build, so they cannot miss a name; what these
tests catch is a new command or option without help text, a survey key without a description
(in the JSON Schema or the hook's table of nested keys), and a route without one. Fast: no site
build, only the three generators.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("docs_generated", ROOT / "docs" / "hooks" / "generated.py")
assert spec is not None and spec.loader is not None
generated = importlib.util.module_from_spec(spec)
sys.modules["docs_generated"] = generated
spec.loader.exec_module(generated)


def test_every_command_and_option_is_on_the_cli_page_with_its_help() -> None:
    typer = pytest.importorskip("typer", reason="the command line needs the cli extra")
    from deniable.cli import app

    page = generated.cli_markdown()
    root = typer.main.get_command(app)
    commands = generated._commands(root, ["deniable"])
    assert len(commands) >= 15
    missing: list[str] = []
    for path, command in commands:
        words = " ".join(path)
        if len(path) > 1 and f"`{words}`" not in page:
            missing.append(words)
        if not (command.help or "").strip():
            missing.append(f"{words}: no help text")
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            spelled = param.name.upper() if param.param_type_name == "argument" else param.opts[0]
            section = page.split(f"`{words}`", 1)[-1] if len(path) > 1 else page
            if spelled not in section:
                missing.append(f"{words} {spelled}")
            if not (getattr(param, "help", None) or "").strip():
                missing.append(f"{words} {spelled}: no help text")
    assert not missing, f"commands or options the CLI page lacks or cannot describe: {missing}"
    for name in ("privatize", "audit", "estimate", "serve", "demo", "plan"):
        assert f"`deniable {name}`" in page
    assert "--consistent" in page and "--plot" in page and "--dask" in page


def test_every_survey_key_is_on_the_survey_file_page_with_a_type_and_a_description() -> None:
    pytest.importorskip("yaml", reason="reading the example surveys needs PyYAML (the server extra)")
    from deniable.server import _rounds
    from deniable.wire.schemas import schema

    page = generated.survey_file_markdown()
    properties: dict[str, Any] = schema("survey")["properties"]
    undocumented = [key for key, prop in properties.items() if not prop.get("description")]
    assert not undocumented, f"survey keys without a description in the JSON Schema: {undocumented}"
    for key in properties:
        assert f"### `{key}`" in page
    section = {key: page.split(f"### `{key}`", 1)[1].split("### ", 1)[0] for key in properties}
    assert "default `\"split\"`" in section["allocation"] and "**required**" in section["budget"]
    examples = [key for key in properties if "Example (from `examples/" in section[key]]
    assert {"id", "title", "budget", "questions", "rounds"} <= set(examples)
    assert set(generated.NESTED["rounds"]) == set(_rounds._KEYS), "a rounds key the survey page does not describe"
    for key, subkeys in generated.NESTED.items():
        for sub in subkeys:
            assert f"`{key}.{sub}`" in page
    assert set(generated.QUESTION_KEYS) >= {"id", "text", "type", "categories", "mechanism", "design", "randomized"}
    from deniable.server import _numeric_questions, _set_questions

    common = set(generated.QUESTION_KEYS)
    assert set(generated.TYPE_KEYS["multiple"]) == set(_set_questions._KEYS) - common, "a multiple key undocumented"
    from deniable.server import _keyvalue_questions

    documented = set(generated.TYPE_KEYS["keyvalue"]) | common
    assert documented >= set(_keyvalue_questions._KEYS), "a keyvalue key undocumented"
    range_keys = {k for name, r in _numeric_questions.number_mechanisms().items() for k in r.optional
                  if name in ("hierarchical", "haar")}
    assert set(generated.TYPE_KEYS["number"]) >= (set(_numeric_questions._DEFINITION_KEYS) | range_keys) - common
    for qtype, keys in generated.TYPE_KEYS.items():
        assert all(f"`{key}`" in page for key in keys) and f"`type: {qtype}`" in page


def test_every_route_is_on_the_http_page_with_its_bodies() -> None:
    pytest.importorskip("fastapi", reason="the HTTP API needs the server extra")

    page = generated.http_markdown()
    routes = generated.routes(generated._app())
    assert len(routes) >= 13
    missing: list[str] = []
    for path, route in routes:
        for method in route.methods:
            if not re.search(rf"`[A-Z ]*\b{method}\b[A-Z ]* {re.escape(path)}`", page):
                missing.append(f"{method} {path}")
        if not (route.description or "").strip():
            missing.append(f"{path}: no description")
    assert not missing, f"routes the HTTP page lacks or cannot describe: {missing}"
    post = page.split("## `POST /surveys/{survey_id}/responses`", 1)[1].split("## ", 1)[0]
    assert "**Request body** (`application/json`): `ResponseIn`" in post
    assert "`idempotency_key` (required)" in post and "**201**" in post and "`response_id`" in post
    # a shuffling relay's 202: its queued receipt, which says the response is not stored yet
    for route in ("responses", "responses/batch"):
        section = page.split(f"## `POST /surveys/{{survey_id}}/{route}`", 1)[1].split("## ", 1)[0]
        assert "**202** Queued, not stored: answered by a shuffling relay" in section, route
        assert "`Queued`" in section and "`stored` (required)" in section and "`threshold` (required)" in section
