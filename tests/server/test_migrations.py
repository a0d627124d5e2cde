"""Schema migrations (Alembic): a fresh database, one made before migrations, concurrent upgraders.

On SQLite and PostgreSQL. The migrations must build exactly the tables the
code declares (:mod:`deniable.server._database`), and a database made by the
code path that preceded them (``metadata.create_all``) keeps its reports.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from deniable.server._database import make_engine, metadata
from deniable.server._schema import FIRST_REVISION, current_revision, head_revision, upgrade
from deniable.server._storage import Storage

SURVEY = {"id": "m", "title": "M", "budget": 2, "questions": [
    {"id": "q", "text": "?", "type": "yes-no", "mechanism": "forced-response", "p_truth": 0.5, "p_yes": 0.5}]}

FIRST_TABLES = ("deniable_surveys", "deniable_responses", "deniable_aggregates", "deniable_invites")
"""What ``metadata.create_all`` made before migrations existed (the later revisions add tables only)."""


def test_a_fresh_database_gets_exactly_the_declared_tables(db_url: str) -> None:
    engine = make_engine(db_url, "NORMAL")
    try:
        assert upgrade(engine) == head_revision()
        with engine.connect() as conn:
            assert current_revision(conn) == head_revision()
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        assert upgrade(engine) == head_revision()  # a second run changes nothing
    finally:
        engine.dispose()


def test_a_database_made_before_migrations_is_upgraded_in_place(db_url: str) -> None:
    storage = Storage(db_url)
    storage.add_survey(SURVEY)
    storage.submit("m", [{"idempotency_key": "before-migrations", "reports": {"q": True}}])
    storage.close()
    engine = make_engine(db_url, "NORMAL")  # back to how deniable 0.1 left a database
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE alembic_version"))
        for name in set(metadata.tables) - set(FIRST_TABLES):  # tables of later revisions
            conn.execute(text(f"DROP TABLE {name}"))
        assert current_revision(conn) is None
    assert upgrade(engine) == head_revision()
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    engine.dispose()
    storage = Storage(db_url)
    assert storage.aggregates("m")["q"].n == 1 and storage.count_responses("m") == 1
    assert storage.submit("m", [{"idempotency_key": "after-migrations", "reports": {"q": False}}]).accepted == 1
    storage.close()


def test_create_all_equals_the_first_revision(db_url: str) -> None:
    """The stamp is honest: the old code path's tables are the first revision's; later revisions run on them."""
    engine = make_engine(db_url, "NORMAL")
    try:
        metadata.create_all(engine, tables=[metadata.tables[name] for name in FIRST_TABLES])
        assert upgrade(engine) == head_revision()
        with engine.begin() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        with engine.connect() as conn:
            stamped = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        assert stamped == head_revision() and FIRST_REVISION <= stamped
        assert set(inspect(engine).get_table_names()) >= set(metadata.tables)
    finally:
        engine.dispose()


def test_a_database_at_the_first_revision_gets_the_rounds_tables(db_url: str) -> None:
    """Revision 0002 (surveys in rounds) runs on a database of revision 0001 and keeps its reports."""
    from alembic import command

    from deniable.server._schema import _config

    engine = make_engine(db_url, "NORMAL")
    with engine.begin() as conn:
        command.upgrade(_config(conn), FIRST_REVISION)
    with engine.connect() as conn:
        assert current_revision(conn) == FIRST_REVISION
        assert set(inspect(conn).get_table_names()) >= set(FIRST_TABLES)
        assert not set(inspect(conn).get_table_names()) & (set(metadata.tables) - set(FIRST_TABLES))
    engine.dispose()
    storage = Storage(db_url)  # upgrades at start-up
    storage.add_survey(SURVEY)
    assert storage.submit("m", [{"idempotency_key": "at-the-head", "reports": {"q": True}}]).accepted == 1
    storage.close()
    engine = make_engine(db_url, "NORMAL")
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    engine.dispose()


def test_concurrent_upgrades_take_turns(db_url: str) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        engine = make_engine(db_url, "NORMAL")
        try:
            upgrade(engine)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            engine.dispose()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_the_command_line_upgrades(db_url: str) -> None:
    done = subprocess.run([sys.executable, "-m", "deniable", "db", "upgrade", "--db", db_url],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"schema at revision {head_revision()}" in done.stdout
    engine = make_engine(db_url, "NORMAL")
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
    engine.dispose()


def test_round_indices_are_widened_to_64_bits_keeping_the_rows(db_url: str) -> None:
    """Revision 0004 runs on a database of revision 0003 holding device accounts and round aggregates: it
    keeps them, and a round index past ``2**31`` then fits (it failed every write on PostgreSQL's 32-bit
    columns)."""
    from alembic import command

    from deniable.server._schema import _config

    device = ("INSERT INTO deniable_devices (survey_id, device, last_round, reports, spent, spent_fresh) "
              "VALUES ('w', :device, :round, '{}', 0.5, 0.5)")
    aggregate = ("INSERT INTO deniable_round_aggregates (survey_id, round, question_id, stat) "
                 "VALUES ('w', :round, 'q', :stat)")
    engine = make_engine(db_url, "NORMAL")
    try:
        with engine.begin() as conn:
            command.upgrade(_config(conn), "0003")
            conn.execute(text(device), {"device": "d0", "round": 2**31 - 1})  # the most a 32-bit column holds
            conn.execute(text(aggregate), {"round": 7, "stat": b"seven"})
        assert upgrade(engine) == head_revision()
        with engine.begin() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
            assert conn.execute(text("SELECT last_round FROM deniable_devices")).scalar_one() == 2**31 - 1
            assert conn.execute(text("SELECT round, stat FROM deniable_round_aggregates")).one() == (7, b"seven")
            conn.execute(text(device), {"device": "d1", "round": 2**32})
            conn.execute(text(aggregate), {"round": 2**32, "stat": b"wide"})
            rounds = conn.execute(text("SELECT round FROM deniable_round_aggregates ORDER BY round")).scalars().all()
            assert rounds == [7, 2**32]
    finally:
        engine.dispose()
