"""The ``deniable`` command line (needs ``deniable[cli]``; plots need ``deniable[plot]``).

Commands: ``demo``, ``plan``, ``simulate``, ``privatize``, ``estimate``,
``audit``, ``serve``. Each prints one clear error line on stderr and exits
with code 1 on bad input; ``deniable --debug ...`` shows the traceback.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

try:
    import typer
    from rich.table import Table
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(f"the deniable command line needs its extra: pip install 'deniable[cli]' ({exc})") from exc

import numpy as np

import deniable as dn
from deniable import cli_data
from deniable import plan as planning
from deniable.cli_common import (
    MECHANISM_NAMES,
    CLIError,
    build_mechanism,
    check_mechanism_name,
    err,
    estimate_records,
    estimate_table,
    handle_errors,
    out,
    parse_epsilon,
    print_json,
    progress,
    save_axes,
    state,
)
from deniable.cli_server import register as register_server_commands
from deniable.cli_simulate import simulate_app

__all__ = ["app", "main"]

app = typer.Typer(
    name="deniable",
    help="Local differential privacy by randomized response: plan, simulate, privatize, "
    "collect and estimate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
register_server_commands(app)
app.add_typer(simulate_app, name="simulate")

MechanismOpt = Annotated[
    str,
    typer.Option("--mechanism", "-m", help=f"One of: {', '.join(MECHANISM_NAMES)}."),
]
EpsilonOpt = Annotated[float, typer.Option("--epsilon", "-e", help="Privacy loss epsilon (> 0).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    state.debug = debug


# ---------------------------------------------------------------------- plan
@app.command("plan")
@handle_errors
def plan_cmd(
    k: Annotated[int, typer.Option("--k", help="Number of categories (>= 2).")],
    epsilon: EpsilonOpt,
    margin: Annotated[float, typer.Option(help="Target CI half-width (share, e.g. 0.01).")] = 0.01,
    level: Annotated[float, typer.Option(help="Confidence level of the margin.")] = 0.95,
    n: Annotated[int, typer.Option("--n", help="Respondents for the SE column.")] = 100_000,
    as_json: JsonOpt = False,
) -> None:
    """Compare every frequency oracle for k categories at epsilon and pick one.

    Columns: Var* (n times the variance of one category's estimate as its
    share goes to 0), the standard error at --n respondents, report size in
    bits and server decode cost; then the recommended (lowest Var*) mechanism
    and the respondents it needs for a --margin CI half-width at --level
    (worst case over the share).

    Example: deniable plan --k 1024 --epsilon 1 --margin 0.01
    """
    if k < 2:
        raise CLIError(f"--k must be >= 2; got {k}")
    if n < 1:
        raise CLIError(f"--n must be positive; got {n}")
    parse_epsilon(epsilon)
    choice = dn.best_mechanism(k, epsilon)
    rows = []
    for name, m in planning.candidates(k, epsilon).items():
        var = choice.variances[name]
        rows.append(
            {
                "mechanism": name,
                "var_star": var,
                "std_error": math.sqrt(var / n),
                "report_bits": planning.report_bits(m),
                "decode_cost": planning.decode_cost(m),
                "epsilon": m.epsilon,
            }
        )
    rows.sort(key=lambda r: (r["var_star"], r["report_bits"]))
    needed = dn.sample_size(choice.mechanism, margin, level)
    if as_json:
        print_json(
            {"k": k, "epsilon": epsilon, "n": n, "margin": margin, "level": level,
             "recommended": choice.name, "respondents_needed": needed, "mechanisms": rows}
        )
        return
    table = Table(title=f"Frequency oracles for k = {k}, epsilon = {epsilon:g}", title_justify="left")
    for header in ("mechanism", "Var*", f"SE at n={n:,}", "report bits", "decode cost"):
        table.add_column(header, justify="left" if header in ("mechanism", "decode cost") else "right")
    for r in rows:
        best = r["mechanism"] == choice.name
        table.add_row(
            r["mechanism"] + (" *" if best else ""),
            f"{r['var_star']:.4g}",
            f"{r['std_error']:.4g}",
            f"{r['report_bits']:,}",
            r["decode_cost"],
            style="bold green" if best else None,
        )
    out.print(table)
    out.print(
        f"Recommended: [bold]{choice.name}[/bold] (* lowest Var*). "
        f"Respondents needed for a ±{margin:g} margin at {level:.0%} confidence: "
        f"[bold]{needed:,}[/bold]"
    )


# --------------------------------------------------------------------- audit
@app.command("audit")
@handle_errors
def audit_cmd(
    mechanism: MechanismOpt,
    epsilon: EpsilonOpt,
    k: Annotated[int, typer.Option("--k", help="Number of categories (ignored for binary-rr).")] = 2,
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
    claimed epsilon (PASS), 1 when it does (FAIL).

    Example: deniable audit --mechanism oue --k 8 --epsilon 1 --trials 100000
    """
    m = build_mechanism(mechanism, k, epsilon)
    result = dn.audit(m, trials=trials, rng=seed, alpha=alpha)
    if as_json:
        print_json({"mechanism": m.name, "k": m.k, "epsilon_claimed": result.epsilon_claimed,
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


# ----------------------------------------------------------------- privatize
@app.command("privatize")
@handle_errors
def privatize_cmd(
    data: Annotated[Path, typer.Argument(help="Input .csv or .parquet file.")],
    column: Annotated[str, typer.Option("--column", "-c", help="Column holding the answers.")],
    epsilon: EpsilonOpt,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output file (same format).")],
    mechanism: MechanismOpt = "auto",
    categories: Annotated[
        str | None,
        typer.Option(help="Comma-separated public list of every possible answer."),
    ] = None,
    categories_from_data: Annotated[
        bool,
        typer.Option(
            "--categories-from-data",
            help="Read the categories from the data instead; the observed list is published "
            "unprotected in the config, so a rare answer can reveal who gave it.",
        ),
    ] = False,
    seed: Annotated[
        int | None, typer.Option(help="Seeded randomness for simulations: output is NOT private.")
    ] = None,
    chunk_size: Annotated[int, typer.Option(help="Rows per chunk.")] = 500_000,
) -> None:
    """Privatize one column of a CSV or Parquet file, streaming in chunks.

    Every value is randomized with the operating system's CSPRNG; the other
    columns are kept as they are. The reports replace the column (as text;
    structured reports as compact JSON) and the mechanism config is written
    beside the output as OUTPUT.deniable.json for `deniable estimate`.
    Use --mechanism binary-rr for yes/no columns (true/false, 1/0, yes/no).

    Example: deniable privatize data.csv --column answer --mechanism grr --epsilon 1 -o private.csv
    """
    parse_epsilon(epsilon)
    binary = check_mechanism_name(mechanism) == "binary-rr"
    if output.resolve() == data.resolve():
        raise CLIError("--output must differ from the input file")
    reader = cli_data.ColumnReader(data, column, chunk_size)
    writer = cli_data.ColumnWriter(output, reader.kind, column)
    if binary and categories is not None:
        raise CLIError("--categories does not apply to binary-rr (its categories are no/yes)")
    if seed is not None:
        err.print(
            "[bold yellow]warning:[/] --seed makes the randomization predictable: "
            "the output is NOT private (use it only for simulations and tests)"
        )
    cats: np.ndarray | None = None
    if binary:
        m = dn.BinaryRR(epsilon=epsilon)
    else:
        if categories is not None:
            listed = [c.strip() for c in categories.split(",") if c.strip()]
        elif not categories_from_data:
            raise CLIError(
                "pass --categories with the public list of every possible answer, or "
                "--categories-from-data to publish the list observed in the data (not private)"
            )
        else:
            err.print(
                "[bold yellow]note:[/] categories read from the data; the list is published "
                "unprotected in the config (pass --categories with a public list to avoid this)"
            )
            with progress(transient=True, unit=reader.progress_unit) as bar:
                task = bar.add_task("reading categories", total=reader.progress_total)
                listed = cli_data.discover_categories(
                    reader, on_chunk=lambda: bar.update(task, completed=reader.position())
                )
        if len(listed) < 2:
            raise CLIError(
                f"column {column!r} needs at least 2 categories; got {listed!r} "
                "(list every possible answer with --categories)"
            )
        m = build_mechanism(mechanism, listed, epsilon)
        cats = np.asarray(listed, dtype=str)
    rng = np.random.default_rng(seed) if seed is not None else None
    rows = 0
    try:
        with progress(unit=reader.progress_unit) as bar:
            task = bar.add_task("privatizing", total=reader.progress_total)
            for chunk in reader:
                if cats is None:
                    values: Any = cli_data.parse_binary(chunk, column)
                else:
                    cli_data.check_categories(chunk, column, cats)
                    values = chunk.values
                reports = m.privatize_many(values, rng=rng)
                writer.write(chunk, cli_data.reports_to_text(m, reports))
                rows += len(chunk.values)
                bar.update(task, completed=reader.position())
        if rows == 0:
            raise CLIError(f"{data} has no data rows")
        writer.commit()
    except BaseException:
        writer.discard()
        raise
    cfg = cli_data.config_path(output)
    cfg.write_text(json.dumps(m.to_config(), indent=2) + "\n")
    out.print(
        f"privatized {rows:,} rows of {column!r} with {m!r} -> {output}\n"
        f"mechanism config -> {cfg}"
    )


# ------------------------------------------------------------------ estimate
@app.command("estimate")
@handle_errors
def estimate_cmd(
    data: Annotated[
        Path | None, typer.Argument(help="Privatized .csv or .parquet file.")
    ] = None,
    column: Annotated[str | None, typer.Option("--column", "-c", help="Column of reports.")] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="Mechanism config or survey JSON (default: DATA.deniable.json)."),
    ] = None,
    db: Annotated[
        str | None, typer.Option(help="Database URL of a collection server (with --survey).")
    ] = None,
    survey: Annotated[str | None, typer.Option(help="Survey id (with --db).")] = None,
    consistent: Annotated[
        str | None,
        typer.Option(help="Add a post-processed column: norm-sub, project, clip, normalize, "
                          "norm-mul or base-cut."),
    ] = None,
    level: Annotated[float, typer.Option(help="Confidence level of the intervals.")] = 0.95,
    plot: Annotated[Path | None, typer.Option(help="Write a bar chart (.png/.svg/.pdf).")] = None,
    as_json: JsonOpt = False,
    chunk_size: Annotated[int, typer.Option(help="Rows per chunk.")] = 500_000,
) -> None:
    """Debiased frequencies with standard errors and confidence intervals.

    From a privatized file (the mechanism config is read from beside it), a
    collection server's export (Parquet exports describe themselves; for CSV
    pass --config with the survey JSON of GET /surveys/ID and the question id
    as --column), or a server's database (--db URL --survey ID).

    Examples:
      deniable estimate private.csv --column answer --consistent norm-sub
      deniable estimate export.csv --column violated --config survey.json
      deniable estimate --db sqlite:///deniable.db --survey honor-code
    """
    if not 0 < level < 1:
        raise CLIError(f"--level must be in (0, 1); got {level!r}")
    if db is not None or survey is not None:
        from deniable.cli_server import estimate_db

        if data is not None or column is not None or config is not None:
            raise CLIError("give either a file (DATA --column) or --db URL --survey ID, not both")
        if db is None or survey is None:
            raise CLIError("--db and --survey go together")
        estimate_db(db, survey, consistent=consistent, level=level, plot=plot, as_json=as_json)
        return
    if data is None or column is None:
        raise CLIError("give a privatized file and its --column (or --db URL --survey ID)")
    reader = cli_data.ColumnReader(data, column, chunk_size)
    m = cli_data.load_mechanism(data, column, config)
    with progress(transient=True, unit=reader.progress_unit) as bar:
        task = bar.add_task("aggregating", total=reader.progress_total)
        stat = cli_data.aggregate_file(
            m, reader, on_chunk=lambda: bar.update(task, completed=reader.position())
        )
    if stat.n == 0:
        raise CLIError(f"{data} has no reports")
    show_estimate(m.estimate_from(stat), consistent=consistent, level=level, plot=plot,
                  as_json=as_json)


def show_estimate(
    est: dn.Estimate,
    *,
    consistent: str | None,
    level: float,
    plot: Path | None,
    as_json: bool,
    title: str | None = None,
) -> None:
    """Print an Estimate as a table or JSON, and plot it when asked."""
    post = est.consistent(consistent) if consistent else None
    if plot is not None:
        from deniable.plot import bar_estimate

        save_axes(bar_estimate(est, level=level, title=title), plot)
    if as_json:
        print_json({"mechanism": est.mechanism, "epsilon": est.epsilon, "n": est.n,
                    "level": level, "title": title,
                    "categories": estimate_records(est, level, post)})
        return
    out.print(estimate_table(est, level, post, title=title))
    if plot is not None:
        out.print(f"plot -> {plot}")



def main() -> None:
    """Entry point of the ``deniable`` script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
