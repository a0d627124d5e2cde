"""The performance table in one run: each path users take, next to its reference and its goal.

Every row of the table of the issue "Performance at scale" is measured by
one run of this script, on one machine, one after the other, with the load
average printed at the start and the end. Rows owned by another script run
that script in a child process with the table's sizes (its output is
printed as it is); the rest are measured here:

* OUE k=1024 estimate from packed reports, numpy only (a child process with
  ``DENIABLE_ACCELERATOR=numpy``) against a chunked ``np.unpackbits`` count,
  the simplest numpy reference. Goal: at least its speed.
* Secure GRR ``privatize_many`` (OS CSPRNG) of 5 x 10^7 reports: CPU seconds
  over wall seconds, the cores it keeps busy. Goal: 0.7 x cores.
* RAPPOR decode, 16 bits x 64 cohorts, 1,024 / 2,048 / 4,096 candidates, all
  the truth on 16 of them: CPU seconds, the estimates' sum, and whether the
  decode said the system is underdetermined. Goal: roughly linear in the
  candidates past cohorts x bits, and never a silently wrong vector.
* Piecewise and Hybrid ``estimate`` against their bare ``aggregate``. Goal:
  the report checks at the cost of the aggregate.

The child rows: ``bench_files.py`` (``deniable estimate`` and ``privatize``
from CSV and Parquet against the pandas/pyarrow one-liners,
``scale.aggregate_files`` against ``scale.aggregate``), ``bench_survey_fit.py``
(the survey logit against statsmodels' ``Logit``, the two-group fit) and
``bench_server.py`` (single posts per second and the server's CPU per post).
The sweep over cores is ``bench_scale.py``, for a machine with more cores.

    python benchmarks/bench_table.py            # the table's sizes (about 15 minutes on 2 cores)
    python benchmarks/bench_table.py --quick    # smoke run of the rows measured here
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

import deniable as dn

HERE = Path(__file__).resolve().parent

OUE_CHILD = """
import sys, time
import numpy as np
import deniable as dn
n, repeat = int(sys.argv[1]), int(sys.argv[2])
oue = dn.OUE(1024, epsilon=1.0)
rng = np.random.default_rng(0)
packed = oue.privatize_many(rng.integers(0, 1024, n), rng=rng)

def unpackbits_count():  # the fastest plain variant tried: 4,096 rows a chunk, summed in uint16 (no overflow)
    total = np.zeros(1024, dtype=np.int64)
    for start in range(0, n, 1 << 12):
        total += np.unpackbits(packed[start:start + (1 << 12)], axis=1).sum(axis=0, dtype=np.uint16)
    return total

def least(fn):
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best

assert np.array_equal(oue.aggregate(packed).counts, unpackbits_count())
ours, ref = least(lambda: oue.estimate(packed)), least(unpackbits_count)
print(f"{n / ours / 1e6:.1f} {n / ref / 1e6:.1f}")
"""


def least(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The least CPU seconds (``time.process_time``: all threads) and least wall seconds of ``repeat`` runs."""
    cpu, wall = float("inf"), float("inf")
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
    return cpu, wall


def row(workload: str, ours: str, reference: str, goal: str) -> None:
    print(f"| {workload} | {ours} | {reference} | {goal} |", flush=True)


def oue_estimate(n: int, repeat: int) -> None:
    env = {**os.environ, "DENIABLE_ACCELERATOR": "numpy"}
    out = subprocess.run([sys.executable, "-c", OUE_CHILD, str(n), str(repeat)], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    ours, ref = map(float, out)
    row(f"OUE k=1024 estimate, {n:,} packed reports, numpy only", f"{ours:.1f}M reports/s",
        f"chunked `np.unpackbits` count: {ref:.1f}M reports/s ({ours / ref:.2f}x)", ">= 1x the reference")


def secure_privatize(n: int, repeat: int) -> None:
    m = dn.GRR(16, epsilon=1.0)
    values = np.random.default_rng(0).integers(0, 16, n)
    cpu, wall = least(lambda: m.privatize_many(values), repeat)
    cores = os.cpu_count() or 1
    row(f"secure GRR(16) `privatize_many`, {n:,} reports, OS CSPRNG", f"{cpu:.2f} CPU s over {wall:.2f} s wall: "
        f"{cpu / wall:.2f} cores busy of {cores}; {n / wall / 1e6:.0f}M reports/s",
        "-", f">= {0.7 * cores:.1f} cores (0.7 x {cores})")


def rappor_candidates(n: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    for k in (1024, 2048, 4096):
        m = dn.RAPPOR(range(k), epsilon=4.0, num_bits=16, num_cohorts=64)
        stat = m.aggregate(m.privatize_many(rng.integers(0, 16, n), rng=rng))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = m.estimate_from(stat)
            cpu, _ = least(lambda m=m, stat=stat: m.estimate_from(stat), repeat)
        said = "; ".join(sorted({type(w.message).__name__ for w in caught})) or "no warning"
        row(f"RAPPOR decode, 16 bits x 64 cohorts, {k:,} candidates, truth on 16, {n:,} reports",
            f"{cpu:.2f} CPU s; the 16 true candidates' estimates sum to {est.frequencies[:16].sum():.3f}, "
            f"all {est.frequencies.sum():.3f}; {said}", "-",
            "linear in candidates past 1,024; underdetermined said, not a wrong vector")


def numeric_checks(n: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    for m in (dn.Piecewise(0, 100, epsilon=1.0), dn.Hybrid(0, 100, epsilon=1.0)):
        reports = m.privatize_many(rng.uniform(0, 100, n), rng=rng)
        ours, _ = least(lambda m=m, r=reports: m.estimate(r), repeat)
        bare, _ = least(lambda m=m, r=reports: m.aggregate(r), repeat)
        row(f"{type(m).__name__} `estimate`, {n:,} reports", f"{ours:.3f} CPU s",
            f"its `aggregate`: {bare:.3f} CPU s ({ours / bare:.2f}x)", "the aggregate's cost")


def child_script(name: str, args: list[str], run: bool) -> None:
    """Run another script of this folder with ``args`` (with ``run`` false, only name the command)."""
    print(f"\n### `python benchmarks/{name} {' '.join(args)}`\n", flush=True)
    if run:
        subprocess.run([sys.executable, str(HERE / name), *args], check=True)
    else:
        print("(not run with --quick: that script has its own smoke run)")


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f} (1, 5, 15 min)".format(*os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each in-process row; the least is kept")
    args = parser.parse_args(argv)
    quick = args.quick
    repeat = 1 if quick else args.repeat
    start = time.perf_counter()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}, deniable {dn.__version__}")
    print(f"start: {load()}\n")
    print("| workload | deniable | reference | goal |")
    print("|---|---|---|---|")
    oue_estimate(20_000 if quick else 1_000_000, repeat)
    secure_privatize(100_000 if quick else 50_000_000, repeat)
    rappor_candidates(20_000 if quick else 1_000_000, repeat)
    numeric_checks(20_000 if quick else 10_000_000, repeat)
    child_script("bench_files.py", ["--rows", "10000000", "--kinds", "int,str,bits", "--repeat", "3"], not quick)
    child_script("bench_survey_fit.py", ["--repeat", "3"], not quick)
    child_script("bench_server.py", ["--batches", "2", "--clients", "2", "--posts", "2000", "--stored", "100000",
                                     "--flood", "200"], not quick)
    print(f"\nend: {load()}; {time.perf_counter() - start:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
