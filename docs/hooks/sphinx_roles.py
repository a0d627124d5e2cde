"""Griffe extension: docstrings written for ``help()`` read well on the site.

* Sphinx roles (``:func:`x```) become code spans (``x``);
* doctest examples (``>>>`` lines and their output, up to a blank line)
  become ``pycon`` code blocks instead of nested block quotes;
* math, ``:math:`x``` and ``.. math::`` blocks, becomes ``$x$`` and ``$$ ... $$``,
  which the site renders with its KaTeX.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

MATH_ROLE = re.compile(r":math:`([^`]+)`")
ROLE = re.compile(r":(?:py:)?(?:attr|class|data|exc|func|meth|mod|obj):`~?\.?([^`]+)`")


def fence_doctests(text: str) -> str:
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            while i < len(lines) and lines[i].strip():
                out.append(lines[i])
                i += 1
            out.append(f"{indent}```")
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def math_blocks(text: str) -> str:
    """``.. math::`` and its indented lines as a ``$$`` display block."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == ".. math::":
            indent = line[: len(line) - len(line.lstrip())]
            body: list[str] = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > len(indent)):
                body.append(lines[i].strip())
                i += 1
            while body and not body[-1]:
                body.pop()
            out += [f"{indent}$$", *(f"{indent}{b}" for b in body if b), f"{indent}$$", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class SphinxRoles(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = math_blocks(MATH_ROLE.sub(r"$\1$", obj.docstring.value))
            obj.docstring.value = fence_doctests(ROLE.sub(r"`\1`", text))
