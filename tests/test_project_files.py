"""The files a new user looks for: the version, LICENSE, CHANGELOG.md and CITATION.cff agree with the package."""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import deniable

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_version_is_one_number_everywhere() -> None:
    """``deniable --version`` prints the installed distribution's version, which is ``deniable.__version__``."""
    pytest.importorskip("typer", reason="the command line needs the cli extra")
    out = subprocess.run([sys.executable, "-m", "deniable", "--version"], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout == f"deniable {deniable.__version__}\n"
    assert version("deniable") == deniable.__version__


def test_license_file_is_the_declared_license() -> None:
    assert PROJECT["license"] == {"text": "Apache-2.0"}
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_changelog_keeps_a_changelog() -> None:
    """Keep-a-Changelog: an Unreleased section, then one ``## [X.Y.Z] - YYYY-MM-DD`` per release,
    each with ``### Added`` / ``Changed`` / ... headings; the current version is listed."""
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    releases = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, flags=re.M)
    assert releases[0] == ("Unreleased", "")
    assert (deniable.__version__, releases[1][1]) in releases[1:]
    for _, day in releases[1:]:
        datetime.date.fromisoformat(day)
    kinds = set(re.findall(r"^### (\w+)$", text, flags=re.M))
    assert kinds and kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_citation_cff_is_valid_cff_1_2() -> None:
    """CITATION.cff has the keys CFF 1.2.0 requires (cff-version, message, title, authors with a
    name), and its version and license are the package's."""
    yaml = pytest.importorskip("yaml", reason="reading CITATION.cff needs PyYAML (the server extra)")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert isinstance(cff["message"], str) and cff["message"]
    assert isinstance(cff["title"], str) and cff["title"]
    assert cff["authors"] and all(a.get("name") or a.get("family-names") for a in cff["authors"])
    assert cff["type"] in ("software", "dataset")
    assert cff["version"] == deniable.__version__
    assert cff["license"] == PROJECT["license"]["text"]
    datetime.date.fromisoformat(str(cff["date-released"]))
    allowed = {"cff-version", "message", "type", "title", "abstract", "authors", "version", "date-released",
               "license", "keywords", "repository-code", "url", "doi", "identifiers", "preferred-citation",
               "references", "commit", "contact", "license-url", "repository", "repository-artifact"}
    assert set(cff) <= allowed
