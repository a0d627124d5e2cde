"""The ``deniable`` command line: ``deniable.cli.app`` is the Typer app, ``main`` the script."""

from deniable.cli.app import app, main

__all__ = ["app", "main"]
