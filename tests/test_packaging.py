"""Packaging contracts: the core imports with numpy and scipy only, and type-checks strictly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = [
    "privacy.py", "randomness.py", "estimate.py", "consistency.py", "plan.py", "simulate.py",
    "audit.py", "wire.py", "debias.py", "scale.py", "mechanisms", "intervals.py", "errors.py",
    "aggregates.py", "testing.py", "report_text.py",
]
OPTIONAL = [
    "fastapi", "sqlalchemy", "uvicorn", "typer", "rich", "matplotlib", "dask", "pandas", "pyarrow", "httpx", "numba",
]


def test_core_imports_without_optional_extras() -> None:
    """Importing deniable (and planning, simulating, auditing) pulls in no optional extra."""
    code = (
        "import sys\n"
        f"for name in {OPTIONAL!r}:\n"
        "    sys.modules[name] = None  # any import of an extra now fails\n"
        "import deniable as dn\n"
        "m = dn.best_mechanism(64, 1.0).mechanism\n"
        "dn.simulate(m, [1 / 64] * 64, 10_000, rng=1)\n"
        "dn.audit(dn.GRR(4, epsilon=1.0), trials=1000, rng=1)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_py_typed_is_shipped() -> None:
    assert (ROOT / "src" / "deniable" / "py.typed").exists()


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_core_is_mypy_strict_clean() -> None:
    paths = [str(ROOT / "src" / "deniable" / p) for p in CORE]
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *paths],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
