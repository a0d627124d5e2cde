"""``deniable privatize/estimate --mechanism heavy-hitters``: a free-text column, discovered.

Device side (:func:`build`, :func:`check_values`, :func:`reports_text`): each
value of the column becomes one :class:`~deniable.HeavyHitters` report made
with the OS CSPRNG, stored as its compact JSON wire form
(:meth:`~deniable.HeavyHitters.reports_to_json`) in the column, with the
configuration (:meth:`~deniable.HeavyHitters.to_config`) beside the file as
for every other mechanism. A value must be valid UTF-8, not empty, and at
most ``--max-length`` bytes long; ``--truncate`` instead applies the
HeavyHitters rule to longer values (cut after the last whole character that
fits, found as that prefix and flagged ``truncated``).

Server side (:func:`aggregate_file`, :func:`show_discovery`): the reports
are merged chunk by chunk into a :class:`~deniable.HeavyStat`, and
:meth:`~deniable.HeavyHitters.identify` names the discovered values with
their counts, standard errors and confidence intervals.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rich.table import Table

from deniable.cli._common import CLIError, out
from deniable.cli._data import Chunk, ColumnReader, row_error
from deniable.cli._output import print_json
from deniable.errors import ReportError
from deniable.heavy import Discovery, HeavyHitters, HeavyStat
from deniable.heavy._hitters import CONFIG_FORMAT
from deniable.heavy._protocols import PROTOCOLS

__all__ = ["NAME", "CONFIG_FORMAT", "build", "check_values", "reports_text", "aggregate_file", "show_discovery"]

NAME = "heavy-hitters"
"""What ``--mechanism`` calls discovery of frequent values."""


def build(epsilon: float, max_length: int | None, method: str | None, top_k: int | None) -> HeavyHitters:
    """The HeavyHitters of the command-line options (its sketch's seed from the OS CSPRNG)."""
    if max_length is None:
        raise CLIError(f"--mechanism {NAME} needs --max-length (the most UTF-8 bytes of a value, 1..254)")
    if not 1 <= max_length <= 254:
        raise CLIError(f"--max-length must be in 1..254 (bytes of UTF-8); got {max_length}")
    if top_k is not None and not 1 <= top_k <= 4096:
        raise CLIError(f"--top-k must be in 1..4096; got {top_k}")
    if method is not None and method.lower() not in PROTOCOLS:
        raise CLIError(f"--method must be one of {', '.join(PROTOCOLS)}; got {method!r}")
    return HeavyHitters(epsilon=epsilon, method=method.lower() if method else None, max_length=max_length,
                        top_k=32 if top_k is None else top_k)


def check_values(chunk: Chunk, column: str, max_length: int, truncate: bool) -> None:
    """Refuse the first empty, non-UTF-8 or (without ``truncate``) over-long value, naming its row.

    Checks each distinct value of the chunk once.
    """
    distinct, first = np.unique(chunk.values, return_index=True)
    bad: list[tuple[int, str]] = []
    for value, row in zip(distinct.tolist(), first.tolist(), strict=True):
        if value == "":
            bad.append((row, "empty value (drop missing answers first)"))
            continue
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            try:  # the bytes as read (CSV and Parquet binary cells keep them as surrogate escapes)
                shown = repr(value.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:
                shown = ascii(value)
            bad.append((row, f"value {shown:.60} is not valid UTF-8"))
            continue
        if size > max_length and not truncate:
            bad.append((row, f"value {value!r:.60} is {size} bytes of UTF-8, longer than --max-length "
                             f"{max_length} (raise --max-length, or pass --truncate to cut such values after "
                             "their last whole character that fits: they are found as that prefix, "
                             "flagged truncated)"))
    if bad:
        row, what = min(bad)
        raise row_error(chunk, row, column, what)


def reports_text(hh: HeavyHitters, reports: NDArray[Any]) -> list[str]:
    """The reports' compact JSON wire form, one string per report."""
    return [json.dumps(r, separators=(",", ":")) for r in hh.reports_to_json(reports)]


def _parse(hh: HeavyHitters, chunk: Chunk, column: str) -> NDArray[Any]:
    items = []
    for i, text in enumerate(chunk.values.tolist()):
        try:
            items.append(json.loads(text))
        except json.JSONDecodeError:
            raise row_error(chunk, i, column, f"report {text!r:.60} rejected: not a report (invalid JSON)") from None
    try:
        return hh.reports_from_json(items)
    except ReportError as exc:
        i = exc.index
        raise row_error(chunk, i, column,
                        f"report {str(chunk.values[i])!r:.60} rejected: {exc.reason}") from None


def aggregate_file(hh: HeavyHitters, reader: ColumnReader, on_chunk: Any = None) -> HeavyStat | None:
    """The aggregate of every report in the column (None for no reports), merged chunk by chunk."""
    total: HeavyStat | None = None
    for chunk in reader:
        if chunk.values.size:
            stat = hh.aggregate(_parse(hh, chunk, reader.column))
            total = stat if total is None else total + stat
        if on_chunk is not None:
            on_chunk()
    return total


def records(found: Discovery) -> list[dict[str, Any]]:
    """One JSON-ready dict per discovered value."""
    return [
        {"value": v, "count": float(found.counts[i]), "std_error": float(found.std_errors[i]),
         "ci_low": float(found.ci_low[i]), "ci_high": float(found.ci_high[i]), "truncated": bool(found.truncated[i])}
        for i, v in enumerate(found.values)
    ]


def show_discovery(hh: HeavyHitters, found: Discovery, *, threshold: float | None, as_json: bool,
                   as_csv: bool) -> None:
    """Print the discovered values as a table, JSON or CSV (on stdout)."""
    rule = (f"estimated count at least {threshold:g}" if threshold is not None
            else "count significantly above 0 (one-sided 5%, Bonferroni over the candidates)")
    if as_json:
        print_json({"mechanism": "HeavyHitters", "method": hh.method, "epsilon": hh.epsilon, "n": found.n,
                    "max_length": hh.max_length, "top_k": hh.top_k, "level": found.level, "kept": rule,
                    "values": records(found)})
        return
    if as_csv:
        found.to_frame().to_csv(sys.stdout, index=False, lineterminator="\n")
        return
    table = Table(
        title=f"HeavyHitters ({hh.method}), epsilon = {hh.epsilon:.4g}, n = {found.n:,}: "
              f"{len(found)} value(s) found",
        title_justify="left", caption_justify="left",
        caption=f"kept: {rule}\ntruncated: a value cut at {hh.max_length} bytes (privatize --truncate)",
    )
    for header in ("value", "count", "std. error", f"{found.level:.0%} interval low", "interval high",
                   "truncated"):
        table.add_column(header, justify="left" if header in ("value", "truncated") else "right")
    for r in records(found):
        table.add_row(r["value"], f"{r['count']:,.0f}", f"{r['std_error']:,.0f}", f"{r['ci_low']:,.0f}",
                      f"{r['ci_high']:,.0f}", "yes" if r["truncated"] else "")
    out.print(table, markup=False)


def check_identify(top: int | None, threshold: float | None) -> None:
    """``--top`` is a positive integer, ``--threshold`` a finite count >= 0."""
    if top is not None and top < 1:
        raise CLIError(f"--top must be at least 1; got {top}")
    if threshold is not None and not (math.isfinite(threshold) and threshold >= 0):
        raise CLIError(f"--threshold must be a finite count >= 0; got {threshold!r}")
