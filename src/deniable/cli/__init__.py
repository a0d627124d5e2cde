"""The ``deniable`` command line: ``deniable.cli.app`` is the Typer app, ``main`` the script.

Both are defined in the private module ``deniable.cli._app``, so that the name
``deniable.cli.app`` means one thing, the app (there is no module of that name).
"""

from deniable.cli._app import app, main

__all__ = ["app", "main"]
