"""Finding node, playwright-core and Chromium for the browser-client tests.

playwright-core (the Node library that drives Chromium) and node come from
``npm ci`` and the system when present, else from the Python ``playwright``
package that ``pip install -e '.[test]'`` installs: it ships playwright-core
and a node of its own (its ``driver`` folder). The browser is always the
system Chromium; nothing is downloaded.

A missing tool skips the test with the reason, unless the environment
variable ``DENIABLE_REQUIRE_BROWSER=1`` is set (CI sets it): then it fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "src" / "deniable" / "server" / "static"
REQUIRED = os.environ.get("DENIABLE_REQUIRE_BROWSER") == "1"


def missing(reason: str) -> NoReturn:
    """Skip (or, with DENIABLE_REQUIRE_BROWSER=1, fail) because a tool is missing."""
    if REQUIRED:
        pytest.fail(f"{reason} (and DENIABLE_REQUIRE_BROWSER=1 requires it)", pytrace=False)
    pytest.skip(reason)


def _driver() -> Path | None:
    """The ``driver`` folder of the Python ``playwright`` package (node + playwright-core), if installed."""
    spec = importlib.util.find_spec("playwright")
    if spec is None or not spec.submodule_search_locations:
        return None
    driver = Path(next(iter(spec.submodule_search_locations))) / "driver"
    return driver if driver.is_dir() else None


def _version(path: str) -> int:
    text = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip()
    return int(text.lstrip("v").split(".")[0])


def node() -> str:
    """Path of a node executable of version >= 20 (node:test and playwright-core need it):
    the system's, else the one the Python playwright package ships."""
    system = shutil.which("node")
    if system is not None and _version(system) >= 20:
        return system
    driver = _driver()
    bundled = driver / ("node.exe" if os.name == "nt" else "node") if driver else None
    if bundled is not None and bundled.is_file():
        return str(bundled)
    if system is None:
        missing("node is not installed (pip install playwright ships one; the test extra has it)")
    missing(f"node >= 20 is needed; found version {_version(system)}")


def chromium() -> str:
    """Path of a Chromium binary: DENIABLE_CHROMIUM, else chromium / chromium-browser on PATH."""
    for candidate in (os.environ.get("DENIABLE_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (path := shutil.which(candidate)):
            return path
    missing("Chromium is not installed (apt-get install chromium, or set DENIABLE_CHROMIUM)")


def sync_playwright_api() -> Any:
    """The Python ``playwright`` package's ``sync_api`` (skipped, or failed as :func:`missing` says, without it)."""
    try:
        from playwright import sync_api
    except ImportError:
        missing("the Python playwright package is not installed")
    return sync_api


def _find_playwright_core() -> Path | None:
    for package in (ROOT / "node_modules" / "playwright-core", (_driver() or ROOT) / "package"):
        manifest = package / "package.json"
        if manifest.is_file() and json.loads(manifest.read_text()).get("name") == "playwright-core":
            return package
    return None


def playwright_core() -> Path:
    """The playwright-core package: ``npm ci`` at the repository root, else the Python playwright's."""
    package = _find_playwright_core()
    if package is None:
        missing("playwright-core is not installed: pip install -e '.[test]' (the Python playwright "
                "package ships it), or npm ci at the repository root")
    return package


def _playwright_env() -> dict[str, str]:
    """``DENIABLE_PLAYWRIGHT_CORE``: where drive.mjs imports playwright-core from."""
    package = _find_playwright_core()
    return {"DENIABLE_PLAYWRIGHT_CORE": str(package)} if package else {}


def run_node(script: Path, payload: Any, *, timeout: float = 120.0, env: dict[str, str] | None = None) -> Any:
    """Run a node script with ``payload`` as JSON on stdin; return its stdout parsed as JSON."""
    proc = subprocess.run(
        [node(), str(script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **_playwright_env(), **(env or {})},
    )
    if proc.returncode != 0:
        raise AssertionError(f"{script.name} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)
