"""Frequent items and itemsets of set-valued answers (SVIM, SVSM): recall, NCR and error of the top k.

    python benchmarks/bench_set_mining.py            # the table of BENCHMARKS.md ("Frequent items and itemsets")
    python benchmarks/bench_set_mining.py --quick    # n = 50,000 and two epsilons
    python benchmarks/bench_set_mining.py --paper    # the counting phase against the paper's variance formula

A synthetic stand-in for the paper's setting (Wang, Li & Jha, S&P 2018: about 10^6 users with
click-stream sets, top k of items and itemsets, epsilon 0.5 to 4): n users, 1,000 items, each set
1 to 10 independent Zipf(1.1) draws (repeats merged), and with probability 0.1 a planted triple
{3, 5, 8} added. For each epsilon and protocol, one survey goes through real reports (a seeded
generator). Printed: recall of the true top k (= precision: k are answered), NCR (the paper's
normalized cumulative rank: the true i-th most frequent scores k - i + 1, the found ones' scores
over the total), the mean squared error of the found true values' shares, the mean of their squared
SEs (what the delta method predicts for it, when the size correction's assumption holds), L, and the
seconds of the survey.

``--paper``: SVIM's counting phase (padding and sampling of the 2k = 20 candidates to ``ell`` with GRR,
n = 500,000 users: the counting group's half of 10^6) against the paper's variance of an item's
estimate, GRR's ``ell^2 (e^e + d - 2) / (n (e^e - 1)^2)`` over ``d = 20 + ell`` cells at the amplified
``e = ln(ell (e^epsilon - 1) + 1)`` (the share 0 term). ``SetValued(..., epsilon=epsilon, oracle="grr")``
runs GRR at ``e`` (rounded down) and states the report's exact loss; printed: the oracle ``"auto"`` picks,
GRR's budget, the stated epsilon, ``SetValued.variance`` and the variance of a null item's estimate over
4,000 simulated surveys (the padded draws multinomial, the oracle's support counts drawn exactly given
them), against the paper's formula.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import deniable as dn
from deniable.heavy._quality import zipf_sets

ITEMS, TOP = 1000, 10


def _scores(found: dn.FrequentSets, truth: dict[tuple[int, ...], float]) -> tuple[float, float, float, float]:
    best = sorted(truth, key=lambda v: -truth[v])[:TOP]
    weight = {v: TOP - i for i, v in enumerate(best)}
    rows = [(v if isinstance(v, tuple) else (v,), f, s) for v, f, s in found.top()]
    hits = [(v, f, s) for v, f, s in rows if v in weight]
    mse = float(np.mean([(f - truth[v]) ** 2 for v, f, _ in hits])) if hits else float("nan")
    se2 = float(np.mean([s**2 for _, _, s in hits])) if hits else float("nan")
    return len(hits) / TOP, sum(weight[v] for v, _, _ in hits) / sum(weight.values()), mse, se2


PAPER_CANDIDATES, PAPER_N, PAPER_SURVEYS = 20, 500_000, 4000


def _grr_variance(epsilon: float, cells: int, ell: int, n: int) -> float:
    """The paper's variance of an item's share at 0: ``ell^2`` times GRR's ``q (1 - q) / (n (p - q)^2)``."""
    e = np.exp(epsilon)
    return float(ell**2 * (e + cells - 2) / (n * (e - 1) ** 2))


def _simulated(m: dn.SetValued, rng: np.random.Generator, surveys: int) -> float:
    """The variance of item 0's estimate (held by nobody) over simulated surveys of ``PAPER_N`` users."""
    k = len(m.domain)
    law = np.zeros(k + m.ell)
    law[1:k] = 0.5 / (k - 1)  # the other items drawn half the time, dummies the rest
    law[k:] = 0.5 / m.ell
    out = np.empty(surveys)
    for r in range(surveys):
        counts = m.mechanism.simulate_support_counts(rng.multinomial(PAPER_N, law), rng)
        out[r] = m.estimate_from(dn.SupportCounts(m.fingerprint, counts, PAPER_N)).frequencies[0]
    return float(np.var(out, ddof=1))


def paper(surveys: int) -> None:
    rng = np.random.default_rng(2018)
    print(f"{PAPER_CANDIDATES} candidates, n = {PAPER_N} (counting group), {surveys} simulated surveys per row")
    print("| epsilon | ell | auto picks | GRR at | stated epsilon | formula | simulated | paper's e | "
          "paper's formula | ours / paper |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for epsilon in (0.5, 1.0, 2.0, 4.0):
        for ell in (1, 3, 5):
            auto = dn.SetValued(PAPER_CANDIDATES, epsilon=epsilon, max_items=ell)
            ours = dn.SetValued(PAPER_CANDIDATES, epsilon=epsilon, max_items=ell, oracle="grr")
            amplified = float(np.log(ell * np.expm1(epsilon) + 1))
            ours_formula = float(ours.variance(PAPER_N)[0])
            paper_formula = _grr_variance(amplified, PAPER_CANDIDATES + ell, ell, PAPER_N)
            print(f"| {epsilon:g} | {ell} | {auto.mechanism.name} | {ours.oracle_epsilon:.4f} | {ours.epsilon:.4f} | "
                  f"{ours_formula:.3g} | {_simulated(ours, rng, surveys):.3g} | {amplified:.4f} | "
                  f"{paper_formula:.3g} | {ours_formula / paper_formula:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--paper", action="store_true", help="the counting phase against the paper's formula")
    args = parser.parse_args()
    if args.paper:
        paper(400 if args.quick else PAPER_SURVEYS)
        return
    n = 50_000 if args.quick else 1_000_000
    epsilons = (1.0, 4.0) if args.quick else (0.5, 1.0, 2.0, 4.0)
    rng = np.random.default_rng(2018)
    sets, share = zipf_sets(n, rng, items=ITEMS, s=1.1, max_draws=10, planted=(3, 5, 8), planted_share=0.1)
    singles = {(i,): share([i]) for i in range(ITEMS)}
    head = sorted(range(ITEMS), key=lambda i: -singles[(i,)])[:20]
    groups = {c: share(c) for r in (2, 3) for c in itertools.combinations(sorted(head), r)}
    print(f"n = {n}, {ITEMS} items, sets of 1-10 Zipf(1.1) draws, top k = {TOP}")
    print("| epsilon | protocol | recall | NCR | MSE of found shares | mean SE^2 | L | seconds |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for epsilon in epsilons:
        for name, cls, truth in (("SVIM", dn.FrequentItems, singles), ("SVSM", dn.FrequentItemsets,
                                                                       {**singles, **groups})):
            protocol = cls(ITEMS, epsilon=epsilon, top_k=TOP, max_items=13)
            start = time.perf_counter()
            found = protocol.run(sets, rng=rng)
            seconds = time.perf_counter() - start
            recall, ncr, mse, se2 = _scores(found, truth)
            print(f"| {epsilon:g} | {name} | {recall:.2f} | {ncr:.2f} | {mse:.3g} | {se2:.3g} | {found.ell} | "
                  f"{seconds:.1f} |")


if __name__ == "__main__":
    main()
