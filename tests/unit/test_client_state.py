"""Persistent device state: owner-only files, created once, reused, refused for another configuration."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import sys
import threading
from pathlib import Path

import pytest

from deniable.client_state import (
    ClientState,
    FileStore,
    MemoryStore,
    StateError,
    StateStore,
    load_or_create,
    store_of,
)
from deniable.errors import DeniableError

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


def _cohort(source: object) -> dict[str, int]:
    return {"cohort": 7}


def test_created_once_then_reused(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    first = load_or_create(path, "rappor", "fp1", _cohort)
    again = load_or_create(str(path), "rappor", "fp1", lambda s: {"cohort": 9})
    assert again.secret == first.secret and len(first.secret) == 32
    assert again.fields["cohort"] == 7  # drawn once, at creation
    data = json.loads(path.read_text())
    assert data["format"] == "deniable.client-state" and data["fingerprint"] == "fp1"
    other = load_or_create(tmp_path / "other.json", "rappor", "fp1", _cohort)
    assert other.secret != first.secret


def test_another_configuration_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    load_or_create(path, "rappor", "fp1", _cohort)
    before = path.read_bytes()
    with pytest.raises(StateError, match="fingerprint 'fp1'.*fingerprint 'fp2'"):
        load_or_create(path, "rappor", "fp2", _cohort)
    with pytest.raises(StateError, match="mechanism 'rappor'"):
        load_or_create(path, "l-grr", "fp1", _cohort)
    assert path.read_bytes() == before  # nothing rewritten
    assert issubclass(StateError, DeniableError) and issubclass(StateError, ValueError)


@posix_only
def test_file_is_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        load_or_create(tmp_path / "device.json", "rappor", "fp", _cohort)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "device.json").stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["device.json"]  # no temporary left behind


@posix_only
def test_never_readable_by_others_while_created(tmp_path: Path) -> None:
    """A watcher stats every file in the directory while 200 states are created under umask 0."""
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for entry in os.scandir(tmp_path):
                try:
                    seen.add(stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode))
                except FileNotFoundError:
                    pass

    watcher = threading.Thread(target=watch)
    old = os.umask(0)
    watcher.start()
    try:
        for i in range(200):
            load_or_create(tmp_path / f"d{i}.json", "rappor", "fp", _cohort)
    finally:
        done.set()
        watcher.join()
        os.umask(old)
    assert seen == {0o600}


@posix_only
def test_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    load_or_create(path, "rappor", "fp", _cohort)
    path.chmod(0o644)
    with pytest.raises(StateError, match="0644.*chmod 600"):
        load_or_create(path, "rappor", "fp", _cohort)


@pytest.mark.parametrize(
    "content,match",
    [
        ("not json", "not valid JSON"),
        ("[1]", "JSON object"),
        ('{"format": "x", "version": 1}', "format 'deniable.client-state'"),
        (
            '{"format": "deniable.client-state", "version": 1, "mechanism": "rappor", '
            '"fingerprint": "fp", "secret": "abcd", "fields": {}}',
            "'secret' must be 64 hex digits",
        ),
    ],
)
def test_malformed_state_is_refused(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "device.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, content.encode())
    os.close(fd)
    with pytest.raises(StateError, match=match):
        load_or_create(path, "rappor", "fp", _cohort)


def _first_use(path: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    out.put(load_or_create(path, "rappor", "fp", _cohort).secret.hex())


def test_concurrent_first_use_agrees_on_one_state(tmp_path: Path) -> None:
    path = str(tmp_path / "device.json")
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_first_use, args=(path, out)) for _ in range(4)]
    for p in procs:
        p.start()
    secrets_seen = {out.get(timeout=60) for _ in procs}
    for p in procs:
        p.join()
    assert len(secrets_seen) == 1
    assert secrets_seen == {load_or_create(path, "rappor", "fp", _cohort).secret.hex()}


def test_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StateError, match="cannot be created: No such file or directory"):
        load_or_create(tmp_path / "absent" / "device.json", "rappor", "fp", _cohort)


def test_memory_store_and_protocol() -> None:
    store = MemoryStore()
    assert isinstance(store, StateStore) and store_of(store) is store
    assert isinstance(store_of("x.json"), FileStore)
    with pytest.raises(TypeError, match="file path or a StateStore"):
        store_of(b"x.json")  # type: ignore[arg-type]
    a = load_or_create(store, "rappor", "fp", _cohort)
    assert load_or_create(store, "rappor", "fp", _cohort).secret == a.secret


def test_streams_are_deterministic_per_label_and_secret_is_hidden() -> None:
    state = ClientState("rappor", "fp", b"k" * 32)
    assert state.source("a", "1").random_bytes(40) == state.source("a", "1").random_bytes(40)
    assert state.source("a", "1").random_bytes(40) != state.source("a", "2").random_bytes(40)
    stream = state.source("a")
    assert stream.random_bytes(5) + stream.random_bytes(7) == state.source("a").random_bytes(12)
    assert "6b6b" not in repr(state) and "k" * 8 not in repr(state)
