"""Finding node, playwright-core and Chromium for the browser-client tests.

A missing tool skips the test with the reason, unless the environment
variable ``DENIABLE_REQUIRE_BROWSER=1`` is set (CI sets it): then it fails.
"""

from __future__ import annotations

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


def node() -> str:
    """Path of the node executable (version >= 20 for node:test and playwright-core)."""
    path = shutil.which("node")
    if path is None:
        missing("node is not installed")
    version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        missing(f"node >= 20 is needed; found {version}")
    return path


def chromium() -> str:
    """Path of a Chromium binary: DENIABLE_CHROMIUM, else chromium / chromium-browser on PATH."""
    for candidate in (os.environ.get("DENIABLE_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (path := shutil.which(candidate)):
            return path
    missing("Chromium is not installed (apt-get install chromium, or set DENIABLE_CHROMIUM)")


def playwright_core() -> Path:
    """The installed playwright-core package (``npm ci`` at the repository root)."""
    package = ROOT / "node_modules" / "playwright-core"
    if not (package / "package.json").exists():
        missing("playwright-core is not installed; run `npm ci` at the repository root")
    return package


def run_node(script: Path, payload: Any, *, timeout: float = 120.0, env: dict[str, str] | None = None) -> Any:
    """Run a node script with ``payload`` as JSON on stdin; return its stdout parsed as JSON."""
    proc = subprocess.run(
        [node(), str(script)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    if proc.returncode != 0:
        raise AssertionError(f"{script.name} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)
