"""``deniable plan`` and ``deniable audit``: choosing a mechanism and checking its epsilon."""

from __future__ import annotations

import math
import warnings
from typing import Annotated, Any

import typer
from rich.table import Table

import deniable as dn
from deniable import _plan as planning
from deniable._allocation import AllocationComparison
from deniable._estimate import check_target
from deniable.cli._common import (
    NUMERIC_NAMES,
    CLIError,
    EpsilonOpt,
    JsonOpt,
    MechanismOpt,
    TargetOpt,
    build_mechanism,
    build_numeric,
    check_mechanism_name,
    err,
    handle_errors,
    out,
    parse_epsilon,
)
from deniable.cli._output import print_json, target_note
from deniable.errors import PowerApproximationWarning
from deniable.mechanisms import registry

__all__ = ["plan_cmd", "audit_cmd"]


# ---------------------------------------------------------------------- plan
@handle_errors
def plan_cmd(
    k: Annotated[int | None, typer.Option("--k", help="Number of categories (>= 2).")] = None,
    epsilon: Annotated[float | None, typer.Option("--epsilon", "-e", help="Privacy loss epsilon (> 0).")] = None,
    margin: Annotated[
        float, typer.Option(help="Wanted half-width of the confidence interval (share, e.g. 0.01).")
    ] = 0.01,
    level: Annotated[float, typer.Option(help="Confidence level (of the margin, or of the test).")] = 0.95,
    n: Annotated[
        int, typer.Option("--n", help="Respondents for the standard-error (and power) column.")
    ] = 100_000,
    target: TargetOpt = "population",
    design: Annotated[
        str | None, typer.Option(help="A survey design by RRreg's name (Warner, FR, Crosswise, SLD, ...).")
    ] = None,
    p: Annotated[str | None, typer.Option("--p", help="The design's p, comma-separated (e.g. 1/6,1/6).")] = None,
    kukrep: Annotated[int, typer.Option(help="Kuk: cards per respondent.")] = 1,
    prevalence: Annotated[float | None, typer.Option(help="Design: the prevalence to detect.")] = None,
    null: Annotated[float, typer.Option(help="Design: the prevalence under the null hypothesis.")] = 0.0,
    power: Annotated[float, typer.Option(help="Design: the power wanted.")] = 0.8,
    alternative: Annotated[str, typer.Option(help="Design: two-sided, greater or less.")] = "two-sided",
    extra: Annotated[
        float | None, typer.Option(help="Design: the expected extra parameter (t, piUQ or gamma).")
    ] = None,
    delta: Annotated[
        float, typer.Option(help="delta of the central guarantee of shuffled collection of --n reports.")
    ] = 1e-6,
    questions: Annotated[
        int, typer.Option("--questions", help="Questions of --k categories sharing the budget --epsilon.")
    ] = 1,
    robust: Annotated[
        float | None,
        typer.Option(help="Weigh fake reports: the lowest Var* among the mechanisms whose manipulation "
                          "sensitivity is at most this factor (>= 1) times the smallest."),
    ] = None,
    difference: Annotated[
        str | None,
        typer.Option(help="A/B test: one category's share in each arm, e.g. 0.30,0.36; adds the respondents per "
                     "arm that detect it with --power at --level (two-sided)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare every frequency oracle for k categories at epsilon and pick one; or plan a survey design.

    Columns: Var* (n times the variance of one category's estimate as its
    share goes to 0), the standard error at --n respondents, the manipulation
    sensitivity (the most one fake report raises a share, times the number of
    reports), report size in bits and server decode cost; then the
    recommended mechanism (lowest Var*; with --robust c, the lowest Var* among
    those whose sensitivity is within c times the smallest)
    and the respondents it needs for a --margin confidence-interval half-width
    at --level (worst case over the share) for --target (population: the
    respondents are a sample of it, adding f(1-f) to n Var; respondents:
    these respondents only).

    With --design: the design's epsilon, the standard error and power at --n
    respondents, and the respondents needed to detect --prevalence against
    --null with --power (Wald test at --level).

    With --questions d > 1: the variance per question when the d questions
    split --epsilon (each respondent answers all, at epsilon/d) or each
    respondent answers one question drawn at random with the whole
    --epsilon (allocation: sample), and which is lower.

    Both end with the central (epsilon, delta) guarantee of the --n reports
    if they are collected through a shuffler (anonymously, in random order):
    Feldman, McMillan & Talwar's numerical bound at --delta.

    Examples: deniable plan --k 1024 --epsilon 1 --margin 0.01;
    deniable plan --design FR --p 1/6,1/6 --prevalence 0.1 --power 0.8
    """
    if design is not None:
        if k is not None or epsilon is not None:
            raise CLIError("--design plans a survey design; leave out --k and --epsilon")
        _plan_design(design, p, kukrep, prevalence, null, power, level, alternative, extra, n, delta, as_json)
        return
    if k is None or epsilon is None:
        raise CLIError("plan needs --k and --epsilon (or --design with --p and --prevalence)")
    if k < 2:
        raise CLIError(f"--k must be >= 2; got {k}")
    if n < 1:
        raise CLIError(f"--n must be positive; got {n}")
    parse_epsilon(epsilon)
    _check_delta(delta)
    if questions < 1:
        raise CLIError(f"--questions must be >= 1; got {questions}")
    if robust is not None and robust < 1:
        raise CLIError(f"--robust must be a factor >= 1; got {robust!r}")
    choice = dn.best_mechanism(k, epsilon, robust=robust)
    comparison = (
        dn.compare_allocations([k] * questions, epsilon, n, target=check_target(target)) if questions > 1 else None
    )
    rows = []
    for name, m in planning.candidates(k, epsilon).items():
        var = choice.variances[name]
        rows.append(
            {
                "mechanism": name,
                "var_star": var,
                "std_error": math.sqrt(var / n),
                "manipulation": choice.sensitivities[name],
                "report_bits": planning.report_bits(m),
                "decode_cost": planning.decode_cost(m),
                "epsilon": m.epsilon,
            }
        )
    rows.sort(key=lambda r: (r["var_star"], r["report_bits"]))
    needed = dn.sample_size(choice.mechanism, margin, level, target=check_target(target))
    per_arm = None if difference is None else _per_arm(choice.mechanism, difference, power, level)
    if as_json:
        print_json(
            {"k": k, "epsilon": epsilon, "n": n, "margin": margin, "level": level, "target": target,
             "recommended": choice.name, "rule": choice.rule, "respondents_needed": needed, "mechanisms": rows,
             "shuffled": _shuffled(choice.mechanism.epsilon, n, delta),
             "allocation": None if comparison is None else _allocation_json(comparison),
             **({} if per_arm is None else {"difference": per_arm})}
        )
        return
    table = Table(title=f"Frequency oracles for k = {k}, epsilon = {epsilon:g}", title_justify="left")
    for header in ("mechanism", "Var*", f"std. error at n={n:,}", "fake report moves a share by",
                   "report bits", "decode cost"):
        table.add_column(header, justify="left" if header in ("mechanism", "decode cost") else "right")
    for r in rows:
        best = r["mechanism"] == choice.name
        table.add_row(
            r["mechanism"] + (" *" if best else ""),
            f"{r['var_star']:.4g}",
            f"{r['std_error']:.4g}",
            f"{r['manipulation']:.4g}/n",
            f"{r['report_bits']:,}",
            r["decode_cost"],
            style="bold green" if best else None,
        )
    out.print(table)
    out.print(
        f"Recommended: [bold]{choice.name}[/bold] (* {choice.rule}). "
        f"Respondents needed for a {level:.0%} confidence interval of half-width {margin:g}: "
        f"[bold]{needed:,}[/bold]"
    )
    out.print(target_note(check_target(target)))
    if per_arm is not None:
        out.print(f"A/B test: respondents per arm to detect {per_arm['share_a']:g} vs {per_arm['share_b']:g} "
                  f"with power {power:g} at the {1 - level:g} level: [bold]{per_arm['per_arm']:,}[/bold]")
    if comparison is not None:
        _print_allocation(comparison)
    _print_shuffled(choice.mechanism.epsilon, n, delta)


def _allocation_json(c: AllocationComparison) -> dict[str, object]:
    return {
        "questions": c.d, "recommended": c.recommended,
        "split": {"epsilon_per_question": c.split_mechanisms[0].epsilon,
                  "mechanism": c.split_mechanisms[0].name, "variance": float(c.split_variance[0])},
        "sample": {"epsilon_per_question": c.sample_mechanisms[0].epsilon,
                   "mechanism": c.sample_mechanisms[0].name, "variance": float(c.sample_variance[0])},
        "variance_ratio": float(c.ratio[0]),
    }


def _print_allocation(c: AllocationComparison) -> None:
    table = Table(
        title=f"{c.d} questions sharing epsilon = {c.epsilon:g}, n = {c.n:,} respondents (worst case over the share)",
        title_justify="left",
    )
    for header in ("allocation", "epsilon per question", "mechanism", "reports per question",
                   "variance per question", "std. error"):
        table.add_column(header, justify="left" if header in ("allocation", "mechanism") else "right")
    rows = (("split", c.split_mechanisms[0], f"{c.n:,}", c.split_variance[0]),
            ("sample", c.sample_mechanisms[0], f"~{c.n / c.d:,.0f} (random)", c.sample_variance[0]))
    for name, m, reports, var in rows:
        best = name == c.recommended
        table.add_row(name + (" *" if best else ""), f"{m.epsilon:.4g}", m.name, reports,
                      f"{var:.4g}", f"{math.sqrt(var):.4g}", style="bold green" if best else None)
    out.print(table)
    out.print(
        f"Variance ratio split/sample: [bold]{c.ratio[0]:.3g}[/bold]; recommended: allocation: "
        f"[bold]{c.recommended}[/bold] (sample: each respondent answers one question drawn on the device)."
    )


def _check_delta(delta: float) -> None:
    if not 0 < delta < 1:
        raise CLIError(f"--delta must be in (0, 1); got {delta!r}")


def _shuffled(epsilon0: float, n: int, delta: float) -> dict[str, float | int] | None:
    """The central guarantee of ``n`` shuffled ``epsilon0``-LDP reports (None for infinite epsilon0)."""
    if not math.isfinite(epsilon0):
        return None
    return {"n": n, "epsilon": dn.shuffle_epsilon(epsilon0, n, delta), "delta": delta}


def _print_shuffled(epsilon0: float, n: int, delta: float) -> None:
    shuffled = _shuffled(epsilon0, n, delta)
    if shuffled is not None:
        out.print(
            f"With shuffled collection of {n:,} reports this is also "
            f"({shuffled['epsilon']:.3g}, {delta:g})-DP centrally (Feldman, McMillan & Talwar)."
        )


def _plan_design(
    model: str, p: str | None, kukrep: int, prevalence: float | None, null: float, power: float,
    level: float, alternative: str, extra: float | None, n: int, delta: float, as_json: bool,
) -> None:
    from deniable import survey

    _check_delta(delta)
    if p is None:
        raise CLIError("--design needs --p (e.g. --p 1/6,1/6)")
    if prevalence is None:
        raise CLIError("--design needs --prevalence (the prevalence to detect)")
    d = survey.design(model, [v.strip() for v in p.split(",")], Kukrep=kukrep)
    se = survey.standard_error(d, prevalence, n, extra)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PowerApproximationWarning)
        at_n = survey.prevalence_power(d, prevalence, n, null, level, alternative, extra)
        needed = survey.prevalence_sample_size(d, prevalence, null, power, level, alternative, extra)
    notes = [str(w.message) for w in caught if issubclass(w.category, PowerApproximationWarning)]
    record = {
        "design": d.model, "p": [str(v) for v in d.p],
        "epsilon": d.epsilon if math.isfinite(d.epsilon) else "inf", "prevalence": prevalence,
        "null": null, "alternative": alternative, "level": level, "n": n, "std_error": se,
        "power_at_n": at_n, "power": power, "respondents_needed": needed, "approximation_warnings": notes,
        "shuffled": _shuffled(d.epsilon, n, delta),
    }
    if as_json:
        print_json(record)
        return
    eps = f"{d.epsilon:.4g}" if math.isfinite(d.epsilon) else "infinite (an answer reveals the truth)"
    table = Table(title=f"{d.model} design, p = ({', '.join(str(v) for v in d.p)})", title_justify="left")
    for header in ("epsilon", f"standard error at n={n:,}", f"power at n={n:,}"):
        table.add_column(header, justify="right")
    table.add_row(eps, f"{se:.4g}", f"{at_n:.3f}")
    out.print(table)
    out.print(
        f"Respondents needed to detect a prevalence of {prevalence:g} against {null:g} "
        f"({alternative}, level {level:g}) with power {power:g}: [bold]{needed:,}[/bold]"
    )
    for note in notes:
        out.print(f"[yellow]Note:[/yellow] {note}", markup=True, highlight=False)
    _print_shuffled(d.epsilon, n, delta)


# --------------------------------------------------------------------- audit
@handle_errors
def audit_cmd(
    mechanism: MechanismOpt,
    epsilon: EpsilonOpt,
    k: Annotated[int, typer.Option("--k", help="Number of categories (ignored for binary-rr).")] = 2,
    low: Annotated[
        float | None, typer.Option(help="Numeric mechanisms: the range's lower end (default 0).")
    ] = None,
    high: Annotated[
        float | None, typer.Option(help="Numeric mechanisms: the range's upper end (default 1).")
    ] = None,
    trials: Annotated[int, typer.Option(help="Reports per input value.")] = 100_000,
    alpha: Annotated[float, typer.Option(help="False-failure probability of the audit.")] = 1e-6,
    seed: Annotated[
        int | None, typer.Option(help="Audit the seeded simulation path instead of the secure one.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Empirical privacy audit: a lower confidence bound on the mechanism's real epsilon.

    Runs the real privatize path (secure randomness unless --seed) on
    neighbouring inputs and bounds the privacy loss from below with
    Clopper-Pearson intervals. Exit code 0 when the bound does not exceed the
    claimed epsilon (PASS), 1 when it does (FAIL). A numeric mechanism is
    audited between the ends of --low..--high (the pair whose reports differ
    most; the range scales every report alike, so 0..1 serves); gaussian is
    not audited, its guarantee being (epsilon, delta).

    Examples:
      deniable audit --mechanism oue --k 8 --epsilon 1 --trials 100000
      deniable audit --mechanism piecewise --epsilon 1
    """
    name = check_mechanism_name(mechanism)
    numeric = name in NUMERIC_NAMES
    if numeric and "delta" in registry.recipe(name).required:
        raise CLIError(f"the audit bounds a pure epsilon; {name} is (epsilon, delta)-private")
    if not numeric and (low is not None or high is not None):
        raise CLIError(f"--low and --high go with a numeric --mechanism; got {name!r}")
    if numeric:
        m = build_numeric(name, 0.0 if low is None else low, 1.0 if high is None else high, epsilon)
    else:
        m = build_mechanism(name, k, epsilon)
    result = dn.audit(m, trials=trials, rng=seed, alpha=alpha)
    shape = {"range": [m.low, m.high]} if numeric else {"k": m.k}
    if as_json:
        print_json({"mechanism": m.name, **shape, "epsilon_claimed": result.epsilon_claimed,
                    "epsilon_lower": result.epsilon_lower, "alpha": result.alpha,
                    "trials": result.trials, "comparisons": result.comparisons,
                    "passed": result.passed})
    else:
        table = Table(title=f"Privacy audit of {m!r}", title_justify="left")
        table.add_column("claimed epsilon", justify="right")
        table.add_column(f"measured lower bound ({1 - alpha:.6g} conf.)", justify="right")
        table.add_column("trials per input", justify="right")
        table.add_column("verdict")
        table.add_row(
            f"{result.epsilon_claimed:.6g}",
            f"{result.epsilon_lower:.6g}",
            f"{trials:,}",
            "[bold green]PASS[/]" if result.passed else "[bold red]FAIL[/]",
        )
        out.print(table)
        if seed is not None:
            err.print("note: --seed audits the simulation path, not the secure device path")
    if not result.passed:
        raise typer.Exit(1)


def _per_arm(m: Any, difference: str, power: float, level: float) -> dict[str, Any]:
    """``plan --difference A,B``: the respondents per arm of :func:`deniable.difference_sample_size`."""
    parts = difference.split(",")
    try:
        a, b = (float(x) for x in parts)
    except ValueError:
        raise CLIError(f"--difference must be two shares, e.g. 0.30,0.36; got {difference!r}") from None
    try:
        n = dn.difference_sample_size(m, a, b, power=power, level=level)
    except ValueError as exc:
        raise CLIError(f"--difference: {exc}") from None
    return {"share_a": a, "share_b": b, "power": power, "level": level, "per_arm": n}
