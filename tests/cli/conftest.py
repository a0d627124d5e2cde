"""Helpers for the command-line tests: a CliRunner and generated data files."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
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


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database on DENIABLE_TEST_POSTGRES_URL's server, dropped afterwards.

    Skips, saying why, when the variable is unset or the server is unreachable
    (fails instead with DENIABLE_REQUIRE_POSTGRES=1), like the server tests.
    """
    url = os.environ.get("DENIABLE_TEST_POSTGRES_URL")
    required = os.environ.get("DENIABLE_REQUIRE_POSTGRES") == "1"
    if not url:
        reason = "DENIABLE_TEST_POSTGRES_URL is not set (a PostgreSQL URL for tests)"
        pytest.fail(reason) if required else pytest.skip(reason)
    pytest.importorskip("sqlalchemy")
    from postgres import Unavailable, admin_engine
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    try:
        admin = admin_engine(url)
    except Unavailable as exc:
        pytest.fail(str(exc)) if required else pytest.skip(str(exc))
    name = f"deniable_cli_{uuid.uuid4().hex[:16]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any failure here means "unavailable"
        admin.dispose()
        reason = f"PostgreSQL at DENIABLE_TEST_POSTGRES_URL is unusable: {type(exc).__name__}"
        pytest.fail(reason) if required else pytest.skip(reason)
    try:
        yield make_url(admin.url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
