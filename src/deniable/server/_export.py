"""Exports of a survey's stored responses, as CSV or Parquet.

One row per stored response: the column :data:`ROW` (the database's
sequential row id, in storage order; not the receipt a device got) and one
column per question holding that response's report. In CSV each cell is the
report as compact JSON text, exactly as stored. Parquet columns are typed by
what the question's reports are (:func:`column_type`): yes/no reports as
booleans, integers (plain integer questions, integer categories, Hadamard
responses, answers of designs with several answers) as 64-bit integers,
numeric mechanisms' reports as floats, string categories as strings, a
two-group design's reports as a struct ``{group, answer}``, a list experiment's
as a struct ``{treat, count}``; any other
report (bit vectors, hashed or structured reports) as its JSON text. A
Parquet export also carries the survey definition (every mechanism's exact
configuration) in its schema metadata under ``deniable.survey``, so it can
be decoded without the server. Under ``allocation: sample`` a response
holds one report; its other questions' cells are empty (null in Parquet).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from deniable.server._questions import DESIGN, SET, AnyQuestion, ListQuestion
from deniable.server._storage import Storage
from deniable.server._surveys import Survey

__all__ = ["ROW", "SURVEY_METADATA", "csv_chunks", "parquet_bytes", "column_type"]

ROW = "row"
"""Name of the column holding each response's database row id."""

SURVEY_METADATA = "deniable.survey"
"""Parquet schema metadata key of the survey definition (canonical JSON)."""


def _rows(store: Storage, survey: Survey) -> Iterator[list[list[Any]]]:
    """Chunks of ``[row, report JSON per question]`` rows."""
    qids = [q.id for q in survey.questions]
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    for chunk in store.iter_responses(survey.id):
        rows = []
        for row, text in chunk:
            reports = json.loads(text)
            rows.append([row, *(dumps(reports[q]) if q in reports else None for q in qids)])
        yield rows


def csv_chunks(store: Storage, survey: Survey) -> Iterator[str]:
    """The CSV export as text chunks (header first), read from the database chunk by chunk."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([ROW, *(q.id for q in survey.questions)])
    for rows in _rows(store, survey):
        writer.writerows(rows)
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def column_type(question: AnyQuestion) -> str:
    """How a question's reports are typed in Parquet.

    ``"bool"``, ``"int"``, ``"float"``, ``"string"``, ``"group-answer"`` (a
    two-group design's struct), ``"treat-count"`` (a list experiment's struct)
    or ``"json"`` (the report's JSON text).
    """
    if isinstance(question, ListQuestion):
        return "treat-count"
    if not question.randomized:
        return "int" if question.type == "integer" else _values_type(question.categories)
    if question.kind == DESIGN:
        return "group-answer" if question.design.groups > 1 else "bool"
    # a choose-several question reports its oracle's on the options and dummies (positions)
    oracle = question.mechanism.mechanism if question.kind == SET else question.mechanism
    kind = getattr(oracle, "report_kind", None)
    if kind in ("bool", "int", "float"):
        return str(kind)
    if kind == "bit":  # 1BitMean: the bit as the number 0.0 or 1.0, as on the wire
        return "float"
    if kind == "category":
        return _values_type(oracle.domain)
    return "json"


def _values_type(values: Any) -> str:
    """The column type of categories: all booleans, all integers, all strings, else JSON text."""
    values = list(values)
    for name, kinds in (("bool", (bool,)), ("int", (int,)), ("string", (str,))):
        if all(type(v) in kinds for v in values):
            return name
    return "json"


def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    return {
        "bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "string": pa.string(),
        "json": pa.string(), "group-answer": pa.struct([("group", pa.int64()), ("answer", pa.bool_())]),
        "treat-count": pa.struct([("treat", pa.int64()), ("count", pa.int64())]),
    }[kind]


def _typed(text: str | None, kind: str) -> Any:
    """A stored report's JSON text as the value of its typed column."""
    if text is None or kind == "json":
        return text
    value = json.loads(text)
    return float(value) if kind == "float" else value


def parquet_bytes(store: Storage, survey: Survey) -> bytes:
    """The Parquet export (needs pyarrow), typed columns, the survey definition in its metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kinds = [column_type(q) for q in survey.questions]
    schema = pa.schema(
        [(ROW, pa.int64()), *((q.id, _arrow_type(k)) for q, k in zip(survey.questions, kinds, strict=True))],
        metadata={SURVEY_METADATA: survey.canonical()},
    )
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, schema) as writer:
        for rows in _rows(store, survey):
            if not rows:
                continue
            row_ids, *cells = zip(*rows, strict=True)
            arrays = [pa.array(row_ids, pa.int64())] + [
                pa.array([_typed(c, kind) for c in column], _arrow_type(kind))
                for column, kind in zip(cells, kinds, strict=True)
            ]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
    return sink.getvalue()
