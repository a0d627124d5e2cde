"""Dask aggregation equals local aggregation, bit for bit, on any partitioning."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import deniable as dn

dask = pytest.importorskip("dask", reason="needs the deniable[dask] extra")
da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")

from deniable import scale  # noqa: E402

MECHANISMS = [
    dn.GRR(16, epsilon=1.0),
    dn.OUE(100, epsilon=1.0),
    dn.OLH(64, epsilon=1.0),
    dn.HadamardResponse(30, epsilon=1.0),
    dn.BinaryRR(prob=0.75),
]


def _reports(m, n: int, seed: int):
    values = np.random.default_rng(seed).integers(0, m.k, n)
    return m.privatize_many(m.domain_obj.decode(values), rng=seed)


@pytest.mark.parametrize("m", MECHANISMS, ids=lambda m: m.name)
def test_dask_array_matches_local(m) -> None:
    reports = _reports(m, 20_000, 1)
    local = m.aggregate(reports)
    if reports.dtype.names:  # structured reports travel as JSON through a bag
        items = m.reports_to_json(reports)
        coll = db.from_sequence(items, npartitions=7)
    else:
        coll = da.from_array(reports, chunks=(3_001,) + reports.shape[1:])
    assert scale.aggregate(m, coll, scheduler="threads") == local


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 500), min_size=1, max_size=8))
def test_any_partitioning_gives_identical_counts(sizes) -> None:
    """Hypothesis over partition sizes: merge is associative and commutative."""
    m = dn.GRR(["a", "b", "c", "d", "e"], epsilon=0.5)
    reports = _reports(m, sum(sizes), 3)
    coll = da.from_array(reports, chunks=(tuple(sizes),))
    assert scale.aggregate(m, coll, scheduler="sync") == m.aggregate(reports)


def _made(m, seed: int, size: int):
    return _reports(m, size, seed)


@pytest.mark.parametrize("m", [dn.GRR(16, epsilon=1.0), dn.OUE(100, epsilon=1.0)], ids=lambda m: m.name)
def test_only_partial_aggregates_leave_the_tasks_that_make_the_blocks(m) -> None:
    """Each block is counted by the task that makes it (Dask fuses the two), so no task hands a block of
    reports to another: with the processes scheduler every task's result passes through the parent, and
    a block of 10^7 reports would cost more to move than to count."""
    from dask.callbacks import Callback

    sizes = [2_000, 3_000, 1_500]
    blocks = [da.from_delayed(dask.delayed(_made)(m, seed, size), shape=(size, *_reports(m, 1, 0).shape[1:]),
                              dtype=_reports(m, 1, 0).dtype) for seed, size in enumerate(sizes)]
    results: list = []
    with Callback(posttask=lambda key, result, *rest: results.append(result)):
        got = scale.aggregate(m, da.concatenate(blocks), scheduler="sync")
    assert got == m.aggregate(np.concatenate([_made(m, seed, size) for seed, size in enumerate(sizes)]))
    moved = [r for r in results if not (isinstance(r, type(got)) or (r.dtype == object and r.size == 1))]
    assert moved == [], [(type(r), getattr(r, "shape", None)) for r in moved]


def test_the_partial_aggregates_are_dealt_out_evenly() -> None:
    """Dask's local schedulers send ready tasks in batches of ``chunksize`` (6 by default, which leaves
    some of 16 workers idle with 64 tasks): the partial aggregates go in one batch per worker
    (``ceil(tasks / workers)``), unless the configuration sets a chunksize."""
    def probes(tasks: int) -> set[int]:
        return set(scale._compute([dask.delayed(dask.config.get)("chunksize") for _ in range(tasks)], "sync"))

    with dask.config.set(num_workers=16):
        assert probes(64) == {4}
        assert probes(65) == {5}
        assert probes(3) == {1}
        with dask.config.set(chunksize=6):
            assert probes(64) == {6}


def test_json_series_and_distributed_cluster(tmp_path) -> None:
    """Reports exported as JSON text, aggregated by a real dask.distributed cluster."""
    distributed = pytest.importorskip("distributed")
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    m = dn.OUE(40, epsilon=2.0)
    reports = _reports(m, 5_000, 4)
    frame = pd.DataFrame({"report": [json.dumps(r) for r in m.reports_to_json(reports)]})
    series = dd.from_pandas(frame, npartitions=4)["report"]
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        got = scale.aggregate(m, series, scheduler=client)
    assert got == m.aggregate(reports)
    est = m.estimate_from(got)
    assert est.n == 5_000


def test_rejects_other_collections() -> None:
    with pytest.raises(TypeError, match="dask Array"):
        scale.aggregate(dn.GRR(3, epsilon=1.0), [0, 1, 2])
    with pytest.raises(ValueError, match="first axis"):
        scale.aggregate(dn.OUE(16, epsilon=1.0), da.zeros((10, 2), dtype=np.uint8, chunks=(5, 1)))
