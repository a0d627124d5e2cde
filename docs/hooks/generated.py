"""MkDocs hook: three reference pages generated from the code at every build, so they cannot drift.

* ``reference/cli.md``: every command of ``deniable`` and every option, from the Typer app;
* ``reference/survey-file.md``: every key of a survey file, from the JSON Schema of a survey
  (``deniable.wire.schemas``) and the loader's nested keys, with an example from ``examples/``;
* ``reference/http.md``: every route of the collection service, from its OpenAPI document
  (parameters, request and response bodies), and the routes it keeps out of that document.

tests/test_docs_reference_pages.py fails when the code adds a command, option, key or route
these pages would show without a description.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ROLE = re.compile(r":(?:py:)?(?:attr|class|data|exc|func|meth|mod|obj):`~?\.?([^`]+)`")


def _plain(text: str) -> str:
    """A docstring's text as Markdown: Sphinx roles and double backquotes as code spans."""
    return ROLE.sub(r"`\1`", text).replace("``", "`")

# ---------------------------------------------------------------- the command line


def _commands(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    """(the words that call it, the command) for a command and every subcommand, depth first."""
    found = [(path, command)]
    for name in sorted(getattr(command, "commands", {})):
        if not command.commands[name].hidden:
            found += _commands(command.commands[name], [*path, name])
    return found


def _param_line(param: Any, context: Any) -> str:
    """One parameter as ``--help`` describes it: its spelling, then its help, choices and default."""
    if param.param_type_name == "argument":
        kind = "argument" + (", required" if param.required else ", optional")
        help_text = " ".join((getattr(param, "help", None) or "").split())
        return f"* `{param.name.upper()}` ({kind}){': ' + help_text if help_text else ''}"
    record = param.get_help_record(context)
    spelling, help_text = record if record else (", ".join(param.opts), "")
    return f"* `{spelling}`{': ' + ' '.join(help_text.split()) if help_text else ''}"


def _help_markdown(text: str) -> list[str]:
    """A command's help as Markdown: paragraphs as they are, indented lines (examples) as a code block."""
    out: list[str] = []
    for paragraph in text.replace("\b\n", "").strip().split("\n\n"):
        lines = paragraph.split("\n")
        indented = [ln for ln in lines if ln.startswith("  ")]
        if indented and all(ln.startswith("  ") for ln in lines[1:]):
            head = [] if lines[0].startswith("  ") else [lines[0], ""]
            out += [*head, "```text", *(ln.strip() for ln in indented), "```", ""]
        else:
            out += [paragraph, ""]
    return out


def cli_markdown() -> str:
    """The command-line reference: one section per command, its help and every parameter."""
    import typer

    from deniable.cli import app

    root = typer.main.get_command(app)
    out = ["# Command line: `deniable`", "",
           "Generated from the command-line program itself at every build of this site: every command "
           "and every option, with the help `deniable COMMAND --help` prints. Install it with "
           "`pip install 'deniable[cli]'` (the `serve` command needs `deniable[server]`).", ""]
    for path, command in _commands(root, ["deniable"]):
        if len(path) > 1:
            out += [f"{'#' * min(len(path), 4)} `{' '.join(path)}`", ""]
        arguments = [p.name.upper() for p in command.params if p.param_type_name == "argument"]
        options = any(p.param_type_name == "option" for p in command.params)
        out += ["```text", " ".join([*path, *(["[OPTIONS]"] if options else []), *arguments]), "```", ""]
        if command.help:
            out += _help_markdown(command.help)
        params = [p for p in command.params if not getattr(p, "hidden", False)]
        if params:
            context = type(root).context_class(command, info_name=path[-1])
            out += [_param_line(p, context) for p in params] + [""]
    return "\n".join(out)


# ---------------------------------------------------------------- the survey file

NESTED = {
    "rounds": {
        "every": "the length of a round: seconds, or `<n>s`, `<n>m`, `<n>h`, `<n>d` (e.g. `7d`); the server "
                 "takes at most one response per device per round",
        "lifetime_epsilon": "the most one device may spend over all rounds; the server refuses a response "
                            "that would take the device's privacy loss over it",
        "start": "when round 0 starts (an ISO 8601 date-time in UTC, quoted or not, from 2000 on); default: "
                 "when the survey was first stored",
        "anytime": "`true` gives each round an anytime-valid confidence sequence over the rounds so far "
                   "(default `false`)",
        "planned_n": "with `anytime`: the number of reports the sequences' width is tuned for (default 10,000)",
    },
    "rate_limit": {
        "responses": "the most responses one client address may send within `seconds` (an integer >= 1)",
        "seconds": "the window of the limit, in seconds",
    },
}
"""The keys of the nested objects the JSON Schema leaves open, with what they mean."""

QUESTION_KEYS = {
    "id": "the question's id, unique within the survey: 1-64 characters `[A-Za-z0-9_.-]`",
    "text": "the question as the respondent reads it",
    "type": "`yes-no`, `categorical`, `number`, `multiple` (choose several), `keyvalue` (a value for each key "
            "a respondent has), `free-text`, `joint` or `list-experiment` (see [list "
            "experiments](../math/list-experiments.md))",
    "categories": "the answers of a categorical question, in order",
    "mechanism": "the randomizer: a name (`grr`, `oue`, `olh`, ..., or `auto` for the best at this epsilon) "
                 "with its parameters as keys of the question, or an exact mechanism configuration",
    "epsilon": "the question's privacy loss per answer (it counts against `budget`)",
    "design": "a classic survey design instead of a mechanism: `{model, p}` with RRreg's models "
              "(see [survey designs](../math/survey-designs.md))",
    "randomized": "`false` asks the question in the clear (it spends no epsilon); default `true`",
}
"""The keys every question may have; the mechanism's, design's or type's own keys come on top."""

TYPE_KEYS = {
    "number": {
        "low": "the smallest answer (answers are taken within `[low, high]`)",
        "high": "the largest answer",
        "units": "the answers' units, shown beside the box and in the results (1-40 characters)",
        "bins": "`mechanism: hierarchical` or `haar`: the equal bins of `[low, high]` the results resolve "
                "(a power of `branching`, for `haar` of 2; default 1024)",
        "branching": "`mechanism: hierarchical`: the tree's branching factor (default 4)",
    },
    "multiple": {
        "options": "the options a respondent may tick, in order (2 to 1000 distinct strings or integers)",
        "max_choices": "the most options one answer may hold (none is an answer too)",
        "ell": "the length answers are padded and sampled to (1 to `max_choices`; default `max_choices`, "
               "which keeps every share unbiased)",
        "oracle": "the frequency oracle over the options and the padding: `grr`, `oue`, `olh` or `auto` "
                  "(default: the lowest variance)",
    },
    "keyvalue": {
        "keys": "the declared keys, in order (2 to 1000 distinct strings or integers)",
        "low": "the smallest value (values are taken within `[low, high]` and mapped onto PCKV's `[-1, 1]`)",
        "high": "the largest value",
        "units": "the values' units, shown beside the boxes and in the results (1-40 characters)",
        "max_pairs": "the most keys one answer gives values for (none is an answer too)",
        "ell": "the length answers are padded and sampled to (1 to `max_pairs`; default `max_pairs`, which "
               "keeps every share unbiased)",
        "mechanism": "`ue` (PCKV-UE), `grr` (PCKV-GRR) or `auto` (default: the one whose share of a key nobody "
                     "holds has the lower variance: GRR for few keys, UE for many)",
    },
}
"""Keys of a question of one ``type`` beside :data:`QUESTION_KEYS` and its mechanism's parameters."""


def _examples() -> dict[str, Any]:
    """For each top-level key, its value in the first example survey file that has it."""
    import yaml

    found: dict[str, Any] = {}
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key, value in (data or {}).items():
            found.setdefault(key, (path.name, value))
    return found


def _type_text(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type_text(s) for s in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type_text(schema.get('items', {}))}"
    return f"`{kind}`"


def survey_file_markdown() -> str:
    """Every key of a survey file: type, whether required, default, meaning, and an example."""
    import yaml

    from deniable.wire.schemas import schema

    spec = schema("survey")
    examples = _examples()
    out = ["# Survey file reference", "",
           "A survey is a YAML (or JSON) file, given to `deniable serve` or posted to `POST /admin/surveys`. "
           "This page is generated from the survey's JSON Schema (`deniable.wire.schemas.schema(\"survey\")`) "
           "and the loader at every build of the site; each example is taken from the files in `examples/`.", "",
           "## Top-level keys", ""]
    required = set(spec.get("required", []))
    for key, prop in spec["properties"].items():
        out += [f"### `{key}`", ""]
        facts = [_type_text(prop), "**required**" if key in required else "optional"]
        if "default" in prop:
            facts.append(f"default `{json.dumps(prop['default'])}`")
        out += ["; ".join(facts) + ".", ""]
        if prop.get("description"):
            out += [prop["description"][0].upper() + prop["description"][1:] + ".", ""]
        if key in examples:
            source, value = examples[key]
            if key == "questions":
                value = value[:1]
            out += [f"Example (from `examples/{source}`):", "", "```yaml",
                    yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True).rstrip(), "```", ""]
        for sub, text in NESTED.get(key, {}).items():
            out += [f"* `{key}.{sub}`: {text}"]
        if key in NESTED:
            out.append("")
        if key == "questions":
            out += ["Every question has these keys; a mechanism's parameters (such as `epsilon`, `num_bits`), a "
                    "design's, or a `number` / `multiple` / `free-text` / `joint` question's own keys come on top, "
                    "and the loader names any key it does not know:", ""]
            out += [f"* `questions[].{sub}`: {text}" for sub, text in QUESTION_KEYS.items()] + [""]
            out += ["A `number` question collects a number for its mean (`mechanism: one-bit-mean`) or for its "
                    "CDF, ranges and quantiles with intervals (`mechanism: hierarchical` or `haar`); a `multiple` "
                    "question lets a respondent tick several options, randomized by padding and sampling "
                    "([sets](../math/sets.md)); a `keyvalue` question asks for a value for each key a respondent "
                    "has, randomized by PCKV ([key-value data](../math/key-value.md)). Their own keys:", ""]
            for qtype, keys in TYPE_KEYS.items():
                out += [f"* `type: {qtype}`: " + "; ".join(f"`{k}`: {t}" for k, t in keys.items())]
            out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- the HTTP API


def _app() -> Any:
    from deniable.server._app import create_app

    folder = tempfile.mkdtemp(prefix="deniable-docs-")
    return create_app(f"sqlite:///{folder}/openapi.db", admin_token="docs")


def routes(app: Any) -> list[tuple[str, Any]]:
    """(full path, route) for every API route of ``app``, through included routers."""
    from fastapi.routing import APIRoute

    def walk(items: list[Any], prefix: str) -> list[tuple[str, Any]]:
        found: list[tuple[str, Any]] = []
        for item in items:
            if isinstance(item, APIRoute):
                found.append((item.path if item.path.startswith(prefix) else prefix + item.path, item))
            elif hasattr(item, "original_router"):  # FastAPI's included router
                found += walk(item.original_router.routes, prefix + getattr(item.include_context, "prefix", ""))
        return found

    return walk(app.routes, "")


def _schema_block(spec: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """A body's schema: its component's name and its properties, one line each."""
    ref = schema.get("$ref", "")
    name = ref.rsplit("/", 1)[-1]
    target = spec.get("components", {}).get("schemas", {}).get(name, schema) if ref else schema
    lines = [f"`{name}`" if name else _type_text(target)]
    if target.get("description"):
        lines[0] += ": " + " ".join(target["description"].split())
    for key, prop in target.get("properties", {}).items():
        mark = " (required)" if key in target.get("required", []) else ""
        text = " ".join((prop.get("description") or "").split())
        lines.append(f"    * `{key}`{mark}: {_type_text(prop)}{'. ' + text if text else ''}")
    return lines


def http_markdown() -> str:
    """Every route: method, path, what it does, its parameters and its bodies."""
    app = _app()
    spec = app.openapi()
    out = ["# HTTP API", "",
           "The collection service's routes (`deniable serve`, or `deniable.server.create_app`), generated "
           "from its OpenAPI document at every build of this site. A running service serves the same "
           "document at `/openapi.json` and an explorer at `/docs`. Errors are JSON "
           "`{\"detail\": ...}` naming the field and the value expected.", ""]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            out += [f"## `{method.upper()} {path}`", ""]
            if op.get("description"):
                out += [_plain(op["description"].strip()), ""]
            for param in op.get("parameters", []):
                mark = ", required" if param.get("required") else ""
                text = " ".join((param.get("description") or param.get("schema", {}).get("description") or "").split())
                out.append(f"* {param['in']} parameter `{param['name']}` ({_type_text(param.get('schema', {}))}"
                           f"{mark}){': ' + text if text else ''}")
            if op.get("parameters"):
                out.append("")
            for media, body in op.get("requestBody", {}).get("content", {}).items():
                first, *rest = _schema_block(spec, body.get("schema", {}))
                out += [f"**Request body** (`{media}`): {_plain(first)}", "", *(ln.strip() for ln in rest), ""]
            if op.get("responses"):
                out += ["**Responses**", ""]
            for code, response in op.get("responses", {}).items():
                line = f"* **{code}** {response.get('description', '')}"
                for media, body in response.get("content", {}).items():
                    schema = body.get("schema", {})
                    if schema:
                        line += f" (`{media}`): " + "\n".join(_schema_block(spec, schema))
                out.append(_plain(line))
            out.append("")
    hidden = sorted(((path, route) for path, route in routes(app) if not route.include_in_schema),
                    key=lambda pair: pair[0])
    if hidden:
        out += ["## Pages", "", "Routes outside the OpenAPI document: the HTML pages a respondent or an "
                "analyst opens in a browser, and the API explorer.", ""]
        for route_path, route in hidden:
            methods = sorted(route.methods)
            doc = " ".join((route.description or route.summary or "").split("\n\n")[0].split())
            out.append(f"* `{' '.join(methods)} {route_path}`{': ' + _plain(doc) if doc else ''}")
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- the project's files


def changelog_markdown() -> str:
    """CHANGELOG.md as it is in the repository."""
    return (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def citation_markdown() -> str:
    """How to cite deniable: CITATION.cff, and a BibTeX entry made from it."""
    import yaml

    text = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    cff = yaml.safe_load(text)
    authors = " and ".join(a.get("name") or f"{a.get('family-names')}, {a.get('given-names')}" for a in cff["authors"])
    year = str(cff["date-released"])[:4]
    bibtex = [f"@software{{deniable_{cff['version'].replace('.', '_')},", f"  title = {{{{{cff['title']}}}}},",
              f"  author = {{{{{authors}}}}},", f"  version = {{{cff['version']}}},", f"  year = {{{year}}},",
              f"  license = {{{cff['license']}}},", "}"]
    return "\n".join(["# Citing deniable", "", cff["message"], "", "## BibTeX", "", "```bibtex", *bibtex, "```", "",
                      "## CITATION.cff", "", "The repository's `CITATION.cff` (Citation File Format 1.2.0):", "",
                      "```yaml", text.rstrip(), "```", ""])


GENERATORS = {"reference/cli.md": cli_markdown, "reference/survey-file.md": survey_file_markdown,
              "reference/http.md": http_markdown, "changelog.md": changelog_markdown,
              "citation.md": citation_markdown}


def on_files(files: Any, config: Any, **kwargs: Any) -> Any:
    from mkdocs.structure.files import File

    for uri, make in GENERATORS.items():
        files.append(File.generated(config, uri, content=make()))
    return files
