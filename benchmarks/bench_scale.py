"""How deniable scales with cores: privatize, aggregate from arrays, aggregate from files.

    python benchmarks/bench_scale.py            # 2**26 reports, workers 1, 2, 4, ... up to the cores
    python benchmarks/bench_scale.py --quick    # a smoke run (2**16 reports, one worker)
    python benchmarks/bench_scale.py --reports 100000000 --workers 1 4 16

For each number of workers ``w`` (the process's CPUs restricted to ``w`` with
``os.sched_setaffinity`` where the system has it, and ``w`` Dask processes):

* **privatize**: secure ``GRR(16).privatize_many`` of the whole batch (the OS
  CSPRNG; threads, one per allowed core) against ``numpy``'s own
  ``Generator.integers`` of the same size from an OS-seeded PCG64 on one core
  (a generator with no security claim: the floor, not a peer);
* **aggregate, array**: ``deniable.scale.aggregate`` of a Dask array of GRR
  reports made inside the workers (one seeded generator per chunk), against
  the same chunks made and counted by ``np.bincount`` in a process pool of ``w``;
* **aggregate, Parquet / CSV**: ``deniable.scale.aggregate_files`` on the same
  reports written as integer-coded files (one per chunk), against a process pool
  of ``w`` reading each file with pyarrow and counting with ``np.bincount``.

Dask runs on ``w`` processes that stay up for the whole sweep step, as the
reference pool does: its ``processes`` scheduler given that pool
(``dask.config.set(pool=..., num_workers=w)``; without one it starts a new pool
for every ``compute``), or with ``--scheduler distributed`` a ``distributed.LocalCluster``
of ``w`` one-thread workers.

Printed per row: seconds (wall, best of ``--repeat``), millions of reports per
second, the speed-up over one worker, and the ratio to the reference at the
same ``w`` (deniable's time / the reference's). Counts are checked equal to
the reference's, so a fast wrong answer cannot pass. Needs the ``dask`` extra
and pyarrow.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import deniable as dn  # noqa: E402
from deniable import scale  # noqa: E402

K = 16


ALL_CPUS = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))


def restrict(workers: int) -> None:
    """Let this process (and the threads and processes it starts) run on ``workers`` CPUs."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(ALL_CPUS)[:workers])


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of ``repeat`` wall-clock runs, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def chunk_reports(seed: int, size: int) -> np.ndarray:
    """The GRR reports of one chunk: integers in 0..K-1 from a seeded generator (what the files hold)."""
    return np.random.default_rng(seed).integers(0, K, size)


def count_chunk(args: tuple[int, int]) -> np.ndarray:
    return np.bincount(chunk_reports(*args), minlength=K)


def count_file(path: str) -> np.ndarray:
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["answer"]) if path.endswith(".parquet") else pcsv.read_csv(path)
    return np.bincount(table.column("answer").to_numpy(), minlength=K)


@contextmanager
def dask_workers(kind: str, w: int, pool: ProcessPoolExecutor) -> Iterator[Any]:
    """The scheduler to hand ``scale``: ``w`` kept processes, warmed by one task each."""
    import dask

    if kind == "distributed":
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=w, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            client.run(lambda: None)
            yield client
    else:
        list(pool.map(abs, range(w)))  # start the processes
        with dask.config.set(pool=pool, num_workers=w):
            yield "processes"


def write_files(folder: Path, chunks: list[tuple[int, int]]) -> tuple[list[str], list[str]]:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    parquet, csv = [], []
    for i, args in enumerate(chunks):
        table = pa.table({"answer": chunk_reports(*args)})
        parquet.append(str(folder / f"part-{i:04d}.parquet"))
        csv.append(str(folder / f"part-{i:04d}.csv"))
        pq.write_table(table, parquet[-1])
        pcsv.write_csv(table, csv[-1])
    return parquet, csv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 2**16 reports, one worker")
    parser.add_argument("--reports", type=int, default=None, help="reports per workload (default 2**26)")
    parser.add_argument("--workers", type=int, nargs="*", default=None, help="worker counts to sweep")
    parser.add_argument("--repeat", type=int, default=None, help="runs per figure, the best kept (default 3)")
    parser.add_argument("--scheduler", choices=["processes", "distributed"], default="processes",
                        help="Dask's workers: the processes scheduler on a kept pool, or a LocalCluster")
    args = parser.parse_args(argv)
    n = args.reports or (1 << 16 if args.quick else 1 << 26)
    repeat = args.repeat or (1 if args.quick else 3)
    sweep = args.workers or ([1] if args.quick else [w for w in (1, 2, 4, 8, 16, 32, 64) if w <= len(ALL_CPUS)])
    sweep = [w for w in sweep if w <= len(ALL_CPUS)]
    parts = max(sweep) * 4
    size = -(-n // parts)
    chunks = [(1000 + i, min(size, n - i * size)) for i in range(parts) if i * size < n]

    import dask
    import dask.array as da

    m = dn.GRR(K, epsilon=1.0)
    truth = sum(count_chunk(c) for c in chunks)
    print(f"machine: {len(ALL_CPUS)} CPUs; {n:,} reports in {len(chunks)} chunks; best of {repeat}")
    print(f"{'workload':22s} {'workers':>7s} {'seconds':>8s} {'M/s':>8s} {'speed-up':>8s} {'vs ref':>7s}")
    rows: list[tuple[str, int, float, float]] = []

    def row(name: str, w: int, seconds: float, ref: float | None) -> None:
        one = next((s for nm, ww, s, _ in rows if nm == name and ww == 1), seconds)
        rows.append((name, w, seconds, ref or 0.0))
        ratio = f"{seconds / ref:7.2f}" if ref else "      -"
        print(f"{name:22s} {w:7d} {seconds:8.3f} {n / seconds / 1e6:8.1f} {one / seconds:8.2f} {ratio}", flush=True)

    values = np.arange(n, dtype=np.int64) % K
    with tempfile.TemporaryDirectory() as tmp:
        parquet, csv = write_files(Path(tmp), chunks)
        for w in sweep:
            restrict(w)
            ref, _ = best(lambda: np.random.default_rng().integers(0, K, n), repeat)
            seconds, reports = best(lambda: m.privatize_many(values), repeat)
            assert reports.shape == (n,) and reports.min() >= 0 and reports.max() < K
            row("privatize (secure)", w, seconds, ref)

            with ProcessPoolExecutor(w, mp_context=multiprocessing.get_context("spawn")) as pool, \
                    dask_workers(args.scheduler, w, pool) as scheduler:
                ref, counts = best(lambda pool=pool: sum(pool.map(count_chunk, chunks)), repeat)
                assert np.array_equal(counts, truth)
                blocks = [da.from_delayed(dask.delayed(chunk_reports)(*c), shape=(c[1],), dtype=np.int64)
                          for c in chunks]
                array = da.concatenate(blocks)
                seconds, stat = best(lambda array=array: scale.aggregate(m, array, scheduler=scheduler), repeat)
                assert np.array_equal(stat.counts, truth)
                row("aggregate, array", w, seconds, ref)

                for name, files in (("aggregate, Parquet", parquet), ("aggregate, CSV", csv)):
                    ref, counts = best(lambda pool=pool, files=files: sum(pool.map(count_file, files)), repeat)
                    assert np.array_equal(counts, truth)
                    seconds, stat = best(
                        lambda files=files: scale.aggregate_files(m, files, "answer", scheduler=scheduler), repeat)
                    assert np.array_equal(stat.counts, truth)
                    row(name, w, seconds, ref)
        restrict(len(ALL_CPUS))
    print("speed-up: over the same workload on 1 worker; vs ref: deniable's seconds / the reference's "
          "(privatize: numpy's PCG64 integers on one core; aggregate: a process pool of w doing np.bincount)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
