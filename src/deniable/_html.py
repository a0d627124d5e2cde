"""Small HTML tables for notebooks: the ``_repr_html_`` of results (Jupyter shows it instead of the repr).

Every cell is escaped, so a category name cannot inject markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

__all__ = ["table"]


def table(caption: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], note: str = "") -> str:
    """An HTML table: ``caption`` above, one ``<th>`` per header, one ``<tr>`` per row, ``note`` below.

    Floats are shown with 4 decimals (``nan`` as a dash); the first column is
    left-aligned (a label), the others right-aligned (numbers).
    """
    def cell(value: Any) -> str:
        if isinstance(value, float):
            return "&ndash;" if value != value else f"{value:.4f}"
        return escape(str(value))

    head = "".join(f"<th style='text-align:{'left' if i == 0 else 'right'}'>{escape(h)}</th>"
                   for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(f"<td style='text-align:{'left' if i == 0 else 'right'}'>{cell(v)}</td>"
                         for i, v in enumerate(row)) + "</tr>"
        for row in rows
    )
    foot = f"<p style='margin:0.2em 0'><small>{escape(note)}</small></p>" if note else ""
    return (f"<div><table><caption style='text-align:left'>{escape(caption)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{foot}</div>")
