"""Shared pieces of the command line: error handling, consoles, mechanism choice, progress bars."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

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

import deniable as dn
from deniable._estimate import check_target
from deniable.errors import DeniableError
from deniable.mechanisms import registry

__all__ = [
    "CLIError",
    "FREQUENCY_NAMES",
    "MECHANISM_NAMES",
    "NUMERIC_NAMES",
    "build_mechanism",
    "build_numeric",
    "check_mechanism_name",
    "handle_errors",
    "out",
    "err",
    "progress",
    "parse_epsilon",
    "state",
    "OUTPUT_DIR",
]

F = TypeVar("F", bound=Callable[..., Any])

OUTPUT_DIR = Path("deniable-output")
"""Where commands write what they make unless told (the demo's plot, the server's database):
``deniable-output/`` under the current directory, made on first use."""


class CLIError(DeniableError):
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
        except (DeniableError, ValueError, TypeError, OSError, KeyError, ImportError) as exc:
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
def _epsilon_recipes(kind: registry.Kind) -> tuple[str, ...]:
    """The registry's recipes of this kind that take an epsilon (what ``--mechanism`` names)."""
    return tuple(name for name, r in registry.recipes(kind).items() if "epsilon" in r.allowed)


FREQUENCY_NAMES = ("auto", *_epsilon_recipes("frequency"))
NUMERIC_NAMES = (*_epsilon_recipes("numeric"), *_epsilon_recipes("range"))  # numbers in [low, high]
MECHANISM_NAMES = (*FREQUENCY_NAMES, *NUMERIC_NAMES)

MechanismOpt = Annotated[
    str,
    typer.Option("--mechanism", "-m", help=f"One of: {', '.join(MECHANISM_NAMES)}."),
]
EpsilonOpt = Annotated[float, typer.Option("--epsilon", "-e", help="Privacy loss epsilon (> 0).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]
LowOpt = Annotated[float | None, typer.Option(help="Numeric mechanisms: the range's lower end.")]
HighOpt = Annotated[float | None, typer.Option(help="Numeric mechanisms: the range's upper end.")]
DeltaOpt = Annotated[float | None, typer.Option(help="Gaussian: the delta of (epsilon, delta).")]


def _target_option(value: str) -> str:
    try:
        return check_target(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


TargetOpt = Annotated[
    str,
    typer.Option(
        help="What the estimates are of: 'population' (the respondents are a random sample of it; "
        "the default) or 'respondents' (these respondents only, a census).",
        callback=_target_option,
    ),
]


def parse_epsilon(epsilon: float) -> float:
    """Validate an epsilon given on the command line (finite and positive)."""
    if not math.isfinite(epsilon) or epsilon <= 0:
        raise CLIError(f"--epsilon must be a positive finite number; got {epsilon!r}")
    return epsilon


def check_mechanism_name(name: str) -> str:
    """The recipe name ``--mechanism`` gives (case-insensitive; ``auto`` too), or a CLIError."""
    key = name.lower()
    if key not in MECHANISM_NAMES:
        raise CLIError(f"--mechanism must be one of {', '.join(MECHANISM_NAMES)}; got {name!r}")
    return key


def build_mechanism(name: str, categories: int | Sequence[Any], epsilon: float) -> Any:
    """A frequency oracle by its recipe (``auto``: the lowest-variance one for ``k``).

    Built by the registry recipe's ``build(categories, {"epsilon": epsilon})``;
    ``binary-rr`` is Warner's design on the yes/no domain (``categories`` is
    ignored), every other name takes the categories (or ``k``).
    """
    key = check_mechanism_name(name)
    if key in NUMERIC_NAMES:
        raise CLIError(f"--mechanism {key} is for numbers: give --low and --high, not categories")
    eps = parse_epsilon(epsilon)
    if key == "auto":
        k = categories if isinstance(categories, int) else len(categories)
        key = dn.best_mechanism(k, eps).mechanism.wire_id  # each candidate's recipe is its wire id
    return registry.recipe(key).build(categories, {"epsilon": eps})


def build_numeric(
    name: str, low: float | None, high: float | None, epsilon: float, delta: float | None = None
) -> Any:
    """A numeric mechanism by its recipe, for values clamped to ``[low, high]``.

    Built by the registry recipe's ``build((low, high), params)`` with
    ``params`` the epsilon and, when given, the delta (the recipe says which
    it requires).
    """
    key = check_mechanism_name(name)
    if key not in NUMERIC_NAMES:
        raise CLIError(f"--low/--high go with a numeric --mechanism ({', '.join(NUMERIC_NAMES)}); got {key!r}")
    if low is None or high is None:
        raise CLIError(f"--mechanism {key} needs --low and --high (the declared range of the values)")
    recipe = registry.recipe(key)
    params: dict[str, float] = {"epsilon": parse_epsilon(epsilon)}
    if delta is not None:
        params["delta"] = delta
    missing = sorted(recipe.required - set(params))
    if missing:
        raise CLIError(f"--mechanism {key} needs --{missing[0]}")
    unknown = sorted(set(params) - recipe.allowed)
    if unknown:
        raise CLIError(f"--{unknown[0]} does not apply to --mechanism {key}")
    return recipe.build((low, high), params)


# ------------------------------------------------------------------ progress
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
