"""``deniable simulate ...``: the textbook experiments, reproduced in seconds.

The sweeps are plain functions of :mod:`deniable.simulate` (usable from
Python, drawn with :mod:`deniable.plot`); these commands parse options and
print. All randomness here is the seeded simulation path, never a respondent's.
``--target`` picks the sampling model as :func:`deniable.simulate` does:
``population`` (the default) draws the respondents' values from the true
shares before randomizing them, ``respondents`` keeps a fixed set of
respondents with those shares.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import numpy as np
import typer
from rich.table import Table

import deniable as dn
from deniable import _plan as planning
from deniable._estimate import check_target
from deniable.cli._common import CLIError, TargetOpt, handle_errors, out, parse_epsilon
from deniable.cli._output import estimate_records, estimate_table, print_json, save_axes, target_note
from deniable.simulate import convergence_sweep, decades, mse_sweep, truth_vector

__all__ = ["simulate_app"]

simulate_app = typer.Typer(
    help="Simulated surveys: the honor-code survey, estimate vs n, privacy vs utility, "
    "MSE vs theory, discovery of frequent strings.",
    no_args_is_help=True,
)

SeedOpt = Annotated[int, typer.Option(help="Seed of the simulation (reproducible).")]
PlotOpt = Annotated[Path | None, typer.Option(help="Write the figure (.png/.svg/.pdf).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
PTruthOpt = Annotated[float, typer.Option(help="Forced response: P(answer truthfully).")]
PYesOpt = Annotated[float, typer.Option(help="Forced response: P(forced 'yes').")]


def _share(truth: float) -> list[float]:
    if not 0 <= truth <= 1:
        raise CLIError(f"--truth must be a share in [0, 1]; got {truth!r}")
    return [1.0 - truth, truth]


def _floats(text: str, option: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise CLIError(f"{option} must be comma-separated numbers; got {text!r}") from None


# ------------------------------------------------------------------ commands
@simulate_app.command("survey")
@handle_errors
def survey_cmd(
    n: Annotated[int, typer.Option("--n", help="Respondents.")] = 50_000,
    truth: Annotated[float, typer.Option(help="True share of 'yes'.")] = 0.2,
    p_truth: PTruthOpt = 0.5,
    p_yes: PYesOpt = 0.5,
    seed: SeedOpt = 2026,
    target: TargetOpt = "population",
    plot: PlotOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The honor-code survey: n students, forced response, estimate vs truth.

    Example: deniable simulate survey --n 50000 --truth 0.2 --plot survey.png
    """
    m = dn.BinaryRR.forced_response(p_truth, p_yes)
    est = dn.simulate(m, _share(truth), n, np.random.default_rng(seed), check_target(target))
    if plot is not None:
        from deniable.plot import bar_estimate

        save_axes(bar_estimate(est, title=f"Honor-code survey (simulated), n = {n:,}",
                               xlabel="Have you broken the honor code?"), plot, as_json=as_json)
    if as_json:
        print_json({"mechanism": m.name, "epsilon": m.epsilon, "n": n, "seed": seed,
                    "target": est.target, "categories": estimate_records(est)})
        return
    out.print(estimate_table(est, title=f"Honor-code survey (simulated): {m!r}, n = {n:,}"))
    low, high = est.ci(0.95)
    out.print(
        f"violators: estimate {est.frequencies[1]:.4f} (95% interval {low[1]:.4f} .. {high[1]:.4f}), "
        f"truth {est.truth[1]:.4f}"  # type: ignore[index]
    )


@simulate_app.command("convergence")
@handle_errors
def convergence_cmd(
    truth: Annotated[float, typer.Option(help="True share of 'yes'.")] = 0.2,
    p_truth: PTruthOpt = 0.5,
    p_yes: PYesOpt = 0.5,
    n_min: Annotated[int, typer.Option(help="Smallest sample size.")] = 100,
    n_max: Annotated[int, typer.Option(help="Largest sample size.")] = 10_000_000,
    per_decade: Annotated[int, typer.Option(help="Sample sizes per decade.")] = 2,
    seed: SeedOpt = 2026,
    target: TargetOpt = "population",
    plot: PlotOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Sample-size sweep: the estimate of a yes/no share converging to the truth.

    Example: deniable simulate convergence --truth 0.2 --plot convergence.png
    """
    m = dn.BinaryRR.forced_response(p_truth, p_yes)
    sweep = convergence_sweep(m, _share(truth), decades(n_min, n_max, per_decade),
                              np.random.default_rng(seed), check_target(target))
    rows = []
    for est in sweep:
        low, high = est.ci(0.95)
        rows.append({"n": est.n, "estimate": float(est.frequencies[1]),
                     "std_error": float(est.std_errors[1]),  # type: ignore[index]
                     "ci_low": float(low[1]), "ci_high": float(high[1]),
                     "truth": float(est.truth[1])})  # type: ignore[index]
    if plot is not None:
        from deniable.plot import convergence

        save_axes(convergence(sweep), plot, as_json=as_json)
    if as_json:
        print_json({"mechanism": m.name, "epsilon": m.epsilon, "seed": seed, "target": target,
                    "rows": rows})
        return
    table = Table(title=f"Estimate vs n: {m!r}, truth {truth:g}", title_justify="left",
                  caption=target_note(check_target(target)), caption_justify="left")
    for header in ("n", "estimate", "std. error", "95% interval", "|error|", "error / std. error"):
        table.add_column(header, justify="right")
    for r in rows:
        table.add_row(f"{r['n']:,}", f"{r['estimate']:.5f}", f"{r['std_error']:.5f}",
                      f"{r['ci_low']:.5f} .. {r['ci_high']:.5f}",
                      f"{abs(r['estimate'] - r['truth']):.5f}",
                      f"{(r['estimate'] - r['truth']) / r['std_error']:+.2f}")
    out.print(table)


@simulate_app.command("gamma")
@handle_errors
def gamma_cmd(
    truth: Annotated[float, typer.Option(help="True share of 'yes'.")] = 0.2,
    n: Annotated[int, typer.Option("--n", help="Respondents per survey.")] = 10_000,
    gammas: Annotated[str, typer.Option(help="Comma-separated gammas in (0, 0.5).")] =
        "0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45",
    reps: Annotated[int, typer.Option(help="Simulated surveys per gamma.")] = 1000,
    seed: SeedOpt = 2026,
    target: TargetOpt = "population",
    plot: PlotOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Privacy-utility sweep of Warner's design: BinaryRR(gamma=...), prob = 1/2 + gamma.

    Small gamma: strong privacy (epsilon near 0), large error; gamma near 1/2:
    little privacy, small error.

    Example: deniable simulate gamma --truth 0.2 --n 10000 --plot gamma.png
    """
    values = _floats(gammas, "--gammas")
    mechanisms = [dn.BinaryRR(gamma=g) for g in values]
    records = mse_sweep(mechanisms, _share(truth), n, reps, np.random.default_rng(seed),
                        check_target(target))
    for g, r in zip(values, records, strict=True):
        r["gamma"] = g
        r["mechanism"] = "BinaryRR (Warner)"
    if plot is not None:
        from deniable.plot import mse_vs_epsilon

        save_axes(mse_vs_epsilon(records, title=f"Warner's design: MSE vs \u03b5 (n = {n:,})"),
                  plot, as_json=as_json)
    if as_json:
        print_json({"truth": truth, "seed": seed, "target": target, "rows": records})
        return
    table = Table(title=f"Privacy vs utility, truth {truth:g}, n = {n:,}, {reps} surveys each",
                  title_justify="left", caption=target_note(check_target(target)),
                  caption_justify="left")
    for header in ("gamma", "P(truth)", "epsilon", "theory std. error", "simulated RMSE", "MSE / Var"):
        table.add_column(header, justify="right")
    for r in records:
        table.add_row(f"{r['gamma']:g}", f"{0.5 + r['gamma']:g}", f"{r['epsilon']:.4f}",
                      f"{math.sqrt(r['variance']):.5f}", f"{math.sqrt(r['mse']):.5f}",
                      f"{r['ratio']:.3f}")
    out.print(table)


@simulate_app.command("mse")
@handle_errors
def mse_cmd(
    mechanisms: Annotated[
        str, typer.Option("--mechanisms", "-m", help="Comma-separated wire ids, or 'all'.")
    ] = "all",
    k: Annotated[int, typer.Option("--k", help="Number of categories.")] = 16,
    epsilons: Annotated[str, typer.Option(help="Comma-separated epsilons.")] = "0.5,1,2,4",
    n: Annotated[int, typer.Option("--n", help="Respondents per survey.")] = 10_000,
    reps: Annotated[int, typer.Option(help="Simulated surveys per cell.")] = 100,
    distribution: Annotated[str, typer.Option(help="True distribution: zipf or uniform.")] = "zipf",
    post: Annotated[
        str, typer.Option(help="Comma-separated post-processings: none, norm-sub, clip, ..., mle.")
    ] = "none",
    seed: SeedOpt = 2026,
    target: TargetOpt = "population",
    plot: PlotOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Simulated MSE of each mechanism against its theoretical variance, for several epsilons.

    --post compares post-processings of the same surveys: the unbiased
    estimate (none), Norm-Sub, clip, ... and the maximum-likelihood
    frequencies on the simplex (mle).

    Example: deniable simulate mse --mechanisms grr,oue,olh --k 16 --epsilons 0.5,1,2,4 --plot mse.png;
    deniable simulate mse -m grr,oue --k 8 --n 200 --post none,norm-sub,mle
    """
    if k < 2:
        raise CLIError(f"--k must be >= 2; got {k}")
    eps_values = [parse_epsilon(e) for e in _floats(epsilons, "--epsilons")]
    wanted = None if mechanisms == "all" else [s.strip().lower() for s in mechanisms.split(",")]
    built = []
    for eps in eps_values:
        pool = {m.wire_id: m for m in planning.candidates(k, eps).values()}
        if wanted is None:
            built += list(pool.values())
            continue
        for w in wanted:
            if w not in pool:
                raise CLIError(f"--mechanisms: {w!r} is not one of {', '.join(pool)} for k={k}")
            built.append(pool[w])
    methods = [s.strip().lower() for s in post.split(",") if s.strip()]
    allowed = {"none", "mle", "clip", "normalize", "norm-mul", "norm-sub", "project", "base-cut"}
    for method in methods:
        if method not in allowed:
            raise CLIError(f"--post: {method!r} is not one of {', '.join(sorted(allowed))}")
    truth = truth_vector(k, distribution)
    records = mse_sweep(built, truth, n, reps, np.random.default_rng(seed), check_target(target), methods)
    records.sort(key=lambda r: (r["mechanism"], r["epsilon"]))
    if plot is not None:
        from deniable.plot import mse_vs_epsilon

        labelled = [
            {**r, "mechanism": r["mechanism"] if r["post_processing"] == "none"
             else f"{r['mechanism']} ({r['post_processing']})"} for r in records
        ]
        save_axes(mse_vs_epsilon(labelled, title=f"MSE vs \u03b5, k = {k}, n = {n:,} ({distribution})"),
                  plot, as_json=as_json)
    if as_json:
        print_json({"k": k, "n": n, "reps": reps, "distribution": distribution, "seed": seed,
                    "target": target, "rows": records})
        return
    table = Table(title=f"MSE vs theory: k = {k}, n = {n:,}, {distribution} truth, {reps} surveys "
                  "per cell", title_justify="left", caption=target_note(check_target(target)),
                  caption_justify="left")
    for header in ("mechanism", "epsilon", "estimate", "theory Var", "simulated MSE", "MSE / Var"):
        table.add_column(header, justify="left" if header in ("mechanism", "estimate") else "right")
    for r in records:
        table.add_row(r["mechanism"], f"{r['epsilon']:.4g}", r["post_processing"], f"{r['variance']:.4e}",
                      f"{r['mse']:.4e}", f"{r['ratio']:.3f}")
    out.print(table)


@simulate_app.command("heavy-hitters")
@handle_errors
def heavy_hitters_cmd(
    methods: Annotated[str, typer.Option("--methods", "-m", help="Comma-separated: pem, sfp.")] = "pem,sfp",
    epsilons: Annotated[str, typer.Option(help="Comma-separated epsilons (each device's).")] = "2,4,8",
    ns: Annotated[str, typer.Option("--n", help="Comma-separated numbers of devices.")] = "20000,100000",
    top: Annotated[int, typer.Option(help="Score against the true top this many values.")] = 10,
    max_length: Annotated[int, typer.Option(help="Letters per word (bytes kept).")] = 6,
    words: Annotated[int, typer.Option(help="Distinct words of the Zipf body.")] = 1000,
    tail: Annotated[float, typer.Option(help="Share of devices typing a word of their own.")] = 0.25,
    seed: SeedOpt = 2026,
    plot: PlotOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recall and precision of heavy-hitter discovery against n and epsilon, on a Zipf(1.1) workload.

    Each device types a word (a Zipf body of --words words, and a --tail share
    of unique words); HeavyHitters finds the frequent ones. Recall: share of
    the true top --top values found; precision: share of the reported values
    that are among them.

    Example: deniable simulate heavy-hitters --epsilons 2,4,8 --n 20000,100000 --plot recall.png
    """
    from deniable.heavy._protocols import PROTOCOLS
    from deniable.heavy._quality import discovery_sweep

    chosen = [m.strip().lower() for m in methods.split(",") if m.strip()]
    for m in chosen:
        if m not in PROTOCOLS:
            raise CLIError(f"--methods: {m!r} is not one of {', '.join(PROTOCOLS)}")
    eps_values = [parse_epsilon(e) for e in _floats(epsilons, "--epsilons")]
    sizes = [int(x) for x in _floats(ns, "--n")]
    if any(x < 100 for x in sizes):
        raise CLIError(f"--n must be at least 100 devices each; got {ns!r}")
    if top < 1 or words < top:
        raise CLIError(f"--top must be in 1..--words ({words}); got {top}")
    if not 3 <= max_length <= 254:
        raise CLIError(f"--max-length must be in 3..254; got {max_length}")
    if not 0 <= tail < 1:
        raise CLIError(f"--tail must be a share in [0, 1); got {tail}")
    records = discovery_sweep(chosen, eps_values, sizes, top, np.random.default_rng(seed),
                              max_length=max_length, words=words, tail=tail)
    if plot is not None:
        from matplotlib.figure import Figure

        from deniable.plot import discovery_quality

        figure = Figure(figsize=(11.0, 4.2), layout="constrained")
        left, right = figure.subplots(1, 2)
        discovery_quality(records, left, metric="recall", title="Recall")
        discovery_quality(records, right, metric="precision", title="Precision", legend=False)
        figure.suptitle(f"Discovering the top {top} words (Zipf over {words:,} words, {tail:.0%} of devices unique)")
        save_axes(left, plot, as_json=as_json)
    if as_json:
        print_json({"top": top, "words": words, "tail": tail, "max_length": max_length, "seed": seed,
                    "rows": records})
        return
    table = Table(title=f"Discovery of the top {top}: Zipf(1.1) over {words:,} words, {tail:.0%} of devices "
                  "typing a unique word", title_justify="left")
    for header in ("method", "epsilon", "n", "recall", "precision", "median rel. error", "device s",
                   "server s"):
        table.add_column(header, justify="left" if header == "method" else "right")
    for r in records:
        table.add_row(r["method"], f"{r['epsilon']:.3g}", f"{r['n']:,}", f"{r['recall']:.2f}",
                      f"{r['precision']:.2f}", f"{r['relative_error']:.3f}", f"{r['device_seconds']:.2f}",
                      f"{r['server_seconds']:.2f}")
    out.print(table)
