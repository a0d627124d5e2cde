"""Post-processing the frequency estimate: MSE of the unbiased estimate, Norm-Sub, clip, normalize and the MLE.

For GRR and OUE over k in {4, 32, 256}, epsilon in {0.5, 1, 2, 4}, n in
{1,000, 100,000} and a Zipf(1.1) or uniform truth, ``--reps`` seeded
surveys are simulated (``deniable.simulate``: exact draws of the support
counts, target ``"respondents"``, so the error is the randomization's alone)
and every method sees the same surveys:

* ``unbiased``: the estimate itself (``post_processing="none"``);
* ``norm-sub``, ``clip``, ``normalize``: ``est.consistent(method)``;
* ``MLE``: ``est.consistent("mle")``'s frequencies (:func:`deniable._mle.solve`,
  the exact maximizer of the support-count likelihood, without its bootstrap);
* ``peer IBU``: when multi-freq-ldpy is installed, its iterative Bayesian
  update (``multi_freq_ldpy.estimators.Histogram_estimator.IBU``, the function
  its ``GRR_Aggregator_IBU`` and ``UE_Aggregator_IBU`` call once they have
  counted the reports, with their defaults: 10,000 iterations, tol 1e-12 on
  the max abs change) on the same support counts and channel ``p*``, ``q*``.
  At k = 256 it runs to its 10,000-iteration cap (about 0.1 s a survey), so
  it sees only the first ``--peer-reps`` surveys of each cell; ``peer IBU / MLE``
  is the ratio of the two MSEs on those surveys.

Each cell is the mean over the surveys of the squared error averaged over the
``k`` categories. ``MLE / norm-sub`` is the ratio of their MSEs and ``z`` the
paired difference (MLE minus Norm-Sub, per survey) over its standard error:
``z < -3`` means the MLE is reliably better, ``z > 3`` Norm-Sub; ``same``
means the two agree in every survey to rounding (no estimate was negative,
so both are the unbiased estimate).

    python benchmarks/bench_mle.py               # 200 surveys per cell, 40 for the peer (about 5 minutes)
    python benchmarks/bench_mle.py --quick       # tiny smoke run
    python benchmarks/bench_mle.py --no-peer     # deniable's side only
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

import deniable as dn
from deniable import _mle as mle
from deniable.simulate import simulate, truth_vector

Array = NDArray[np.float64]
METHODS = ("unbiased", "norm-sub", "clip", "normalize", "MLE")


def peer_ibu() -> Callable[[Array, float, float], Array] | None:
    """multi-freq-ldpy's IBU as ``f(support_counts, p*, q*)``, or None if it is not installed."""
    try:
        from multi_freq_ldpy.estimators.Histogram_estimator import IBU
    except ImportError:
        return None

    def run(counts: Array, p: float, q: float) -> Array:
        k = counts.size
        channel = np.full((k, k), q)
        np.fill_diagonal(channel, p)
        return np.asarray(IBU(k, channel, counts / counts.sum(), 10_000, 1e-12, "max_abs"))

    return run


def cell(mechanism: Any, truth: Array, n: int, reps: int, rng: np.random.Generator,
         ibu: Callable[[Array, float, float], Array] | None, peer_reps: int) -> dict[str, Any]:
    """MSE of every method on ``reps`` surveys; the peer's IBU against the MLE on the first ``peer_reps``."""
    ests = [simulate(mechanism, truth, n, rng, "respondents") for _ in range(reps)]
    actual = np.asarray(ests[0].truth)
    p, q = float(ests[0].p_star[0]), float(ests[0].q_star[0])
    counts = np.array([e.support_counts for e in ests], dtype=float)
    outputs: dict[str, Array] = {
        "unbiased": np.array([e.frequencies for e in ests]),
        **{m: np.array([e.consistent(m).frequencies for e in ests]) for m in ("norm-sub", "clip", "normalize")},
        "MLE": mle.solve(counts, ests[0].p_star, ests[0].q_star),
    }
    errors = {m: np.mean(np.square(f - actual), axis=1) for m, f in outputs.items()}
    diff = errors["MLE"] - errors["norm-sub"]
    same = bool(np.all(np.abs(diff) <= 1e-9 * errors["norm-sub"].mean()))  # both the unbiased estimate, rounded
    z = float("nan") if same or reps < 2 else float(diff.mean() / (diff.std(ddof=1) / np.sqrt(reps)))
    seconds, peer_ratio = 0.0, float("nan")
    if ibu is not None:
        start = time.process_time()
        peer = np.array([ibu(c, p, q) for c in counts[:peer_reps]])
        seconds = time.process_time() - start
        peer_ratio = float(np.square(peer - actual).mean() / errors["MLE"][:peer_reps].mean())
    return {"mse": {m: float(e.mean()) for m, e in errors.items()}, "z": z, "peer_ratio": peer_ratio,
            "ibu_seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny grid, for a smoke run")
    parser.add_argument("--reps", type=int, default=200, help="simulated surveys per cell")
    parser.add_argument("--peer-reps", type=int, default=40, help="surveys per cell for the peer's IBU")
    parser.add_argument("--no-peer", action="store_true", help="skip multi-freq-ldpy's IBU")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    ks, epsilons, sizes, reps = ((4, 32, 256), (0.5, 1.0, 2.0, 4.0), (1_000, 100_000), args.reps)
    peer_reps = min(args.peer_reps, reps)
    if args.quick:
        ks, epsilons, sizes, reps, peer_reps = (4, 32), (1.0,), (1_000,), 10, 5
    ibu = None if args.no_peer else peer_ibu()
    rng = np.random.default_rng(args.seed)
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores, shared)")
    print(f"{reps} surveys per cell, seed {args.seed}, target respondents; MSE per category")
    peer_line = f"multi-freq-ldpy, first {peer_reps} surveys" if ibu is not None else "skipped (not installed)"
    print(f"peer IBU: {peer_line}\n")
    extra = " peer IBU / MLE |" if ibu is not None else ""
    print("| mechanism | truth | k | eps | n | " + " | ".join(METHODS) + " | MLE / norm-sub | z |" + extra)
    print("|---|---|---|---|---|" + "---|" * (len(METHODS) + 2 + bool(extra)))
    start = time.perf_counter()
    ibu_seconds = 0.0
    for cls in (dn.GRR, dn.OUE):
        for skew in ("zipf", "uniform"):
            for k in ks:
                truth = truth_vector(k, skew)
                for eps in epsilons:
                    for n in sizes:
                        r = cell(cls(k, epsilon=eps), truth, n, reps, rng, ibu, peer_reps)
                        ibu_seconds += r["ibu_seconds"]
                        mse = r["mse"]
                        best = min(mse.values())
                        shown = [f"**{mse[m]:.3g}**" if mse[m] <= best * 1.0001 else f"{mse[m]:.3g}"
                                 for m in METHODS]
                        peer = f" {r['peer_ratio']:.3f} |" if ibu is not None else ""
                        z = "same" if np.isnan(r["z"]) else f"{r['z']:+.1f}"
                        print(f"| {cls.__name__} | {skew} | {k} | {eps:g} | {n:,} | " + " | ".join(shown)
                              + f" | {mse['MLE'] / mse['norm-sub']:.2f} | {z} |" + peer, flush=True)
    print(f"\nwall time {time.perf_counter() - start:.0f} s (peer IBU {ibu_seconds:.0f} s CPU); "
          f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
