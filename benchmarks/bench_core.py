"""Core speed: device-side privatization, aggregation and estimation.

Targets (issue "Core"), all with the secure default (OS CSPRNG):
GRR k=16 privatize_many >= 15M reports/s; OUE k=1024 >= 400k reports/s
(bit-packed); OLH k=1024 estimate from 10^6 reports >= 1M reports/s; GRR
aggregate >= 200M reports/s; a single ``privatize`` call >= 100k calls/s.

    python benchmarks/bench_core.py            # full sizes
    python benchmarks/bench_core.py --quick    # tiny smoke run
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np

import deniable as dn


def rate(fn: Callable[[], object], items: int, repeat: int) -> float:
    """Median items per second over ``repeat`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return items / statistics.median(times)


def sizes(doc: str) -> tuple[int, int]:
    """``(scale, repeat)`` from the command line: ``--quick`` divides sizes by 100 and runs once."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    quick = parser.parse_args().quick
    return (100, 1) if quick else (1, 5)


def main() -> None:
    scale, repeat = sizes(__doc__)
    rng = np.random.default_rng(0)
    rows: list[tuple[str, float, float]] = []

    grr = dn.GRR(16, epsilon=1.0)
    n = 10_000_000 // scale
    values = rng.integers(0, 16, n)
    rows.append(("GRR k=16 privatize_many", rate(lambda: grr.privatize_many(values), n, repeat), 15e6))
    reports = grr.privatize_many(values)
    rows.append(("GRR k=16 aggregate", rate(lambda: grr.aggregate(reports), n, repeat), 200e6))

    oue = dn.OUE(1024, epsilon=1.0)
    n = 1_000_000 // scale
    values = rng.integers(0, 1024, n)
    rows.append(("OUE k=1024 privatize_many (packed)", rate(lambda: oue.privatize_many(values), n, repeat), 400e3))
    reports = oue.privatize_many(values)
    rows.append(("OUE k=1024 estimate", rate(lambda: oue.estimate(reports), n, repeat), 0))

    olh = dn.OLH(1024, epsilon=1.0)
    reports = olh.privatize_many(values)
    rows.append(("OLH k=1024 privatize_many", rate(lambda: olh.privatize_many(values), n, repeat), 0))
    rows.append(("OLH k=1024 estimate", rate(lambda: olh.estimate(reports), n, repeat), 1e6))

    hr = dn.HadamardResponse(1024, epsilon=1.0)
    reports = hr.privatize_many(values)
    rows.append(("Hadamard k=1024 privatize_many", rate(lambda: hr.privatize_many(values), n, repeat), 0))
    rows.append(("Hadamard k=1024 estimate", rate(lambda: hr.estimate(reports), n, repeat), 0))

    calls = 200_000 // scale
    binary = dn.BinaryRR(epsilon=1.0)

    def single() -> None:
        for _ in range(calls):
            binary.privatize(True)

    rows.append(("BinaryRR single privatize (calls/s)", rate(single, calls, repeat), 100e3))

    def single_grr() -> None:
        for _ in range(calls):
            grr.privatize(3)

    rows.append(("GRR k=16 single privatize (calls/s)", rate(single_grr, calls, repeat), 100e3))

    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'workload':42} {'per second':>14} {'target':>12}")
    for name, value, target in rows:
        mark = "" if not target else ("  ok" if value >= target else "  BELOW TARGET")
        print(f"{name:42} {value:14,.0f} {target:12,.0f}{mark}")


if __name__ == "__main__":
    main()
