"""``DENIABLE_TEST_POSTGRES_URL`` may name a database that does not exist yet (the README says so).

The tests' admin engine creates it from the server's ``postgres`` database;
when that fails, the skip reason says the database does not exist (it once
said only "unreachable: OperationalError" and 163 tests skipped).
"""

from __future__ import annotations

import os
import uuid

import pytest
from postgres import POSTGRES_ENV, Unavailable, admin_engine
from sqlalchemy import text
from sqlalchemy.engine import make_url

from deniable.server._storage import normalize_url

pytestmark = pytest.mark.postgres


@pytest.fixture
def missing_url() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"{POSTGRES_ENV} is not set")
    return make_url(normalize_url(url)).set(database=f"deniable_missing_{uuid.uuid4().hex[:12]}").render_as_string(
        hide_password=False
    )


def _drop(url: str) -> None:
    name = make_url(url).database
    server = admin_engine(make_url(url).set(database="postgres").render_as_string(hide_password=False))
    with server.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    server.dispose()


def test_a_missing_database_is_created(missing_url: str) -> None:
    try:
        engine = admin_engine(missing_url)
    except Unavailable as exc:
        pytest.skip(str(exc))  # the server itself is not there
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT current_database()")).scalar() == make_url(missing_url).database
    finally:
        engine.dispose()
        _drop(missing_url)


def test_a_database_that_cannot_be_created_is_named_as_missing(missing_url: str) -> None:
    name = make_url(missing_url).database
    with pytest.raises(Unavailable, match=rf'^PostgreSQL at {POSTGRES_ENV}: database "{name}" does not exist, '
                                          r"and creating it from the server's 'no_such_maintenance' database failed"):
        admin_engine(missing_url, maintenance="no_such_maintenance")
