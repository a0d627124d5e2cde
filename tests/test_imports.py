"""Import hygiene: the core imports light, and no module of ``deniable`` is part of an import cycle."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "deniable"

# Imported at module level by none of the core modules below (each may import them inside a function).
HEAVY = [
    "scipy", "pandas", "matplotlib", "fastapi", "sqlalchemy", "typer", "dask",
    "uvicorn", "rich", "httpx", "pyarrow", "statsmodels", "numba", "llvmlite",
]
LIGHT = [
    "deniable", "deniable.mechanisms.binary", "deniable.mechanisms", "deniable.mechanisms.numeric",
    "deniable.estimate", "deniable.intervals", "deniable.consistency", "deniable.plan",
    "deniable.simulate", "deniable.audit", "deniable.wire", "deniable.testing", "deniable.scale",
    "deniable.report_text", "deniable.accounting", "deniable.accelerate", "deniable.randomness",
]


def test_core_imports_no_heavy_dependency() -> None:
    """``import deniable`` (and each core module) loads numpy but none of HEAVY.

    One fresh interpreter imports the modules in order and records which
    heavy package, if any, each import brought in.
    """
    code = (
        "import importlib, json, sys\n"
        f"heavy = {HEAVY!r}\n"
        "pulled = {}\n"
        f"for name in {LIGHT!r}:\n"
        "    importlib.import_module(name)\n"
        "    new = [h for h in heavy if h in sys.modules and not any(h in v for v in pulled.values())]\n"
        "    if new:\n"
        "        pulled[name] = new\n"
        "print(json.dumps(pulled))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    pulled = json.loads(out.stdout)
    assert pulled == {}, f"importing these modules loaded heavy packages: {pulled}"


# ------------------------------------------------------------------ import cycles
def module_name(path: Path, root: Path) -> str:
    """``deniable/a/b.py`` -> ``deniable.a.b``; ``deniable/a/__init__.py`` -> ``deniable.a``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _runtime_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run when the module is imported: not function bodies, not ``if TYPE_CHECKING:``."""
    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, ast.If):
            test = node.test
            checking = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
            )
            if not checking:
                yield from _runtime_statements(node.body)
            yield from _runtime_statements(node.orelse)
        elif isinstance(node, ast.ClassDef):
            yield from _runtime_statements(node.body)
        elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.While)):
            yield from _runtime_statements(node.body)
            yield from _runtime_statements(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _runtime_statements(block)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module-level imports among the modules of the package at ``root`` (see :func:`find_cycle`).

    Edges: ``import p.m`` and ``from p.m import name`` give ``X -> p.m`` (``from p
    import m`` gives ``X -> p.m`` when ``m`` is a module, else ``X -> p``: the name
    is read from the package's ``__init__``). Importing ``p.m`` also runs the
    ``__init__`` of every package enclosing ``p.m``, so those packages get an edge
    too, except the packages that enclose ``X`` itself (their ``__init__`` started
    before ``X`` did). Relative imports are resolved; imports inside functions and
    under ``if TYPE_CHECKING:`` do not count.
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
        for node in _runtime_statements(tree.body):
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
    assert "deniable.mechanisms.binary" in graph["deniable.mechanisms"]  # the graph is not empty
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
        # imports inside functions and under TYPE_CHECKING do not count
        (
            {"pkg/__init__.py": "from pkg.a import f\n",
             "pkg/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg\n"
                         "def f():\n    from pkg import f\n"},
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
    ids=["package-reexports", "function-and-type-checking", "mutual", "through-init", "parent-init"],
)
def test_cycle_finder(tmp_path: Path, files: dict[str, str], expected: list[str] | None) -> None:
    """Power check of the cycle test on small packages with and without cycles."""
    assert find_cycle(import_graph(_write(tmp_path, files))) == expected


# ------------------------------------------------------------------ public names
def test_public_names_resolve() -> None:
    """Every name in ``deniable.__all__`` is an attribute, listed by ``dir`` and importable by name."""
    import deniable as dn

    missing = [name for name in dn.__all__ if not hasattr(dn, name)]
    assert not missing, missing
    assert set(dn.__all__) <= set(dir(dn))
    namespace: dict[str, object] = {}
    exec(f"from deniable import {', '.join(dn.__all__)}", namespace)
    assert all(namespace[name] is getattr(dn, name) for name in dn.__all__)


def test_exception_hierarchy_is_exported() -> None:
    import deniable as dn
    from deniable import errors

    for name in errors.__all__:
        assert getattr(dn, name) is getattr(errors, name)
        base = dn.DeniableWarning if issubclass(getattr(dn, name), Warning) else dn.DeniableError
        assert issubclass(getattr(dn, name), base)
    budget = dn.PrivacyBudget(1.0)
    with pytest.raises(dn.BudgetError, match="budget exceeded"):
        budget.spend(1.5, "q1")
    with pytest.raises(ValueError):  # still a ValueError, as before the hierarchy existed
        budget.spend(1.5, "q1")
    with pytest.raises(dn.ConfigError):
        dn.from_config("{}")
