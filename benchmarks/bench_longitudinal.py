"""Longitudinal mechanisms' speed: simulation of many devices, and one device's memoizing client.

All with the secure default (OS CSPRNG). ``privatize_many`` draws both rounds
of L-GRR / L-OSUE (or dBitFlip's buckets and bits, 1BitMean's rounding and
bit) for every value; a client's ``privatize`` derives the memoized part from
its secret (HMAC + SHAKE-256) and draws the fresh part from the OS.

    python benchmarks/bench_longitudinal.py            # full sizes
    python benchmarks/bench_longitudinal.py --quick    # tiny smoke run
"""

from __future__ import annotations

import functools
import os
import platform
from collections.abc import Callable

import numpy as np
from bench_core import rate, sizes

import deniable as dn


def main() -> None:
    scale, repeat = sizes(__doc__)
    rng = np.random.default_rng(0)
    mechanisms: list[tuple[str, object, int, Callable[[int], np.ndarray], object]] = [
        ("L-GRR k=16", dn.LGRR(16, epsilon_perm=4.0, epsilon_1=1.0), 2_000_000,
         lambda n: rng.integers(0, 16, n), 3),
        ("L-OSUE k=1024", dn.LOSUE(1024, epsilon_perm=4.0, epsilon_1=1.0), 200_000,
         lambda n: rng.integers(0, 1024, n), 3),
        ("dBitFlip k=64 d=4", dn.DBitFlip(64, d=4, epsilon=2.0), 1_000_000,
         lambda n: rng.integers(0, 64, n), 3),
        ("1BitMean [0, 86400] 11 points", dn.OneBitMean(0, 86_400, epsilon=1.0, points=11), 2_000_000,
         lambda n: rng.uniform(0, 86_400, n), 3600.0),
    ]
    rows: list[tuple[str, float]] = []
    for name, m, size, values_of, value in mechanisms:
        n = size // scale
        values = values_of(n)
        reports = m.privatize_many(values)  # type: ignore[attr-defined]
        rows.append((f"{name} privatize_many", rate(functools.partial(m.privatize_many, values), n, repeat)))  # type: ignore[attr-defined]
        rows.append((f"{name} aggregate + estimate", rate(functools.partial(m.estimate, reports), n, repeat)))  # type: ignore[attr-defined]
        client = m.client()  # type: ignore[attr-defined]
        calls = 20_000 // scale

        def reports_of_one_device(client: object = client, value: object = value, calls: int = calls) -> None:
            for _ in range(calls):
                client.privatize(value)  # type: ignore[attr-defined]

        rows.append((f"{name} client privatize (calls/s)", rate(reports_of_one_device, calls, repeat)))

    print(f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}")
    print(f"{'workload':52} {'per second':>14}")
    for name, value_per_s in rows:
        print(f"{name:52} {value_per_s:14,.0f}")


if __name__ == "__main__":
    main()
