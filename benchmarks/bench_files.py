"""Reports read from files against the same reports as arrays: ``deniable estimate``, ``--dask``, privatize.

Each row times a path from a CSV or Parquet file and, beside it, its
reference on the same data:

* ``deniable estimate FILE --column answer`` (a child process) against a
  pandas one-liner in a child process (read the column, ``m.estimate`` of it;
  hex bit vectors decoded by one ``bytes.fromhex`` of the joined column, text
  categories counted by ``value_counts``), for
  integer-coded GRR(16) reports, GRR over 16 text categories, BinaryRR yes/no
  words, OUE(16) bit vectors (hex) and OLH reports (compact JSON, where the
  one-liner parses each cell with ``json.loads``). The goal: 1.3x the
  one-liner.
* ``deniable.scale.aggregate_files`` over 4 files of integer GRR(16) reports
  against ``deniable.scale.aggregate`` of the same reports as a Dask array of
  4 chunks, both on Dask's threads (this process's CPU time, all threads, and
  wall time), and pyarrow's read of the files + ``value_counts``. The goal:
  1.5x ``scale.aggregate``, whose reports are in memory already: the read
  and decode of the files is all the difference.
* ``deniable privatize`` of a column of 16 text categories (GRR), integer
  categories (GRR(16)), yes/no words (BinaryRR) and 16 text categories made
  into OUE bit vectors, from CSV and Parquet, against pyarrow's read + write
  of the same file. The goal: 1.5x.

Times are CPU seconds (``time.process_time`` here, user + system time of a
child process), the least of ``--repeat`` runs, with wall seconds beside
the in-process rows; the load average is printed at the start and the end.

    python benchmarks/bench_files.py            # 10^7 rows (a few minutes on 2 cores)
    python benchmarks/bench_files.py --quick    # tiny smoke run
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_limits import child_seconds  # a sibling script

import deniable as dn

ONE_LINER = """
import json, sys
import numpy as np
import pandas as pd
import deniable as dn
path, kind = sys.argv[1], sys.argv[2]
m = dn.from_config(json.load(open(path + ".deniable.json")))
read = pd.read_parquet if path.endswith(".parquet") else pd.read_csv
col = (read(path, columns=["answer"]) if path.endswith(".parquet") else read(path, usecols=["answer"]))["answer"]
if kind == "bits":
    reports = np.frombuffer(bytes.fromhex("".join(col.tolist())), np.uint8).reshape(len(col), -1)
elif kind == "structured":
    reports = m.reports_from_json([json.loads(x) for x in col.tolist()])
elif kind == "bool":
    reports = col.to_numpy() == "yes"
elif kind == "str":  # as the one-liner of bench_limits: count the text, no encoding per row
    shares = col.value_counts()
    counts = np.array([int(shares.get(c, 0)) for c in m.domain])
    print(m.estimate_from(dn.SupportCounts(m.fingerprint, counts, len(col))).frequencies)
    sys.exit()
else:
    reports = col.to_numpy()
print(m.estimate(reports).frequencies)
"""

ARROW_COPY = """
import sys
if sys.argv[1].endswith(".parquet"):
    import pyarrow.parquet as pq
    pq.write_table(pq.read_table(sys.argv[1]), sys.argv[2])
else:
    from pyarrow import csv
    csv.write_csv(csv.read_csv(sys.argv[1]), sys.argv[2])
"""


def best(fn: Callable[[], tuple[float, float]], repeat: int) -> tuple[float, float]:
    """The least (CPU, wall) seconds of ``repeat`` runs of ``fn`` (each returning both)."""
    runs = [fn() for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs)


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def child(args: list[str]) -> tuple[float, float]:
    wall = time.perf_counter()
    cpu = child_seconds(args)
    return cpu, time.perf_counter() - wall


def mechanisms() -> dict[str, Any]:
    return {
        "int": dn.GRR(16, epsilon=1.0),
        "str": dn.GRR([f"c{i}" for i in range(16)], epsilon=1.0),
        "bool": dn.BinaryRR(epsilon=1.0),
        "bits": dn.OUE(16, epsilon=1.0),
        "structured": dn.OLH(16, epsilon=1.0),
    }


def report_column(kind: str, m: Any, n: int, rng: np.random.Generator) -> Any:
    """``n`` reports as a file column holds them (integers, text, yes/no words, hex, compact JSON)."""
    if kind == "bool":
        return np.where(m.privatize_many(rng.random(n) < 0.3, rng=rng), "yes", "no")
    reports = m.privatize_many(rng.choice(list(m.domain), n), rng=rng)
    if kind in ("int", "str"):
        return reports
    return dn.wire.to_text(m, reports)


def write(path: str, column: Any, m: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyarrow import csv

    table = pa.table({"id": np.arange(len(column)), "answer": column})
    (pq.write_table if path.endswith(".parquet") else csv.write_csv)(table, path)
    with open(path + ".deniable.json", "w") as fh:
        json.dump(m.to_config(), fh)


def estimate_rows(tmp: str, n: int, repeat: int, kinds: list[str]) -> list[str]:
    rows = []
    rng = np.random.default_rng(0)
    for kind in kinds:
        m = mechanisms()[kind]
        size = n // 10 if kind == "structured" else n
        column = report_column(kind, m, size, rng)
        for fmt in ("parquet", "csv"):
            path = os.path.join(tmp, f"{kind}.{fmt}")
            write(path, column, m)
            cli, cli_wall = best(lambda p=path: child([sys.executable, "-m", "deniable", "estimate", p,
                                                       "-c", "answer", "--json"]), repeat)
            ref, ref_wall = best(lambda p=path, k=kind: child([sys.executable, "-c", ONE_LINER, p, k]), repeat)
            rows.append(f"| `deniable estimate`, {kind} ({m.name}), {fmt}, {size:,} rows | {cli:.2f} s "
                        f"({cli_wall:.2f} wall) | {ref:.2f} s ({ref_wall:.2f} wall) | {cli / ref:.2f}x | 1.3x |")
            print(rows[-1], flush=True)
            os.remove(path)
    return rows


def arrow_counts(paths: list[str], fmt: str, count: bool = True) -> None:
    """The plain count from the files: pyarrow reads each file's column and counts its values (with
    ``count`` false: the read alone)."""
    import pyarrow.parquet as pq
    from pyarrow import csv

    for path in paths:
        table = (pq.read_table(path, columns=["answer"]) if fmt == "parquet"
                 else csv.read_csv(path, convert_options=csv.ConvertOptions(include_columns=["answer"])))
        if count:
            table.column("answer").value_counts()


def aggregate_rows(tmp: str, n: int, repeat: int) -> list[str]:
    import dask.array as da

    from deniable import scale

    m = mechanisms()["int"]
    rng = np.random.default_rng(1)
    reports = m.privatize_many(rng.integers(0, 16, n), rng=rng)
    parts = np.array_split(reports, 4)
    array = da.from_array(reports, chunks=len(parts[0]))
    scale.aggregate(m, array, scheduler="threads")  # Dask's first call imports and sets up
    ref, ref_wall = best(lambda: timed(lambda: scale.aggregate(m, array, scheduler="threads")), repeat)
    rows = []
    for fmt in ("parquet", "csv"):
        paths = [os.path.join(tmp, f"part{i}.{fmt}") for i in range(4)]
        for path, part in zip(paths, parts, strict=True):
            write(path, part, m)
        stat = scale.aggregate_files(m, paths, "answer", scheduler="threads")
        assert stat == scale.aggregate(m, array, scheduler="threads"), "aggregate_files counts differ"
        cpu, wall = best(lambda p=paths: timed(lambda: scale.aggregate_files(m, p, "answer", scheduler="threads")),
                         repeat)
        arrow, _ = best(lambda p=paths, f=fmt: timed(lambda: arrow_counts(p, f)), repeat)
        read, _ = best(lambda p=paths, f=fmt: timed(lambda: arrow_counts(p, f, count=False)), repeat)
        rows.append(f"| `scale.aggregate_files`, integer GRR(16), 4 {fmt} files, {n:,} rows (threads) | "
                    f"{cpu:.3f} s ({wall:.3f} wall; {n / cpu / 1e6:.1f}M rows/CPU-s) | {ref:.3f} s "
                    f"({ref_wall:.3f} wall; `scale.aggregate` of a 4-chunk Dask array); pyarrow read + `value_counts`: "
                    f"{arrow:.3f} s; the read alone {read:.3f} s | {cpu / ref:.1f}x; {cpu / arrow:.1f}x pyarrow; "
                    f"{(cpu - read) / ref:.1f}x beyond the read | 1.5x |")
        print(rows[-1], flush=True)
        for path in paths:
            os.remove(path)
    return rows


def privatize_rows(tmp: str, n: int, repeat: int, kinds: list[str]) -> list[str]:
    """``deniable privatize`` of a column of answers against pyarrow's read + write of the same file: 16 text
    categories (GRR), integer-coded categories (GRR(16)), yes/no words (BinaryRR) and 16 text categories
    made into OUE bit vectors (written as hex), from CSV and Parquet."""
    cats = mechanisms()["str"].domain
    answers: dict[str, tuple[str, Callable[[np.random.Generator], Any], list[str]]] = {
        "str": ("16 text categories, GRR", lambda r: r.choice(list(cats), n),
                ["-m", "grr", "--categories", ",".join(cats)]),
        "int": ("integer categories, GRR(16)", lambda r: r.integers(0, 16, n),
                ["-m", "grr", "--categories", ",".join(map(str, range(16)))]),
        "bool": ("yes/no words, BinaryRR", lambda r: np.where(r.random(n) < 0.3, "yes", "no"), ["-m", "binary-rr"]),
        "bits": ("16 text categories, OUE bit vectors", lambda r: r.choice(list(cats), n),
                 ["-m", "oue", "--categories", ",".join(cats)]),
    }
    rows = []
    for kind in kinds:
        if kind not in answers:
            continue
        what, make, options = answers[kind]
        for fmt in ("csv", "parquet"):
            path, out = os.path.join(tmp, f"answers.{fmt}"), os.path.join(tmp, f"out.{fmt}")
            write(path, make(np.random.default_rng(2)), mechanisms()["str"])
            cli, cli_wall = best(lambda p=path, o=out, a=options: child(
                [sys.executable, "-m", "deniable", "privatize", p, "-c", "answer", "-e", "1", *a, "-o", o]), repeat)
            ref, ref_wall = best(lambda p=path, o=out: child([sys.executable, "-c", ARROW_COPY, p, o]), repeat)
            rows.append(f"| `deniable privatize`, {what}, {fmt}, {n:,} rows | {cli:.2f} s ({cli_wall:.2f} wall) | "
                        f"{ref:.2f} s ({ref_wall:.2f} wall; pyarrow read + write) | {cli / ref:.2f}x | 1.5x |")
            print(rows[-1], flush=True)
            os.remove(path)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each row; the least is kept")
    parser.add_argument("--only", choices=["estimate", "aggregate", "privatize"], default=None)
    parser.add_argument("--kinds", default=None, help="estimate and privatize rows: report kinds "
                        "(default int,str,bool,bits,structured; int,bits with --quick)")
    args = parser.parse_args()
    n = 20_000 if args.quick else args.rows
    kinds = args.kinds or ("int,bits" if args.quick else "int,str,bool,bits,structured")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; python {platform.python_version()}, "
          f"numpy {np.__version__}; load average at start: {os.getloadavg()[0]:.1f}\n")
    # the command line as an install leaves it, its modules byte-compiled (an editable install compiles them at
    # first import, which PYTHONDONTWRITEBYTECODE turns into a compile at every start)
    compileall.compile_dir(os.path.dirname(dn.__file__), quiet=1)
    print("| workload | deniable CPU | reference CPU | ratio | goal |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "estimate"):
            estimate_rows(tmp, n, args.repeat, kinds.split(","))
        if args.only in (None, "aggregate"):
            aggregate_rows(tmp, n, args.repeat)
        if args.only in (None, "privatize"):
            privatize_rows(tmp, n, args.repeat, kinds.split(",")[:1] if args.quick else kinds.split(","))
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
