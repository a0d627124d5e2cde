"""The platform recipes' pages say what the code does.

Every recipe's ``CONFIG`` is the configuration of the design the page names
(forced response, p = 1/6, 1/6) as the overview's Python command prints it; the
oTree page shows the app's own page script; the analysis commands name the
columns the platforms export.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deniable import survey

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "howto" / "platforms"
DESIGN = survey.design("FR", ["1/6", "1/6"])


def test_the_overviews_command_prints_the_recipes_config() -> None:
    text = (PAGES / "index.md").read_text()
    command = re.search(r"^python -c '(.*)'$", text, re.M)
    assert command is not None
    printed = subprocess.run([sys.executable, "-c", command.group(1)], capture_output=True, text=True, check=True)
    assert json.loads(printed.stdout) == DESIGN.to_config()
    assert DESIGN.fingerprint in text  # the field's example


@pytest.mark.parametrize("page", ["qualtrics.md", "limesurvey.md", "redcap.md"])
def test_each_recipes_config_is_the_designs(page: str) -> None:
    text = (PAGES / page).read_text()
    (config,) = re.findall(r"var CONFIG = '(.*)';", text)
    assert json.loads(config) == DESIGN.to_config()
    assert "--design FR --p 1/6,1/6" in text


def test_the_otree_page_shows_the_apps_script() -> None:
    text = (PAGES / "otree.md").read_text()
    (block,) = re.findall(r"```html\n(.*?)```", text, re.S)
    template = (ROOT / "examples" / "otree_deniable" / "deniable_rr" / "Question.html").read_text()
    squeeze = lambda s: re.sub(r"\s+", " ", re.sub(r"//[^\n]*", "", s)).strip()  # noqa: E731
    for line in block.strip().splitlines():
        assert squeeze(line) in squeeze(template), line
