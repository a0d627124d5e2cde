"""Scale-out aggregation on Dask: the same mergeable statistic, computed per partition.

Every frequency oracle's ``aggregate`` is a commutative monoid (``+`` with
``mechanism.aggregate([])`` as identity), so a collection of reports split
into partitions is aggregated partition by partition (on threads, processes
or a ``dask.distributed`` cluster) and the partial statistics are added. The
result is bit-identical to ``mechanism.aggregate(all_reports)``.

Accepted collections:

* ``dask.array.Array`` of reports in their numpy form (1-D, or 2-D packed
  bits for unary encoding), chunked along the first axis only;
* ``dask.bag.Bag`` of JSON report values (the wire form, already parsed);
* ``dask.dataframe.Series`` of report *text*: a column as ``deniable
  privatize`` writes it (category text, yes/no words, compact JSON; see
  :func:`deniable.wire.to_text`) or as a server export holds it (one JSON
  document per row).

:func:`aggregate_files` reads that column from CSV or Parquet files (a glob
such as ``"reports/*.parquet"``, or a list), partition by partition; it is
what ``deniable estimate FILES --column C --dask`` runs::

    m = deniable.from_config(open("private.csv.deniable.json").read())
    est = m.estimate_from(deniable.scale.aggregate_files(m, "private-*.csv", column="answer"))

Needs the ``deniable[dask]`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import reduce
from operator import add
from pathlib import Path
from typing import Any

import numpy as np

from deniable._aggregates import Mergeable
from deniable._estimate import Estimate, SupportCounts
from deniable.errors import ReportError
from deniable.wire._arrow import aggregate_codes, csv_convert_options, csv_parse_options, distinct_codes

__all__ = ["aggregate", "aggregate_files", "estimate"]

_TASK_ROWS = 1 << 20  # Parquet row groups are read together, in order, until a task holds this many rows
_CSV_WHOLE = 1 << 26  # a CSV file of up to 64 MiB is read at once, on pyarrow's threads; a larger one in blocks
_CSV_BLOCK = 1 << 23  # the block a larger CSV file is read in


def _numpy_part(block: Any, mechanism: Any) -> Any:
    """The aggregate of one block of a report array, as a one-element object array (a block of the
    array of partial aggregates, so that Dask fuses it with the task that makes the block)."""
    out = np.empty(1, dtype=object)
    out[0] = mechanism.aggregate(block)
    return out


def _json_part(items: Any, mechanism: Any) -> list[SupportCounts]:
    return [mechanism.aggregate(mechanism.reports_from_json(list(items)))]


def _series_part(column: Any, mechanism: Any) -> Any:
    """The aggregate of one partition of report text (a pandas Series), as a one-row Series (a partition
    of the Series of partial aggregates): integers and booleans as Arrow arrays, other cells as their
    text; each distinct cell parsed once."""
    import pandas as pd
    import pyarrow as pa

    if mechanism.report_kind == "bits" and column.dtype.kind in "iuf":
        raise ValueError("bit-vector reports are hex text: read the column as text "
                         "(dd.read_csv(..., dtype=str)), or use deniable.scale.aggregate_files")
    if column.dtype.kind in "biu":  # read_csv took true/false for booleans, digits for integers
        cells = pa.array(column.to_numpy())
    else:
        cells = pa.array(np.asarray(column.astype(str).to_numpy(), dtype=str))
    return pd.Series([_aggregate_cells(mechanism, cells, str(column.name), 0)], dtype=object)


def _aggregate_cells(mechanism: Any, cells: Any, name: str, first: int) -> SupportCounts:
    """The aggregate of an Arrow column of reports whose first row is row ``first`` (0-based) of its
    partition or file; the error names the column and the bad row's text, its ``index`` that row."""
    distinct, codes = distinct_codes(cells)
    try:
        return aggregate_codes(mechanism, distinct, codes)
    except ReportError as exc:
        value = str(distinct[codes[exc.index]])
        raise ReportError(f"column {name!r}: report {value!r} rejected: {exc.reason}",
                          first + exc.index, exc.reason) from None


def _parquet_task(mechanism: Any, column: str, pieces: list[tuple[str, int, int]]) -> list[Any]:
    """The aggregates of consecutive row groups ``(path, group, first row)`` (text as Arrow's dictionary,
    as read; each file opened once), up to the first bad row's error, returned for :func:`_merge` to
    raise in the order of the files."""
    import pyarrow.parquet as pq

    out: list[Any] = []
    opened: tuple[str, Any] = ("", None)
    for path, group, first in pieces:
        if opened[0] != path:
            opened = (path, pq.ParquetFile(path, read_dictionary=[column]))
        table = opened[1].read_row_group(group, columns=[column])
        try:
            out.append(_aggregate_cells(mechanism, table.column(column), column, first))
        except ReportError as exc:
            out.append(exc)
            break
    return out


def _batches(items: list[Any], sizes: list[int], target: int) -> list[list[Any]]:
    """``items`` in order, cut into runs whose sizes add up to at least ``target`` (the last run may be
    short): small row groups share a task, so that each task's work outweighs its scheduling."""
    runs: list[list[Any]] = [[]]
    total = 0
    for item, size in zip(items, sizes, strict=True):
        if total >= target:
            runs.append([])
            total = 0
        runs[-1].append(item)
        total += size
    return [run for run in runs if run]


def _csv_part(mechanism: Any, path: str, column: str) -> SupportCounts | ReportError:
    """The aggregate of the column of a CSV file, added up block by block (:func:`_csv_blocks`), or the
    error of its first bad row."""
    total, first = mechanism.aggregate([]), 0
    for cells in _csv_blocks(path, column):
        try:
            total = total + _aggregate_cells(mechanism, cells, column, first)
        except ReportError as exc:
            return exc
        first += len(cells)
    return total


def _csv_blocks(path: str, column: str) -> Iterator[Any]:
    """The column of a CSV file as Arrow arrays, one per block that pyarrow read: a file of up to
    :data:`_CSV_WHOLE` bytes read at once, its 1 MiB blocks parsed on pyarrow's threads (a 1-million-row
    column in 28 ms, where one reader takes 37), and where :func:`_may_break_cells` says no, parsed as
    a file whose rows end at every line break (42 -> 37 ms of one core); a larger file 8 MiB at a
    time, in bounded memory."""
    import pyarrow as pa
    from pyarrow import csv

    parse, convert = csv_parse_options(), csv_convert_options(column)
    if os.path.getsize(path) <= _CSV_WHOLE:
        with open(path, "rb") as handle:
            data = handle.read()
        parse.newlines_in_values = _may_break_cells(data)
        yield from csv.read_csv(pa.BufferReader(data), parse_options=parse, convert_options=convert).column(0).chunks
        return
    with csv.open_csv(path, read_options=csv.ReadOptions(block_size=_CSV_BLOCK), parse_options=parse,
                      convert_options=convert) as reader:
        for batch in reader:
            yield batch.column(0)


def _may_break_cells(data: bytes) -> bool:
    """Whether a cell of CSV text ``data`` may hold a line break: only a quoted cell can, so not when
    the header line's quotes pair up (as pyarrow and pandas quote column names) and no quote follows
    (nor when there is no line break at all)."""
    lf = data.find(b"\n")
    cr = data.find(b"\r", 0, len(data) if lf < 0 else lf)  # the header line ends at its first line break
    end = cr if cr >= 0 else lf
    if end < 0:
        return False
    return data.count(b'"', 0, end) % 2 == 1 or data.find(b'"', end + 1) >= 0


def _merge(parts: list[Any], identity: SupportCounts) -> SupportCounts:
    """The sum of the partial aggregates (each part a partial aggregate or a sequence of them); the first
    part's error, if any, in the order of the parts (so that of the first bad row of the first file that
    has one, whichever task ran first)."""
    stats = [s for p in parts for s in ([p] if isinstance(p, (Mergeable, ReportError)) else list(p))]
    error = next((s for s in stats if isinstance(s, ReportError)), None)
    if error is not None:
        raise error
    return reduce(add, stats, identity)


def aggregate(mechanism: Any, reports: Any, *, scheduler: Any = None) -> SupportCounts:
    """Mergeable aggregate of a Dask collection of reports (see module docstring).

    ``scheduler`` is passed to ``dask.compute`` (e.g. ``"threads"``,
    ``"processes"``, or a ``distributed.Client``); by default Dask's current
    scheduler is used.
    """
    import dask.array as da
    import dask.bag as db

    identity = mechanism.aggregate([])
    # each partition's aggregate is computed by the task that makes the partition (the collection's
    # own map, which Dask fuses), so only the partial aggregates travel between processes
    if isinstance(reports, da.Array):
        if reports.ndim > 1 and any(len(c) > 1 for c in reports.chunks[1:]):
            raise ValueError("chunk the report array along its first axis only")
        partial = da.map_blocks(_numpy_part, reports, mechanism, dtype=object, chunks=((1,) * reports.numblocks[0],),
                                drop_axis=list(range(1, reports.ndim)))
        parts = partial.to_delayed().ravel().tolist()
    elif isinstance(reports, db.Bag):
        parts = reports.map_partitions(_json_part, mechanism).to_delayed()
    else:
        import dask.dataframe as dd

        if not isinstance(reports, dd.Series):
            raise TypeError(
                "reports must be a dask Array, a dask Bag or a dask dataframe Series; "
                f"got {type(reports).__name__}"
            )
        parts = reports.map_partitions(_series_part, mechanism, meta=(reports.name, object)).to_delayed()
    return _merge(_compute(parts, scheduler), identity)


def aggregate_files(
    mechanism: Any, paths: str | Path | Sequence[str | Path], column: str, *, scheduler: Any = None
) -> SupportCounts:
    """Mergeable aggregate of the report column ``column`` of CSV or Parquet files.

    ``paths`` is a glob (``"reports/*.parquet"``), a file, or a list of them,
    all CSV (``.csv``) or all Parquet (``.parquet``/``.pq``). Each CSV file is
    one task (read at once, its blocks parsed on pyarrow's threads, up to 64 MiB;
    block by block beyond), and so are consecutive Parquet row groups up to
    ``2**20`` rows (their footers read first): the column is read by pyarrow alone
    (text as Arrow's dictionary of its distinct cells, integers as integers),
    each distinct cell parsed once, and the partial aggregates added as
    :func:`aggregate` does; ``scheduler`` as there. A bad cell raises
    :class:`~deniable.errors.ReportError` naming the column and the cell, its
    ``index`` the row in its file (0-based): the first bad row of the first
    file (in the order given) that has one.
    """
    import glob

    given = [str(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    names = [n for g in given for n in (sorted(glob.glob(g)) if glob.has_magic(g) else [g])]
    if not given:
        raise ValueError("paths: no files given")
    suffixes = {Path(n).suffix.lower() for n in given}
    if suffixes == {".csv"}:
        # a CSV file's parse outweighs its task
        tasks: list[tuple[Any, ...]] = [(_csv_part, mechanism, n, column) for n in names]
    elif suffixes <= {".parquet", ".pq"}:
        groups = [_row_groups(n, column) for n in names]  # 40-80 us a file: threads would cost more
        pieces = [(n, group, first, rows) for n, found in zip(names, groups, strict=True)
                  for group, first, rows in found]
        tasks = [(_parquet_task, mechanism, column, [piece[:3] for piece in run])
                 for run in _batches(pieces, [piece[3] for piece in pieces], _TASK_ROWS)]
    else:
        raise ValueError(f"paths must all be .csv or all .parquet files; got {sorted(suffixes)}")
    if not names:
        raise FileNotFoundError(f"no file matches {given}")
    return _merge(_run(tasks, scheduler), mechanism.aggregate([]))


def _compute(parts: list[Any], scheduler: Any) -> list[Any]:
    """The partial aggregates ``parts`` (Dask collections' pieces) computed on ``scheduler`` (Dask's
    current one when None), and returned to this process to be added here (a task that adds them
    would be one more round trip through a worker), dealt out as :func:`_dealt` says."""
    from dask.base import compute

    with _dealt(len(parts)):
        return list(compute(*parts, **({} if scheduler is None else {"scheduler": scheduler})))


def _run(tasks: list[tuple[Any, ...]], scheduler: Any) -> list[Any]:
    """The results of independent ``(function, *arguments)`` tasks, run as a Dask graph of their own
    on ``scheduler`` (as :func:`_compute`; Dask's threads when none is current) and dealt out as
    :func:`_dealt` says. A plain graph skips what ``dask.compute`` does for collections (their
    conversion and optimization, in this process before the first task starts: 64 tasks took 13 ms to
    make and hand to the scheduler as ``delayed`` calls, 1.5 ms as a plain graph)."""
    import uuid

    import dask.threaded
    from dask.base import get_scheduler

    name = f"deniable-aggregate-files-{uuid.uuid4().hex}"
    graph = {(name, i): task for i, task in enumerate(tasks)}
    schedule = get_scheduler(scheduler=scheduler) or dask.threaded.get
    with _dealt(len(tasks)):
        return list(schedule(graph, list(graph)))


@contextmanager
def _dealt(tasks: int) -> Iterator[None]:
    """Dask's local schedulers hand out ready tasks in batches of ``chunksize`` (6 by default: with 64
    tasks on 16 workers, 11 workers get six each and five get none); unless the configuration sets
    one, ``tasks`` independent tasks are dealt out evenly instead, one batch per worker."""
    import dask
    from dask.system import CPU_COUNT

    workers = dask.config.get("num_workers", None) or CPU_COUNT
    with dask.config.set(chunksize=dask.config.get("chunksize", None) or max(1, -(-tasks // workers))):
        yield


def _row_groups(path: str, column: str) -> list[tuple[int, int, int]]:
    """Each row group of a Parquet file, the row it starts at and its rows; ValueError if it has no
    ``column``."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    if column not in meta.schema.names:
        raise ValueError(f"{path}: no column {column!r}; columns are {meta.schema.names}")
    starts = np.cumsum([0] + [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
    return [(i, int(starts[i]), int(starts[i + 1] - starts[i])) for i in range(meta.num_row_groups)]


def estimate(mechanism: Any, reports: Any, *, scheduler: Any = None) -> Estimate:
    """Unbiased estimate from a Dask collection of reports."""
    return mechanism.estimate_from(aggregate(mechanism, reports, scheduler=scheduler))
