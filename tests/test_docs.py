"""Docs are executable: the README's Python example runs, and core docstring examples are doctests."""

from __future__ import annotations

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_MODULES = [
    "deniable", "deniable._privacy", "deniable._randomness", "deniable._estimate", "deniable._consistency",
    "deniable._plan", "deniable.simulate", "deniable.audit", "deniable.wire", "deniable._debias",
    "deniable.mechanisms._binary", "deniable.mechanisms._kary", "deniable.mechanisms._unary",
    "deniable.mechanisms._hashing", "deniable.mechanisms._hadamard", "deniable.mechanisms._subset",
    "deniable.mechanisms._rappor", "deniable.mechanisms.registry", "deniable.mechanisms._numeric.additive",
    "deniable.mechanisms._numeric.duchi", "deniable.mechanisms._numeric.piecewise",
    "deniable.mechanisms._numeric.hybrid", "deniable.mechanisms._key_value", "deniable.mechanisms._key_value_estimate",
    "deniable._aggregates", "deniable._intervals", "deniable.testing", "deniable._shuffle",
    "deniable._allocation", "deniable._joint", "deniable._client_state", "deniable._accounting", "deniable._results",
]


def _public_modules() -> list[str]:
    """The modules defining the public names of ``deniable`` and ``deniable.mechanisms``, whose
    docstrings' Examples (tests/test_docstrings.py requires them) therefore run here too."""
    found = set()
    for name in ("deniable", "deniable.mechanisms"):
        module = importlib.import_module(name)
        for attr in module.__all__:
            obj = getattr(module, attr)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                found.add(obj.__module__)
    return sorted(found - set(CORE_MODULES))


def test_readme_python_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert "38415" in capsys.readouterr().out


@pytest.mark.parametrize("name", CORE_MODULES + _public_modules())
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_repeated_collection_guide_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The guide's Python blocks run in order and print what the page says they print."""
    text = (ROOT / "docs" / "guide" / "repeated-collection.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 4
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, "repeated-collection.md", "exec"), namespace)
    assert capsys.readouterr().out.split() == ["-rw-------", "StateError", "1", "2"]


def test_rounds_howto_runs(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The rounds how-to shows the example file as it is, and its Python block prints what the page says."""
    pytest.importorskip("fastapi", reason="the rounds how-to runs the server")
    text = (ROOT / "docs" / "howto" / "rounds.md").read_text()
    (yaml_block,) = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    example = (ROOT / "examples" / "weekly-checkin.yaml").read_text()
    assert yaml_block == "".join(line for line in example.splitlines(keepends=True) if not line.startswith("#"))
    (block,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    printed = text.split("It prints", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(ROOT)
    exec(compile(block, "rounds.md", "exec"), {})
    assert capsys.readouterr().out == printed


def test_readme_command_lines_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``deniable ...`` line of the README's command-line block runs as written from the
    repository root (its example files), and writes only under deniable-output/ (the demo, the
    server and the relay, which run until Ctrl-C, and the half-minute heavy-hitters sweep are tested in
    tests/cli)."""
    for extra in ("typer", "pandas", "matplotlib", "dask", "statsmodels"):
        pytest.importorskip(extra, reason="the README's commands need deniable[all]")
    import shlex
    import shutil

    from typer.testing import CliRunner

    from deniable.cli import app

    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Command line\n.*?```bash\n(.*?)```", text, flags=re.S)
    assert block is not None
    lines = [ln for ln in block[1].splitlines() if ln.startswith("deniable ")]
    assert any(" privatize examples/data.csv " in ln for ln in lines)
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line in lines:
        args = shlex.split(line, comments=True)[1:]
        if args[0] in ("demo", "serve", "relay") or args[:2] == ["simulate", "heavy-hitters"]:
            continue
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, f"{line}\n{result.output}"
        ran += 1
    assert ran >= 8
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deniable-output", "examples"]
    assert (tmp_path / "deniable-output" / "est.png").is_file()
