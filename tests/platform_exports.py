"""Survey platforms' CSV exports, written as each platform documents its layout (test fixtures).

``write_export(platform, path, fields)`` writes one response per row with the
platform's own columns around ``fields`` ({column: cells}; ``None`` is an
empty cell, a respondent who did not reach the question):

* qualtrics: Qualtrics's "Export data" CSV -- three header rows (the column
  names; each column's question text or label; its import id as JSON,
  ``{"ImportId":"QID1"}``, ``{"ImportId":"startDate","timeZone":...}``), the
  metadata columns first (StartDate ... UserLanguage), a question's text
  spanning two lines, UTF-8 with a byte-order mark;
* limesurvey: LimeSurvey's "Export results" CSV with question codes as
  headings -- ``id, submitdate, lastpage, startlanguage, seed, ...``, every
  field quoted, separated by ``sep`` (comma by default; semicolon offered);
* redcap: REDCap's "CSV / Microsoft Excel (raw data)" -- ``record_id``,
  ``redcap_survey_identifier``, ``<form>_timestamp``, the fields,
  ``<form>_complete`` (0, 1 or 2);
* otree: oTree's "All apps - wide" CSV -- ``participant.*`` and ``session.*``
  columns, then ``<app>.<round>.player.<field>`` (``column`` names the
  field; the player's built-in fields around it).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

PLATFORMS = ("qualtrics", "limesurvey", "redcap", "otree")

OTREE_APP = "deniable_rr"


def column_name(platform: str, field: str) -> str:
    """The export's name of a host field called ``field``."""
    return f"{OTREE_APP}.1.player.{field}" if platform == "otree" else field


def _cell(v: Any) -> str:
    return "" if v is None else str(v)


def write_export(platform: str, path: Path, fields: dict[str, list[Any]], *, sep: str = ",") -> None:
    """Write ``fields`` (equal-length columns) as ``platform``'s CSV export at ``path``."""
    n = len(next(iter(fields.values())))
    buffer = io.StringIO()
    quoting = csv.QUOTE_ALL if platform == "limesurvey" else csv.QUOTE_MINIMAL
    w = csv.writer(buffer, delimiter=sep, quoting=quoting, lineterminator="\r\n")
    names = list(fields)
    if platform == "qualtrics":
        meta = ["StartDate", "EndDate", "Status", "IPAddress", "Progress", "Duration (in seconds)", "Finished",
                "RecordedDate", "ResponseId", "DistributionChannel", "UserLanguage"]
        labels = ["Start Date", "End Date", "Response Type", "IP Address", "Progress", "Duration (in seconds)",
                  "Finished", "Recorded Date", "Response ID", "Distribution Channel", "User Language"]
        ids = ['{"ImportId":"startDate","timeZone":"America/Denver"}',
               '{"ImportId":"endDate","timeZone":"America/Denver"}',
               '{"ImportId":"status"}', '{"ImportId":"ipAddress"}', '{"ImportId":"progress"}',
               '{"ImportId":"duration"}', '{"ImportId":"finished"}',
               '{"ImportId":"recordedDate","timeZone":"America/Denver"}', '{"ImportId":"_recordId"}',
               '{"ImportId":"distributionChannel"}', '{"ImportId":"userLanguage"}']
        w.writerow(["Q1", *meta, *names])  # the question shown before the embedded data set by its script
        w.writerow(["Have you ever, during an exam,\nused notes you were not allowed? (answered on the device)",
                    *labels, *names])
        w.writerow(['{"ImportId":"QID1"}', *ids,
                    *(json.dumps({"ImportId": name}, separators=(",", ":")) for name in names)])
        for i in range(n):
            w.writerow(["", f"2026-11-2{i % 7} 10:00:00", f"2026-11-2{i % 7} 10:03:00", "0", "", "100",
                        str(180 + i % 50),
                        "True", f"2026-11-2{i % 7} 10:03:00", f"R_{i:015d}", "anonymous", "EN",
                        *(_cell(fields[name][i]) for name in names)])
        path.write_text("\ufeff" + buffer.getvalue(), encoding="utf-8")
        return
    if platform == "limesurvey":
        w.writerow(["id", "submitdate", "lastpage", "startlanguage", "seed", "startdate", "datestamp", *names])
        for i in range(n):
            w.writerow([str(i + 1), f"2026-11-27 10:{i % 60:02d}:00", "1", "en", str(1000 + i),
                        "2026-11-27 10:00:00", f"2026-11-27 10:{i % 60:02d}:00",
                        *(_cell(fields[name][i]) for name in names)])
        path.write_text("\ufeff" + buffer.getvalue(), encoding="utf-8")
        return
    if platform == "redcap":
        w.writerow(["record_id", "redcap_survey_identifier", "deniable_timestamp", *names, "deniable_complete"])
        for i in range(n):
            w.writerow([str(i + 1), "", f"2026-11-27 10:{i % 60:02d}:00",
                        *(_cell(fields[name][i]) for name in names), "2"])
        path.write_text(buffer.getvalue(), encoding="utf-8")
        return
    if platform == "otree":
        player = [f"{OTREE_APP}.1.player.{name}" for name in names]
        w.writerow(["participant.id_in_session", "participant.code", "participant.label", "participant._is_bot",
                    "participant._index_in_pages", "participant._max_page_index", "participant._current_app_name",
                    "participant.visited", "participant.payoff", "session.code", "session.label",
                    f"{OTREE_APP}.1.player.id_in_group", f"{OTREE_APP}.1.player.role", f"{OTREE_APP}.1.player.payoff",
                    *player, f"{OTREE_APP}.1.group.id_in_subsession", f"{OTREE_APP}.1.subsession.round_number"])
        for i in range(n):
            w.writerow([str(i + 1), f"p{i:07x}", "", "0", "2", "2", OTREE_APP, "1", "0.0", "s3ss10n", "",
                        "1", "", "0.0", *(_cell(fields[name][i]) for name in names), str(i + 1), "1"])
        path.write_text(buffer.getvalue(), encoding="utf-8")
        return
    raise ValueError(f"platform must be one of {PLATFORMS}; got {platform!r}")


def otree_command() -> str:
    """The ``otree`` command: DENIABLE_OTREE, else ``otree`` on PATH; the test skips, saying so, without it.

    oTree pins old Starlette, SQLAlchemy and Click, so it lives in an environment of its own.
    """
    found = os.environ.get("DENIABLE_OTREE") or shutil.which("otree")
    if not found:
        pytest.skip("oTree is not installed: set DENIABLE_OTREE to an otree command (pip install otree requests "
                    "in an environment of its own)")
    return found
