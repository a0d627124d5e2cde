"""The package's shape: no module over 600 lines, no import cycle among deniable's own modules.

Both rules are issue 25's item 8. A long module is split by concept (its old
path re-exports the names); a cycle is broken by moving what both sides need
to a leaf, not by importing inside a function.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "deniable"
MAX_LINES = 600


def module_lines(root: Path) -> dict[str, int]:
    """Lines of every ``.py`` file under ``root``, by path relative to it (``mechanisms/_sketch.py``)."""
    return {p.relative_to(root).as_posix(): len(p.read_text().splitlines()) for p in sorted(root.rglob("*.py"))}


def test_no_module_over_max_lines() -> None:
    lines = module_lines(PACKAGE)
    assert "mechanisms/_contract.py" in lines  # the walk found the package
    long = {path: n for path, n in lines.items() if n > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"


def test_line_count_finds_a_long_module(tmp_path: Path) -> None:
    """Power check of the size rule on a small tree."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    lines = module_lines(tmp_path)
    assert {p for p, n in lines.items() if n > MAX_LINES} == {"sub/long.py"}


def module_name(path: Path, root: Path) -> str:
    """``deniable/a/b.py`` -> ``deniable.a.b``; ``deniable/a/__init__.py`` -> ``deniable.a``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Imports among the modules of the package at ``root`` (see :func:`find_cycle`).

    Edges: ``import p.m`` and ``from p.m import name`` give ``X -> p.m`` (``from p
    import m`` gives ``X -> p.m`` when ``m`` is a module, else ``X -> p``: the name
    is read from the package's ``__init__``). Importing ``p.m`` also runs the
    ``__init__`` of every package enclosing ``p.m``, so those packages get an edge
    too, except the packages that enclose ``X`` itself (their ``__init__`` started
    before ``X`` did). Relative imports are resolved. Every import statement
    counts, at module level, inside a function or under ``if TYPE_CHECKING:``:
    a module imported later, or for its types only, is still one this module
    needs, and a lazy import that only dodges a cycle leaves the cycle in the
    design. (Lazy imports of optional third-party packages are not edges: they
    are outside the package.)
    """
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    packages = {module_name(p, root) for p in root.rglob("__init__.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}

    def enclosing(name: str) -> list[str]:
        parts = name.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts))]

    for name, path in files.items():
        here = name if name in packages else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), filename=str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    sub = f"{source}.{alias.name}"
                    targets.add(sub if sub in files else source)
        for target in targets:
            if target not in files:
                continue  # outside the package
            own = set(enclosing(name)) | {name}
            graph[name].update(t for t in [target, *enclosing(target)] if t not in own or t == target)
        graph[name].discard(name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle ``[a, b, ..., a]`` of ``graph``, or None (depth-first search).

    The rule, kept simple: a module must not need, at import time and directly
    or through others, a module that needs it. A package's ``__init__``
    importing its submodules is not a cycle by itself; but a submodule that
    takes a *name* from its package (``from deniable import X``, ``import
    deniable as dn``) depends on that ``__init__``, so it is a cycle when the
    ``__init__`` imports the submodule (even where today's import order makes
    it work: reordering the ``__init__`` would break it). Take the name from
    the module that defines it instead.
    """
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_no_import_cycle() -> None:
    graph = import_graph(PACKAGE)
    assert "deniable.mechanisms._binary" in graph["deniable.mechanisms"]  # the graph is not empty
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # a package importing its submodules, submodules importing siblings: no cycle
        (
            {"pkg/__init__.py": "from pkg.a import A\nfrom .b import B\n", "pkg/a.py": "A = 1\n",
             "pkg/b.py": "from pkg import a\nfrom pkg.a import A\nB = 2\n"},
            None,
        ),
        # an import inside a function counts
        (
            {"pkg/__init__.py": "", "pkg/a.py": "def f():\n    from pkg.b import g\n    return g()\n",
             "pkg/b.py": "from pkg.a import f\ndef g():\n    return 1\n"},
            ["pkg.a", "pkg.b", "pkg.a"],
        ),
        # so does one under TYPE_CHECKING
        (
            {"pkg/__init__.py": "from pkg.a import A\n",
             "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg\nA = 1\n"},
            ["pkg", "pkg.a", "pkg"],
        ),
        # a lazy import of a third-party package is no edge
        (
            {"pkg/__init__.py": "from pkg.a import f\n", "pkg/a.py": "def f():\n    import numpy\n"},
            None,
        ),
        # two modules importing each other (one through a relative import)
        (
            {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import B\nA = 1\n",
             "pkg/b.py": "from .a import A\nB = 2\n"},
            ["pkg.a", "pkg.b", "pkg.a"],
        ),
        # a submodule taking a name from the package that imports it
        (
            {"pkg/__init__.py": "from pkg.a import A\nfrom pkg.b import B\n", "pkg/a.py": "A = 1\n",
             "pkg/b.py": "from pkg import A\nB = A\n"},
            ["pkg", "pkg.b", "pkg"],
        ),
        # importing a module of a subpackage runs the subpackage's __init__ first
        (
            {"pkg/__init__.py": "", "pkg/x.py": "from pkg.sub.leaf import L\nX = 1\n",
             "pkg/sub/__init__.py": "from pkg.sub.leaf import L\nfrom pkg.sub.user import U\n",
             "pkg/sub/leaf.py": "L = 1\n", "pkg/sub/user.py": "from pkg.x import X\nU = X\n"},
            ["pkg.sub", "pkg.sub.user", "pkg.x", "pkg.sub"],
        ),
    ],
    ids=["package-reexports", "in-function", "type-checking", "third-party", "mutual", "through-init", "parent-init"],
)
def test_cycle_finder(tmp_path: Path, files: dict[str, str], expected: list[str] | None) -> None:
    """Power check of the cycle test on small packages with and without cycles."""
    assert find_cycle(import_graph(_write(tmp_path, files))) == expected


STATIC = PACKAGE / "server" / "static"
STATIC_IMPORT = re.compile(r"""^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]\./([\w.-]+\.js)['"]""", re.M)


def static_lines(static: Path) -> dict[str, int]:
    """Lines of every browser module in ``static`` (its ``*.js``; ``vendor/`` is not walked)."""
    return {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(static.glob("*.js"))}


def static_import_graph(static: Path) -> dict[str, set[str]]:
    """Relative imports among the browser modules in ``static``: ``import ... from './x.js'`` and
    ``export ... from './x.js'`` (statements over several lines too) give an edge to ``x.js``."""
    return {
        p.name: {t for t in STATIC_IMPORT.findall(p.read_text(encoding="utf-8")) if (static / t).is_file()}
        for p in sorted(static.glob("*.js"))
    }


def test_no_static_module_over_max_lines() -> None:
    lines = static_lines(STATIC)
    assert "json.js" in lines  # the walk found the modules
    long = {name: n for name, n in lines.items() if n > MAX_LINES}
    assert not long, f"browser modules over {MAX_LINES} lines (split them by concept): {long}"


def test_no_static_import_cycle() -> None:
    graph = static_import_graph(STATIC)
    assert "json.js" in graph["client_state.js"]  # the graph is not empty
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_static_checks_find_a_long_module_and_a_cycle(tmp_path: Path) -> None:
    """Power check of both static rules, on the old shape (deniable.js of 965 lines, importing
    designs.js, which imported it back) and on a leaf that breaks the cycle."""
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "big.js").write_text("x;\n" * (MAX_LINES + 1))
    (tmp_path / "deniable.js").write_text(
        "import { md5 } from './vendor/noble-hashes/legacy.js';\nimport { rrDesign } from './designs.js';\n"
        + "x;\n" * 963
    )
    (tmp_path / "designs.js").write_text(
        "import {\n  absLnRatio, DeniableError,\n} from './deniable.js';\nimport { stringify } from './json.js';\n"
    )
    (tmp_path / "json.js").write_text("export const stringify = 1;\n")
    assert {n for n, k in static_lines(tmp_path).items() if k > MAX_LINES} == {"deniable.js"}
    assert find_cycle(static_import_graph(tmp_path)) == ["deniable.js", "designs.js", "deniable.js"]
    (tmp_path / "sampling.js").write_text("export { stringify } from './json.js';\n")
    (tmp_path / "designs.js").write_text("import { absLnRatio } from './sampling.js';\n")
    assert static_import_graph(tmp_path)["sampling.js"] == {"json.js"}
    assert find_cycle(static_import_graph(tmp_path)) is None
