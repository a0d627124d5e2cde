"""Reports as the text of a table column: what ``deniable privatize`` writes, and what
``deniable estimate`` and :mod:`deniable.scale` read back.

A report whose JSON form is a string (a GRR category, the hex of a
unary-encoding bit vector) is stored as that string; a yes/no report
(BinaryRR) as a yes/no word; any other report as its compact JSON (``5``,
``{"seed":1,"value":0}``, ``[0,3]``), exactly the wire forms of
:mod:`deniable.wire`. Reading also accepts JSON-quoted strings (``"A"``), as
in the collection server's exports.

Yes/no words are ``true``/``false``, ``1``/``0`` and ``yes``/``no`` in any
case. A column keeps its own spelling: :func:`yes_no_labels` gives the pair
in the spelling of one of its cells (``Yes`` -> ``("No", "Yes")``), and
:func:`to_text` writes the reports with it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.errors import ReportError
from deniable.wire._codecs import hex_text

__all__ = [
    "YES_WORDS", "NO_WORDS", "parse_yes_no", "yes_no_labels", "plain_reports", "to_text", "from_text",
    "all_json_strings",
]

YES_WORDS = ("true", "1", "yes")
"""Words read as a "yes" in a yes/no column (compared in lower case, spaces stripped)."""
NO_WORDS = ("false", "0", "no")
"""Words read as a "no" in a yes/no column (compared in lower case, spaces stripped)."""


def parse_yes_no(values: NDArray[np.str_]) -> tuple[NDArray[np.bool_], int | None]:
    """The yes/no words as booleans, and the index of the first cell that is none (or None)."""
    low = np.char.lower(np.char.strip(np.asarray(values, dtype=str)))
    yes = np.isin(low, YES_WORDS)
    bad = np.flatnonzero(~(yes | np.isin(low, NO_WORDS)))
    return yes, (int(bad[0]) if bad.size else None)


def yes_no_labels(cell: str) -> tuple[str, str] | None:
    """``(no, yes)`` spelled like ``cell`` (``"Yes"`` -> ``("No", "Yes")``, ``"1"`` -> ``("0", "1")``);
    None for the JSON booleans ``true``/``false`` (the wire form) or a cell that is no yes/no word."""
    word = cell.strip()
    low = word.lower()
    if word in ("true", "false") or low not in YES_WORDS + NO_WORDS:
        return None
    i = (YES_WORDS.index(low) if low in YES_WORDS else NO_WORDS.index(low))
    pair = (NO_WORDS[i], YES_WORDS[i])
    if word.isupper():
        return pair[0].upper(), pair[1].upper()
    if word[:1].isupper():
        return pair[0].title(), pair[1].title()
    return pair


def plain_reports(mechanism: Any) -> bool:
    """Whether every report's JSON form is a string (stored as-is, not JSON-quoted).

    A set-valued (or joint) mechanism reports its inner oracle's categories, the positions of its items
    and dummies: those decide, not its own items.
    """
    if mechanism.report_kind == "bits":
        return True
    reported = getattr(mechanism, "mechanism", mechanism)
    return mechanism.report_kind == "category" and all(isinstance(v, str) for v in reported.domain)


def to_text(
    mechanism: Any, reports: NDArray[Any], labels: tuple[str, str] | None = None
) -> list[str] | NDArray[np.str_]:
    """Reports ``mechanism.privatize_many`` just made, as column text (see the module docstring).

    ``labels`` (``(no, yes)``) spells yes/no reports; without it they are
    ``true``/``false``. The reports are not checked again (the mechanism made
    them): a 1-D array of booleans or numbers converts at once, anything else
    report by report through ``mechanism.report_to_json``.
    """
    if mechanism.report_kind == "bool":  # the column's yes/no words, else the JSON booleans
        no, yes = labels if labels is not None else ("false", "true")
        return np.where(np.asarray(reports, dtype=bool), yes, no)
    plain = plain_reports(mechanism)
    if plain and reports.dtype.kind == "U":
        return reports
    if mechanism.report_kind == "bits" and reports.ndim == 2 and reports.dtype == np.uint8:
        return hex_text(reports)  # bit vectors: their hex at once
    if not plain and reports.ndim == 1 and (reports.dtype.kind in "iu" or (
            reports.dtype == np.float64 and np.isfinite(reports).all())):
        return reports.astype(str)  # numbers at once: each as json.dumps writes it (Python's repr)
    if reports.ndim == 1 and reports.dtype.kind in "biuf":
        items: list[Any] = reports.tolist()
    else:
        items = [mechanism.report_to_json(r) for r in reports]
    if plain:
        return items
    return [json.dumps(x, separators=(",", ":")) for x in items]


def all_json_strings(values: NDArray[np.str_]) -> bool:
    """Whether every cell is a JSON string literal (the server's export quotes them)."""
    return bool(values.size) and bool(
        (np.char.startswith(values, '"') & np.char.endswith(values, '"')).all()
    )


def from_text(mechanism: Any, values: NDArray[np.str_]) -> Any:
    """Parse and validate column text into the mechanism's checked reports.

    Raises :class:`~deniable.errors.ReportError` whose ``index`` is the first
    bad cell and ``reason`` what is wrong with it.
    """
    values = np.asarray(values, dtype=str)
    if mechanism.report_kind == "bool":
        yes, bad = parse_yes_no(values)
        if bad is not None:
            raise ReportError(f"report {str(values[bad])!r} at index {bad} is not a yes/no word", bad,
                              "expected true/false, 1/0 or yes/no")
        return mechanism.reports_from_json(yes.tolist())
    if plain_reports(mechanism) and not all_json_strings(values):
        items: list[Any] = values.tolist()
    else:
        items = []
        for i, text in enumerate(values.tolist()):
            try:
                items.append(json.loads(text))
            except json.JSONDecodeError:
                raise ReportError(f"report {text!r} at index {i} is not valid JSON", i,
                                  "not a report (invalid JSON)") from None
    return mechanism.reports_from_json(items)
