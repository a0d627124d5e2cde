"""The ``deniable`` command line (needs ``deniable[cli]``; plots need ``deniable[plot]``).

Commands: ``demo``, ``plan``, ``simulate``, ``privatize``, ``estimate``,
``analyze``, ``audit``, ``serve``, ``relay``, one module per group (:mod:`.plan`, :mod:`.files`,
:mod:`.analyze`, :mod:`.server`, :mod:`.simulate`). Each prints one clear error line on stderr
and exits with code 1 on bad input; ``deniable --debug ...`` shows the traceback.
"""

from __future__ import annotations

from typing import Annotated

try:
    import typer
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(f"the deniable command line needs its extra: pip install 'deniable[cli]' ({exc})") from exc

import deniable
from deniable.cli import _analyze as analyze
from deniable.cli import _files as files
from deniable.cli import _plan as plan
from deniable.cli import _relay as relay
from deniable.cli import _server as server
from deniable.cli._common import handle_errors, state
from deniable.cli._simulate import simulate_app

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
server.register(app)
app.add_typer(simulate_app, name="simulate")
app.command("plan")(plan.plan_cmd)
app.command("audit")(plan.audit_cmd)
app.command("privatize")(files.privatize_cmd)
app.command("estimate")(files.estimate_cmd)
app.command("analyze")(analyze.analyze_cmd)
app.command("relay")(handle_errors(relay.relay_cmd))


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"deniable {deniable.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    state.debug = debug


def main() -> None:
    """Entry point of the ``deniable`` script."""
    app()
