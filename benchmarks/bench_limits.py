"""Hot paths next to the limits of the machine (CPU time, not wall time).

Each row times one of deniable's hot paths and, beside it, the limit it is
held to: a plain-numpy pass over the same data that no implementation of
the workload can beat by much (or the target of the performance issue).
Times are CPU seconds (``time.process_time`` in this process, user + system
time of a child process), so other load on a shared machine distorts them
less than wall time; the machine, the versions and the load average (1, 5
and 15 minutes) are printed before the table and the load again after it.
Rows that depend on the state of a fresh process (``import deniable``, the
first OLH estimate, the numpy fallback sampler without numba loaded) run in
child processes.

    python benchmarks/bench_limits.py            # every row, full sizes (about 15 min on 2 cores)
    python benchmarks/bench_limits.py --quick    # tiny smoke run
    python benchmarks/bench_limits.py --cli --rows 10000000   # the command-line rows alone, 10^7 rows
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial

import numpy as np

import deniable as dn
from deniable import _accelerate as accelerate


def cpu_seconds(fn: Callable[[], object], repeat: int) -> float:
    """Smallest CPU time of ``repeat`` runs (after one warm-up): the least disturbed one."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def unary_estimate(scale: int, repeat: int) -> tuple[str, str, str]:
    """OUE k=1024 column counts from packed reports, against one popcount pass over them."""
    n = 1_000_000 // scale
    oue = dn.OUE(1024, epsilon=1.0)
    rng = np.random.default_rng(0)
    packed = oue.privatize_many(rng.integers(0, 1024, n), rng=rng)
    now = cpu_seconds(lambda: oue.estimate(packed), repeat)
    words = packed.view(np.uint64)
    if hasattr(np, "bitwise_count"):
        floor = cpu_seconds(lambda: np.bitwise_count(words).sum(), repeat)
        limit = "one `bitwise_count` pass over the packed words (the data read once)"
    else:
        floor = cpu_seconds(lambda: words.sum(), repeat)
        limit = "one sum over the packed words (the data read once)"
    return (
        f"OUE k=1024 estimate from {n:,} packed reports",
        f"{n / now / 1e6:.1f}M reports/s",
        f"{n / floor / 1e6:.0f}M reports/s: {limit}",
    )


def subset_privatize(scale: int, repeat: int) -> tuple[str, str, str]:
    """omega-SS secure privatize per report at k = 65,536 and 4,096, against reading its random bytes."""
    per_report = {}
    for k, n in ((4096, 4000 // scale), (65536, 400 // scale)):
        ss = dn.SubsetSelection(k, epsilon=1.0)
        values = np.random.default_rng(0).integers(0, k, max(n, 2))
        per_report[k] = cpu_seconds(partial(ss.privatize_many, values), repeat) / values.size
    k = 65536
    floor = cpu_seconds(lambda: os.urandom(k * 400 // scale), repeat) / (400 // scale)
    return (
        f"SubsetSelection k=65,536 (omega={dn.SubsetSelection(k, epsilon=1.0).omega}) secure privatize",
        f"{per_report[k] * 1e3:.2f} ms/report, {per_report[k] / per_report[4096]:.1f}x k=4,096 "
        f"({per_report[4096] * 1e3:.3f} ms)",
        f"linear in k: 16x k=4,096; reading k random bytes from the OS: {floor * 1e3:.2f} ms",
    )


class CountingSource:
    """The OS CSPRNG, counting the bytes read (the secure path, as ``rng=None`` runs it)."""

    secure = True

    def __init__(self) -> None:
        self.read = 0

    def random_bytes(self, n: int) -> bytes:
        self.read += n
        return os.urandom(n)


def _bits_cells(backend: str, scale: int, repeat: int) -> list[str]:
    """The privatize cells of one sampler backend, measured in this process."""
    mechanisms = (
        ("OUE k=1024", dn.OUE(1024, epsilon=1.0)),
        ("SUE k=1024", dn.SUE(1024, epsilon=1.0)),
        ("RAPPOR 64 bits", dn.RAPPOR(range(128), epsilon=2.0, num_bits=64)),
    )
    n = 200_000 // scale
    values = np.random.default_rng(0).integers(0, 128, n)
    accelerate.set_accelerator(backend)
    cells = []
    for name, m in mechanisms:
        source = CountingSource()
        m._sample(m.domain_obj.encode(values), source)
        seconds = cpu_seconds(partial(m.privatize_many, values), repeat)
        tracemalloc.start()
        m.privatize_many(values)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        width = m.privatize_many(values[:1]).nbytes
        cells.append(f"{name} ({backend}): {source.read / n:.0f} B random, {seconds / n * 1e6:.2f} us, "
                     f"peak {peak / n:.0f} B ({peak / n / width:.1f}x its {width} B report)")
    return cells


def bits_privatize(scale: int, repeat: int) -> tuple[str, str, str]:
    """OUE/SUE k=1024 and RAPPOR secure privatize: random bytes, CPU time and peak memory per report,
    with each sampler backend available (numba when installed, and the numpy fallback), each in a
    fresh process (the numpy one never imports numba, as in an install without it)."""
    backends = ["numba", "numpy"] if accelerate.numba_available() else ["numpy"]
    cells = []
    for backend in backends:
        out = subprocess.run([sys.executable, __file__, "--bits-child", backend, str(scale), str(repeat)],
                             check=True, capture_output=True, text=True,
                             env={**os.environ, "DENIABLE_ACCELERATOR": backend}).stdout
        cells += json.loads(out)
    return (
        "OUE/SUE k=1024 and RAPPOR (64 bits) secure privatize, per report",
        "; ".join(cells),
        "randomness: 2 bits per output bit by an exact lazy comparison (256 B for OUE/SUE k=1024, 16 B per "
        "64-bit RAPPOR word), at most 300 B at k=1024; CPU: half the old bit-sliced sampler's (OUE 3.7-4.2 us, "
        "SUE 3.7-3.8 us, RAPPOR 0.38-0.39 us: at most 1.9 / 1.9 / 0.19 us); memory: within 2x of the report",
    )


def rappor_decode(scale: int, repeat: int) -> tuple[str, str, str]:
    """RAPPOR least-squares decode of 1,024 candidates x 64 cohorts x 64 bits (the most bits a
    report holds), against the issue's target of 0.2 s."""
    k = 1024 // min(scale, 8)
    m = dn.RAPPOR(range(k), epsilon=4.0, num_bits=64, num_cohorts=64)
    rng = np.random.default_rng(0)
    stat = m.aggregate(m.privatize_many(rng.integers(0, k, 200_000 // scale), rng=rng))
    seconds = cpu_seconds(partial(m.estimate_from, stat), min(repeat, 3))
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    limited = "one (threadpoolctl)" if importlib.util.find_spec("threadpoolctl") else f"{threads} (no threadpoolctl)"
    return (
        f"RAPPOR decode, {k:,} candidates x 64 cohorts x 64 bits (BLAS threads: {limited})",
        f"{seconds:.3f} CPU s",
        "0.2 s",
    )


HEAVY = ("scipy.stats", "pandas", "matplotlib", "fastapi", "sqlalchemy", "dask")
IMPORTED = "import json, sys; import {}; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {!r})))"


def import_time(scale: int, repeat: int) -> tuple[str, str, str]:
    """CPU of a fresh ``python -c "import deniable"`` against ``import numpy``, and which heavy modules it loads."""
    runs = max(1, min(repeat, 5))
    cpu = {name: min(child_seconds([sys.executable, "-c", f"import {name}"]) for _ in range(runs))
           for name in ("deniable", "numpy")}
    roots = {"scipy", *(h.split(".")[0] for h in HEAVY)}
    loaded = json.loads(subprocess.run([sys.executable, "-c", IMPORTED.format("deniable", roots)],
                                       check=True, capture_output=True, text=True).stdout)
    heavy = [h for h in HEAVY if h in loaded]
    scipy = "scipy not imported" if "scipy" not in loaded else f"scipy modules: {len(loaded)}"
    return (
        "`import deniable` (fresh process)",
        f"{cpu['deniable']:.2f} CPU s vs {cpu['numpy']:.2f} s for `import numpy`; heavy modules imported: "
        f"{', '.join(heavy) or 'none'} ({scipy})",
        f"numpy's import plus deniable's own modules; none of {', '.join(HEAVY)} (scipy only where needed)",
    )


OLH_CHILD = """
import json, sys, time
import numpy as np
import deniable as dn
n = int(sys.argv[1])
rng = np.random.default_rng(0)
reports = dn.OLH(1024, epsilon=1.0).privatize_many(rng.integers(0, 1024, n), rng=rng)
m = dn.OLH(1024, epsilon=1.0)
start = time.process_time()
m.estimate(reports)
cold = time.process_time() - start
warm = float("inf")
for _ in range(int(sys.argv[2])):
    start = time.process_time()
    m.estimate(reports)
    warm = min(warm, time.process_time() - start)
values = reports["value"].astype(np.int64)
start = time.process_time()
np.bincount(values, minlength=m.g)
floor = time.process_time() - start
print(json.dumps([cold / n, warm / n, floor / n, m.g]))
"""


def olh_estimate(scale: int, repeat: int) -> tuple[str, str, str]:
    """OLH k=1024 estimate: the first call in a fresh process (cold) and the best later one (warm)."""
    n = 1_000_000 // scale
    out = subprocess.run([sys.executable, "-c", OLH_CHILD, str(n), str(repeat)],
                         check=True, capture_output=True, text=True).stdout
    cold, warm, floor, g = json.loads(out)
    return (
        f"OLH k=1024 (epsilon 1, g={g}) estimate from {n:,} reports, first call in a fresh process and later",
        f"cold {cold * 1e9:.0f} ns/report, warm {warm * 1e9:.0f} ns/report ({cold / warm:.1f}x)",
        f"cold = warm (no one-time set-up); one `bincount` of the report values: {floor * 1e9:.1f} ns/report",
    )


def laplace_estimate(scale: int, repeat: int) -> tuple[str, str, str]:
    """Laplace estimate (every report checked against the lattice) against the bare moments of the reports."""
    n = 10_000_000 // scale
    m = dn.Laplace(0, 100, epsilon=1.0)
    reports = m.privatize_many(np.random.default_rng(0).uniform(0, 100, n), rng=1)
    now = cpu_seconds(lambda: m.estimate(reports), repeat)
    floor = cpu_seconds(lambda: (reports.sum(), np.einsum("i,i->", reports, reports)), repeat)
    return (
        f"Laplace estimate from {n:,} reports (each checked to be a lattice point in the report range)",
        f"{n / now / 1e6:.0f}M reports/s",
        f"{n / floor / 1e6:.0f}M reports/s: the bare aggregate (`sum` and `einsum` sum of squares, no BLAS threads)",
    )


ONE_LINER = """
import json, sys
import numpy as np
import pandas as pd
import deniable as dn
from deniable import _accelerate as accelerate
path = sys.argv[1]
m = dn.from_config(json.load(open(path + ".deniable.json")))
read = pd.read_csv if path.endswith(".csv") else pd.read_parquet
counts = read(path, columns=["answer"]) if path.endswith(".parquet") else read(path, usecols=["answer"], dtype=str)
shares = counts["answer"].value_counts()
stat = dn.SupportCounts(m.fingerprint, np.array([int(shares.get(c, 0)) for c in m.domain]), len(counts))
print(m.estimate_from(stat).frequencies)
"""


def child_seconds(args: list[str]) -> float:
    """CPU seconds (user + system) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _answers_file(tmp: str, kind: str, n: int, m: dn.GRR, private: bool) -> str:
    """A 4-column file whose ``answer`` column holds GRR categories (or reports), with its config."""
    import pandas as pd

    rng = np.random.default_rng(0)
    answers = rng.choice(list(m.domain), n)
    frame = pd.DataFrame({"id": np.arange(n), "age": rng.integers(18, 90, n),
                          "answer": m.privatize_many(answers) if private else answers,
                          "city": rng.choice(["Paris", "Lyon", "Nice"], n)})
    path = os.path.join(tmp, f"{'reports' if private else 'answers'}.{kind}")
    frame.to_csv(path, index=False) if kind == "csv" else frame.to_parquet(path)
    with open(path + ".deniable.json", "w") as fh:
        json.dump(m.to_config(), fh)
    return path


CLI_ROWS = 10_000_000


def cli_estimate(scale: int, repeat: int) -> tuple[str, str, str]:
    """``deniable estimate`` on a GRR column of a 4-column CSV / Parquet file, against the pandas
    one-liner (read the column, ``value_counts``, ``estimate_from``); CPU of each process."""
    n = CLI_ROWS // scale
    m = dn.GRR([f"c{i}" for i in range(16)], epsilon=1.0)
    cells = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("csv", "parquet"):
            path = _answers_file(tmp, kind, n, m, private=True)
            cli = min(child_seconds([sys.executable, "-m", "deniable", "estimate", path, "-c", "answer",
                                     "--json"]) for _ in range(min(repeat, 3)))
            pandas = min(child_seconds([sys.executable, "-c", ONE_LINER, path]) for _ in range(min(repeat, 3)))
            cells.append(f"{kind}: {cli:.2f} s vs {pandas:.2f} s ({cli / pandas:.1f}x)")
    return (f"`deniable estimate`, GRR column of {n:,} rows in a 4-column file (process CPU)",
            "; ".join(cells), "the pandas one-liner's CPU time x 1.3")


PLAIN_COPY = """
import sys
path, out = sys.argv[1], sys.argv[2]
if path.endswith(".parquet"):
    import pyarrow.parquet as pq
    pq.write_table(pq.read_table(path), out)
else:
    import pandas as pd
    pd.read_csv(path, dtype=str, keep_default_na=False).to_csv(out, index=False)
"""


def cli_privatize(scale: int, repeat: int) -> tuple[str, str, str]:
    """``deniable privatize`` (GRR, 16 categories) of a 4-column file, against a plain read + write
    of the same file (pyarrow for Parquet, pandas text for CSV); CPU of each process."""
    n = CLI_ROWS // scale
    m = dn.GRR([f"c{i}" for i in range(16)], epsilon=1.0)
    cells = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("csv", "parquet"):
            path = _answers_file(tmp, kind, n, m, private=False)
            out = os.path.join(tmp, f"out.{kind}")
            cli = min(child_seconds([sys.executable, "-m", "deniable", "privatize", path, "-c", "answer",
                                     "-m", "grr", "-e", "1", "--categories", ",".join(m.domain), "-o", out])
                      for _ in range(min(repeat, 3)))
            plain = min(child_seconds([sys.executable, "-c", PLAIN_COPY, path, out])
                        for _ in range(min(repeat, 3)))
            cells.append(f"{kind}: {cli:.2f} s vs {plain:.2f} s ({cli / plain:.1f}x)")
    return (f"`deniable privatize`, GRR column of {n:,} rows in a 4-column file (process CPU)",
            "; ".join(cells), "a plain read + write's CPU time x 1.5")


ROWS = [bits_privatize, unary_estimate, subset_privatize, import_time, cli_estimate, cli_privatize,
        rappor_decode, olh_estimate, laplace_estimate]  # the order of the performance issue's table
CLI = [cli_estimate, cli_privatize]


def _version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{name} {version(name)}"
    except PackageNotFoundError:
        return f"no {name}"


def _machine() -> str:
    """The CPU's model name where the system tells it (Linux), else the platform's processor."""
    try:
        with open("/proc/cpuinfo") as fh:
            return next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def _load() -> str:
    if not hasattr(os, "getloadavg"):
        return "load average unknown"
    return "load average {:.2f} {:.2f} {:.2f} (1, 5, 15 min)".format(*os.getloadavg())


def main() -> None:
    global CLI_ROWS
    if len(sys.argv) == 5 and sys.argv[1] == "--bits-child":  # one sampler backend, in a fresh process
        print(json.dumps(_bits_cells(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--cli", action="store_true", help="only the command-line rows")
    parser.add_argument("--rows", type=int, default=CLI_ROWS, help="rows of the command-line files")
    args = parser.parse_args()
    scale, repeat = (100, 1) if args.quick else (1, 5)
    CLI_ROWS = args.rows
    versions = ", ".join(_version(name) for name in ("deniable", "numpy", "scipy", "numba", "threadpoolctl",
                                                     "pandas", "pyarrow"))
    print(f"{_machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, {versions}")
    print(f"start: {_load()}; CPU seconds")
    print()
    print("| workload | deniable | limit |")
    print("|---|---:|---|")
    start = time.perf_counter()
    for row in CLI if args.cli else ROWS:
        print("| {} | {} | {} |".format(*row(scale, repeat)), flush=True)
    print()
    print(f"end: {_load()}; {time.perf_counter() - start:.0f} s wall")


if __name__ == "__main__":
    main()
