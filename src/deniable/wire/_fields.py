"""Reports kept in a survey platform's own field: the text the embeddable client writes.

``deniable-embed.js`` in local mode randomizes on the respondent's device and
writes one JSON text into the host platform's field (Qualtrics embedded data, a
LimeSurvey or REDCap hidden question, an oTree form field)::

    {"format":"deniable.report","version":1,"fingerprint":"18f59630de152da6","report":true}

``report`` is the report in wire version 2 (wide integers as decimal
strings) and ``fingerprint`` the configuration's (``m.fingerprint``), so that
rows randomized with another configuration (an edited question, a pasted
config from another study) are refused rather than silently mixed in.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import ReportError

__all__ = ["REPORT_FORMAT", "REPORT_VERSION", "to_field", "from_fields"]

REPORT_FORMAT = "deniable.report"
"""The ``format`` of a field's text."""
REPORT_VERSION = 1
"""The version of a field's text this reader writes and reads."""


def to_field(mechanism: Any, report: Any) -> str:
    """The text the embed writes for one report (JSON form, wire version 2) of ``mechanism``."""
    return json.dumps({"format": REPORT_FORMAT, "version": REPORT_VERSION, "fingerprint": mechanism.fingerprint,
                       "report": report}, separators=(",", ":"))


def _empty(cell: Any) -> bool:
    return cell is None or isinstance(cell, float) and math.isnan(cell) or isinstance(cell, str) and not cell.strip()


def from_fields(cells: Iterable[Any], mechanism: Any) -> tuple[list[Any], NDArray[np.bool_]]:
    """The reports (JSON form, wire version 2) in a platform's field texts, and which cells held one.

    An empty cell (a respondent who did not reach the question) is left out.
    Every other cell must be the embed's text with ``mechanism``'s fingerprint;
    otherwise :class:`~deniable.errors.ReportError` with ``index`` the cell's
    position says what is wrong. The reports themselves are checked by the
    mechanism's reader (``reports_from_json(reports, wire_version=2)``).
    """
    reports: list[Any] = []
    held = []
    expected = mechanism.fingerprint
    for i, cell in enumerate(cells):
        if _empty(cell):
            held.append(False)
            continue
        try:
            data = json.loads(cell) if isinstance(cell, str) else cell
        except json.JSONDecodeError:
            data = None
        if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT or data.get("version") != REPORT_VERSION:
            text = str(cell)
            shown = text if len(text) <= 60 else text[:57] + "..."
            raise ReportError(f"cell {i}: {shown!r} is not a report of deniable-embed", i,
                              f"{shown!r} is not the text deniable-embed writes "
                              f'({{"format":"{REPORT_FORMAT}","version":{REPORT_VERSION},...}})')
        if data.get("fingerprint") != expected or "report" not in data:
            reason = (f"was randomized with the configuration of fingerprint {data.get('fingerprint')!r}, not "
                      f"{expected!r} (this analysis's {mechanism!r})")
            raise ReportError(f"cell {i} {reason}", i, reason)
        reports.append(data["report"])
        held.append(True)
    return reports, np.array(held, dtype=bool)
