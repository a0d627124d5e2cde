"""Numeric mechanisms speed: privatize_many per mechanism and EMS reconstruction.

Targets (issue "Numeric answers"), with the secure default (rng=None: OS
CSPRNG, exact integer sampling): Laplace, Duchi and Piecewise privatize_many
>= 10M values/s; SquareWave EMS on 10^6 reports with a 1024-bin grid < 2 s.
os.urandom's throughput bounds the first: it is printed too (the samplers
read about 1.5-4 random bytes per value). The estimates, report checks
included (each report must be one of the mechanism's outputs), are compared
with the bare aggregate (goal of issue 32: at the aggregate's cost). Each rate is shown per second of
wall time and per second of this process's CPU time (user + system, which
includes the kernel's random-byte generation); on a shared machine the CPU
figure is the one that does not depend on the other load (printed too).

    python benchmarks/bench_numeric.py            # full sizes
    python benchmarks/bench_numeric.py --quick    # tiny smoke run
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


def seconds(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and CPU time of ``fn`` over ``repeat`` runs (after one warm-up)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    scale = 100 if args.quick else 1
    repeat = 1 if args.quick else 5
    n = 10_000_000 // scale
    values = np.random.default_rng(0).uniform(0.0, 100.0, n)
    eps = args.epsilon

    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}")
    print("load average before: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'workload':44} {'per wall s':>14} {'per CPU s':>14} {'target':>12}")

    def row(name: str, items: float, times: tuple[float, float], target: float) -> None:
        wall, cpu = items / times[0], items / max(times[1], 1e-9)
        mark = "" if not target else ("  ok" if wall >= target else "  BELOW TARGET (wall)")
        print(f"{name:44} {wall:14,.0f} {cpu:14,.0f} {target:12,.0f}{mark}", flush=True)

    row(f"os.urandom (bytes, {8 * n // 1_000_000} MB)", 8 * n, seconds(lambda: os.urandom(8 * n), repeat), 0)

    mechanisms = [
        (dn.Laplace(0, 100, epsilon=eps), 10e6),
        (dn.Duchi(0, 100, epsilon=eps), 10e6),
        (dn.Piecewise(0, 100, epsilon=eps), 10e6),
        (dn.Hybrid(0, 100, epsilon=eps), 0),
        (dn.SquareWave(0, 100, epsilon=eps, bins=None), 0),
        (dn.Gaussian(0, 100, epsilon=eps, delta=1e-6), 0),
    ]
    for m, target in mechanisms:
        row(f"{m.name} privatize_many (values)", n, seconds(lambda m=m: m.privatize_many(values), repeat), target)
    # estimate = report checks + aggregate; the floor is the bare aggregate (sum and sum of squares)
    bare = seconds(lambda: (float(values.sum()), float(np.dot(values, values))), repeat)
    row("bare aggregate: sum and sum of squares", n, bare, 0)
    for m, _ in mechanisms[:4]:
        reports = m.privatize_many(values)
        took = seconds(lambda m=m, reports=reports: m.estimate(reports), repeat)
        row(f"{m.name} estimate (reports), {took[1] / max(bare[1], 1e-9):.1f}x bare (CPU)", n, took, 0)

    calls = 20_000 // scale
    duchi = mechanisms[1][0]

    def single() -> None:
        for _ in range(calls):
            duchi.privatize(42.0)

    row("Duchi single privatize (calls)", calls, seconds(single, repeat), 0)

    sw = dn.SquareWave(0, 100, epsilon=eps, bins=1024)
    m_reports = 1_000_000 // scale
    rng = np.random.default_rng(1)
    half = m_reports // 2
    data = np.concatenate([rng.normal(25, 6, half), rng.normal(65, 9, m_reports - half)])
    sw_reports = sw.privatize_many(data, rng=rng)
    stat = sw.aggregate(sw_reports)
    took, _ = seconds(lambda: sw.estimate(sw_reports), repeat)
    print(f"SquareWave estimate (aggregate + mean + EMS), {m_reports:,} reports: {took:.3f} s", flush=True)
    for method in ("ems", "em"):
        took, _ = seconds(lambda method=method: sw.distribution(stat, bins=1024, method=method), repeat)
        h = sw.distribution(stat, bins=1024, method=method)
        limit = "  ok" if took < 2.0 else "  ABOVE TARGET"
        print(
            f"SquareWave {method.upper()} {m_reports:,} reports, 1024 bins: {took:.3f} s "
            f"({h.iterations} iterations){limit if method == 'ems' else ''}",
            flush=True,
        )
    print("load average after: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
