"""Packaging contracts: the core imports with numpy and scipy only, and type-checks strictly."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = [
    "_privacy.py", "_randomness.py", "_estimate.py", "_consistency.py", "_plan.py", "simulate.py",
    "audit.py", "wire", "_debias.py", "scale.py", "mechanisms", "_intervals.py", "errors.py",
    "_aggregates.py", "testing.py",
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


@pytest.mark.build
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_core_is_mypy_strict_clean() -> None:
    paths = [str(ROOT / "src" / "deniable" / p) for p in CORE]
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *paths],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_static_modules_and_their_vendored_imports_ship_with_the_package() -> None:
    """Every module the pages load, and every file it imports (the vendored @noble/hashes with its
    licence, from npm run vendor), lies inside the package folder and is tracked, so the wheel
    (hatch ships src/deniable) and the server's /static/ have them."""
    import re

    static = ROOT / "src" / "deniable" / "server" / "static"
    specifier = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)['"](\.{1,2}/[^'"]+)['"]""", re.M)
    seen = set()
    for module in static.rglob("*.js"):
        for target in specifier.findall(module.read_text(encoding="utf-8")):
            path = (module.parent / target).resolve()
            assert path.is_file() and static in path.parents, f"{module.name} imports {target}, not in static/"
            seen.add(path.relative_to(static).as_posix())
    assert {"vendor/noble-hashes/sha2.js", "vendor/noble-hashes/sha3.js", "client_state.js", "json.js"} <= seen
    assert (static / "vendor" / "noble-hashes" / "LICENSE").is_file()
    tracked = subprocess.run(
        ["git", "ls-files", "--error-unmatch", *sorted(seen), "vendor/noble-hashes/LICENSE"],
        capture_output=True, text=True, check=False, cwd=static,
    )
    if tracked.returncode == 128 and "not a git repository" in tracked.stderr:
        pytest.skip("not a git checkout")
    assert tracked.returncode == 0, tracked.stderr
