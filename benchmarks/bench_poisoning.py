"""Fake reports: the attacks' frequency gains against Cao et al.'s theorems, detection, recovery.

    python benchmarks/bench_poisoning.py            # the tables in BENCHMARKS.md (a few minutes)
    python benchmarks/bench_poisoning.py --quick    # seconds, for CI smoke

1. **Gains.** The overall gain ``sum_{t in T} (f_t after - f_t before)`` of
   the maximal-gain (MGA), random-item (RIA) and random-value (RPA) attacks
   of Cao, Jia & Gong (USENIX Security 2021) on GRR (their kRR), OUE and
   OLH, measured on ``n`` genuine reports plus ``m = beta n / (1 - beta)``
   fakes, against their closed forms (``deniable.attacks.expected_gain``):
   their default setting (epsilon = 1, beta = 0.05, r = 10 random targets)
   with k = 1,024, and beta, r and epsilon varied one at a time. Each row is
   the mean of ``--repeat`` runs (fresh targets, reports and fakes) and its
   Monte Carlo standard error.
   The memoizing mechanisms (L-GRR, L-OSUE, DBitFlip, RAPPOR: one report at
   epsilon about 1) under the maximal-gain attack at the default setting,
   against their stated ``target_gain`` (``m.manipulation(targets)``).
2. **Detection and recovery** at the default setting, for GRR, OUE, OLH and
   the memoizing DBitFlip and RAPPOR: the detections' p-values, and the
   targets' summed absolute error of the poisoned estimate, of normalization
   (Norm-Sub), of dropping the reports that support every target (Cao et
   al.'s detection; DBitFlip: as many as its d buckets hold; RAPPOR: the
   reports whose bit vector recurs in its cohort beyond the honest bound), of
   ``deniable.recover`` (``deniable.attacks.fake_contribution``) with beta
   read from a clean earlier round, and of the genuine reports alone.

The genuine values follow a Zipf law (exponent 1.5) truncated to the k items.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import deniable as dn
from deniable import attacks

PROTOCOLS = {"GRR": dn.GRR, "OUE": dn.OUE, "OLH": dn.OLH}
SHORT = {"maximal-gain": "MGA", "random-item": "RIA", "random-value": "RPA"}


def zipf_values(k: int, n: int, rng: np.random.Generator) -> np.ndarray:
    weights = 1.0 / np.arange(1, k + 1) ** 1.5
    return rng.choice(k, n, p=weights / weights.sum())


def fakes_of(mechanism: dn.FrequencyOracle, attack: str, targets: np.ndarray, m: int,
             rng: np.random.Generator) -> np.ndarray:
    if attack == "maximal-gain":
        return attacks.maximal_gain(mechanism, targets, m, rng=rng)
    if attack == "random-item":
        return attacks.random_item(mechanism, targets, m, rng=rng)
    return attacks.random_value(mechanism, m, rng=rng)


def gains(k: int, epsilon: float, beta: float, r: int, n: int, repeat: int, rng: np.random.Generator) -> list[str]:
    rows = []
    for name, cls in PROTOCOLS.items():
        mechanism = cls(k, epsilon=epsilon)
        m = round(beta * n / (1 - beta))
        measured: dict[str, list[float]] = {a: [] for a in attacks.ATTACKS}
        theory: dict[str, list[float]] = {a: [] for a in attacks.ATTACKS}
        for _ in range(repeat):
            values = zipf_values(k, n, rng)
            targets = rng.choice(k, r, replace=False)
            share = float(np.isin(values, targets).mean())
            honest = mechanism.privatize_many(values, rng=rng)
            before = mechanism.estimate(honest)
            for attack in attacks.ATTACKS:
                after = mechanism.estimate(np.concatenate([honest, fakes_of(mechanism, attack, targets, m, rng)]))
                measured[attack].append(attacks.overall_gain(before, after, targets))
                theory[attack].append(attacks.expected_gain(mechanism, attack, targets, m / (n + m), share))
        cells = []
        for attack in attacks.ATTACKS:
            x = np.array(measured[attack])
            se = x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan")
            cells.append(f"{x.mean():.4g} ± {se:.2g} / {np.mean(theory[attack]):.4g}")
        rows.append(f"| {k} | {epsilon:g} | {beta:g} | {r} | {name} | " + " | ".join(cells) + " |")
    return rows


def memoizing(k: int) -> dict[str, dn.FrequencyOracle]:
    """The memoizing mechanisms, each report at epsilon about 1 (RAPPOR: 1.0 at epsilon_infinity 4)."""
    return {
        "L-GRR": dn.LGRR(k, epsilon_perm=2.0, epsilon_1=1.0), "L-OSUE": dn.LOSUE(k, epsilon_perm=2.0, epsilon_1=1.0),
        "DBitFlip": dn.DBitFlip(k, d=4, epsilon=1.0),
        "RAPPOR": dn.RAPPOR(k, epsilon=4.0, num_bits=16, num_hashes=2, num_cohorts=max(8, k // 8)),
    }


def memoizing_gains(k: int, n: int, repeat: int, rng: np.random.Generator) -> list[str]:
    beta, r = 0.05, 10
    m = round(beta * n / (1 - beta))
    rows = []
    for name, mechanism in memoizing(k).items():
        measured, stated = [], []
        for _ in range(repeat):
            values = zipf_values(k, n, rng)
            targets = rng.choice(k, r, replace=False)
            honest = mechanism.privatize_many(values, rng=rng)
            before = mechanism.estimate(honest)
            after = mechanism.estimate(np.concatenate([honest, attacks.maximal_gain(mechanism, targets, m, rng=rng)]))
            measured.append(attacks.overall_gain(before, after, targets))
            share = float(before.frequencies[targets].sum())
            stated.append(attacks.expected_gain(mechanism, "maximal-gain", targets, m / (n + m), share))
        x = np.array(measured)
        se = x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan")
        rows.append(f"| {name} | {mechanism.epsilon:.3g} | {x.mean():.4g} ± {se:.2g} | {np.mean(stated):.4g} |")
    return rows


def target_error(est: dn.Estimate, truth: np.ndarray, targets: np.ndarray) -> float:
    """The targets' summed absolute error."""
    return float(np.abs(est.frequencies[targets] - truth[targets]).sum())


def defended(k: int) -> dict[str, dn.FrequencyOracle]:
    """The protocols of the detection and recovery table: Cao et al.'s three and the memoizing DBitFlip, RAPPOR."""
    out: dict[str, dn.FrequencyOracle] = {name: cls(k, epsilon=1.0) for name, cls in PROTOCOLS.items()}
    out.update((name, m) for name, m in memoizing(k).items() if name in ("DBitFlip", "RAPPOR"))
    return out


def defences(k: int, n: int, rng: np.random.Generator) -> list[str]:
    rows = []
    beta, r = 0.05, 10
    m = round(beta * n / (1 - beta))
    for name, mechanism in defended(k).items():
        values = zipf_values(k, n, rng)
        truth = np.bincount(values, minlength=k) / n
        targets = rng.choice(k, r, replace=False)
        earlier = mechanism.estimate(mechanism.privatize_many(zipf_values(k, n, rng), rng=rng))
        honest = mechanism.privatize_many(values, rng=rng)
        reports = np.concatenate([honest, attacks.maximal_gain(mechanism, targets, m, rng=rng)])
        poisoned = mechanism.estimate(reports)
        z = attacks.fake_contribution(mechanism, "maximal-gain", targets)
        beta_hat = dn.estimate_fake_fraction(earlier, poisoned, targets=targets, contribution=z)
        recovered = dn.recover(poisoned, fake_fraction=beta_hat, contribution=z)
        if name == "GRR":
            flagged = None
        elif name == "RAPPOR":  # its fakes send one fixed vector per cohort
            flagged = dn.repeated_reports_test(mechanism, reports)
        else:
            flagged = dn.supporting_all_test(mechanism, reports, targets)
        detected = None if flagged is None else mechanism.estimate(reports[~flagged.detail["mask"]])

        change = dn.change_test(earlier, poisoned)
        frequency = dn.frequency_test(poisoned)
        extra = f"{dn.unary_count_test(mechanism, reports).p_value:.2g}" if name == "OUE" else "n/a"
        errors = {label: target_error(est, truth, targets) for label, est in (
            ("poisoned", poisoned), ("norm", poisoned.consistent("norm-sub")), ("recovered", recovered),
            ("genuine", mechanism.estimate(honest)))}
        if detected is not None:
            errors["detected"] = target_error(detected, truth, targets)
        factor = errors["poisoned"] / errors["recovered"]
        every = "n/a" if flagged is None else f"{flagged.p_value:.2g}"
        shown = {label: f"{errors[label]:.4g}" if label in errors else "n/a"
                 for label in ("poisoned", "norm", "detected", "recovered", "genuine")}
        rows.append(
            f"| {name} | {change.p_value:.2g} | {frequency.p_value:.2g} | {extra} | {every} | "
            f"{shown['poisoned']} | {shown['norm']} | {shown['detected']} | "
            f"{shown['recovered']} ({beta_hat:.4f}) | {shown['genuine']} | {factor:.0f}x |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one setting")
    parser.add_argument("--n", type=int, default=None, help="genuine reports per run (default 100,000)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per row (default 5)")
    parser.add_argument("--seed", type=int, default=2021)
    args = parser.parse_args(argv)
    n = args.n or (5_000 if args.quick else 100_000)
    repeat = args.repeat or (2 if args.quick else 5)
    k = 64 if args.quick else 1024
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    settings = [(1.0, 0.05, 10)] if args.quick else [
        (1.0, 0.05, 10), (1.0, 0.01, 10), (1.0, 0.1, 10), (1.0, 0.05, 1), (1.0, 0.05, 5),
        (0.5, 0.05, 10), (2.0, 0.05, 10),
    ]
    print(f"Overall gain, measured ± its Monte Carlo standard error / Cao et al.'s theorem (n = {n:,} genuine "
          f"reports, {repeat} runs per row)\n")
    print("| k | epsilon | beta | r | protocol | MGA | RIA | RPA |")
    print("|---|---|---|---|---|---|---|---|")
    for epsilon, beta, r in settings:
        for row in gains(k, epsilon, beta, r, n, repeat, rng):
            print(row)
    print(f"\nMemoizing mechanisms: the maximal-gain attack's overall gain, measured ± s.e., and stated (k = {k}, "
          f"beta = 0.05, r = 10, n = {n:,}, {repeat} runs)\n")
    print("| mechanism | epsilon (one report) | measured | stated |")
    print("|---|---|---|---|")
    for row in memoizing_gains(k, n, repeat, rng):
        print(row)
    print(f"\nDetection p-values and the targets' summed absolute error (k = {k}, epsilon = 1 per report, "
          f"beta = 0.05, r = 10, MGA, n = {n:,})\n")
    print("| protocol | change | frequency | unary count | supporting all (RAPPOR: repeated) | poisoned | Norm-Sub "
          "| detect and drop "
          "| recover (beta read) | genuine only | poisoned / recovered |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in defences(k, n, rng):
        print(row)
    print(f"\n{time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
