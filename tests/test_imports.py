"""Import hygiene: the core imports light, and the public names resolve (import cycles: test_layout.py)."""

from __future__ import annotations

import json
import subprocess
import sys
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
    "deniable", "deniable.mechanisms._binary", "deniable.mechanisms", "deniable.mechanisms._numeric",
    "deniable._estimate", "deniable._intervals", "deniable._consistency", "deniable._plan",
    "deniable.simulate", "deniable.audit", "deniable.wire", "deniable.testing", "deniable.scale",
    "deniable.wire._text", "deniable._accounting", "deniable._accelerate", "deniable._randomness",
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


# ------------------------------------------------------------------ the public surface
PUBLIC_MODULES = [
    "deniable", "deniable.mechanisms", "deniable.mechanisms.registry", "deniable.survey", "deniable.heavy",
    "deniable.wire", "deniable.wire.schemas", "deniable.errors", "deniable.client", "deniable.server",
    "deniable.cli", "deniable.scale", "deniable.plot", "deniable.audit", "deniable.simulate", "deniable.testing",
    "deniable.attacks",
]
"""The modules a user imports (httpx's rule): every other module's name, or a package above it, starts with ``_``."""
EXTRAS = {
    "deniable.server": "fastapi", "deniable.cli": "typer", "deniable.client": "httpx", "deniable.plot": "matplotlib",
}


def _modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if parts[-1] != "__main__" and "migrations" not in parts:  # alembic's scripts are files, not imports
            names.append(".".join(parts))
    return names


def test_implementation_modules_are_private() -> None:
    """A module is public (listed above) or private: its own name or a package's above it starts with ``_``."""
    def private(name: str) -> bool:
        return any(part.startswith("_") for part in name.split(".")[1:])

    public = [name for name in _modules() if not private(name)]
    assert sorted(public) == sorted(PUBLIC_MODULES), set(public) ^ set(PUBLIC_MODULES)


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_public_module_names_resolve(module: str) -> None:
    """Each public module says its names in ``__all__``; each resolves, and none is a private module."""
    import importlib
    import types

    if module in EXTRAS:
        pytest.importorskip(EXTRAS[module], reason=f"{module} needs its extra")
    mod = importlib.import_module(module)
    assert isinstance(mod.__all__, (list, tuple)) and mod.__all__
    for name in mod.__all__:
        value = getattr(mod, name)
        assert not (isinstance(value, types.ModuleType) and value.__name__.rsplit(".", 1)[-1].startswith("_")), name


def test_api_reference_documents_the_public_modules() -> None:
    """The API reference documents each public module and no private one (``::: name`` directives)."""
    import re

    directives = re.findall(r"^::: (deniable[\w.]*)$", "\n".join(
        p.read_text() for p in (ROOT / "docs" / "reference").glob("*.md")), flags=re.MULTILINE)
    private = [d for d in directives if any(part.startswith("_") for part in d.split(".")[1:])
               and not d.startswith(("deniable.survey._regression.", "deniable.survey._ictreg.",
                                      "deniable.survey._glmer."))]  # imported on
    # first use: see survey.md
    assert not private, private
    documented = set(PUBLIC_MODULES) - {"deniable.cli"}  # its surface is the command line and its --help
    assert documented <= set(directives), documented - set(directives)
