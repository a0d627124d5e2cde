"""The documentation site builds strictly, and its API reference renders every public name.

One strict build (``mkdocs build --strict``: a warning, an unresolved link, a
missing page or a tutorial block that raises fails it) into a temporary
directory, shared by the tests below. Needs the ``docs`` extra.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
# one reference page per public submodule: docs/reference/<module>.md documents deniable.<module>
REFERENCE_MODULES = sorted(p.stem for p in (ROOT / "docs" / "reference").glob("*.md") if p.stem != "index")

pytest.importorskip("mkdocs", reason="the docs site needs the docs extra: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings_handlers.python", reason="the API reference needs mkdocstrings[python] (docs extra)")
pytest.importorskip("markdown_exec", reason="the executed tutorials need markdown-exec (docs extra)")

pytestmark = pytest.mark.build  # builds the whole site (half a minute): not in the fast suite


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out


def html_ids(site: Path) -> set[str]:
    ids: set[str] = set()
    for page in site.rglob("*.html"):
        ids.update(re.findall(r'id="([^"]+)"', page.read_text(encoding="utf-8")))
    return ids


def public_names() -> list[tuple[str, str]]:
    """(where it is documented, name) for deniable.__all__ and each reference module's __all__."""
    top = importlib.import_module("deniable")
    names = [("deniable", name) for name in top.__all__]
    for short in REFERENCE_MODULES:
        module = importlib.import_module(f"deniable.{short}")
        names += [(f"deniable.{short}", n) for n in module.__all__ if n not in top.__all__]
    return names


def has_docstring(package: Any, paths: list[str]) -> bool:
    """Whether griffe (what the reference renders from) finds a docstring under the first path it knows."""
    for path in paths:
        try:
            obj = package[path.removeprefix("deniable.")]
        except (KeyError, ValueError):
            continue
        target = obj.final_target if obj.is_alias else obj
        return bool(target.docstring and target.docstring.value.strip())
    return False


def test_reference_covers_the_public_submodules() -> None:
    for name in ("survey", "scale", "audit", "testing", "client", "server", "mechanisms", "heavy", "wire", "errors",
                 "plot", "simulate"):
        assert name in REFERENCE_MODULES, f"docs/reference/{name}.md is missing"


def test_site_builds_strictly(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "math" / "frequency-oracles" / "index.html").is_file()


def test_reference_renders_every_public_name_with_its_docstring(site: Path) -> None:
    griffe = pytest.importorskip("griffe", reason="griffe comes with mkdocstrings[python] (docs extra)")
    package = griffe.load("deniable", search_paths=[str(ROOT / "src")])
    ids = html_ids(site)
    missing: list[str] = []
    undocumented: list[str] = []
    for where, name in public_names():
        obj = getattr(importlib.import_module(where), name)
        home = f"{getattr(obj, '__module__', where)}.{getattr(obj, '__qualname__', name)}"
        path = f"{where}.{name}"
        if path not in ids and home not in ids:
            missing.append(path)
        if not has_docstring(package, [home, path]):
            undocumented.append(path)
    assert not missing, f"public names the API reference does not render: {missing}"
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_formula_a_anchor_is_where_the_docstrings_cite_it(site: Path) -> None:
    page = (site / "math" / "frequency-oracles" / "index.html").read_text(encoding="utf-8")
    assert 'id="formula-a"' in page
    reference = (site / "reference" / "index.html").read_text(encoding="utf-8")
    assert 'href="../math/frequency-oracles/#formula-a"' in reference
