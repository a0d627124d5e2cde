"""Helpers for the command-line tests: a CliRunner and generated data files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("typer")
pytest.importorskip("pandas")

from typer.testing import CliRunner, Result  # noqa: E402

from deniable.cli import app  # noqa: E402


@pytest.fixture
def cli() -> Callable[..., Result]:
    """``cli("plan", "--k", "4", ...)``: run the app in-process, stdout and stderr apart."""
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(app, [str(a) for a in args])

    return invoke


@pytest.fixture
def write_answers() -> Callable[..., np.ndarray]:
    """``write_answers(path, n, shares, rng)``: see :func:`_write_answers`."""
    return _write_answers


def _write_answers(
    path: Path, n: int, shares: list[float], rng: np.random.Generator,
    categories: list[str] | None = None,
) -> np.ndarray:
    """A file with columns id, answer, score (CSV or Parquet by suffix); returns the answers."""
    import pandas as pd

    categories = categories or [chr(ord("A") + i) for i in range(len(shares))]
    answers = np.asarray(categories)[rng.choice(len(shares), size=n, p=shares)]
    frame = pd.DataFrame(
        {"id": np.arange(n), "answer": answers, "score": rng.random(n).round(3)}
    )
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return answers
