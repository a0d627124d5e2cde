"""Creating and upgrading the service's database schema with Alembic.

The revisions live in :mod:`deniable.server.migrations` (shipped with the
package); :func:`upgrade` brings any database to the newest one. The server
runs it at start-up (:class:`~deniable.server._storage.Storage`) and
``deniable db upgrade --db URL`` runs it alone, e.g. before starting several
servers. Concurrent upgraders take turns: on PostgreSQL an advisory lock held
by the upgrade's transaction, on SQLite the write lock (``BEGIN IMMEDIATE``).
A database made by deniable before migrations existed holds exactly the
first revision's tables and is stamped with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["MIGRATIONS", "FIRST_REVISION", "upgrade", "current_revision", "head_revision"]

MIGRATIONS = Path(__file__).parent / "migrations"
FIRST_REVISION = "0001"
_LOCK = 0x64656E69  # PostgreSQL advisory lock key of schema upgrades ("deni")


def _config(conn: Connection) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = conn
    return config


def head_revision() -> str:
    """The newest revision shipped with this version of deniable."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(str(MIGRATIONS)).get_current_head()
    assert head is not None
    return head


def current_revision(conn: Connection) -> str | None:
    """The database's revision (None: no deniable schema, or one made before migrations)."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> str:
    """Create or upgrade the schema of ``engine``'s database to the newest revision; that revision.

    One transaction: an upgrade that fails leaves the database as it was
    (PostgreSQL and SQLite both have transactional DDL).
    """
    from alembic import command

    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK})
        config = _config(conn)
        if current_revision(conn) is None and inspect(conn).has_table("deniable_surveys"):
            command.stamp(config, FIRST_REVISION)
        command.upgrade(config, "head")
        revision = current_revision(conn)
    assert revision is not None
    return revision
