"""Persistent device state: owner-only files, created once, reused, refused for another configuration."""

from __future__ import annotations

import hashlib
import hmac
import json
import multiprocessing
import os
import re
import stat
import sys
import threading
from pathlib import Path

import pytest

from deniable import _randomness as randomness
from deniable._client_state import (
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


def _exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


def test_memory_store_loads_a_copy_of_what_was_created() -> None:
    store = MemoryStore()
    assert store.load() is None and repr(store) == "MemoryStore(empty)"
    state = {"a": [1, 2]}
    assert store.create(state) == state and store.create({"b": 1}) == state  # the first creator wins
    loaded = store.load()
    assert loaded == state and repr(store) == "MemoryStore(holding a state)"
    assert loaded is not None
    loaded["a"].append(3)
    assert store.load() == state  # the caller's copy, not the store's


def test_state_is_drawn_once_from_the_os_csprng() -> None:
    """The plain fields are drawn from the OS CSPRNG at creation, never again on later loads."""
    store = MemoryStore()
    sources: list[object] = []

    def draw(source: object) -> dict[str, int]:
        sources.append(source)
        return {"cohort": 3}

    load_or_create(store, "rappor", "fp", draw)
    load_or_create(store, "rappor", "fp", draw)
    assert sources == [randomness.SECURE]


def test_secret_stream_is_shake256_of_the_hmac_of_the_label() -> None:
    """Known answer: SHAKE-256 of HMAC-SHA256(secret, label parts joined by NUL), read in order."""
    secret = bytes(range(32))
    key = hmac.new(secret, b"cohort\x00bit\x003", "sha256").digest()
    expected = hashlib.shake_256(key).digest(15)
    stream = ClientState("rappor", "fp", secret).source("cohort", "bit", "3")
    assert stream.random_bytes(5) + stream.random_bytes(7) + stream.random_bytes(3) == expected
    assert repr(stream) == "SecretStream(<key hidden>)"


@posix_only
def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    """The state is opened with O_NOFOLLOW: a link planted at the path is refused, not read through."""
    target = tmp_path / "elsewhere.json"
    load_or_create(target, "rappor", "fp", _cohort)
    link = tmp_path / "device.json"
    link.symlink_to(target)
    message = f"client state {str(link)!r} cannot be opened: Too many levels of symbolic links"
    with pytest.raises(StateError, match=_exact(message)):
        FileStore(link).load()


@posix_only
def test_owner_bits_restored_whatever_the_umask(tmp_path: Path) -> None:
    """A umask removing the owner's bits does not leave an unreadable (or unwritable) state."""
    old = os.umask(0o277)
    try:
        load_or_create(tmp_path / "device.json", "rappor", "fp", _cohort)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "device.json").stat().st_mode) == 0o600


@posix_only
def test_created_0600_even_without_fchmod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the platform has no fchmod, the mode given to os.open alone makes the file 0600 (umask 0)."""
    monkeypatch.delattr(os, "fchmod")
    old = os.umask(0)
    try:
        load_or_create(tmp_path / "device.json", "rappor", "fp", _cohort)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "device.json").stat().st_mode) == 0o600


def test_file_is_canonical_json(tmp_path: Path) -> None:
    """Sorted keys: the same state gives the same bytes."""
    path = tmp_path / "device.json"
    load_or_create(path, "rappor", "fp", lambda source: {"z": 1, "a": 2})
    assert path.read_text() == json.dumps(json.loads(path.read_text()), sort_keys=True)


def _write(path: Path, content: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, content)
    os.close(fd)


_GOOD = {
    "format": "deniable.client-state", "version": 1, "mechanism": "rappor", "fingerprint": "fp",
    "secret": "ab" * 32, "fields": {},
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "x"}, " must have format 'deniable.client-state' and version 1; got 'x' version 1"),
        ({"version": 2}, " must have format 'deniable.client-state' and version 1; got 'deniable.client-state' "
                         "version 2"),
        ({"secret": 123}, ": field 'secret' must be 64 hex digits"),
        ({"secret": "zz" * 32}, ": field 'secret' must be 64 hex digits"),
        ({"fields": []}, ": field 'fields' must be an object"),
        ({"mechanism": 1}, ": fields 'mechanism' and 'fingerprint' must be strings"),
        ({"fingerprint": None}, ": fields 'mechanism' and 'fingerprint' must be strings"),
    ],
)
def test_malformed_state_names_the_store_and_field(tmp_path: Path, change: dict[str, object], message: str) -> None:
    path = tmp_path / "device.json"
    _write(path, json.dumps({**_GOOD, **change}).encode())
    with pytest.raises(StateError, match=_exact(f"client state FileStore({str(path)!r}){message}")):
        load_or_create(path, "rappor", "fp", _cohort)
    with pytest.raises(StateError, match=_exact(f"client state{message}")):
        ClientState.from_json({**_GOOD, **change})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"a": "\xff"}', "is not valid JSON: 'utf-8' codec can't decode byte 0xff in position 7: invalid start byte"),
        (b"[1]", "must hold a JSON object"),
    ],
)
def test_unreadable_file_names_its_path(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "device.json"
    _write(path, content)
    with pytest.raises(StateError, match=_exact(f"client state {str(path)!r} {message}")):
        FileStore(path).load()


@posix_only
def test_refusals_name_the_path(tmp_path: Path) -> None:
    path = tmp_path / "device.json"
    load_or_create(path, "rappor", "fp1", _cohort)
    refused = (
        f"client state FileStore({str(path)!r}) belongs to mechanism 'rappor' with configuration fingerprint 'fp1', "
        "not to 'rappor' with fingerprint 'fp2'; reusing it would tie two configurations' permanent responses "
        "together: give this configuration its own state"
    )
    with pytest.raises(StateError, match=_exact(refused)):
        load_or_create(path, "rappor", "fp2", _cohort)
    path.chmod(0o640)
    open_to_group = (
        f"client state {str(path)!r} is accessible by other users (mode 0640); it must be 0600 (chmod 600 it)"
    )
    with pytest.raises(StateError, match=_exact(open_to_group)):
        FileStore(path).load()
    absent = tmp_path / "absent" / "device.json"
    missing = f"client state {str(absent)!r} cannot be created: No such file or directory"
    with pytest.raises(StateError, match=_exact(missing)):
        FileStore(absent).create({})
    assert repr(FileStore(path)) == f"FileStore({str(path)!r})"
    with pytest.raises(TypeError, match=_exact("state must be a file path or a StateStore (load/create); got bytes")):
        store_of(b"x.json")  # type: ignore[arg-type]


def test_a_state_that_vanishes_while_created_is_an_error(tmp_path: Path) -> None:
    class Vanishing(FileStore):
        def load(self) -> None:  # type: ignore[override]
            return None  # as if removed between the link and the read

    path = tmp_path / "device.json"
    with pytest.raises(StateError, match=_exact(f"client state {str(path)!r} vanished while it was created")):
        Vanishing(path).create({})
