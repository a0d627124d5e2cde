"""Shared pieces of the command line: error handling, consoles, mechanism choice, tables."""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

import deniable as dn
from deniable.estimate import Estimate
from deniable.mechanisms import registry

__all__ = [
    "CLIError",
    "MECHANISM_NAMES",
    "build_mechanism",
    "check_mechanism_name",
    "handle_errors",
    "out",
    "err",
    "progress",
    "estimate_table",
    "estimate_records",
    "parse_epsilon",
    "save_axes",
    "state",
]

F = TypeVar("F", bound=Callable[..., Any])


class CLIError(Exception):
    """A user-facing error: printed as one line on stderr, exit code 1."""


class _State:
    debug = False


state = _State()

# width>=120 keeps tables readable when stdout is not a terminal (pipes, tests)
out = Console(highlight=False, width=max(120, Console().width))
err = Console(stderr=True, highlight=False)


def handle_errors(func: F) -> F:
    """Turn expected failures into one clear stderr line and exit code 1 (unless --debug)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except (CLIError, ValueError, TypeError, OSError, KeyError, ImportError) as exc:
            if state.debug:
                raise
            message = str(exc) if not isinstance(exc, KeyError) else f"missing key {exc}"
            if isinstance(exc, FileNotFoundError) and exc.filename:
                message = f"no such file: {exc.filename}"
            elif isinstance(exc, OSError) and exc.filename and exc.strerror:
                message = f"{exc.strerror}: {exc.filename}"
            err.print(f"error: {message}", markup=False, soft_wrap=True)
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


# ---------------------------------------------------------------- mechanisms
MECHANISM_NAMES = ("auto", *(w for w, e in registry.entries("frequency").items() if e.recipes))


def parse_epsilon(epsilon: float) -> float:
    """Validate an epsilon given on the command line (finite and positive)."""
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise CLIError(f"--epsilon must be a positive finite number; got {epsilon!r}")
    return epsilon


def build_mechanism(name: str, categories: int | Sequence[Any], epsilon: float) -> Any:
    """A frequency oracle by its wire id (``auto``: the lowest-variance one for ``k``).

    ``binary-rr`` is Warner's design on the yes/no domain (``categories`` is
    ignored); every other name takes the categories (or ``k``).
    """
    key = check_mechanism_name(name)
    eps = parse_epsilon(epsilon)
    if key == "binary-rr":
        return dn.BinaryRR(epsilon=eps)
    if key == "auto":
        k = categories if isinstance(categories, int) else len(categories)
        key = dn.best_mechanism(k, eps).mechanism.wire_id
    return registry.entry(key).cls(categories, epsilon=eps)


def check_mechanism_name(name: str) -> str:
    """The frequency-oracle wire id for ``--mechanism`` (case-insensitive), or a CLIError."""
    key = name.lower()
    if key not in MECHANISM_NAMES:
        raise CLIError(f"--mechanism must be one of {', '.join(MECHANISM_NAMES)}; got {name!r}")
    return key


# -------------------------------------------------------------------- output
def progress(transient: bool = False, unit: str = "items") -> Progress:
    """A rich progress bar on stderr; ``unit="bytes"`` shows sizes instead of counts."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        DownloadColumn() if unit == "bytes" else MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=transient,
    )


def estimate_records(
    est: Estimate, level: float = 0.95, consistent: Estimate | None = None
) -> list[dict[str, Any]]:
    """One JSON-ready dict per category: estimate, SE, CI, observed share (and truth)."""
    low, high = est.ci(level) if est.std_errors is not None and est.n else (None, None)
    rows = []
    for i, category in enumerate(est.domain):
        row: dict[str, Any] = {"category": category, "estimate": float(est.frequencies[i])}
        if low is not None and high is not None and est.std_errors is not None:
            row.update(
                std_error=float(est.std_errors[i]), ci_low=float(low[i]), ci_high=float(high[i])
            )
        row["observed"] = float(est.observed[i])
        if consistent is not None:
            row["consistent"] = float(consistent.frequencies[i])
        if est.truth is not None:
            row["truth"] = float(est.truth[i])
        rows.append(row)
    return rows


def estimate_table(
    est: Estimate,
    level: float = 0.95,
    consistent: Estimate | None = None,
    title: str | None = None,
    max_rows: int = 60,
) -> Table:
    """The estimate as a rich table: category, estimate, SE, CI, observed (+ consistent, truth)."""
    records = estimate_records(est, level, consistent)
    table = Table(
        title=title
        or f"{est.mechanism}, epsilon = {est.epsilon:.4g}, n = {est.n:,}"
        + ("" if est.post_processing == "none" else f" ({est.post_processing})"),
        title_justify="left",
    )
    columns = [("category", "category")]
    columns.append(("estimate", "estimate"))
    if "std_error" in records[0]:
        columns += [("std_error", "SE"), ("ci_low", f"{level:.0%} CI low"), ("ci_high", "CI high")]
    columns.append(("observed", "observed"))
    if consistent is not None:
        columns.append(("consistent", consistent.post_processing))
    if "truth" in records[0]:
        columns.append(("truth", "truth"))
    for key, header in columns:
        table.add_column(header, justify="left" if key == "category" else "right")
    shown = records if len(records) <= max_rows else records[:max_rows]
    for r in shown:
        table.add_row(
            *(str(r[key]) if key == "category" else f"{r[key]:.4f}" for key, _ in columns)
        )
    if len(records) > len(shown):
        table.caption = f"{len(records) - len(shown)} more categories (use --json for all)"
    return table


def print_json(data: Any) -> None:
    """Machine-readable output on stdout (NaN/inf become null)."""

    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if isinstance(v, np.generic):
            return clean(v.item())
        return v

    sys.stdout.write(json.dumps(clean(data), indent=2) + "\n")
    sys.stdout.flush()


def save_axes(ax: Any, path: Path) -> Path:
    """Write the figure of ``ax`` to ``path`` (PNG, SVG or PDF by suffix) at 150 dpi."""
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise CLIError(f"--plot/--out must end in .png, .svg or .pdf; got {str(path)!r}")
    ax.figure.savefig(path, dpi=150)
    return path
