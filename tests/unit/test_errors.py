"""The exception tree: one module (:mod:`deniable.errors`) draws it, and every class deniable
defines sits in it; every warning derives from :class:`deniable.errors.DeniableWarning`."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import numpy as np
import pytest

import deniable
from deniable import errors

# Exceptions that are not about the caller's input and never leave the server's storage.
INTERNAL = {
    "deniable.server._writes.KeyExists",  # a rollback signal inside one storage transaction (caught by storage)
    "deniable.server._storage._Busy",  # a single post that would wait for a lock: caught, it goes to the thread pool
}


def _defined_classes() -> dict[str, type]:
    """Every exception or warning class defined in an importable module of deniable (extras installed)."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(deniable.__path__, "deniable."):
        if info.name.endswith("__main__") or ".migrations" in info.name:
            continue  # running them starts the program; alembic's env needs alembic's context
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue  # an extra that is not installed
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_exception_is_a_deniable_error_and_every_warning_a_deniable_warning() -> None:
    classes = _defined_classes()
    assert "deniable.survey._likelihood.SeparationError" not in classes  # defined in errors, re-exported there
    assert "deniable.errors.SeparationError" in classes
    stray = [
        path for path, cls in classes.items()
        if path not in INTERNAL
        and not issubclass(cls, errors.DeniableWarning if issubclass(cls, Warning) else errors.DeniableError)
    ]
    assert not stray, f"outside the tree of deniable.errors: {stray}"


def test_the_docstring_draws_every_public_class() -> None:
    """Each public exception and warning class appears in the tree of the errors module's docstring."""
    drawn = set(re.findall(r"[─└├]── (\w+)", errors.__doc__ or "")) | {"DeniableError", "DeniableWarning"}
    public = {cls.__name__ for path, cls in _defined_classes().items()
              if not cls.__name__.startswith("_") and path not in INTERNAL}
    assert public <= drawn, f"not drawn: {sorted(public - drawn)}"
    assert drawn <= public | {"CLIError", "ClientError", "AlreadyAnsweredError", "BudgetSpentError"} | {
        "SurveyError", "StorageError", "NotFound", "Conflict", "Forbidden", "Invalid", "PortInUseError",
    }


def test_moved_classes_are_re_exported_where_they_were() -> None:
    from deniable import _mle as mle
    from deniable.survey import _likelihood as likelihood

    assert likelihood.SeparationError is errors.SeparationError is deniable.SeparationError
    assert mle.ConvergenceWarning is errors.ConvergenceWarning is deniable.ConvergenceWarning
    assert issubclass(errors.SeparationError, ValueError)  # except ValueError keeps catching it
    assert issubclass(errors.ConvergenceWarning, UserWarning)


def test_separation_is_a_deniable_error() -> None:
    """A survey fit whose maximum does not exist raises SeparationError, caught as DeniableError."""
    pytest.importorskip("statsmodels", reason="the survey extra")
    import pandas as pd

    d = deniable.survey.design("Warner", 0.8)
    x = np.repeat([0, 1], 40)
    data = pd.DataFrame({"x": x, "y": x})  # every answer "yes" exactly where x is 1: the slope diverges
    with pytest.raises(deniable.DeniableError) as raised:
        deniable.survey.logit("y ~ x", data, d)
    assert type(raised.value) is errors.SeparationError
