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
