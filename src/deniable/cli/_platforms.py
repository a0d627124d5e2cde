"""Survey platforms' CSV exports whose column holds the embeddable client's reports.

``deniable-embed.js`` in local mode writes each respondent's report, with the
configuration's fingerprint, into a field of the platform
(:mod:`deniable.wire._fields`); the analyst exports the platform's responses as
CSV and gives the file to ``deniable estimate`` or ``deniable analyze``. The
exports differ only in their first rows and separator:

* Qualtrics ("Export data", CSV): three header rows -- the column names
  (question and embedded-data names), then each column's question text, then
  its import id as JSON (``{"ImportId":"QID1"}``); the data start on line 4.
* LimeSurvey ("Export results", CSV): one header row (question codes, or the
  question texts if chosen), comma- or semicolon-separated.
* REDCap ("Export data", CSV raw): one header row of variable names.
* oTree (data export, "All apps - wide" or one app's CSV): one header row,
  a player field named ``<app>.<round>.player.<field>`` (``player.<field>`` in
  an app's own export).

Every row's fingerprint is checked against the analysis's configuration or
design, and empty cells (respondents who did not reach the question) are left
out and counted.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from deniable.cli._common import CLIError
from deniable.errors import ReportError
from deniable.wire._fields import REPORT_FORMAT, from_fields

__all__ = ["holds_fields", "read_export", "field_reports", "platform_of"]

_SNIFF = 65536
_MARK = REPORT_FORMAT  # (a CSV writer that quotes every field doubles the quotes around it)


def _head(path: Path) -> str:
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
        return f.read(_SNIFF)


def _delimiter(first_line: str) -> str:
    """The separator of a header row: the one of , ; and tab it has most of (LimeSurvey offers all three)."""
    counts = {d: first_line.count(d) for d in (",", ";", "\t")}
    return max(counts, key=lambda d: counts[d])


def _rows(text: str) -> list[list[str]]:
    first = text.split("\n", 1)[0]
    return list(csv.reader(io.StringIO(text), delimiter=_delimiter(first)))[:4]


def _qualtrics(rows: list[list[str]]) -> bool:
    """Qualtrics's third header row: every cell its column's import id as JSON ({"ImportId": ...})."""
    return len(rows) >= 3 and bool(rows[2]) and all(c.startswith('{"ImportId"') for c in rows[2] if c)


def platform_of(path: Path) -> str:
    """Which platform's export ``path`` looks like: qualtrics, limesurvey, redcap, otree or csv."""
    rows = _rows(_head(path))
    if _qualtrics(rows):
        return "qualtrics"
    header = set(rows[0]) if rows else set()
    if {"submitdate", "lastpage", "startlanguage"} <= header:
        return "limesurvey"
    if "record_id" in header or any(h.startswith("redcap_") or h.endswith("_complete") for h in header):
        return "redcap"
    if any(h.startswith(("participant.", "player.", "session.")) for h in header):
        return "otree"
    return "csv"


def holds_fields(path: Path, column: str) -> bool:
    """Whether ``path`` is a CSV export whose ``column`` holds the embed's reports (or a Qualtrics export)."""
    if path.suffix.lower() != ".csv" or not path.is_file():
        return False
    head = _head(path)
    return _qualtrics(_rows(head)) or _MARK in head


def read_export(path: Path) -> tuple[Any, str]:
    """The export as a pandas DataFrame of text (empty cells as None), and its platform's name."""
    import pandas as pd

    platform = platform_of(path)
    head = _head(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig",
                        sep=_delimiter(head.split("\n", 1)[0]))
    if platform == "qualtrics":  # the question texts and import ids (a text may span lines: rows, not lines)
        frame = frame.iloc[2:].reset_index(drop=True)
    return frame.map(lambda v: v if v.strip() else None), platform


def _column(frame: Any, column: str, path: Path, platform: str) -> list[Any]:
    if column not in frame.columns:
        near = [c for c in frame.columns if c.endswith(f".{column}") or column.endswith(f".{c}")]
        hint = f"; did you mean {near}?" if near else f"; columns are {list(frame.columns)}"
        raise CLIError(f"column {column!r} not found in {path} ({platform} export){hint}")
    return list(frame[column])


def field_reports(frame: Any, column: str, mechanism: Any, path: Path, platform: str) -> tuple[list[Any], Any]:
    """The reports (JSON form, wire version 2) in ``column`` of an export, and which rows held one.

    A row whose text is not the embed's, or that was randomized with another
    configuration (its fingerprint), is an error naming its data row.
    """
    cells = _column(frame, column, path, platform)
    try:
        reports, held = from_fields(cells, mechanism)
    except ReportError as exc:
        where = f"row {exc.index + 1} of column {column!r} ({platform} export {path.name})"
        raise CLIError(f"{where}: {exc.reason}") from None
    if not reports:
        raise CLIError(f"column {column!r} of {path} ({platform} export) holds no report")
    return reports, held
