"""The gateway's key ring: rotation on schedule, old keys accepted for the overlap, kept in a private file."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

pytest.importorskip("pyhpke", reason="Oblivious HTTP needs the 'ohttp' extra")

from deniable._ohttp._keys import KeyRing  # noqa: E402
from deniable._ohttp._messages import KeyConfig, decode_key_configs, encode_key_configs, public_key  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_rotation_with_overlap(tmp_path: Path) -> None:
    clock = Clock()
    ring = KeyRing(tmp_path / "keys.json", rotate_every=100, overlap=10, clock=clock)
    first = ring.current()
    assert ring.configs() == [KeyConfig(first.key_id, public_key(first.secret))]
    assert set(ring.accepted()) == {first.key_id}
    clock.now += 99
    assert ring.current() == first
    clock.now += 1  # due: a new key is advertised, the old one still opens requests
    second = ring.current()
    assert second.key_id != first.key_id and second.secret != first.secret
    assert [c.key_id for c in ring.configs()] == [second.key_id]
    assert ring.accepted() == {first.key_id: first.secret, second.key_id: second.secret}
    clock.now += 9.9
    assert first.key_id in ring.accepted()
    clock.now += 0.1  # the overlap is over: forgotten, also on disk
    assert ring.accepted() == {second.key_id: second.secret}
    assert first.secret.hex() not in (tmp_path / "keys.json").read_text()


def test_the_file_is_private_and_shared(tmp_path: Path) -> None:
    path = tmp_path / "gateway" / "keys.json"
    clock = Clock()
    ring = KeyRing(path, rotate_every=100, overlap=10, clock=clock)
    key = ring.current()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    other = KeyRing(path, rotate_every=100, overlap=10, clock=clock)  # a restart, or another worker
    assert other.current() == key
    rotated = other.rotate()
    assert ring.current() == rotated and set(ring.accepted()) == {key.key_id, rotated.key_id}


def test_identifiers_wrap_and_skip_held_ones() -> None:
    clock = Clock()
    ring = KeyRing(rotate_every=1, overlap=1000, clock=clock)
    ids = []
    for _ in range(300):
        ids.append(ring.current().key_id)
        clock.now += 1
    assert ids[:3] == [0, 1, 2] and ids[256] == 0 and len(set(ids[-256:])) == 256
    assert len(ring.accepted()) == 256  # all held: each new key replaced the oldest
    with pytest.raises(ValueError, match="rotate_every"):
        KeyRing(rotate_every=0)


def test_configs_document_round_trips() -> None:
    ring = KeyRing()
    assert decode_key_configs(encode_key_configs(ring.configs())) == ring.configs()
