"""Key-value data (PCKV): mean squared errors of key frequencies and means on the paper's synthetic setting.

    python benchmarks/bench_key_value.py            # the table of BENCHMARKS.md ("Key-value data")
    python benchmarks/bench_key_value.py --quick    # n = 10^5 and two epsilons
    python benchmarks/bench_key_value.py --paper    # the formulas against the paper's Theorem 4, same setting

The setting of the authors' reference code for the paper's first synthetic experiment (Gu et al., USENIX
Security 2020; their PG1.m): n = 10^6 users, d = 100 keys, each user holds one pair (ell = 1), the key uniform
and the value of key k a fixed v_k drawn uniformly from [-1, 1]; the error is averaged over the 100 keys. For
each epsilon and variant, one survey goes through real reports (``privatize_many`` with a seeded generator,
``aggregate``, ``estimate``). Printed: the mean squared error of ``f^`` (unbiased, unclipped) and of the
clipped mean ``m^``, the formulas' averages at the truth and the seconds of the survey. ``Var f^`` is for
these users (``PCKV.variance``, which is for users drawn from a population, less ``f (1 - f) / n``, the
variance of the share itself); ``Var m^`` is the delta method's (population form), which the clipping to
``[-1, 1]`` makes far too large at small epsilons.

``--paper`` prints, on the same setting and seed (no reports), deniable's formulas next to the paper's
closed forms (its Theorem 4, for sets of at most ``ell`` pairs, in the mechanism's ``a``, ``b``, ``p``):
``Var f^ = ell^2 b (1 - b) / (n (a - b)^2) + ell f (1 - a - b) / (n (a - b))`` (for fixed users) and its
approximate bound ``Var m^ <~ (b + delta) / (n gamma^2) + (b (1 - b) - delta) m^2 / (n delta^2)``,
``delta = (a - b) f / ell``, ``gamma = a (2p - 1) f / ell``, each averaged over the keys.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import deniable as dn

KEYS = 100


def paper_formulas(m: dn.PCKV, n: int, f: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """The paper's Theorem 4 at the truth, averaged over the keys: ``Var f^`` and the bound on ``Var m^``."""
    a, b, p, ell = m.a, m.b, m.p, m.ell
    var_f = ell**2 * b * (1 - b) / (n * (a - b) ** 2) + ell * f * (1 - a - b) / (n * (a - b))
    delta, gamma = (a - b) * f / ell, a * (2 * p - 1) * f / ell
    var_m = (b + delta) / (n * gamma**2) + (b * (1 - b) - delta) * values**2 / (n * delta**2)
    return float(np.mean(var_f)), float(np.mean(var_m))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--paper", action="store_true", help="deniable's formulas against the paper's Theorem 4")
    args = parser.parse_args()
    n = 100_000 if args.quick else 1_000_000
    epsilons = (1.0, 4.0) if args.quick else (0.1, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    rng = np.random.default_rng(2020)
    values = rng.uniform(-1, 1, KEYS)
    held = rng.integers(0, KEYS, n)
    users = [{int(k): float(values[k])} for k in held]
    freq = np.bincount(held, minlength=KEYS) / n
    print(f"n = {n}, d = {KEYS}, ell = 1")
    if args.paper:
        print("| epsilon | variant | Var f: ours | paper | ratio | Var m: ours (delta) | paper's bound | ratio |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for epsilon in epsilons:
            for variant in ("ue", "grr"):
                m = dn.PCKV(KEYS, epsilon=epsilon, max_pairs=1, variant=variant)
                theory = m.variance(n, freq, values)
                ours_f = float(np.mean(theory["frequency"] - freq * (1 - freq) / n))
                ours_m = float(np.mean(theory["mean"]))
                paper_f, paper_m = paper_formulas(m, n, freq, values)
                print(f"| {epsilon:g} | PCKV-{variant.upper()} | {ours_f:.4g} | {paper_f:.4g} | "
                      f"{ours_f / paper_f:.3f} | {ours_m:.4g} | {paper_m:.4g} | {ours_m / paper_m:.3f} |")
        return
    print("| epsilon | variant | MSE of f | formula | MSE of m | formula (delta method) | seconds |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for epsilon in epsilons:
        for variant in ("ue", "grr"):
            m = dn.PCKV(KEYS, epsilon=epsilon, max_pairs=1, variant=variant)
            start = time.perf_counter()
            est = m.estimate(m.privatize_many(users, rng=rng))
            seconds = time.perf_counter() - start
            theory = m.variance(n, freq, values)
            these = theory["frequency"] - freq * (1 - freq) / n  # for these users, not a population's
            mse_f = float(np.mean((est.frequencies - freq) ** 2))
            mse_m = float(np.mean((est.means - values) ** 2))
            print(f"| {epsilon:g} | PCKV-{variant.upper()} | {mse_f:.3g} | {np.mean(these):.3g} | "
                  f"{mse_m:.3g} | {np.mean(theory['mean']):.3g} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
