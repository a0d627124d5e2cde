"""The PostgreSQL server the tests use: ``DENIABLE_TEST_POSTGRES_URL``, its database created when missing.

The URL may name a database that does not exist yet: when the server answers
that it does not, :func:`admin_engine` creates it from the server's
maintenance database (``postgres``). When that is impossible, or the server
cannot be reached, :class:`Unavailable` says exactly why (the tests skip
with that reason, or fail under ``DENIABLE_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Engine, make_url

from deniable.server._storage import normalize_url

POSTGRES_ENV = "DENIABLE_TEST_POSTGRES_URL"


class Unavailable(Exception):
    """Why the PostgreSQL tests cannot run (the skip reason)."""


def _first_line(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    return f"{type(orig).__name__}: {str(orig).strip().splitlines()[-1] if str(orig).strip() else ''}"


def _connects(engine: Engine) -> Exception | None:
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any connection failure is reported
        return exc
    return None


def admin_engine(url: str, maintenance: str = "postgres") -> Engine:
    """An AUTOCOMMIT engine on ``url``, whose database is created first when the server says it is missing."""
    target = make_url(normalize_url(url))
    engine = create_engine(target, isolation_level="AUTOCOMMIT")
    failure = _connects(engine)
    if failure is None:
        return engine
    engine.dispose()
    name = target.database or ""
    if f'database "{name}" does not exist' not in str(failure):
        raise Unavailable(f"PostgreSQL at {POSTGRES_ENV} is unreachable: {_first_line(failure)}")
    server = create_engine(target.set(database=maintenance), isolation_level="AUTOCOMMIT")
    try:
        with server.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - reported with the original cause
        raise Unavailable(
            f'PostgreSQL at {POSTGRES_ENV}: database "{name}" does not exist, and creating it from the '
            f"server's {maintenance!r} database failed ({_first_line(exc)}); create it, or name one that exists"
        ) from None
    finally:
        server.dispose()
    engine = create_engine(target, isolation_level="AUTOCOMMIT")
    failure = _connects(engine)
    if failure is not None:
        engine.dispose()
        raise Unavailable(f"PostgreSQL at {POSTGRES_ENV} is unreachable: {_first_line(failure)}")
    return engine
