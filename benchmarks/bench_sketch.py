"""Count-mean sketches (CMS, HCMS) and discovery (PEM): CPU time per stage and accuracy on strings.

Workload: n strings, Zipf(1.1) over 1000 words plus a long tail where 30% of
devices type a string of their own; epsilon 4, Apple's shape (k_h = 256 rows,
m = 1024 buckets), secure default randomness (OS CSPRNG). Times are CPU
seconds (``time.process_time``, all threads of this process), so they do not
count waiting for a shared machine's cores; the load average is printed.
Discovery (``HeavyHitters``, PEM over HCMS) runs on the same strings;
precision counts the found values among the true top ``top_k``. Then the
device's floor for CMS (reading the random bytes from the OS, and the exact
sampler's Bernoulli bits alone) and CMS under each accelerator
(:mod:`deniable._accelerate`: numpy, and numba when installed; the same
results), and the two exact samplers of the flips by epsilon: the lane
decoder (2 random bits a flip) and the sparse one of :mod:`deniable._skips`
(about 32 q), with the random bytes each reads. The compiled loops are
loaded before anything is timed.

    python benchmarks/bench_sketch.py            # n = 200,000
    python benchmarks/bench_sketch.py --quick    # tiny smoke run
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_limits import CountingSource  # a sibling script

import deniable as dn
from deniable import _accelerate as accelerate
from deniable import _randomness as randomness
from deniable import _skips as skips


def cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def workload(n: int, rng: np.random.Generator) -> list[str]:
    words = 1000
    weights = 1 / np.arange(1, words + 1) ** 1.1
    common = rng.choice(words, size=n, p=weights / weights.sum())
    unique = rng.random(n) < 0.3
    return [f"tail-{i}" if u else f"word-{w}" for i, (w, u) in enumerate(zip(common, unique, strict=True))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--n", type=int, default=200_000)
    args = parser.parse_args()
    n = 2_000 if args.quick else args.n
    rng = np.random.default_rng(0)
    values = workload(n, rng)
    listed = [f"word-{w}" for w in range(1000)]
    truth = np.array([values.count(w) for w in listed[:20]]) / n
    warm = dn.HeavyHitters(epsilon=4.0, max_length=8, oracle="cms")  # load numba's compiled loops, if installed
    warm.identify(warm.aggregate(warm.privatize_many(values[:2000])))
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores, shared)")
    print(f"n = {n}, epsilon = 4, k_h = 256, m = 1024, 1000 listed strings\n")
    print("| mechanism | privatize_many (secure) | aggregate | estimate 1000 listed | estimate_values 10 | "
          "report bits | max abs error, top 20 | mean SE, top 20 |")
    print("|---|---|---|---|---|---|---|---|")
    for cls in (dn.CountMeanSketch, dn.HadamardCountMeanSketch):
        m = cls(listed, epsilon=4.0, rows=256, width=1024)
        t_priv, reports = cpu(lambda m=m: m.privatize_many(values))
        t_agg, stat = cpu(lambda m=m, r=reports: m.aggregate(r))
        t_est, est = cpu(lambda m=m, s=stat: m.estimate_from(s))
        t_vals, _ = cpu(lambda m=m, s=stat: m.estimate_values(s, listed[:10]))
        err = float(np.abs(est.frequencies[:20] - truth).max())
        se = float(est.std_errors[:20].mean())
        print(f"| {cls.__name__} | {t_priv:.2f} s ({n / t_priv / 1e3:.0f}k/s) | {t_agg:.3f} s "
              f"({n / t_agg / 1e6:.2f}M/s) | {t_est:.3f} s | {t_vals:.4f} s | {m.report_bits} | "
              f"{err:.4f} | {se:.4f} |")

    print("\n| discovery | privatize_many (secure) | aggregate | identify | recall top 10 | recall top 20 | "
          "precision | median relative count error (found true values) |")
    print("|---|---|---|---|---|---|---|---|")
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    ranked = sorted(counts, key=lambda v: -counts[v])
    for oracle, top_k in (("cms", 16), ("cms", 32), ("hcms", 32)):
        hh = dn.HeavyHitters(epsilon=4.0, max_length=8, top_k=top_k, oracle=oracle)
        t_priv, reports = cpu(lambda hh=hh: hh.privatize_many(values))
        t_agg, stat = cpu(lambda hh=hh, r=reports: hh.aggregate(r))
        t_id, found = cpu(lambda hh=hh, s=stat: hh.identify(s))
        got = set(found.values)
        recall = [len(got & set(ranked[:k])) / k for k in (10, 20)]
        precision = len(got & set(ranked[:top_k])) / max(len(got), 1)
        rel = [abs(c - counts[v]) / counts[v] for v, c in zip(found.values, found.counts, strict=True) if v in counts]
        err = float(np.median(rel)) if rel else float("nan")
        print(f"| PEM over {oracle.upper()}, max_length 8, top_k {top_k} | {t_priv:.2f} s | {t_agg:.3f} s | "
              f"{t_id:.2f} s | {recall[0]:.1f} | {recall[1]:.2f} | {precision:.2f} | {err:.3f} |")
    floor(n, values, listed)


def floor(n: int, values: list[str], listed: list[str]) -> None:
    """CMS's device floor (random bytes and exact bits for n reports of 1024 bits) and CMS per accelerator."""
    bits = n * 1024
    t_os, _ = cpu(lambda: [os.urandom(1 << 20) for _ in range(bits // 4 >> 20)])
    flip = dn.CountMeanSketch(epsilon=4.0).flip_numerator
    t_bits, _ = cpu(lambda: randomness.bernoulli_packed(flip, 32, bits, randomness.SecureSource()))
    print(f"\n| CMS device floor, n = {n:,} reports of 1024 bits | CPU s |\n|---|---:|")
    print(f"| {bits // 4 >> 20} MiB from the OS (`os.urandom`, 2 random bits per report bit) | {t_os:.3f} |")
    print(f"| the exact sampler's bits (`bernoulli_packed`, OS bytes included) | {t_bits:.3f} |")
    print("\n| accelerator | CMS privatize_many | CMS aggregate | estimate 1000 listed | "
          "PEM over CMS (max_length 8, top_k 32) aggregate + identify |\n|---|---:|---:|---:|---:|")
    previous = accelerate.accelerator()
    for name in ("numpy", "numba") if accelerate.numba_available() else ("numpy",):
        accelerate.set_accelerator(name)
        m = dn.CountMeanSketch(listed, epsilon=4.0, rows=256, width=1024)
        t_priv, reports = cpu(lambda m=m: m.privatize_many(values))
        t_agg, stat = cpu(lambda m=m, r=reports: m.aggregate(r))
        t_est, _ = cpu(lambda m=m, s=stat: m.estimate_from(s))
        hh = dn.HeavyHitters(epsilon=4.0, max_length=8, top_k=32, oracle="cms")
        found = hh.privatize_many(values)
        t_hh, _ = cpu(lambda hh=hh, r=found: hh.identify(hh.aggregate(r)))
        print(f"| {name} | {t_priv:.2f} s | {t_agg:.3f} s | {t_est:.3f} s | {t_hh:.2f} s |")
    accelerate.set_accelerator(previous)
    flip_samplers(bits)


def flip_samplers(bits: int) -> None:
    """CPU and random bytes of ``bits`` CMS flips by each exact sampler, at a few epsilons."""
    print(f"\n| CMS epsilon | flip probability q | {bits:,} flips: lane decoder | sparse (skips) | chosen |")
    print("|---:|---:|---:|---:|---|")
    for epsilon in (2.0, 4.0, 6.0, 8.0, 12.0):
        flip = dn.CountMeanSketch(epsilon=epsilon).flip_numerator
        cells = []
        for sampler in (randomness.bernoulli_packed, skips.sparse_packed):
            source = CountingSource()
            t, _ = cpu(lambda sampler=sampler, source=source, flip=flip: sampler(flip, 32, bits, source))
            cells.append(f"{t:.3f} s, {source.read / 2**20:.1f} MiB")
        chosen = "sparse" if flip < (1 << 32) * skips.SPARSE_BELOW else "lane decoder"
        print(f"| {epsilon:g} | {flip / 2**32:.4f} | {cells[0]} | {cells[1]} | {chosen} |")


if __name__ == "__main__":
    main()
