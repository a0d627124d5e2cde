"""Writing a privatized file: the input's rows with one column replaced by report text, CSV or Parquet."""

from __future__ import annotations

import csv as pycsv
import io
import os
from pathlib import Path
from typing import Any

from deniable.cli._common import CLIError

__all__ = ["ColumnWriter", "file_kind"]


def file_kind(path: Path) -> str:
    """``"csv"`` or ``"parquet"`` from the file name."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise CLIError(f"{str(path)!r}: expected a .csv or .parquet file")


class ColumnWriter:
    """Write chunks with one column replaced by report text, in the input's format.

    Rows go to a hidden ``.partial`` file beside ``path``, renamed to
    ``path`` by :meth:`commit`; :meth:`discard` removes it, so a run that
    fails half-way never leaves a truncated output behind.
    """

    def __init__(self, path: Path, kind: str, column: str) -> None:
        if file_kind(path) != kind:
            raise CLIError(f"output {str(path)!r} must be a .{kind} file like the input")
        self.path, self.kind, self.column = path, kind, column
        path.parent.mkdir(parents=True, exist_ok=True)
        self.partial = path.with_name(f".{path.name}.partial")
        self._writer: Any = None

    def write(self, chunk: Any, text: Any) -> None:
        """Write ``chunk`` (a :class:`~deniable.cli._data.Chunk`) with the column replaced by ``text`` (a list,
        numpy text or an Arrow string array)."""
        import pyarrow as pa

        table = chunk.block
        if not isinstance(text, pa.Array):
            text = pa.array(text, pa.string())  # from numpy text: no objects
        table = table.set_column(table.schema.names.index(self.column), self.column, text)
        if self.kind == "csv":
            self._write_csv(table)
            return
        import pyarrow.parquet as pq

        if self._writer is None:
            self._writer = pq.ParquetWriter(self.partial, table.schema)
        self._writer.write_table(table)

    def _write_csv(self, table: Any) -> None:
        """Append the rows (the header first), quoting only the cells that need it."""
        import pyarrow as pa
        from pyarrow import csv

        if self._writer is None:
            self._writer = open(self.partial, "wb")  # noqa: SIM115 - closed by commit or discard
            self._writer.write(_csv_text([table.schema.names]))
        sink = pa.BufferOutputStream()
        try:  # no cell needs quotes: Arrow writes them as they are
            csv.write_csv(table, sink, csv.WriteOptions(include_header=False, quoting_style="none"))
        except pa.ArrowInvalid:  # a delimiter, quote or line break in a cell, or bytes that are not UTF-8
            self._writer.write(_csv_text(zip(*(_column_text(c) for c in table.columns), strict=True)))
        else:
            self._writer.write(sink.getvalue())

    def _close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def commit(self) -> None:
        """Finish the file and move it to ``path``."""
        self._close()
        os.replace(self.partial, self.path)

    def discard(self) -> None:
        """Drop whatever was written."""
        self._close()
        self.partial.unlink(missing_ok=True)


def _csv_text(rows: Any) -> bytes:
    """Rows as Python's csv module writes them (quotes only where needed, as pandas' ``to_csv``), in UTF-8
    with any bytes that were not UTF-8 as they were."""
    buffer = io.StringIO()
    pycsv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode("utf-8", "surrogateescape")


def _column_text(column: Any) -> list[str]:
    """An Arrow column as Python strings (bytes decoded, those that are not UTF-8 as surrogate escapes)."""
    cells = column.to_pylist()
    return [c.decode("utf-8", "surrogateescape") if isinstance(c, bytes) else c for c in cells]
