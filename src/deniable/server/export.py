"""Exports of a survey's stored responses, as CSV or Parquet.

One row per stored response: the column :data:`ROW` (the database's
sequential row id, in storage order; not the receipt a device got) and one
column per question holding that response's report as compact JSON text,
exactly as stored. A Parquet export also carries the survey definition
(every mechanism's exact configuration) in its schema metadata under
``deniable.survey``, so it can be decoded without the server. Under
``allocation: sample`` a response holds one report; its other questions'
cells are empty (null in Parquet).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from deniable.server.storage import Storage
from deniable.server.surveys import Survey

__all__ = ["ROW", "SURVEY_METADATA", "csv_chunks", "parquet_bytes"]

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


def parquet_bytes(store: Storage, survey: Survey) -> bytes:
    """The Parquet export (needs pyarrow), the survey definition in its metadata."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [(ROW, pa.int64()), *((q.id, pa.string()) for q in survey.questions)],
        metadata={SURVEY_METADATA: survey.canonical()},
    )
    sink = io.BytesIO()
    with pq.ParquetWriter(sink, schema) as writer:
        for rows in _rows(store, survey):
            columns = list(zip(*rows, strict=True))
            writer.write_table(pa.Table.from_arrays([pa.array(c) for c in columns], schema=schema))
    return sink.getvalue()
