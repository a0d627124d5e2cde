"""``deniable privatize`` and ``deniable estimate``: a column of a CSV or Parquet file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from deniable.cli import data as cli_data
from deniable.cli.common import (
    NUMERIC_NAMES,
    CLIError,
    DeltaOpt,
    EpsilonOpt,
    HighOpt,
    JsonOpt,
    LowOpt,
    MechanismOpt,
    TargetOpt,
    build_mechanism,
    build_numeric,
    check_mechanism_name,
    err,
    handle_errors,
    out,
    parse_epsilon,
    progress,
)
from deniable.cli.output import show_estimate, show_mean
from deniable.errors import CategoryError
from deniable.estimate import MeanEstimate, check_target
from deniable.mechanisms import registry

__all__ = ["privatize_cmd", "estimate_cmd"]


# ----------------------------------------------------------------- privatize
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
    low: LowOpt = None,
    high: HighOpt = None,
    delta: DeltaOpt = None,
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
    Use --mechanism binary-rr for yes/no columns (true/false, 1/0, yes/no),
    and a numeric mechanism (laplace, gaussian, duchi, piecewise, hybrid,
    square-wave) with --low and --high for numbers (clamped to that range).

    Example: deniable privatize data.csv --column answer --mechanism grr --epsilon 1 -o private.csv
    """
    parse_epsilon(epsilon)
    name = check_mechanism_name(mechanism)
    binary, numeric = name == "binary-rr", name in NUMERIC_NAMES
    if output.resolve() == data.resolve():
        raise CLIError("--output must differ from the input file")
    reader = cli_data.ColumnReader(data, column, chunk_size)
    writer = cli_data.ColumnWriter(output, reader.kind, column)
    if binary and categories is not None:
        raise CLIError("--categories does not apply to binary-rr (its categories are no/yes)")
    if numeric and (categories is not None or categories_from_data):
        raise CLIError(f"--categories does not apply to {name} (it randomizes numbers in --low..--high)")
    if not numeric and (low is not None or high is not None or delta is not None):
        raise CLIError(f"--low, --high and --delta go with a numeric --mechanism; got {name!r}")
    if seed is not None:
        err.print(
            "[bold yellow]warning:[/] --seed makes the randomization predictable: "
            "the output is NOT private (use it only for simulations and tests)"
        )
    if binary:
        m = build_mechanism(name, 2, epsilon)  # the yes/no domain
    elif numeric:
        m = build_numeric(name, low, high, epsilon, delta)
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
    rng = np.random.default_rng(seed) if seed is not None else None
    rows = 0
    try:
        with progress(unit=reader.progress_unit) as bar:
            task = bar.add_task("privatizing", total=reader.progress_total)
            for chunk in reader:
                if binary:
                    values: Any = cli_data.parse_binary(chunk, column)
                elif numeric:
                    values = cli_data.parse_numbers(chunk, column)
                else:
                    values = chunk.values  # the encode in privatize_many is the one check
                try:
                    reports = m.privatize_many(values, rng=rng)
                except CategoryError as exc:  # the encode refused a value: name its row
                    if exc.index is None:
                        raise
                    raise cli_data.category_error(chunk, column, m, exc.index) from None
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
    target: TargetOpt = "population",
    plot: Annotated[Path | None, typer.Option(help="Write a bar chart (.png/.svg/.pdf).")] = None,
    as_json: JsonOpt = False,
    chunk_size: Annotated[int, typer.Option(help="Rows per chunk.")] = 500_000,
) -> None:
    """Debiased frequencies with standard errors and confidence intervals.

    --target population (the default) estimates the shares in the population
    the respondents were sampled from; --target respondents the shares among
    these respondents only (smaller standard errors).

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
        from deniable.cli.server import estimate_db

        if data is not None or column is not None or config is not None:
            raise CLIError("give either a file (DATA --column) or --db URL --survey ID, not both")
        if db is None or survey is None:
            raise CLIError("--db and --survey go together")
        estimate_db(db, survey, consistent=consistent, level=level, plot=plot, as_json=as_json,
                    target=check_target(target))
        return
    if data is None or column is None:
        raise CLIError("give a privatized file and its --column (or --db URL --survey ID)")
    reader = cli_data.ColumnReader(data, column, chunk_size, only_column=True)
    m = cli_data.load_mechanism(data, column, config)
    if registry.entry_of(m).kind == "numeric" and (consistent or plot is not None):
        raise CLIError("--consistent and --plot apply to category frequencies, not to a mean")
    with progress(transient=True, unit=reader.progress_unit) as bar:
        task = bar.add_task("aggregating", total=reader.progress_total)
        stat = cli_data.aggregate_file(
            m, reader, on_chunk=lambda: bar.update(task, completed=reader.position())
        )
    if stat.n == 0:
        raise CLIError(f"{data} has no reports")
    est = m.estimate_from(stat, target=check_target(target))
    if isinstance(est, MeanEstimate):
        show_mean(est, level=level, as_json=as_json)
        return
    show_estimate(est, consistent=consistent, level=level, plot=plot, as_json=as_json)
