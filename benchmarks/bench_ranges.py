"""Range queries: simulated mean squared error of the range mechanisms against their variance formula.

    python benchmarks/bench_ranges.py            # the table of BENCHMARKS.md ("Range queries")
    python benchmarks/bench_ranges.py --quick    # fewer surveys

For each epsilon and each mechanism (HaarHRR, hierarchical histograms with branching 2, 4 and 32 and
OUE at every level, consistent) on D = 1024 bins, ``--surveys`` surveys of n = 2**20 respondents are
drawn (``simulate_aggregate``, the aggregate's exact law) from a truncated Cauchy distribution centred
at 0.4 of the domain (scale 0.05), and 400 random ranges (endpoints uniform) are answered. Printed:
the mean squared error over surveys and ranges, the formula's mean variance at the truth
(``query_variance``) and their ratio, and the seconds one survey of n = 2**20 takes through real
reports (secure ``privatize_many``, ``aggregate``, ``estimate``, the 400 queries).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import deniable as dn

BINS = 1024
N = 1 << 20


def truth() -> np.ndarray:
    x = (np.arange(BINS) + 0.5) / BINS
    f = 1.0 / (1.0 + ((x - 0.4) / 0.05) ** 2)
    return f / f.sum()


def mechanisms(epsilon: float) -> dict[str, dn.RangeMechanism]:
    out: dict[str, dn.RangeMechanism] = {"HaarHRR": dn.HaarHRR(0, 1, bins=BINS, epsilon=epsilon)}
    for branching in (2, 4, 32):
        out[f"HH B={branching}"] = dn.HierarchicalHistogram(0, 1, bins=BINS, epsilon=epsilon, branching=branching,
                                                            oracle="oue")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--surveys", type=int, default=20)
    args = parser.parse_args()
    surveys = 4 if args.quick else args.surveys
    rng = np.random.default_rng(2019)
    ends = np.sort(rng.random((400, 2)), axis=1)
    print("| epsilon | mechanism | simulated MSE | formula | ratio | seconds per survey (real reports) |")
    print("|---|---|---:|---:|---:|---:|")
    for epsilon in (0.2, 0.6, 1.0, 1.4, 2.0):
        for name, m in mechanisms(epsilon).items():
            f = truth()
            exact = np.interp(ends, m.edges, np.concatenate([[0.0], np.cumsum(f)]))
            target = exact[:, 1] - exact[:, 0]
            errors = [m.estimate_from(m.simulate_aggregate(f, N, rng)).range(ends[:, 0], ends[:, 1]).estimate - target
                      for _ in range(surveys)]
            mse = float(np.mean(np.square(errors)))
            formula = float(np.mean(m.query_variance(N, ends, f)))
            seconds = ""
            if epsilon == 1.0:
                values = np.minimum(m.low + (rng.choice(m.bins, N, p=f) + rng.random(N)) / m.bins, m.high)
                start = time.perf_counter()
                m.estimate(m.privatize_many(values)).range(ends[:, 0], ends[:, 1])
                seconds = f"{time.perf_counter() - start:.2f}"
            print(f"| {epsilon} | {name} | {mse:.3g} | {formula:.3g} | {mse / formula:.2f} | {seconds} |", flush=True)


if __name__ == "__main__":
    main()
