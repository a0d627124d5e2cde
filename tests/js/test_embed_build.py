"""deniable-embed.js: the checked-in build is a fresh build, its hashes are its bytes, the server serves it.

* ``tools/build_embed.py --check``: the three files (classic script, ES module,
  manifest) are exactly what the modules they bundle give now, so a change to
  a sampler without a rebuild fails here;
* the manifest's ``integrity`` values are the files' sha384 (Subresource
  Integrity) and its version the package's;
* the bundle has no dependency at run time (no import, no require; not even @hpke/common's
  fallback to node's crypto module) and carries its vendored libraries' licences;
* the server serves the three files to any origin (``Access-Control-Allow-Origin: *``,
  which ``<script integrity crossorigin>`` needs) and nothing else of /static gains that header.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys

import pytest
from node_env import ROOT, STATIC

import deniable

NAMES = ("deniable-embed.js", "deniable-embed.mjs")
MANIFEST = json.loads((STATIC / "dist" / "deniable-embed.json").read_text())


def test_the_checked_in_build_is_current() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_embed.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_the_manifest_has_the_files_hashes_and_the_package_version() -> None:
    assert MANIFEST["version"] == deniable.__version__
    for name in NAMES:
        data = (STATIC / "dist" / name).read_bytes()
        digest = "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
        assert MANIFEST["files"][name] == {"bytes": len(data), "integrity": digest}
        assert f"deniable-embed {deniable.__version__}" in data[:200].decode()


@pytest.mark.parametrize("name", NAMES)
def test_no_dependency_at_run_time(name: str) -> None:
    text = (STATIC / "dist" / name).read_text()
    assert not re.search(r"^\s*import\b|\bimport\s*\(|\brequire\s*\(", text, re.M)
    # the vendored hashes' and HPKE's licences travel with them
    assert "@noble/hashes licence" in text and "Permission is hereby granted" in text
    assert "@hpke/core and @hpke/common licence" in text and "Ajitomi Daisuke" in text


@pytest.mark.integration
@pytest.mark.slow
def test_the_server_serves_the_embed_to_any_origin() -> None:
    httpx = pytest.importorskip("httpx")
    runner = pytest.importorskip("deniable.server._runner")
    with runner.BackgroundServer([]) as server:
        for name in (*NAMES, "deniable-embed.json"):
            r = httpx.get(f"{server.url}/static/{name}", headers={"Origin": "https://survey.example.org"})
            assert r.status_code == 200 and r.content == (STATIC / "dist" / name).read_bytes()
            assert r.headers["access-control-allow-origin"] == "*"
            media = "application/json" if name.endswith("json") else "text/javascript"
            assert r.headers["content-type"].startswith(media)
        other = httpx.get(f"{server.url}/static/survey.js")
        assert other.status_code == 200 and "access-control-allow-origin" not in other.headers
