"""Docs are executable: the README's Python example runs, and core docstring examples are doctests."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_MODULES = [
    "deniable", "deniable.privacy", "deniable.randomness", "deniable.estimate", "deniable.consistency",
    "deniable.plan", "deniable.simulate", "deniable.audit", "deniable.wire", "deniable.debias",
    "deniable.mechanisms.binary", "deniable.mechanisms.kary", "deniable.mechanisms.unary",
    "deniable.mechanisms.hashing", "deniable.mechanisms.hadamard", "deniable.mechanisms.subset",
    "deniable.mechanisms.rappor", "deniable.mechanisms.registry", "deniable.mechanisms.numeric.additive",
    "deniable.aggregates", "deniable.intervals", "deniable.testing", "deniable.shuffle",
]


def test_readme_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert "38415" in capsys.readouterr().out


@pytest.mark.parametrize("name", CORE_MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
