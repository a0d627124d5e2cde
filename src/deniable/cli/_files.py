"""``deniable privatize`` and ``deniable estimate``: a column of a CSV or Parquet file."""

from __future__ import annotations

import glob
import json
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from deniable._estimate import MeanEstimate, check_target
from deniable._joint import JointEstimate
from deniable.cli import _data as cli_data
from deniable.cli import _discovery as discovery
from deniable.cli import _platforms as platforms
from deniable.cli._common import (
    MECHANISM_NAMES,
    NUMERIC_NAMES,
    CLIError,
    DeltaOpt,
    EpsilonOpt,
    HighOpt,
    JsonOpt,
    LowOpt,
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
from deniable.cli._output import show_estimate, show_items, show_keyvalue, show_mean, show_quantiles, show_sliced
from deniable.errors import DeniableWarning, ReportError
from deniable.heavy import HeavyHitters
from deniable.mechanisms import ItemEstimate, KeyValueEstimate, RangeEstimate, registry
from deniable.wire._text import yes_no_labels

__all__ = ["privatize_cmd", "estimate_cmd"]


# ----------------------------------------------------------------- privatize
@handle_errors
def privatize_cmd(
    data: Annotated[Path, typer.Argument(help="Input .csv or .parquet file.")],
    column: Annotated[str, typer.Option("--column", "-c", help="Column holding the answers.")],
    epsilon: EpsilonOpt,
    output: Annotated[Path, typer.Option("--output", "-o", help="Output file (same format).")],
    mechanism: Annotated[
        str,
        typer.Option("--mechanism", "-m",
                     help=f"One of: {', '.join(MECHANISM_NAMES)}; or {discovery.NAME} for free text."),
    ] = "auto",
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
    max_length: Annotated[
        int | None, typer.Option(help=f"{discovery.NAME}: the most UTF-8 bytes of a value (1..254).")
    ] = None,
    method: Annotated[
        str | None, typer.Option(help=f"{discovery.NAME}: pem or sfp (default: the better at this epsilon).")
    ] = None,
    top_k: Annotated[
        int | None, typer.Option(help=f"{discovery.NAME}: values kept per level, the most found (default 32).")
    ] = None,
    truncate: Annotated[
        bool,
        typer.Option("--truncate", help=f"{discovery.NAME}: cut a value longer than --max-length after its "
                     "last whole character that fits (found as that prefix, flagged truncated) instead of "
                     "refusing it."),
    ] = False,
    seed: Annotated[
        int | None, typer.Option(help="Seeded randomness for simulations: output is NOT private.")
    ] = None,
    chunk_size: Annotated[int, typer.Option(help="Rows per chunk.")] = 500_000,
) -> None:
    """Privatize one column of a CSV or Parquet file, streaming in chunks.

    Every value is randomized with the operating system's CSPRNG; the other
    columns are kept as they are. The reports replace the column (as text;
    structured reports as compact JSON; in Parquet, an integer column with
    integer categories stays integer) and the mechanism config is written
    beside the output as OUTPUT.deniable.json for `deniable estimate`.
    Use --mechanism binary-rr for yes/no columns (true/false, 1/0, yes/no; the
    output keeps the spelling of the column's first answer, e.g. Yes/No),
    and a numeric mechanism (laplace, gaussian, duchi, piecewise, hybrid,
    square-wave) with --low and --high for numbers (clamped to that range);
    haar or hierarchical (range queries and quantiles, 1024 bins) refuse a
    number outside it.
    For free text nobody can list (words, URLs), --mechanism heavy-hitters
    with --max-length sends one discovery report per value (PEM or SFP over
    a count-mean sketch); `deniable estimate` then names the frequent values.

    Examples:
      deniable privatize data.csv --column answer --mechanism grr --epsilon 1 --categories A,B,C -o private.csv
      deniable privatize words.csv --column word --mechanism heavy-hitters --epsilon 4 --max-length 12 -o private.csv
    """
    parse_epsilon(epsilon)
    text = mechanism.lower() == discovery.NAME
    name = discovery.NAME if text else check_mechanism_name(mechanism)
    binary, numeric = name == "binary-rr", name in NUMERIC_NAMES
    if output.resolve() == data.resolve():
        raise CLIError("--output must differ from the input file")
    reader = cli_data.ColumnReader(data, column, chunk_size)
    writer = cli_data.ColumnWriter(output, reader.kind, column)
    if text and (categories is not None or categories_from_data or low is not None or high is not None
                 or delta is not None):
        raise CLIError(f"--categories, --low, --high and --delta do not apply to {name} (it takes any text)")
    if not text and (max_length is not None or method is not None or top_k is not None or truncate):
        raise CLIError(f"--max-length, --method, --top-k and --truncate go with --mechanism {discovery.NAME}; "
                       f"got {name!r}")
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
    if text:
        m: Any = discovery.build(epsilon, max_length, method, top_k)
    elif binary:
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
    by_position: Any = None if text or binary or numeric else cli_data.positional(m)
    rows = 0
    labels: tuple[str, str] | None = None  # a yes/no column's own spelling, kept in the output
    try:
        with progress(unit=reader.progress_unit) as bar:
            task = bar.add_task("privatizing", total=reader.progress_total)
            for chunk in reader:
                if binary and rows == 0 and len(chunk):
                    labels = yes_no_labels(str(chunk.first()))
                if text:
                    discovery.check_values(chunk, column, m.max_length, truncate)
                    reports_text: Any = discovery.reports_text(m, m.privatize_many(chunk.values, rng=rng))
                elif binary or numeric:
                    values = (cli_data.parse_binary if binary else cli_data.parse_numbers)(chunk, column)
                    reports_text = cli_data.report_column(m, m.privatize_many(values, rng=rng), labels)
                else:  # positions of the chunk's distinct values: the one check of the values
                    reports = by_position.privatize_many(cli_data.category_positions(chunk, column, m), rng=rng)
                    reports_text = (cli_data.category_text(m, reports, chunk.block.column(column))
                                    if m.report_kind == "category" else cli_data.report_column(m, reports))
                writer.write(chunk, reports_text)
                rows += len(chunk)
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
    top: Annotated[
        int | None, typer.Option(help=f"{discovery.NAME} reports: show at most this many values.")
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(help=f"{discovery.NAME} reports: the least estimated count shown (default: the values "
                     "significantly above 0)."),
    ] = None,
    as_csv: Annotated[
        bool, typer.Option("--csv", help=f"{discovery.NAME} reports: the values found as CSV on stdout.")
    ] = False,
    chunk_size: Annotated[int, typer.Option(help="Rows per chunk.")] = 500_000,
    by: Annotated[
        str | None,
        typer.Option(help="Estimate slice by slice: the column of a plain label per row (an app version, a "
                     "country, an experiment's arm)."),
    ] = None,
    dask: Annotated[
        bool,
        typer.Option("--dask", help="Aggregate with Dask, partition by partition; DATA may be a glob "
                     "('reports/*.parquet') of files privatized with one mechanism (deniable[dask])."),
    ] = False,
    scheduler: Annotated[
        str,
        typer.Option(help="With --dask: threads, processes, sync, or a distributed scheduler's "
                     "address (tcp://host:8786)."),
    ] = "threads",
) -> None:
    """Debiased frequencies with standard errors and confidence intervals.

    --target population (the default) estimates the shares in the population
    the respondents were sampled from; --target respondents the shares among
    these respondents only (smaller standard errors).

    From a privatized file (the mechanism config is read from beside it), a
    collection server's export (Parquet exports describe themselves; for CSV
    pass --config with the survey JSON of GET /surveys/ID and the question id
    as --column), or a server's database (--db URL --survey ID).

    A survey platform's CSV export (Qualtrics, LimeSurvey, REDCap, oTree) whose
    column holds deniable-embed's reports is read as it is (Qualtrics's three
    header rows included) with --config the mechanism config the embed used:
    each row's fingerprint must match it, empty rows are left out.

    With --dask the column is read and aggregated by Dask (deniable.scale.aggregate_files),
    from one file or a glob of files, on this machine or a distributed cluster.

    A column privatized with --mechanism heavy-hitters gives the values found
    (value, count, standard error, interval, truncated), most frequent first;
    --top and --threshold limit them, --json or --csv print them for machines.

    Examples:
      deniable estimate private.csv --column answer --consistent norm-sub
      deniable estimate words-private.csv --column word --top 20 --csv
      deniable estimate 'reports/*.parquet' --column answer --dask
      deniable estimate export.csv --column violated --config survey.json
      deniable estimate qualtrics.csv --column deniable_report --config mechanism.json
      deniable estimate private.csv --column answer --by app_version
      deniable estimate --db sqlite:///deniable.db --survey honor-code
    """
    if not 0 < level < 1:
        raise CLIError(f"--level must be in (0, 1); got {level!r}")
    if db is not None or survey is not None:
        from deniable.cli._server import estimate_db

        if data is not None or column is not None or config is not None or by is not None:
            raise CLIError("give either a file (DATA --column [--by COLUMN]) or --db URL --survey ID, not both")
        if db is None or survey is None:
            raise CLIError("--db and --survey go together")
        estimate_db(db, survey, consistent=consistent, level=level, plot=plot, as_json=as_json,
                    target=check_target(target))
        return
    if data is None or column is None:
        raise CLIError("give a privatized file and its --column (or --db URL --survey ID)")
    if as_json and as_csv:
        raise CLIError("give --json or --csv, not both")
    embedded = not dask and platforms.holds_fields(data, column)  # a survey platform's export
    if not dask and not embedded:
        reader = cli_data.ColumnReader(data, column, chunk_size, only_column=True)
        m = cli_data.load_mechanism(data, column, config)
        if isinstance(m, HeavyHitters):
            _estimate_discovery(m, reader, consistent=consistent, target=target, plot=plot, level=level,
                                top=top, threshold=threshold, as_json=as_json, as_csv=as_csv)
            return
    if top is not None or threshold is not None or as_csv:
        raise CLIError(f"--top, --threshold and --csv apply to a column privatized with {discovery.NAME}")
    if by is not None:
        if dask or consistent is not None or plot is not None:
            raise CLIError("--by estimates slice by slice from one file: without --dask, --consistent or --plot")
        if embedded:
            raise CLIError("--by reads a privatized file, not a survey platform's export")
        _estimate_by(m, reader, data, by, chunk_size, level=level, target=check_target(target), as_json=as_json)
        return
    if dask:
        m, paths = _dask_inputs(data, column, config)
        _check_frequency_options(m, consistent, plot)
        stat, first = _dask_aggregate(m, paths, column, scheduler)
    elif embedded:
        m = cli_data.load_mechanism(data, column, config)
        _check_frequency_options(m, consistent, plot)
        stat, first = _platform_aggregate(m, data, column), ""
    else:
        _check_frequency_options(m, consistent, plot)
        with progress(transient=True, unit=reader.progress_unit) as bar:
            task = bar.add_task("aggregating", total=reader.progress_total)
            stat = cli_data.aggregate_file(
                m, reader, on_chunk=lambda: bar.update(task, completed=reader.position())
            )
        first = reader.first_value
    if stat.n == 0:
        raise CLIError(f"{data} has no reports")
    est = m.estimate_from(stat, target=check_target(target))
    if m.report_kind == "bool" and (labels := yes_no_labels(first)) is not None:
        est = replace(est, domain=labels)  # the column's own yes/no words, as privatize kept them
    if isinstance(est, MeanEstimate):
        show_mean(est, level=level, as_json=as_json)
        return
    if isinstance(est, RangeEstimate):
        show_quantiles(est, level=level, as_json=as_json)
        return
    if isinstance(est, ItemEstimate):  # choose-several answers: each item's share of respondents
        show_items(est, level=level, as_json=as_json)
        return
    if isinstance(est, KeyValueEstimate):  # key-value answers: each key's share, and its mean on the question's range
        show_keyvalue(est, level=level, as_json=as_json,
                      question=None if dask else cli_data.survey_question(data, column, config))
        return
    if isinstance(est, JointEstimate):  # several questions answered jointly: the cells, by tuple of answers
        est = replace(est.cells, domain=m.domain)
    show_estimate(est, consistent=consistent, level=level, plot=plot, as_json=as_json, xlabel=column)



def _platform_aggregate(m: Any, data: Path, column: str) -> Any:
    """The aggregate of a platform export's column of embed reports (each row's fingerprint checked)."""
    if isinstance(m, HeavyHitters):
        raise CLIError(f"{discovery.NAME} reports are not made by deniable-embed; estimate a privatized file")
    frame, platform = platforms.read_export(data)
    reports, held = platforms.field_reports(frame, column, m, data, platform)
    empty = int((~held).sum())
    try:
        parsed = m.reports_from_json(reports, wire_version=2)
    except ReportError as exc:
        raise CLIError(f"column {column!r} of {data} ({platform} export): report {exc.index + 1}: "
                       f"{exc.reason}") from None
    if empty:
        err.print(f"[bold yellow]note:[/] {empty} row(s) of {data.name} ({platform} export) have no report "
                  f"in {column!r} and are left out")
    return m.aggregate(parsed)


def _estimate_by(m: Any, reader: cli_data.ColumnReader, data: Path, by: str, chunk_size: int, *, level: float,
                 target: Any, as_json: bool) -> None:
    """``estimate --by``: the reports aggregated per distinct cell of the column ``by``, each slice estimated."""
    import warnings

    from deniable._slices import sliced_estimate

    labels = cli_data.ColumnReader(data, by, chunk_size, only_column=True)
    with progress(transient=True, unit=reader.progress_unit) as bar:
        task = bar.add_task("aggregating by slice", total=reader.progress_total)
        stats = cli_data.aggregate_file_by(m, reader, labels, on_chunk=lambda: bar.update(task,
                                                                                      completed=reader.position()))
    if not stats:
        raise CLIError(f"{data} has no reports")
    with warnings.catch_warnings():  # the table says which slices are small
        warnings.simplefilter("ignore", DeniableWarning)
        try:
            sliced = sliced_estimate(m, by, list(stats), list(stats.values()), target)
        except ValueError as exc:
            raise CLIError(f"--by {by}: {exc}") from None
    show_sliced(sliced, level=level, as_json=as_json)


def _estimate_discovery(hh: HeavyHitters, reader: cli_data.ColumnReader, *, consistent: str | None, target: str,
                        plot: Path | None, level: float, top: int | None, threshold: float | None,
                        as_json: bool, as_csv: bool) -> None:
    """``estimate`` of a heavy-hitters column: aggregate the reports, identify and show the values."""
    if consistent is not None or plot is not None or target != "population":
        raise CLIError(f"--consistent, --plot and --target apply to category frequencies, not to {discovery.NAME}")
    discovery.check_identify(top, threshold)
    with progress(transient=True, unit=reader.progress_unit) as bar:
        task = bar.add_task("aggregating", total=reader.progress_total)
        stat = discovery.aggregate_file(hh, reader, on_chunk=lambda: bar.update(task, completed=reader.position()))
    if stat is None:
        raise CLIError(f"{reader.path} has no reports")
    found = hh.identify(stat, top=top, threshold=threshold, level=level)
    discovery.show_discovery(hh, found, threshold=threshold, as_json=as_json, as_csv=as_csv)


def _check_frequency_options(m: Any, consistent: str | None, plot: Path | None) -> None:
    """Refuse --consistent and --plot for a numeric mechanism (before reading the data)."""
    if registry.entry_of(m).kind in ("numeric", "range") and (consistent or plot is not None):
        raise CLIError("--consistent and --plot apply to category frequencies, not to a mean")


def _dask_inputs(pattern: Path, column: str, config: Path | None) -> tuple[Any, list[Path]]:
    """``estimate --dask``: the files matching ``pattern`` and the one mechanism that privatized them all
    (its config beside each file, the Parquet metadata, or --config for all)."""
    paths = [Path(p) for p in sorted(glob.glob(str(pattern)))]
    if not paths:
        raise CLIError(f"no file matches {str(pattern)!r}")
    m = None
    for path in paths:
        cli_data.data_file(path)
        found = cli_data.load_mechanism(path, column, config)
        if isinstance(found, HeavyHitters):
            raise CLIError(f"--dask does not aggregate {discovery.NAME} reports; estimate {path} without --dask")
        if m is not None and found.fingerprint != m.fingerprint:
            raise CLIError(f"{path} was privatized with another mechanism ({found!r}) than {paths[0]} ({m!r})")
        m = found
    return m, paths


def _dask_aggregate(m: Any, paths: list[Path], column: str, scheduler: str) -> tuple[Any, str]:
    """The aggregate of every file's column on Dask, and the first report's text."""
    try:
        from deniable import scale
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise CLIError(f"--dask needs the dask extra: pip install 'deniable[dask]' ({exc})") from None
    first = next((str(c.values[0]) for c in cli_data.ColumnReader(paths[0], column, 1, only_column=True)
                  if c.values.size), "")
    client: Any = None
    if "://" in scheduler:
        from distributed import Client

        client = Client(scheduler)  # type: ignore[no-untyped-call]
    elif scheduler not in ("threads", "processes", "sync"):
        raise CLIError(f"--scheduler must be threads, processes, sync or an address; got {scheduler!r}")
    try:
        with progress(transient=True) as bar:
            bar.add_task(f"aggregating {len(paths)} file(s) with Dask", total=None)
            stat = scale.aggregate_files(m, paths, column, scheduler=client or scheduler)
    finally:
        if client is not None:
            client.close()
    return stat, first
