"""Build ``deniable-embed.js``: the embeddable client, one file, from the survey page's own modules.

Run from the repository root (it rewrites the three checked-in files in
``src/deniable/server/static/dist/``;
``--check`` only compares them with a fresh build and fails on a difference)::

    python tools/build_embed.py [--check]

The entry is ``src/deniable/server/static/embed.js``. Every ES module it
imports (the samplers, the wire code, Oblivious HTTP and the vendored hashes
and HPKE the survey page runs) is copied unchanged into a function of its own
(but for :data:`NODE_FALLBACKS`), in dependency order: its
``import {a, b as c} from './x.js'`` becomes ``const {a, b: c} = <x's exports>``,
its ``export`` keywords are dropped and what it exported is returned as a
frozen object. No minifier, no renaming: each module's text is there to read
(and to diff against the served module). The bundle is written twice, around
the same body:

* ``deniable-embed.js``: a classic script (for a platform's header or question
  script) that sets the global ``Deniable`` (and ``module.exports`` under
  CommonJS);
* ``deniable-embed.mjs``: an ES module (``import {local} from ...``; its default
  export is the same object);

and ``deniable-embed.json`` beside them: the version (the package's), the
files' sizes and their Subresource Integrity hashes (``sha384-<base64>``) for
``<script integrity=...>``. The output depends only on the sources (sorted,
no time stamp), so ``--check`` in the tests catches a module changed without a
rebuild.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "src" / "deniable" / "server" / "static"
ENTRY = STATIC / "embed.js"
DIST = STATIC / "dist"  # built files (served at /static/<name> by the server's pages routes)
NAME = "deniable-embed"
GLOBAL = "Deniable"
LICENSES = {"vendor/noble-hashes": "@noble/hashes (vendor/noble-hashes/LICENSE)",
            "vendor/hpke": "@hpke/core and @hpke/common (vendor/hpke/LICENSE)"}

_IMPORT = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*['\"]([^'\"]+)['\"];?[ \t]*$", re.M)
_IMPORT_ALL = re.compile(r"^import\s*\*\s*as\s+(\w+)\s+from\s*['\"]([^'\"]+)['\"];?[ \t]*$", re.M)
_REEXPORT = re.compile(r"^export\s*\{([^}]*)\}\s*from\s*['\"]([^'\"]+)['\"];?[ \t]*$", re.M)
_EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\};?[ \t]*$", re.M)
_EXPORT_DECL = re.compile(r"^export\s+((?:async\s+)?function\*?|class|const|let|var)\s+(\w+)", re.M)
_ANY = re.compile(r"^\s*(import|export)\b.*$", re.M)
NODE_FALLBACKS = {
    # @hpke/common loads node's crypto module where there is no globalThis.crypto (node < 19): the embed
    # runs where WebCrypto is global (browsers, node >= 19), and the bundle imports nothing at run time
    "vendor/hpke/hpke.js": ('await import("crypto")',
                            'await Promise.reject(new Error("deniable-embed needs WebCrypto (globalThis.crypto)"))'),
}


def version() -> str:
    """The package's version (``__version__`` in ``src/deniable/__init__.py``)."""
    text = (ROOT / "src" / "deniable" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if found is None:
        raise SystemExit("src/deniable/__init__.py has no __version__")
    return found.group(1)


def _names(text: str) -> list[tuple[str, str]]:
    """``a, b as c`` as [(a, a), (b, c)]: (the exported name, the local one)."""
    out = []
    for part in text.split(","):
        words = part.split()
        if not words:
            continue
        if len(words) == 3 and words[1] == "as":
            out.append((words[0], words[2]))
        elif len(words) == 1:
            out.append((words[0], words[0]))
        else:
            raise SystemExit(f"cannot read the import/export item {part.strip()!r}")
    return out


class Module:
    """One ES module: its text rewritten for a function scope, its imports and its exports."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.key = path.relative_to(STATIC).as_posix()
        self.deps: list[Path] = []
        self.exports: list[tuple[str, str]] = []  # (exported name, expression)
        text = path.read_text()
        if self.key in NODE_FALLBACKS:
            found, replacement = NODE_FALLBACKS[self.key]
            if text.count(found) != 1:
                raise SystemExit(f"{self.key}: expected {found!r} once; update NODE_FALLBACKS")
            text = text.replace(found, replacement)
        text = _IMPORT.sub(lambda m: self._import(m.group(1), m.group(2)), text)
        text = _IMPORT_ALL.sub(lambda m: f"const {m.group(1)} = {self._dep(m.group(2))};", text)
        text = _REEXPORT.sub(lambda m: self._reexport(m.group(1), m.group(2)), text)
        text = _EXPORT_LIST.sub(lambda m: self._export_list(m.group(1)), text)
        text = _EXPORT_DECL.sub(self._declaration, text)
        left = [m.group(0) for m in _ANY.finditer(text) if not m.group(0).lstrip().startswith("import.meta")]
        if left:
            raise SystemExit(f"{self.key}: cannot bundle {left[0]!r}")
        self.body = text.rstrip() + "\n"

    def _dep(self, spec: str) -> str:
        if not spec.startswith("."):
            raise SystemExit(f"{self.key}: imports {spec!r}; the embed bundles relative imports only")
        target = (self.path.parent / spec).resolve()
        if target not in self.deps:
            self.deps.append(target)
        return variable(target)

    def _import(self, names: str, spec: str) -> str:
        source = self._dep(spec)
        items = ", ".join(name if name == local else f"{name}: {local}" for name, local in _names(names))
        return f"const {{ {items} }} = {source};"

    def _reexport(self, names: str, spec: str) -> str:
        source = self._dep(spec)
        self.exports += [(exported, f"{source}.{name}") for name, exported in _names(names)]
        return ""

    def _export_list(self, names: str) -> str:
        self.exports += [(exported, name) for name, exported in _names(names)]
        return ""

    def _declaration(self, m: re.Match[str]) -> str:
        self.exports.append((m.group(2), m.group(2)))
        return f"{m.group(1)} {m.group(2)}"


def variable(path: Path) -> str:
    """The bundle's variable of a module's exports (from its path, so stable across builds)."""
    key = path.relative_to(STATIC).as_posix().removesuffix(".js")
    return "$" + re.sub(r"\W", "_", key)


def modules() -> list[Module]:
    """The entry and every module it imports, each after its imports (depth first, in import order)."""
    done: dict[Path, Module] = {}
    order: list[Module] = []
    visiting: set[Path] = set()

    def visit(path: Path) -> None:
        if path in done:
            return
        if path in visiting:
            raise SystemExit(f"import cycle through {path.relative_to(STATIC)}")
        visiting.add(path)
        module = Module(path)
        for dep in module.deps:
            visit(dep)
        visiting.discard(path)
        done[path] = module
        order.append(module)

    visit(ENTRY.resolve())
    return order


def body() -> tuple[str, list[str]]:
    """The modules in their functions, ending with the entry's exports as ``api``; and the entry's export names."""
    parts = []
    ordered = modules()
    for module in ordered:
        exports = ",\n".join(f"    {name}: {expr}" for name, expr in module.exports)
        indented = "".join(f"  {line}" if line.strip() else line for line in module.body.splitlines(True))
        parts.append(f"// ---- {module.key}\nconst {variable(module.path)} = (() => {{\n{indented}"
                     f"  return Object.freeze({{\n{exports},\n  }});\n}})();\n")
    entry = ordered[-1]
    return "\n".join(parts), sorted(name for name, _ in entry.exports)


def _banner(kind: str, release: str) -> str:
    vendored = "; ".join(f"{v}: MIT licence, its text at the end" for v in LICENSES.values())
    return (f"/*! {NAME} {release} ({kind}) -- deniable's device-side randomization for survey platforms.\n"
            f" * Built by tools/build_embed.py from src/deniable/server/static/embed.js and the modules it imports\n"
            f" * (the survey page's samplers and wire code); do not edit. MIT licence (deniable);\n"
            f" * {vendored}. */\n")


def _license() -> str:
    """The vendored libraries' licence texts, each in a comment (after the code)."""
    out = ""
    for folder, name in LICENSES.items():
        text = (STATIC / folder / "LICENSE").read_text().strip()
        out += f"\n/* {name.split(' (')[0]} licence:\n\n" + text.replace("*/", "* /") + "\n*/\n"
    return out


def _integrity(data: bytes) -> str:
    """The Subresource Integrity value of ``data``: ``sha384-`` and the base64 of its SHA-384."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


def build() -> dict[str, bytes]:
    """The three files' bytes: the classic script, the ES module and the manifest."""
    release = version()
    code, names = body()
    api = f"const {GLOBAL} = Object.freeze({{ ...$embed, version: {json.dumps(release)} }});\n"
    inner = "".join(f"  {line}" if line.strip() else line for line in (code + "\n" + api).splitlines(True))
    classic = (
        _banner("classic script: sets the global Deniable", release)
        + "(function (root) {\n  'use strict';\n" + inner
        + f"  if (typeof module === 'object' && module && module.exports) module.exports = {GLOBAL};\n"
        + f"  root.{GLOBAL} = {GLOBAL};\n"
        + "})(typeof globalThis !== 'undefined' ? globalThis : this);\n"
        + _license()
    )
    exported = ", ".join([*names, "version"])
    esm = (
        _banner("ES module", release) + code + "\n" + api
        + f"export default {GLOBAL};\nexport const {{ {exported} }} = {GLOBAL};\n" + _license()
    )
    files = {f"{NAME}.js": classic.encode(), f"{NAME}.mjs": esm.encode()}
    manifest = {
        "name": NAME,
        "version": release,
        "global": GLOBAL,
        "exports": [*names, "version"],
        "files": {
            name: {"bytes": len(data), "integrity": _integrity(data)} for name, data in files.items()
        },
    }
    files[f"{NAME}.json"] = (json.dumps(manifest, indent=2) + "\n").encode()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the checked-in files; write nothing")
    args = parser.parse_args(argv)
    stale = []
    for name, data in build().items():
        path = DIST / name
        if args.check:
            if not path.is_file() or path.read_bytes() != data:
                stale.append(name)
        else:
            path.write_bytes(data)
    if stale:
        print(f"stale: {', '.join(stale)}; run python tools/build_embed.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
