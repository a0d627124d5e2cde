"""Range queries: simulated mean squared error of the range mechanisms against their variance formula.

    python benchmarks/bench_ranges.py            # the table of BENCHMARKS.md ("Range queries")
    python benchmarks/bench_ranges.py --quick    # fewer surveys
    python benchmarks/bench_ranges.py --paper    # the authors' setting, against their published output

For each epsilon and each mechanism (HaarHRR, hierarchical histograms with branching 2, 4 and 32 and
OUE at every level, consistent) on D = 1024 bins, ``--surveys`` surveys of n = 2**20 respondents are
drawn (``simulate_aggregate``, the aggregate's exact law) from a truncated Cauchy distribution centred
at 0.4 of the domain (scale 0.05), and 400 random ranges (endpoints uniform) are answered. Printed:
the mean squared error over surveys and ranges, the formula's mean variance at the truth
(``query_variance``) and their ratio, and the seconds one survey of n = 2**20 takes through real
reports (secure ``privatize_many``, ``aggregate``, ``estimate``, the 400 queries).

``--paper`` runs the setting of Cormode, Kulkarni & Srivastava's range-length experiment as their code
has it (``mseranges``): D = 256 bins, N = 2**26 users, e^epsilon = 3, values from a Cauchy distribution
(location 0.33 D, scale D / 10) folded at 0 and cut to the domain, every range of at least two bins
(32,640), the mean squared error over all of them per survey; against the averages of the authors'
published output for that experiment (``main/vary_b_ci_8.csv`` of their repository Tejasvk/RangeQueries:
5 runs per branching factor for the trees, 15 for the flat mechanisms), whose spread gives the tolerance.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

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


PAPER_BINS = 256
PAPER_N = 1 << 26
PAPER = {  # mechanism: (mean MSE over all ranges of >= 2 bins, its standard error, runs), the authors' output
    "OUE (flat)": (3.887e-06, 9.56e-07, 15),
    "HaarHRR": (5.747e-07, 3.47e-08, 15),
    "HH B=2 (OUE, consistent)": (5.804e-07, 3.34e-08, 5),
    "HH B=4 (OUE, consistent)": (5.150e-07, 3.03e-08, 5),
    "HH B=16 (OUE, consistent)": (6.160e-07, 9.75e-08, 5),
}


def paper_truth(location: float = 0.33) -> np.ndarray:
    """The bins' shares of ``floor(|X|)``, X Cauchy(location D, D / 10), given ``|X| < D`` (their data)."""
    def cdf(x: np.ndarray) -> np.ndarray:
        return 0.5 + np.arctan((x - location * PAPER_BINS) / (PAPER_BINS / 10)) / np.pi

    k = np.arange(PAPER_BINS, dtype=float)
    f = cdf(k + 1) - cdf(k) + cdf(-k) - cdf(-k - 1)
    return f / f.sum()


def paper(surveys: int) -> None:
    """Every range of >= 2 bins on the paper's setting: our MSE per survey against the authors' output."""
    epsilon = float(np.log(3.0))
    f = paper_truth()
    i, j = np.triu_indices(PAPER_BINS, k=1)  # bins i .. j, j > i
    ends = np.stack([i, j + 1], axis=1).astype(float)
    target = np.concatenate([[0.0], np.cumsum(f)])
    target = target[j + 1] - target[i]
    rng = np.random.default_rng(2019)
    flat = dn.OUE(PAPER_BINS, epsilon=epsilon)
    ours: dict[str, Any] = {"OUE (flat)": flat, "HaarHRR": dn.HaarHRR(0, PAPER_BINS, bins=PAPER_BINS, epsilon=epsilon)}
    for branching in (2, 4, 16):  # (their OLH trees too; simulating 2**26 OLH reports needs more memory than here)
        ours[f"HH B={branching} (OUE, consistent)"] = dn.HierarchicalHistogram(
            0, PAPER_BINS, bins=PAPER_BINS, epsilon=epsilon, branching=branching, oracle="oue")
    print("| mechanism | paper: mean MSE (SE, runs) | ours: mean MSE (SE, surveys) | formula | ours / paper | z |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, m in ours.items():
        errors = []
        for _ in range(surveys):
            if m is flat:
                counts = m.simulate_support_counts(rng.multinomial(PAPER_N, f), rng)
                cum = np.concatenate([[0.0], np.cumsum(m.estimate_from(dn.SupportCounts(m.fingerprint, counts,
                                                                                        PAPER_N)).frequencies)])
                estimate = cum[j + 1] - cum[i]
            else:
                estimate = m.estimate_from(m.simulate_aggregate(f, PAPER_N, rng)).range(ends[:, 0], ends[:, 1]).estimate
            errors.append(float(np.mean(np.square(estimate - target))))
        if m is flat:
            formula = float(np.mean((j - i + 1) * m.variance(PAPER_N)[0]))
        else:
            formula = float(np.mean(m.query_variance(PAPER_N, ends, f)))
        mean, se = float(np.mean(errors)), float(np.std(errors, ddof=1) / np.sqrt(surveys))
        theirs, their_se, runs = PAPER[name]
        z = (mean - theirs) / float(np.hypot(se, their_se))
        print(f"| {name} | {theirs:.3g} ({their_se:.2g}, {runs}) | {mean:.3g} ({se:.2g}, {surveys}) | {formula:.3g} "
              f"| {mean / theirs:.2f} | {z:+.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--surveys", type=int, default=20)
    parser.add_argument("--paper", action="store_true", help="the authors' setting against their output")
    args = parser.parse_args()
    if args.paper:
        paper(4 if args.quick else args.surveys)
        return
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
