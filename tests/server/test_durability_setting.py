"""SQLite durability levels: NORMAL (survives a killed server) by default, FULL on request."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

pytest.importorskip("fastapi", reason="needs the deniable[server] extra")

from deniable.server._storage import Storage  # noqa: E402

# PRAGMA synchronous codes: 1 = NORMAL, 2 = FULL, 3 = EXTRA
LEVELS = {"NORMAL": 1, "FULL": 2, "EXTRA": 3}


@pytest.mark.parametrize("level", ["NORMAL", "FULL", "full"])
def test_every_connection_uses_the_requested_level(tmp_path: Path, level: str) -> None:
    storage = Storage(f"sqlite:///{tmp_path / 'd.db'}", sqlite_synchronous=level)
    try:
        with storage.engine.connect() as conn:
            assert conn.execute(text("PRAGMA synchronous")).scalar() == LEVELS[level.upper()]
            assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    finally:
        storage.close()


def test_default_is_normal(tmp_path: Path) -> None:
    storage = Storage(f"sqlite:///{tmp_path / 'd.db'}")
    try:
        with storage.engine.connect() as conn:
            assert conn.execute(text("PRAGMA synchronous")).scalar() == LEVELS["NORMAL"]
    finally:
        storage.close()


def test_unknown_level_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        Storage(f"sqlite:///{tmp_path / 'd.db'}", sqlite_synchronous="OFF")
