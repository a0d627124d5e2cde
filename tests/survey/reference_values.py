"""Reference values computed once by the R packages RRreg and rr (see reference/README.md).

``load()`` returns the parsed ``reference/rrreg.json``; ``data_path(name)`` is the path of a
CSV dataset stored next to it (for example ``"rrlog_data.csv"``). No R is needed.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

REFERENCE_DIR = Path(__file__).parent / "reference"


@cache
def load() -> dict[str, Any]:
    """The reference values as parsed JSON (read once per process; do not mutate)."""
    with (REFERENCE_DIR / "rrreg.json").open(encoding="utf-8") as handle:
        values: dict[str, Any] = json.load(handle)
    return values


def data_path(name: str) -> Path:
    """Path of a dataset stored with the reference values, e.g. ``data_path("rrlog_data.csv")``."""
    path = REFERENCE_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"no reference dataset {name!r} in {REFERENCE_DIR}")
    return path
