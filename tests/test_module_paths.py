"""A module path names a module: ``import deniable.audit as a`` binds the module, never a function.

``deniable.audit`` and ``deniable.simulate`` are modules that, called, call
their function of the same name (so ``dn.audit(m)`` keeps working);
``deniable.survey.prevalence`` is a function and ``deniable.cli.app`` the
Typer app, each defined in a private module, so importing either as a module
fails with ModuleNotFoundError.
"""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types

import numpy as np
import pytest

CALLABLE_MODULES = [
    ("deniable.audit", "audit"),
    ("deniable.simulate", "simulate"),
]
NOT_MODULES = ["deniable.survey.prevalence", "deniable.cli.app"]


@pytest.mark.parametrize("path", [p for p, _ in CALLABLE_MODULES] + NOT_MODULES)
def test_import_as_binds_the_module_or_fails(path: str) -> None:
    """In a fresh interpreter, ``import <path> as m`` binds the module ``<path>`` or raises ModuleNotFoundError."""
    if path.startswith("deniable.cli"):
        pytest.importorskip("typer", reason="the command line needs the cli extra")
    code = (
        "import sys, types\n"
        "try:\n"
        f"    import {path} as m\n"
        "except ModuleNotFoundError as exc:\n"
        f"    assert exc.name == {path!r}, exc\n"
        "    print('missing')\n"
        "else:\n"
        f"    assert isinstance(m, types.ModuleType) and m is sys.modules[{path!r}], repr(m)\n"
        "    print('module')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("missing" if path in NOT_MODULES else "module")


@pytest.mark.parametrize(("path", "function"), CALLABLE_MODULES)
def test_callable_module_is_its_function(path: str, function: str) -> None:
    """The package's attribute is the module; its call and signature are those of its function."""
    module = importlib.import_module(path)
    package = importlib.import_module(path.rpartition(".")[0])
    assert getattr(package, function) is module
    assert callable(module)
    assert inspect.signature(module) == inspect.signature(getattr(module, function))
    assert inspect.isfunction(getattr(module, function))


def test_calls_through_the_modules() -> None:
    import deniable as dn
    from deniable.simulate import mse_sweep  # the path the privacy-utility tutorial shows

    m = dn.BinaryRR(prob=0.75)
    assert isinstance(dn.audit(m, trials=2_000, rng=1), dn.AuditResult)
    est = dn.simulate(m, [0.3, 0.7], 1_000, rng=1)
    assert est.n == 1_000
    assert callable(mse_sweep) and dn.simulate.mse_sweep is mse_sweep
    fit = dn.survey.prevalence(np.array([1, 0, 1, 1, 0, 1, 0, 1]), dn.survey.design("Warner", 0.8))
    assert isinstance(fit, dn.survey.PrevalenceFit)


def test_cli_app_is_the_typer_app() -> None:
    typer = pytest.importorskip("typer", reason="the command line needs the cli extra")
    import deniable.cli

    assert isinstance(deniable.cli.app, typer.Typer)
    assert not isinstance(deniable.cli.app, types.ModuleType)
