"""The tutorials' notebooks (docs/hooks/notebooks.py) hold the page's executed blocks, and their cells run.

Two tutorials (one with a figure) are converted as the docs build converts them; their code cells
must be the page's executed Python blocks in order (a figure's SVG printing replaced by the figure),
and must run in order in one fresh namespace, from the repository's root as the build runs them.
The whole site's notebooks are written by the strict build of tests/test_docs_site.py.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
from pathlib import Path
from types import ModuleType

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebooks need nbformat (docs extra)")
pytest.importorskip("matplotlib", reason="the figure cells need matplotlib (plot extra)")

pytestmark = pytest.mark.build  # runs two tutorials (about ten seconds): not in the fast suite

ROOT = Path(__file__).resolve().parents[1]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notebooks_hook", ROOT / "docs" / "hooks" / "notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_figure_block_shows_its_figure_instead_of_printing_svg() -> None:
    block = (
        'import io\nimport matplotlib\nmatplotlib.use("Agg")\nax = new_axes()\nbuffer = io.StringIO()\n'
        'ax.figure.savefig(buffer, format="svg")\nprint(buffer.getvalue()[buffer.getvalue().index("<svg"):])\n'
    )
    assert _hook().notebook_code(block) == "import io\nimport matplotlib\nax = new_axes()\nax.figure"
    plain = "x = 1\nprint(x)\n"
    assert _hook().notebook_code(plain) == plain.rstrip("\n")


@pytest.mark.parametrize("page", ["warner", "privacy-utility"])
def test_a_tutorials_notebook_cells_are_its_executed_blocks_and_run(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    hook = _hook()
    markdown = (ROOT / "docs" / "tutorials" / f"{page}.md").read_text(encoding="utf-8")
    notebook = hook.tutorial_notebook(markdown, "header")
    nbformat.validate(notebook)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    blocks = [m["body"] for m in hook.FENCE.finditer(markdown) if hook.is_executed_python(m["info"])]
    assert code == [hook.notebook_code(b) for b in blocks] and len(code) >= 4
    assert not any("savefig(buffer" in c or "matplotlib.use" in c for c in code)
    text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    headings = [line for line in markdown.split("\n") if line.startswith("## ")]
    assert "exec=" not in text and [line for line in text.split("\n") if line.startswith("## ")] == headings

    import matplotlib

    matplotlib.use("Agg")  # the test has no display; a notebook keeps its own backend
    monkeypatch.chdir(ROOT)  # cells read examples/, as the build runs them
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        for i, cell in enumerate(code):
            exec(compile(cell, f"{page}.ipynb[{i}]", "exec"), namespace)
    assert "<svg" not in printed.getvalue()
