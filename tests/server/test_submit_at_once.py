"""A single response stored on the calling thread (the event loop's) only where that waits for nothing."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="needs the deniable[server] extra")

from deniable.server._storage import Conflict, Storage  # noqa: E402


def _body(key: str, violated: bool = True) -> dict[str, object]:
    return {"idempotency_key": key, "reports": {"violated": violated}}


@pytest.fixture
def storage(tmp_path: Path, examples: Path) -> Iterator[Storage]:
    store = Storage(f"sqlite:///{tmp_path / 'a.db'}")
    store.add_survey(examples / "honor-code.yaml")
    yield store
    store.close()


def test_stores_as_submit_does(tmp_path: Path, examples: Path, storage: Storage) -> None:
    other = Storage(f"sqlite:///{tmp_path / 'b.db'}")
    other.add_survey(examples / "honor-code.yaml")
    try:
        bodies = [_body(f"key-{i:04d}", i % 3 == 0) for i in range(30)]
        for body in bodies:
            assert storage.submit_at_once("honor-code", [body]) == other.submit("honor-code", [body])
        # a retry is a duplicate, another body under a stored key a conflict: as submit answers them
        again = storage.submit_at_once("honor-code", [bodies[0]])
        assert again == other.submit("honor-code", [bodies[0]])
        assert again is not None and (again.accepted, again.duplicates) == (0, 1)
        with pytest.raises(Conflict):
            storage.submit_at_once("honor-code", [_body("key-0000", False)])
        assert storage.aggregates("honor-code")["violated"].counts.tolist() == \
            other.aggregates("honor-code")["violated"].counts.tolist()
    finally:
        other.close()


def test_another_writer_is_not_waited_for(tmp_path: Path, storage: Storage) -> None:
    """Another process's write transaction: None at once (the busy timeout is 60 s), nothing stored."""
    writer = sqlite3.connect(tmp_path / "a.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    start = time.monotonic()
    assert storage.submit_at_once("honor-code", [_body("key-0001")]) is None
    assert time.monotonic() - start < 5
    writer.execute("COMMIT")
    writer.close()
    assert storage.aggregates("honor-code")["violated"].n == 0
    # the connection waits again as every writer does, and the next response is stored
    with storage.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 60_000
    assert storage.submit_at_once("honor-code", [_body("key-0001")]) is not None
    assert storage.aggregates("honor-code")["violated"].n == 1


def test_a_writing_thread_is_not_waited_for(storage: Storage) -> None:
    with storage._write():  # another thread of the service writing holds this lock
        assert storage.submit_at_once("honor-code", [_body("key-0001")]) is None
    assert storage.aggregates("honor-code")["violated"].n == 0


def test_a_commit_that_waits_for_the_disk_is_left_to_the_thread_pool(tmp_path: Path, examples: Path) -> None:
    full = Storage(f"sqlite:///{tmp_path / 'f.db'}", sqlite_synchronous="FULL")
    try:
        full.add_survey(examples / "honor-code.yaml")
        assert full.submit_at_once("honor-code", [_body("key-0001")]) is None
        assert full.aggregates("honor-code")["violated"].n == 0
    finally:
        full.close()
