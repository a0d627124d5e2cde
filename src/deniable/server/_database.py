"""The collection service's tables and database engine (SQLAlchemy 2 Core).

Tables
------
``deniable_surveys``     one row per survey: its canonical definition
                         (mechanism configs included, so results decode with
                         exactly what devices used) and status.
``deniable_responses``   one row per response: the idempotency key, a hash of
                         the canonical body, and the reports as compact
                         canonical JSON (``{"<question id>": <report>, ...}``).
                         No IP address, no timestamp.
``deniable_aggregates``  per question, the mergeable aggregate of every stored
                         report, as bytes (:meth:`deniable._aggregates.Packed.to_bytes`:
                         a header, then little-endian counts and sums; on PostgreSQL split over several
                         shard rows that a writer picks at random, merged with
                         ``+`` on reading).
``deniable_invites``     single-use invite tokens (only their SHA-256 is stored).
``deniable_device_salts`` per survey with rounds: the random salt of its
                         device-key hashes (:mod:`deniable.server._rounds`).
``deniable_devices``     per survey with rounds and device: the keyed hash of
                         the device's key (never the key), the last round it
                         answered, its reports per question and its spent
                         epsilon (with and without the memoization cap). No
                         report and no response id: nothing stored joins a
                         device to its responses.
``deniable_round_aggregates`` per survey with rounds, round and question: the
                         aggregate of that round's reports, as bytes (results per round).
                         Round indices are 64-bit columns (revision 0004).
``deniable_shuffled_batches`` per survey whose responses come through a
                         shuffling relay: the number of its responses each
                         shuffled batch stored, in the order of the batches
                         (no time; revision 0005), and for a survey with
                         rounds the round it was served in (revision 0007).
``deniable_refusals``    per survey, round (-1: none) and kind of refusal
                         (:mod:`deniable.server._refusal_counts`): how many
                         responses the service refused. No address, no time,
                         no body (revision 0006).
``alembic_version``      the schema's revision (:mod:`deniable.server._schema`
                         creates and upgrades the tables with the migrations
                         in :mod:`deniable.server.migrations`, which must
                         build exactly the tables declared here).

Engines
-------
SQLite runs in WAL mode and takes the write lock at ``BEGIN IMMEDIATE``, so
concurrent writers (threads or processes) serialize instead of losing
aggregate updates. Durability is ``PRAGMA synchronous``: the default
``NORMAL`` writes every commit to the WAL file before it returns, so a killed
(even ``kill -9``) server loses no acknowledged report; only a power cut or
kernel crash can lose the last commits. ``FULL`` also survives those, at the
price of one fsync per commit (a few hundred commits/s on a typical virtual
disk instead of thousands). PostgreSQL commits durably (its own fsync and
group commit).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Engine,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
)
from sqlalchemy.engine import RootTransaction, make_url
from sqlalchemy.exc import DBAPIError, OperationalError

__all__ = [
    "metadata",
    "surveys_table",
    "responses_table",
    "aggregates_table",
    "invites_table",
    "device_salts_table",
    "devices_table",
    "round_aggregates_table",
    "shuffled_batches_table",
    "refusals_table",
    "normalize_url",
    "make_engine",
    "READ_ONLY",
    "begin_at_once",
    "driver_cursor",
    "stat_bytes",
    "read_stat",
]

READ_ONLY = "deniable_read_only"
"""Execution option of a connection that only reads (SQLite: plain ``BEGIN``)."""

metadata = MetaData()
_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER keys only

surveys_table = Table(
    "deniable_surveys",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("definition", Text, nullable=False),
    Column("status", String(16), nullable=False),
)
responses_table = Table(
    "deniable_responses",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("survey_id", String(64), nullable=False),
    Column("idempotency_key", String(128), nullable=False),
    Column("body_hash", String(64), nullable=False),
    Column("reports", Text, nullable=False),
    UniqueConstraint("survey_id", "idempotency_key", name="uq_deniable_response_key"),
)
aggregates_table = Table(
    "deniable_aggregates",
    metadata,
    Column("survey_id", String(64), primary_key=True),
    Column("question_id", String(64), primary_key=True),
    Column("shard", Integer, primary_key=True),
    Column("stat", LargeBinary, nullable=False),
)
invites_table = Table(
    "deniable_invites",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("survey_id", String(64), nullable=False),
    Column("used_by", String(128), nullable=True),
)

device_salts_table = Table(
    "deniable_device_salts",
    metadata,
    Column("survey_id", String(64), primary_key=True),
    Column("salt", String(64), nullable=False),  # 32 random bytes, hex
)
devices_table = Table(
    "deniable_devices",
    metadata,
    Column("survey_id", String(64), primary_key=True),
    Column("device", String(64), primary_key=True),  # HMAC-SHA256(salt, key), hex
    Column("last_round", BigInteger, nullable=False),
    Column("reports", Text, nullable=False),  # {"<question id>": reports made, ...}
    Column("spent", Float, nullable=False),  # epsilon, memoizing questions capped at their lifetime bound
    Column("spent_fresh", Float, nullable=False),  # epsilon, every report counted (no cap)
)
shuffled_batches_table = Table(
    "deniable_shuffled_batches",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("survey_id", String(64), nullable=False),
    Column("size", Integer, nullable=False),
    Column("round", BigInteger, nullable=True),  # surveys with rounds; null across a round's end
)
refusals_table = Table(
    "deniable_refusals",
    metadata,
    Column("survey_id", String(64), primary_key=True),
    Column("round", BigInteger, primary_key=True, autoincrement=False),  # -1: not in a round
    Column("kind", String(16), primary_key=True),
    Column("count", BigInteger, nullable=False),
)
round_aggregates_table = Table(
    "deniable_round_aggregates",
    metadata,
    Column("survey_id", String(64), primary_key=True),
    Column("round", BigInteger, primary_key=True, autoincrement=False),
    Column("question_id", String(64), primary_key=True),
    Column("stat", LargeBinary, nullable=False),
)


def stat_bytes(aggregate: Any) -> bytes:
    """An aggregate as the value of a ``stat`` column: its ``to_bytes()``."""
    return aggregate.to_bytes()


def read_stat(question: Any, data: bytes) -> Any:
    """The aggregate of ``question`` from the value of a ``stat`` column, checked once by its header
    and length (``aggregate_from_bytes``: made by exactly its configuration)."""
    return question.aggregate_from_bytes(data)


DEFAULT_DB_URL = "sqlite:///deniable-output/deniable.db"
"""Where a server keeps its reports unless told: a SQLite file in ``deniable-output/`` under the
current directory (made on first use)."""


def normalize_url(db_url: str) -> str:
    """``postgres://`` and ``postgresql://`` mean psycopg 3; SQLite must be a file."""
    url = make_url(db_url)
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        raise ValueError(
            f"db_url {db_url!r} is an in-memory SQLite database; give a file, "
            "e.g. sqlite:///deniable.db"
        )
    return url.render_as_string(hide_password=False)


_BUSY_TIMEOUT_S = 60


def _enter_wal(cursor: sqlite3.Cursor) -> None:
    """Switch the database to WAL mode, waiting up to the busy timeout for other connections.

    Leaving the rollback journal needs an exclusive lock, and SQLite answers
    "database is locked" at once, without its busy handler, when another
    connection of a fresh database holds a write transaction meanwhile (e.g.
    several servers creating the schema together). WAL mode is persistent, so
    only the first connections of a new database can meet this.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def make_engine(db_url: str, sqlite_synchronous: str) -> Engine:
    """An engine for ``db_url``; on SQLite, WAL mode and ``BEGIN IMMEDIATE`` for writers.

    ``sqlite_synchronous`` is SQLite's ``PRAGMA synchronous`` (``FULL``,
    ``NORMAL`` or ``EXTRA``, any case); PostgreSQL ignores it. Database errors
    never show their SQL parameters (idempotency keys, body hashes, reports).
    """
    synchronous = sqlite_synchronous.upper()
    if synchronous not in ("FULL", "NORMAL", "EXTRA"):
        raise ValueError(f"sqlite_synchronous must be FULL, NORMAL or EXTRA; got {sqlite_synchronous!r}")
    url = normalize_url(db_url)
    if make_url(url).get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=16, hide_parameters=True)
    database = make_url(url).database
    if database and not database.startswith("file:"):
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url, connect_args={"timeout": _BUSY_TIMEOUT_S, "check_same_thread": False}, hide_parameters=True
    )

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # let SQLAlchemy's "begin" event below emit BEGIN, not the sqlite3 module
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_S * 1000}")
        _enter_wal(cursor)
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        sql = "BEGIN" if conn.get_execution_options().get(READ_ONLY, False) else "BEGIN IMMEDIATE"
        with driver_cursor(conn, sql) as cursor:
            cursor.execute(sql)

    return engine


def begin_at_once(conn: Connection) -> RootTransaction | None:
    """A SQLite write transaction (``BEGIN IMMEDIATE``) begun without waiting; None if another connection writes.

    The busy timeout is off for the ``BEGIN`` alone: where another process
    holds SQLite's write lock, this answers None at once instead of waiting
    for it (nothing is begun). Every other error is raised.
    """
    with driver_cursor(conn, "PRAGMA busy_timeout") as cursor:
        cursor.execute("PRAGMA busy_timeout=0")
        try:
            return conn.begin()
        except OperationalError as exc:
            if "locked" not in str(exc.orig):
                raise
            return None
        finally:
            cursor.execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_S * 1000}")


@contextmanager
def driver_cursor(conn: Connection, sql: str) -> Iterator[Any]:
    """A cursor of the transaction's own driver connection, its errors raised as SQLAlchemy's.

    The driver's exception becomes the :class:`sqlalchemy.exc.DBAPIError`
    subclass SQLAlchemy would raise (``IntegrityError``, ...), without the
    parameters, so callers and the log's redaction treat it as any other.
    """
    dialect = conn.dialect
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        yield cursor
    except dialect.loaded_dbapi.Error as exc:
        raise DBAPIError.instance(
            sql, None, exc, dialect.loaded_dbapi.Error, hide_parameters=True, dialect=dialect
        ) from exc
    finally:
        cursor.close()
