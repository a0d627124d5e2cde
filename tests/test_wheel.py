"""The package as a user gets it: ``python -m build`` makes a wheel and an sdist that
``twine check`` passes, the wheel holds the licence and every file the code reads at run time,
and, installed into a fresh virtual environment, ``deniable demo`` runs and a client answers a
survey served by ``deniable serve`` from that environment.

The fresh environment gets the wheel alone (``--no-deps``, no index); it finds the dependencies
(numpy, FastAPI, ...) through a ``.pth`` line naming the test environment's site-packages, so
the test needs no network, while every ``deniable`` module, data file and the ``deniable``
command come from the wheel (checked: ``deniable.__file__`` lies in the fresh environment).
Needs the test extra (build, twine, hatchling) and the server and cli extras.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

import deniable

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.slow, pytest.mark.build, pytest.mark.integration]

for _needed in ("build", "twine", "hatchling", "fastapi", "typer", "httpx", "matplotlib"):
    pytest.importorskip(_needed, reason="the wheel test needs the test, server and cli extras")

CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
"""The environment of the fresh venv's processes: nothing points back at the checkout's source."""

RUNTIME_FILES = [
    "deniable/py.typed",
    "deniable/wire/schemas/survey.json",
    "deniable/wire/schemas/config.json",
    "deniable/server/static/deniable.js",
    "deniable/server/static/survey.html",
    "deniable/server/static/results.html",
    "deniable/server/static/vendor/noble-hashes/LICENSE",
    "deniable/server/static/vendor/noble-hashes/sha2.js",
    "deniable/server/migrations/env.py",
]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed, the dependencies borrowed (see above)."""
    folder = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    (wheel,) = dist.glob("*.whl")
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                                "--no-index", "--quiet", str(wheel)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True, env=CLEAN_ENV).stdout.strip()
    (Path(purelib) / "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return folder


def test_wheel_and_sdist_pass_twine_check_and_carry_licence_and_data(dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    sdist = next(dist.glob("*.tar.gz"))
    assert wheel.name == f"deniable-{deniable.__version__}-py3-none-any.whl"
    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [n for n in RUNTIME_FILES if n not in names]
    assert not missing, f"files the code reads at run time, not in the wheel: {missing}"
    info = f"deniable-{deniable.__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert "License: Apache-2.0" in metadata and "Classifier: Programming Language :: Python :: 3.11" in metadata
    assert "Description-Content-Type: text/markdown" in metadata
    assert not [n for n in names if n.startswith(("tests/", "docs/", "node_modules/"))]
    members = tarfile.open(sdist).getnames()
    top = f"deniable-{deniable.__version__}"
    for needed in ("LICENSE", "README.md", "CHANGELOG.md", "CITATION.cff", "pyproject.toml",
                   "src/deniable/__init__.py", "src/deniable/server/static/deniable.js"):
        assert f"{top}/{needed}" in members, needed
    assert not [m for m in members if "/node_modules/" in m or m.endswith(".db")]


def test_the_installed_wheel_runs_the_demo(venv: Path, tmp_path: Path) -> None:
    python = venv / "bin" / "python"
    where = subprocess.run([str(python), "-c", "import deniable; print(deniable.__file__, deniable.__version__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path, env=CLEAN_ENV).stdout.split()
    assert Path(where[0]).is_relative_to(venv) and where[1] == deniable.__version__
    demo = subprocess.run([str(venv / "bin" / "deniable"), "demo", "--seed", "1"], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env={**CLEAN_ENV, "MPLBACKEND": "Agg"})
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "estimate" in demo.stdout.lower()
    assert (tmp_path / "deniable-output" / "deniable-demo.png").is_file()


def test_the_installed_wheel_serves_a_survey_a_client_answers(venv: Path, tmp_path: Path) -> None:
    """``deniable serve`` from the fresh environment (its static pages and migrations come from the
    wheel); its own client posts 200 answers and reads the debiased estimate back."""
    survey = ROOT / "examples" / "honor-code.yaml"
    server = subprocess.Popen(
        [str(venv / "bin" / "deniable"), "serve", str(survey), "--db", f"sqlite:///{tmp_path / 'wheel.db'}",
         "--port", "0"],
        cwd=tmp_path, env={**CLEAN_ENV, "DENIABLE_ADMIN_TOKEN": "wheel-test-token"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        url, lines, deadline = None, [], time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = server.stderr.readline() if server.stderr else ""
            if not line:
                break
            lines.append(line)
            match = re.search(r"serving on (http://\S+)", line)
            url = match[1] if match else None
        assert url, "".join(lines)
        script = (
            "import json, sys\n"
            "from deniable.client import Client\n"
            "client = Client(sys.argv[1], token='wheel-test-token')\n"
            "client.respond_many('honor-code', [{'violated': i % 5 == 0} for i in range(200)])\n"
            "print(json.dumps(client.results('honor-code')))\n"
        )
        run = subprocess.run([str(venv / "bin" / "python"), "-c", script, url], capture_output=True, text=True,
                             timeout=120, cwd=tmp_path, env=CLEAN_ENV)
        assert run.returncode == 0, run.stderr
        results = json.loads(run.stdout)
        assert results["id"] == "honor-code" and results["n_responses"] == 200, results
        import httpx

        page = httpx.get(f"{url}/s/honor-code", timeout=10)
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert httpx.get(f"{url}/static/deniable.js", timeout=10).status_code == 200
    finally:
        server.terminate()
        server.communicate(timeout=30)
