"""Streaming CSV / Parquet columns for ``deniable privatize`` and ``deniable estimate``.

Files are read in chunks (pyarrow's streaming CSV reader, Parquet
``iter_batches``), so 10^7 rows never sit in memory at once. The privatized
column is stored as text (:func:`deniable.wire.to_text`); a CSV is written
back by pyarrow, with a chunk whose cells need quotes (or hold bytes that are
not UTF-8) written by Python's :mod:`csv` module instead: either way the
cells are quoted only where needed, as pandas and :mod:`csv` write them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable.cli._common import CLIError
from deniable.cli._writer import ColumnWriter, file_kind
from deniable.errors import CategoryError, ReportError
from deniable.heavy import HeavyHitters
from deniable.heavy._hitters import CONFIG_FORMAT as DISCOVERY_FORMAT
from deniable.wire import from_config
from deniable.wire._arrow import (
    aggregate_codes,
    csv_convert_options,
    csv_parse_options,
    distinct_codes,
    reports_from_codes,
)
from deniable.wire._codecs import hex_ascii
from deniable.wire._text import from_text, parse_yes_no, plain_reports
from deniable.wire._text import to_text as reports_to_text

__all__ = [
    "Chunk",
    "ColumnReader",
    "ColumnWriter",
    "file_kind",
    "data_file",
    "config_path",
    "load_mechanism",
    "survey_question",
    "discover_categories",
    "parse_binary",
    "parse_numbers",
    "category_error",
    "category_positions",
    "category_text",
    "report_column",
    "positional",
    "row_error",
    "plain_reports",
    "reports_to_text",
    "reports_from_text",
    "aggregate_file",
]


def data_file(path: Path) -> str:
    """The kind (``"csv"`` or ``"parquet"``) of an input file that exists and is not empty;
    else a CLIError naming the file."""
    kind = file_kind(path)
    if not path.is_file():
        raise CLIError(f"no such file: {path}")
    if path.stat().st_size == 0 or (kind == "csv" and not _head(path).strip()):
        expected = ("a header row naming the columns, then one row per answer" if kind == "csv"
                    else "a Parquet file")
        raise CLIError(f"{path} is empty: expected {expected}")
    return kind


def _head(path: Path) -> bytes:
    """The first 4 KiB of a file (not the whole file)."""
    with open(path, "rb") as handle:
        return handle.read(4096)


def config_path(data: Path) -> Path:
    """Where the mechanism config of a privatized file lives: ``<file>.deniable.json``."""
    return data.with_name(data.name + ".deniable.json")


def _question(survey: Any, column: str, source: str) -> dict[str, Any]:
    questions = survey.get("questions") if isinstance(survey, dict) else None
    if not isinstance(questions, list):
        raise CLIError(f"{source} is neither a mechanism config nor a survey with questions")
    for q in questions:
        if isinstance(q, dict) and q.get("id") == column:
            if not isinstance(q.get("mechanism"), dict):
                raise CLIError(
                    f"question {column!r} in {source} names its mechanism without the exact "
                    "config; use the survey as the server publishes it (GET /surveys/ID)"
                )
            return q
    ids = [q.get("id") for q in questions if isinstance(q, dict)]
    raise CLIError(f"{source} has no question {column!r} (questions: {ids})")


def load_mechanism(data: Path, column: str, config: Path | None) -> Any:
    """The mechanism that made the reports in ``column`` of ``data``; a survey design's answers are
    refused with the ``deniable analyze`` command that estimates them."""
    mechanism = _load_mechanism(data, column, config)
    if getattr(mechanism, "wire_id", None) == "rr-design":
        model = mechanism.model
        p = ",".join(mechanism.to_config()["params"]["p"])
        group = " --group GROUP_COLUMN" if mechanism.groups > 1 else ""
        raise CLIError(
            f"column {column!r} holds answers to a survey design ({model}), not reports of a frequency oracle: "
            f"estimate its prevalence with `deniable analyze {data} --design {model} --p {p} --response {column}"
            f"{group}`"
        )
    return mechanism


def _source(data: Path, column: str, config: Path | None) -> tuple[Any, str]:
    """What describes ``column`` of ``data`` (a mechanism or discovery config, or a survey) and where it was read.

    From ``config`` (a mechanism config, or a survey JSON as served by
    ``GET /surveys/ID``), else from ``DATA.deniable.json`` beside the file,
    else from the survey definition a server's Parquet export carries in its metadata.
    """
    if config is None:
        beside = config_path(data)
        if beside.is_file():
            config = beside
        elif file_kind(data) == "parquet" and data.is_file():
            import pyarrow.parquet as pq

            metadata = pq.read_schema(data).metadata or {}
            survey = metadata.get(b"deniable.survey")
            if survey is not None:
                return json.loads(survey), f"{data.name} metadata"
    if config is None or not config.is_file():
        raise CLIError(f"mechanism config {config or config_path(data)} not found; pass --config")
    try:
        return json.loads(config.read_text()), str(config)
    except json.JSONDecodeError as exc:
        raise CLIError(f"{config} is not valid JSON: {exc}") from None


def _is_survey(obj: Any) -> bool:
    return isinstance(obj, dict) and "questions" in obj and "format" not in obj


def _load_mechanism(data: Path, column: str, config: Path | None) -> Any:
    """The mechanism that made the reports in ``column`` of ``data`` (:func:`_source`; of a survey, its
    question ``column``). A discovery config (``"format": "deniable.discovery"``) gives a
    :class:`~deniable.HeavyHitters`."""
    obj, source = _source(data, column, config)
    if _is_survey(obj):
        return from_config(_question(obj, column, source)["mechanism"])
    if isinstance(obj, dict) and obj.get("format") == DISCOVERY_FORMAT:
        return HeavyHitters.from_config(obj)
    return from_config(obj)


def survey_question(data: Path, column: str, config: Path | None) -> dict[str, Any] | None:
    """The survey's question ``column`` where a survey describes the file (:func:`_source`), else ``None``."""
    obj, source = _source(data, column, config)
    return _question(obj, column, source) if _is_survey(obj) else None


class Chunk:
    """One block of rows: the block itself, its first row number, and the column as text.

    ``block`` is a pyarrow Table (a CSV's cells as bytes); ``first_row`` the 1-based data
    row number of its first row. Arrow columns come as ``codes`` into their ``distinct``
    values (Arrow's dictionary): ``values`` (numpy text, one cell per row) is made from them
    only when asked for, and :func:`category_positions` encodes the distinct values alone.
    """

    def __init__(self, block: Any, first_row: int, is_csv: bool, *, values: NDArray[np.str_] | None = None,
                 distinct: NDArray[np.str_] | None = None, codes: NDArray[np.integer] | None = None) -> None:
        self.block, self.first_row, self.is_csv = block, first_row, is_csv
        self._values, self.distinct, self.codes = values, distinct, codes

    @property
    def values(self) -> NDArray[np.str_]:
        if self._values is None:
            assert self.distinct is not None and self.codes is not None
            self._values = self.distinct[self.codes] if self.codes.size else np.zeros(0, dtype=str)
        return self._values

    def __len__(self) -> int:
        return len(self.codes) if self.codes is not None else len(self.values)

    def first(self) -> str | None:
        """The first row's cell (None if the chunk has no rows), without making the others' text."""
        if not len(self):
            return None
        if self.codes is not None and self.distinct is not None:
            return str(self.distinct[self.codes[0]])
        return str(self.values[0])


class ColumnReader:
    """Iterate a CSV or Parquet file in chunks, exposing one column as strings.

    ``progress_total`` / ``position()`` measure progress in ``progress_unit``
    (bytes for CSV, rows for Parquet). Every column of a CSV is read as bytes, so the other
    columns are written back verbatim; with ``only_column`` (for reading reports) the
    other columns are not read at all (a chunk's ``block`` holds the column alone).
    """

    def __init__(self, path: Path, column: str, chunk_size: int, *, only_column: bool = False) -> None:
        if chunk_size < 1:
            raise CLIError(f"--chunk-size must be positive; got {chunk_size}")
        self.path, self.column, self.chunk_size = path, column, chunk_size
        self.only_column = only_column
        self.kind = data_file(path)
        self._handle: Any = None
        self._read = 0
        self.first_value = ""  # the column's first cell, once iterated
        if self.kind == "csv":
            with self._arrow_errors():
                from pyarrow import csv

                with csv.open_csv(path, parse_options=csv_parse_options()) as header:
                    self._names = header.schema.names
            self._check_column(self._names)
            self.progress_total = os.path.getsize(path)
            self.progress_unit = "bytes"
        else:
            import pyarrow.parquet as pq

            names = pq.read_schema(path).names
            self._check_column(names)
            # the column comes as Arrow's dictionary of its distinct values (no string per row)
            self._parquet = pq.ParquetFile(path, read_dictionary=[column])
            self.progress_total = self._parquet.metadata.num_rows
            self.progress_unit = "rows"

    def _check_column(self, names: list[str]) -> None:
        if self.column not in names:
            raise CLIError(
                f"column {self.column!r} not found in {self.path}; columns are {names}"
            )

    def position(self) -> int:
        if self.kind == "csv":
            return self._handle.tell() if self._handle and not self._handle.closed else self.progress_total
        return self._read

    def __iter__(self) -> Iterator[Chunk]:
        for chunk in self._chunks():
            if chunk.first_row == 1 and (first := chunk.first()) is not None:
                self.first_value = first
            yield chunk

    def _csv_batches(self, options: Any) -> Iterator[Any]:
        """The CSV's record batches, read from the open handle; a row that Arrow cannot read (more or
        fewer fields than the header) is an error naming the file and that row's text."""
        from pyarrow import csv

        with self._arrow_errors():
            reader = csv.open_csv(self._handle, read_options=csv.ReadOptions(block_size=1 << 23),
                                  parse_options=csv_parse_options(), convert_options=options)
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                yield batch

    @contextmanager
    def _arrow_errors(self) -> Iterator[None]:
        """Arrow's refusal of the file (a row with more or fewer fields than the header: Arrow quotes
        its text) as an error naming the file."""
        import pyarrow as pa

        try:
            yield
        except pa.ArrowInvalid as exc:
            raise CLIError(f"{self.path}: {exc}") from None

    def _chunks(self) -> Iterator[Chunk]:
        row = 1
        self._read = 0
        if self.kind == "csv":
            import pyarrow as pa

            others = () if self.only_column else [name for name in self._names if name != self.column]
            options = csv_convert_options(self.column, others)
            at = self._names.index(self.column) if others else 0
            with pa.OSFile(str(self.path)) as self._handle:  # Arrow's dictionary of the distinct values, as it reads
                for batch in self._csv_batches(options):
                    for start in range(0, batch.num_rows, self.chunk_size):
                        part = pa.Table.from_batches([batch.slice(start, self.chunk_size)])
                        distinct, codes = distinct_codes(part.column(at))
                        yield Chunk(part, row, True, distinct=distinct, codes=codes)
                        row += part.num_rows
        else:
            import pyarrow as pa

            columns = [self.column] if self.only_column else None
            for batch in self._parquet.iter_batches(batch_size=self.chunk_size, columns=columns):
                table = pa.Table.from_batches([batch])
                self._read += table.num_rows
                distinct, codes = distinct_codes(table.column(self.column))
                yield Chunk(table, row, False, distinct=distinct, codes=codes)
                row += table.num_rows


# ---------------------------------------------------------------- values in
def row_error(chunk: Chunk, i: int, column: str, what: str) -> CLIError:
    """The error naming row ``i`` of the chunk; a value that is not UTF-8 is named as that, whatever
    else is wrong with it (its bytes arrive as surrogate escapes, never equal to a category)."""
    row = chunk.first_row + i
    line = f" (line {row + 1} of the file)" if chunk.is_csv else ""
    value = str(chunk.values[i]) if i < len(chunk.values) else ""
    if _not_utf8(value):
        raw = value.encode("utf-8", "surrogateescape")
        what = (f"value {raw!r} is not valid UTF-8 (the file may be Latin-1 or Windows-1252: save it as UTF-8, "
                "e.g. iconv -f latin1 -t utf-8)")
    return CLIError(f"row {row}{line}: {what} in column {column!r}")


def _not_utf8(text: str) -> bool:
    """Whether the text holds bytes that were not UTF-8 (read as surrogate escapes)."""
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def discover_categories(reader: ColumnReader, on_chunk: Any = None) -> list[str]:
    """The distinct values of the column, by one streaming pass.

    Sorted numerically when every value is a number, else alphabetically.
    Empty values are rejected (a missing answer is not a category).
    """
    seen: set[str] = set()
    for chunk in reader:
        cells, rows = _used_cells(chunk) or (np.unique(chunk.values, return_inverse=True))
        first = {value: int(np.flatnonzero(rows == i)[0]) for i, value in enumerate(cells.tolist())
                 if value == "" or _not_utf8(value)}
        if first:
            row = min(first.values())  # an empty value, or one that is not UTF-8 (named as such)
            raise row_error(chunk, row, reader.column,
                            "empty value (drop missing answers first)" if chunk.values[row] == "" else "")
        seen.update(cells.tolist())
        if on_chunk is not None:
            on_chunk()
    try:
        return sorted(seen, key=float)
    except ValueError:
        return sorted(seen)


def _used_cells(chunk: Chunk) -> tuple[NDArray[np.str_], NDArray[np.intp]] | None:
    """The distinct cells some row of the chunk uses and each row's place among them (None without
    distinct cells): a chunk of a batch may not use the batch's whole dictionary."""
    distinct, codes = chunk.distinct, chunk.codes
    if distinct is None or codes is None or not codes.size:
        return None
    used = np.flatnonzero(np.bincount(codes, minlength=distinct.size))
    slot = np.zeros(distinct.size, dtype=np.intp)
    slot[used] = np.arange(used.size)
    return distinct[used], slot[codes]


def parse_numbers(chunk: Chunk, column: str) -> NDArray[np.float64]:
    """The values as finite numbers (each distinct cell parsed once); the error names the first row that
    is not one."""
    if (taken := _used_cells(chunk)) is not None:
        cells, rows = taken
        try:
            parsed = cells.astype(np.float64)
            if np.isfinite(parsed).all():
                return parsed[rows]
        except ValueError:  # a cell is no number: the rows below name the first
            pass
    try:
        out: NDArray[np.float64] = chunk.values.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(out))
    except ValueError:  # error path only: find the row
        bad = np.array([i for i, cell in enumerate(chunk.values.tolist()) if not _is_number(cell)])
    if bad.size:
        raise row_error(chunk, int(bad[0]), column,
                         f"value {str(chunk.values[bad[0]])!r} is not a finite number")
    return out


def _is_number(text: str) -> bool:
    try:
        return bool(np.isfinite(float(text)))
    except ValueError:
        return False


def parse_binary(chunk: Chunk, column: str) -> NDArray[np.bool_]:
    """Yes/no values (true/false, 1/0, yes/no, any case) as booleans (each distinct cell parsed once)."""
    if (taken := _used_cells(chunk)) is not None:
        cells, rows = taken
        yes, bad = parse_yes_no(cells)
        if bad is None:
            return yes[rows]
    yes, bad = parse_yes_no(chunk.values)
    if bad is not None:
        raise row_error(chunk, bad, column,
                         f"value {str(chunk.values[bad])!r} is not a yes/no answer "
                         "(expected true/false, 1/0 or yes/no)")
    return yes


def positional(mechanism: Any) -> Any:
    """The same mechanism over the positions ``0..k-1`` of its categories: its config with the
    domain ``k``, so the same integer parameters and probabilities. Sampling and counting positions,
    the commands encode only a chunk's distinct values and map reports back through Arrow."""
    return from_config(dict(mechanism.to_config(), domain=mechanism.k))


def category_positions(chunk: Chunk, column: str, mechanism: Any) -> NDArray[np.int64]:
    """Each row's category position (the domain's ``encode``, of the distinct values only when the
    chunk has them); the error names the first row whose value is not a category."""
    taken = _used_cells(chunk)
    try:
        if taken is None:
            return mechanism.domain_obj.encode(chunk.values)
        cells, rows = taken
        positions: NDArray[np.int64] = mechanism.domain_obj.encode(cells)[rows]
        return positions
    except CategoryError as exc:
        if exc.index is None:
            raise
        index = exc.index if taken is None else int(np.flatnonzero(taken[1] == exc.index)[0])
        raise category_error(chunk, column, mechanism, index) from None


def report_column(mechanism: Any, reports: Any, labels: tuple[str, str] | None = None) -> Any:
    """Reports ``privatize_many`` just made as the column's text (:func:`reports_to_text`): bit vectors and
    yes/no reports as an Arrow string array built at once (the hex digits' bytes; a take of the two words),
    other reports as :func:`reports_to_text` gives them."""
    import pyarrow as pa

    if mechanism.report_kind == "bits" and reports.ndim == 2 and reports.dtype == np.uint8:
        digits = hex_ascii(reports)
        n, width = digits.shape
        wide = n * width >= 1 << 31  # 32-bit offsets up to 2 GiB of text
        offsets = np.arange(0, n * width + 1, width, dtype=np.int64 if wide else np.int32)
        return pa.Array.from_buffers(pa.large_string() if wide else pa.string(), n,
                                     [None, pa.py_buffer(offsets), pa.py_buffer(digits)])
    if mechanism.report_kind == "bool":
        return _arrow_words(list(labels) if labels is not None else ["false", "true"]).take(_arrow_ints(reports))
    return reports_to_text(mechanism, reports, labels)


def category_text(mechanism: Any, positions: NDArray[np.int64], like: Any = None) -> Any:
    """Category reports given as positions, as an Arrow string array of the categories (a take); where
    ``like`` (the input column, as Arrow read it) is an integer column and every category is the text of
    an integer, as integers of its type instead (a Parquet file keeps integer answers integers)."""
    import pyarrow as pa

    labels = [str(v) for v in mechanism.domain]
    if like is not None and pa.types.is_integer(like.type):
        numbers = _integer_labels(labels)
        if numbers is not None:
            try:
                return _arrow_ints(numbers[positions]).cast(like.type)
            except (pa.ArrowInvalid, OverflowError):  # a category out of the column's type: text instead
                pass
    return _arrow_words(labels).take(_arrow_ints(positions))


def _integer_labels(labels: list[str]) -> NDArray[np.int64] | None:
    """The categories as int64 where each is an integer's canonical text (``"3"``, ``"-2"``; not ``"03"``
    or ``"+3"``), else None."""
    try:
        numbers = [int(label) for label in labels]
    except ValueError:
        return None
    if any(str(n) != label for n, label in zip(numbers, labels, strict=True)) or not all(
            -(1 << 63) <= n < 1 << 63 for n in numbers):
        return None
    return np.array(numbers, dtype=np.int64)


def _arrow_words(words: list[str]) -> Any:
    """Python strings as an Arrow string array, built from their UTF-8 bytes and offsets (``pa.array``
    would import pandas, a fixed cost a command need not pay)."""
    import pyarrow as pa

    data = [w.encode("utf-8", "surrogateescape") for w in words]
    offsets = np.cumsum([0] + [len(d) for d in data], dtype=np.int64)
    return pa.Array.from_buffers(pa.large_string(), len(data),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]).cast(pa.string())


def _arrow_ints(values: NDArray[Any]) -> Any:
    """A numpy integer array as an Arrow int64 array on the same memory (no ``pa.array``, as above)."""
    import pyarrow as pa

    ints = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), ints.size, [None, pa.py_buffer(ints)])


def category_error(chunk: Chunk, column: str, mechanism: Any, index: int) -> CLIError:
    """The error naming row ``index`` of the chunk, whose value is not one of the mechanism's categories.

    The error path only: ``privatize_many``'s encode is the one check of the
    values, and its :class:`~deniable.errors.CategoryError` gives ``index``.
    """
    categories = np.asarray(mechanism.domain, dtype=str)
    shown = ", ".join(categories[:12].tolist()) + (", ..." if categories.size > 12 else "")
    return row_error(chunk, index, column,
                      f"value {str(chunk.values[index])!r} is not one of the categories [{shown}]")


# --------------------------------------------------------------- reports text
def reports_from_text(mechanism: Any, chunk: Chunk, column: str) -> Any:
    """Parse and validate a chunk of report text (each distinct cell once, when the chunk has them);
    the error names the first bad row."""
    try:
        if chunk.distinct is not None and chunk.codes is not None:
            return reports_from_codes(mechanism, chunk.distinct, chunk.codes)
        return from_text(mechanism, chunk.values)
    except ReportError as exc:
        raise _report_row_error(chunk, column, exc) from None


def _report_row_error(chunk: Chunk, column: str, exc: ReportError) -> CLIError:
    i = exc.index
    return row_error(chunk, i, column, f"report {str(chunk.values[i])!r} rejected: {exc.reason}")


def aggregate_file(mechanism: Any, reader: ColumnReader, on_chunk: Any = None) -> Any:
    """The aggregate of every report in the column, merged chunk by chunk with ``+``.

    Each chunk's distinct cells are parsed and checked once (:mod:`deniable.wire._arrow`); a cell
    that is refused makes the chunk parsed row by row, which names the first bad row.
    """
    total = mechanism.aggregate([])
    for chunk in reader:
        if chunk.distinct is not None and chunk.codes is not None:
            try:
                stat = aggregate_codes(mechanism, chunk.distinct, chunk.codes)
            except ReportError as exc:
                raise _report_row_error(chunk, reader.column, exc) from None
        else:
            stat = mechanism.aggregate(reports_from_text(mechanism, chunk, reader.column))
        total = total + stat
        if on_chunk is not None:
            on_chunk()
    return total


def aggregate_file_by(mechanism: Any, reader: ColumnReader, labels: ColumnReader,
                      on_chunk: Any = None) -> dict[str, Any]:
    """Per distinct cell of the ``labels`` column (its text, sorted), the aggregate of its rows' reports.

    ``labels`` reads the same file in the same chunks as ``reader``; each chunk's
    reports are parsed and checked once (the error names the first bad row),
    then aggregated slice by slice and merged over the chunks with ``+``.
    """
    totals: dict[str, Any] = {}
    for chunk, by in zip(reader, labels, strict=True):
        if len(by) != len(chunk):  # pragma: no cover - both read one file in the same blocks
            raise CLIError(f"--by {labels.column!r}: its chunk of {len(by)} rows does not match the reports'")
        checked = mechanism._checked(reports_from_text(mechanism, chunk, reader.column))
        distinct, codes = np.unique(by.values, return_inverse=True)
        order = np.argsort(codes, kind="stable")
        ends = np.cumsum(np.bincount(codes, minlength=distinct.size))
        for j, label in enumerate(distinct.tolist()):
            stat = mechanism._aggregate_checked(checked[order[(ends[j - 1] if j else 0): ends[j]]])
            totals[label] = totals[label] + stat if label in totals else stat
        if on_chunk is not None:
            on_chunk()
    return dict(sorted(totals.items()))
