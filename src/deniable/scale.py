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
* ``dask.dataframe.Series`` of JSON report *text*, one JSON document per
  row (e.g. a column of an export).

Needs the ``deniable[dask]`` extra.
"""

from __future__ import annotations

import json
from functools import reduce
from operator import add
from typing import Any

from deniable.estimate import Estimate, SupportCounts

__all__ = ["aggregate", "estimate"]


def _numpy_part(mechanism: Any, block: Any) -> SupportCounts:
    return mechanism.aggregate(block)


def _json_part(mechanism: Any, items: Any, text: bool) -> SupportCounts:
    reports = [json.loads(v) for v in items] if text else list(items)
    return mechanism.aggregate(mechanism.reports_from_json(reports))


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
        parts = [delayed(_json_part)(mechanism, p, False) for p in reports.to_delayed()]
    else:
        import dask.dataframe as dd

        if not isinstance(reports, dd.Series):
            raise TypeError(
                "reports must be a dask Array, a dask Bag or a dask dataframe Series; "
                f"got {type(reports).__name__}"
            )
        parts = [delayed(_json_part)(mechanism, p, True) for p in reports.to_delayed()]
    total = delayed(_merge)(parts, identity)
    kwargs = {} if scheduler is None else {"scheduler": scheduler}
    (result,) = compute(total, **kwargs)
    return result


def estimate(mechanism: Any, reports: Any, *, scheduler: Any = None) -> Estimate:
    """Unbiased estimate from a Dask collection of reports."""
    return mechanism.estimate_from(aggregate(mechanism, reports, scheduler=scheduler))
