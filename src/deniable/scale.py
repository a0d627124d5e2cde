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

from collections.abc import Sequence
from functools import reduce
from operator import add
from pathlib import Path
from typing import Any

import numpy as np

from deniable._estimate import Estimate, SupportCounts
from deniable.errors import ReportError
from deniable.wire._text import from_text

__all__ = ["aggregate", "aggregate_files", "estimate"]


def _numpy_part(mechanism: Any, block: Any) -> SupportCounts:
    return mechanism.aggregate(block)


def _json_part(mechanism: Any, items: Any) -> SupportCounts:
    return mechanism.aggregate(mechanism.reports_from_json(list(items)))


def _text_part(mechanism: Any, column: Any) -> SupportCounts:
    """The aggregate of one partition of report text (a pandas Series)."""
    if column.dtype == bool:  # read_csv took true/false for booleans
        values = np.where(column.to_numpy(), "true", "false")
    elif mechanism.report_kind == "bits" and column.dtype.kind in "iuf":
        raise ValueError("bit-vector reports are hex text: read the column as text "
                         "(dd.read_csv(..., dtype=str)), or use deniable.scale.aggregate_files")
    else:
        values = np.asarray(column.astype(str).to_numpy(), dtype=str)
    try:
        return mechanism.aggregate(from_text(mechanism, values))
    except ReportError as exc:
        raise ReportError(f"column {column.name!r}: report {str(values[exc.index])!r} rejected: {exc.reason}",
                          exc.index, exc.reason) from None


def _merge(parts: list[SupportCounts], identity: SupportCounts) -> SupportCounts:
    return reduce(add, parts, identity)


def aggregate(mechanism: Any, reports: Any, *, scheduler: Any = None) -> SupportCounts:
    """Mergeable aggregate of a Dask collection of reports (see module docstring).

    ``scheduler`` is passed to ``dask.compute`` (e.g. ``"threads"``,
    ``"processes"``, or a ``distributed.Client``); by default Dask's current
    scheduler is used.
    """
    import dask.array as da
    import dask.bag as db
    from dask.base import compute
    from dask.delayed import delayed

    identity = mechanism.aggregate([])
    if isinstance(reports, da.Array):
        if reports.ndim > 1 and any(len(c) > 1 for c in reports.chunks[1:]):
            raise ValueError("chunk the report array along its first axis only")
        blocks = reports.to_delayed().ravel().tolist()
        parts = [delayed(_numpy_part)(mechanism, b) for b in blocks]
    elif isinstance(reports, db.Bag):
        parts = [delayed(_json_part)(mechanism, p) for p in reports.to_delayed()]
    else:
        import dask.dataframe as dd

        if not isinstance(reports, dd.Series):
            raise TypeError(
                "reports must be a dask Array, a dask Bag or a dask dataframe Series; "
                f"got {type(reports).__name__}"
            )
        parts = [delayed(_text_part)(mechanism, p) for p in reports.to_delayed()]
    total = delayed(_merge)(parts, identity)
    kwargs = {} if scheduler is None else {"scheduler": scheduler}
    (result,) = compute(total, **kwargs)
    return result


def aggregate_files(
    mechanism: Any, paths: str | Path | Sequence[str | Path], column: str, *, scheduler: Any = None
) -> SupportCounts:
    """Mergeable aggregate of the report column ``column`` of CSV or Parquet files.

    ``paths`` is a glob (``"reports/*.parquet"``), a file, or a list of them,
    all CSV (``.csv``) or all Parquet (``.parquet``/``.pq``). The column is read
    as text, partition by partition (``dask.dataframe``), and aggregated as
    :func:`aggregate` does; ``scheduler`` as there.
    """
    import dask.dataframe as dd

    names = [str(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    if not names:
        raise ValueError("paths: no files given")
    suffixes = {Path(n).suffix.lower() for n in names}
    if suffixes == {".csv"}:
        frame = dd.read_csv(names, dtype=str, keep_default_na=False, usecols=[column])
    elif suffixes <= {".parquet", ".pq"}:
        frame = dd.read_parquet(names, columns=[column])
    else:
        raise ValueError(f"paths must all be .csv or all .parquet files; got {sorted(suffixes)}")
    return aggregate(mechanism, frame[column], scheduler=scheduler)


def estimate(mechanism: Any, reports: Any, *, scheduler: Any = None) -> Estimate:
    """Unbiased estimate from a Dask collection of reports."""
    return mechanism.estimate_from(aggregate(mechanism, reports, scheduler=scheduler))
