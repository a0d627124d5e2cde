"""MkDocs hook: the API reference pages list each module's public names themselves.

A reference page writes ``members: public`` (optionally ``public except a b``)
under ``::: deniable.<module>``; this hook replaces it with that module's
``__all__`` minus the names of ``deniable.__all__`` (documented on the
top-level page, which the hook says above the directive) and the
exceptions, so a new public name appears without editing the page. The
page gets the module's name as its title.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

DIRECTIVE = re.compile(r"^::: (deniable[\w.]*)$")
MARKER = re.compile(r"^(\s*)members: public(?: except (.*))?$")


def split_names(module_name: str) -> tuple[list[str], list[str]]:
    """(names documented on this module's page, names documented on the top-level page)."""
    top = set(importlib.import_module("deniable").__all__)
    names = list(importlib.import_module(module_name).__all__)
    return [n for n in names if n not in top], [n for n in names if n in top]


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if not page.file.src_uri.startswith("reference/"):
        return markdown
    lines = markdown.split("\n")
    out: list[str] = []
    current = ""
    for i, line in enumerate(lines):
        directive = DIRECTIVE.match(line)
        if directive:
            current = directive.group(1)
            if any(MARKER.match(later) for later in lines[i + 1 : i + 4]):
                out += [f"# {current}", ""]
                shared = split_names(current)[1]
                if shared:
                    listed = ", ".join(f"`{n}`" for n in shared)
                    out += [f"Also exported from the top-level package and documented under "
                            f"[deniable](index.md): {listed}.", ""]
        marker = MARKER.match(line)
        if marker and current:
            indent, exclude = marker.group(1), set((marker.group(2) or "").split())
            out += [f"{indent}show_root_heading: false", f"{indent}heading_level: 2", f"{indent}members:"]
            out += [f"{indent}  - {name}" for name in split_names(current)[0] if name not in exclude]
            continue
        out.append(line)
    return "\n".join(out)
