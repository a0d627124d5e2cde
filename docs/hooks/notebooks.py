"""MkDocs hook: every tutorial downloadable as a Jupyter notebook.

For each page under ``tutorials/``, the page's text becomes Markdown cells and each Python block
that the build executes (markdown-exec's ```` ```python exec="on" ... ``` ````) a code cell, in the
page's order. A figure block prints its figure as SVG into the page; in the notebook it ends with
the figure itself (the last expression of a cell, which Jupyter shows) and leaves the backend
alone. The notebook is written next to the built page (``tutorials/numeric.md`` gives
``numeric.ipynb`` beside ``tutorials/numeric/index.html``), and the page gets a download link
under its title. tests/test_docs_notebooks.py runs the cells of two tutorials in order.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

import nbformat

FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*\n?", re.M | re.S)
EXEC = re.compile(r"""\bexec=["']?(?:on|1|true)\b""")
SAVEFIG = re.compile(r"""^(?P<indent>\s*)(?P<figure>[\w.\[\]]+)\.savefig\((?P<buffer>\w+), format=["']svg["']\)\s*$""")
LINK = re.compile(r"\]\((?P<target>(?!https?:|#|/)[^)\s]+?\.md)(?P<anchor>#[^)\s]*)?\)")
HEADING = re.compile(r"^# .*\n", re.M)
HEADER = (
    "*A notebook of the tutorial {title} of the deniable documentation. "
    "Run it from the root of a checkout of the repository (some cells read `examples/`), "
    "with `pip install -e '.[all]'`.*"
)
DOWNLOAD = (
    '<p class="notebook-download"><a href="{name}" download>Download this tutorial as a notebook</a> '
    "(Jupyter, <code>.ipynb</code>)</p>\n"
)

_written: dict[str, str] = {}  # the notebook's path in the site -> its JSON


def is_executed_python(info: str) -> bool:
    """Whether a fence's info string is a Python block that markdown-exec runs at build."""
    words = info.split()
    return bool(words) and words[0] in ("python", "py") and EXEC.search(info) is not None


def notebook_code(code: str) -> str:
    """A block's code as a notebook cell: a figure printed as SVG for the page is shown instead."""
    lines = code.rstrip("\n").split("\n")
    buffers = {m["buffer"] for m in map(SAVEFIG.match, lines) if m}
    out = []
    for line in lines:
        stripped = line.strip()
        if buffers and stripped.startswith("matplotlib.use("):
            continue  # the page renders without a display; a notebook keeps its own backend
        if any(stripped.startswith((f"{b} = io.StringIO()", f"print({b}.getvalue()")) for b in buffers):
            continue
        figure = SAVEFIG.match(line)
        out.append(f"{figure['indent']}{figure['figure']}" if figure else line)
    return "\n".join(out)


def tutorial_notebook(markdown: str, header: str = "") -> nbformat.NotebookNode:
    """The notebook of a tutorial page's Markdown: text as Markdown cells, executed blocks as code."""
    cells = [nbformat.v4.new_markdown_cell(header)] if header else []
    text: list[str] = []

    def flush() -> None:
        joined = "".join(text).strip("\n")
        if joined.strip():
            cells.append(nbformat.v4.new_markdown_cell(joined))
        text.clear()

    position = 0
    for fence in FENCE.finditer(markdown):
        text.append(markdown[position : fence.start()])
        if is_executed_python(fence["info"]):
            flush()
            cells.append(nbformat.v4.new_code_cell(notebook_code(fence["body"])))
        else:
            text.append(fence.group(0))
        position = fence.end()
    text.append(markdown[position:])
    flush()
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook


def _absolute_links(markdown: str, page: Any, files: Any, site_url: str) -> str:
    """Links to other pages as addresses on the published site (a notebook is read elsewhere)."""

    def replace(match: re.Match[str]) -> str:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(page.file.src_uri), match["target"]))
        target = files.get_file_from_path(path)
        if target is None:
            return match.group(0)
        return f"]({site_url.rstrip('/')}/{target.url}{match['anchor'] or ''})"

    return LINK.sub(replace, markdown) if site_url else markdown


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **kwargs: Any) -> str:
    if not page.file.src_uri.startswith("tutorials/"):
        return markdown
    stem = Path(page.file.src_uri).stem
    site_url = config.get("site_url") or ""
    title = page.title or stem
    header = HEADER.format(title=f"[{title}]({site_url.rstrip('/')}/{page.file.url})" if site_url else f'"{title}"')
    notebook = tutorial_notebook(_absolute_links(markdown, page, files, site_url), header)
    nbformat.validate(notebook)
    where = posixpath.join(posixpath.dirname(page.file.dest_uri), f"{stem}.ipynb")
    _written[where] = nbformat.writes(notebook)
    heading = HEADING.match(markdown)
    link = DOWNLOAD.format(name=f"{stem}.ipynb")
    if heading is None:
        return link + "\n" + markdown
    return markdown[: heading.end()] + "\n" + link + markdown[heading.end() :]


def on_post_build(config: Any, **kwargs: Any) -> None:
    for where, text in _written.items():
        path = Path(config["site_dir"]) / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
