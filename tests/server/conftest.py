"""Fixtures for the collection-service tests: real databases, real servers on loopback.

``db_url`` is parametrized over the storage backends (both for the storage
contract's modules, SQLite for the rest: :data:`STORAGE_CONTRACT`): a SQLite file in the
test's tmp_path, and PostgreSQL when ``DENIABLE_TEST_POSTGRES_URL`` is set
(e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432/test``; that database is
created when missing, see ``tests/postgres.py``). For PostgreSQL each test
gets a fresh, uniquely named database, dropped afterwards. Without the
variable the PostgreSQL cases skip, saying why; with
``DENIABLE_REQUIRE_POSTGRES=1`` they fail instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the server tests need the 'server' extra")

from postgres import POSTGRES_ENV, Unavailable, admin_engine  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import Engine, make_url  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _postgres_unavailable(reason: str) -> None:
    if os.environ.get("DENIABLE_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"DENIABLE_REQUIRE_POSTGRES=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def examples() -> Path:
    """The repository's examples/ folder (survey definitions)."""
    return EXAMPLES


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine]:
    """An engine on the PostgreSQL server named by DENIABLE_TEST_POSTGRES_URL."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        _postgres_unavailable(f"{POSTGRES_ENV} is not set (e.g. postgresql+psycopg://user@host/db)")
    try:
        engine = admin_engine(url)
    except Unavailable as exc:
        _postgres_unavailable(str(exc))
    yield engine
    engine.dispose()


@contextmanager
def _fresh_database(admin: Engine) -> Iterator[str]:
    name = f"deniable_test_{uuid.uuid4().hex[:16]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin.url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def postgres_url(postgres_admin: Engine) -> Iterator[str]:
    """A fresh database for one test, dropped afterwards."""
    with _fresh_database(postgres_admin) as url:
        yield url


BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]

STORAGE_CONTRACT = {
    "test_binary_aggregates", "test_concurrency", "test_error_logs", "test_flooding", "test_idempotency",
    "test_migrations", "test_refusal_counts", "test_rounds",
}
"""The modules that check what the storage keeps (migrations, transactions, constraints, concurrent writers,
the device ledger, the rate-limit counters, the refusal counts, errors from the database): on both databases.
The HTTP API above the storage is checked on SQLite only; its PostgreSQL variants would check the same storage
again."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the PostgreSQL variants of the tests outside :data:`STORAGE_CONTRACT`."""
    def api_on_postgres(item: pytest.Item) -> bool:
        params = getattr(getattr(item, "callspec", None), "params", {})
        on_postgres = "postgres" in (params.get("db_url"), params.get("module_db_url"))
        return on_postgres and Path(str(item.fspath)).stem not in STORAGE_CONTRACT

    dropped = [item for item in items if api_on_postgres(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if not api_on_postgres(item)]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each storage backend in turn (a fresh database per test)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'deniable.db'}"
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="module", params=BACKENDS)
def module_db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """Each storage backend in turn, one fresh database per test module."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'deniable.db'}"
        return
    with _fresh_database(request.getfixturevalue("postgres_admin")) as url:
        yield url


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'deniable.db'}"


class ServerProcess:
    """``python -m deniable.server`` in a subprocess; its log goes to a file."""

    def __init__(self, surveys: list[Any], db_url: str, log_path: Path, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = ()) -> None:
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deniable.server", *map(str, surveys), "--db", db_url,
             "--port", "0", *args],
            stdout=self._log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
        )
        self.url = self._wait_for_url()

    def _wait_for_url(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text_ = self.log_path.read_text(errors="replace")
            found = re.findall(r"serving on (http://\S+)", text_)
            if found:
                url = found[-1]
                # wait until it accepts requests
                import httpx

                for _ in range(500):
                    try:
                        httpx.get(url + "/openapi.json", timeout=5)
                        return url
                    except httpx.TransportError:
                        time.sleep(0.02)
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server did not start:\n{self.log_path.read_text(errors='replace')}")

    def kill(self) -> None:
        self.proc.kill()  # SIGKILL
        self.proc.wait(timeout=30)
        self._log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[Any]:
    """Factory for server subprocesses; all are stopped at the end of the test."""
    started: list[ServerProcess] = []

    def start(surveys: list[Any], db_url: str, **kwargs: Any) -> ServerProcess:
        server = ServerProcess(surveys, db_url, tmp_path / f"server-{len(started)}.log", **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.proc.poll() is None:
            server.stop()
