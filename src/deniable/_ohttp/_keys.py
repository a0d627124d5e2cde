"""The gateway's keys: rotated on a schedule, each old key still accepted for an overlap period.

The key ring advertises one key configuration, its newest key's. When that
key is ``rotate_every`` seconds old a new one is drawn (X25519, from the OS
CSPRNG) and advertised instead; the one it replaces still opens requests for
``overlap`` more seconds, so that a client which fetched the configuration
just before the rotation (or a relay's cached copy) is not refused, and is
then forgotten. A request for a forgotten or unknown key is answered with
the ``ohttp-key`` problem (RFC 9458 Section 5.3), upon which a client fetches
the configuration again.

With a ``path`` the keys are kept in that JSON file (mode 0600, replaced
atomically; read again whenever it changed on disk, so that several
processes of one gateway share it); without one they live in memory only.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from deniable._ohttp._messages import KeyConfig, public_key

__all__ = ["GatewayKey", "KeyRing", "ROTATE_EVERY", "OVERLAP"]

ROTATE_EVERY = 7 * 86_400.0
"""Default age (seconds) at which the advertised key is replaced: a week."""
OVERLAP = 86_400.0
"""Default time (seconds) a replaced key is still accepted: a day."""


@dataclass(frozen=True)
class GatewayKey:
    """One key: its identifier (0..255), X25519 secret and creation time (seconds since the epoch)."""

    key_id: int
    secret: bytes
    created: float

    @property
    def config(self) -> KeyConfig:
        return KeyConfig(self.key_id, public_key(self.secret))


def _new_secret() -> bytes:
    return X25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())


class KeyRing:
    """The gateway's keys (see the module docstring); thread-safe."""

    def __init__(
        self, path: str | Path | None = None, *, rotate_every: float = ROTATE_EVERY, overlap: float = OVERLAP,
        clock: Callable[[], float] = time.time, keys: list[GatewayKey] | None = None,
    ) -> None:
        if not rotate_every > 0 or not overlap >= 0:
            raise ValueError(f"rotate_every must be > 0 and overlap >= 0 seconds; got {rotate_every}, {overlap}")
        self.path = None if path is None else Path(path)
        self.rotate_every, self.overlap, self._clock = rotate_every, overlap, clock
        self._lock = threading.Lock()
        self._keys: list[GatewayKey] = list(keys or [])
        self._mtime: float | None = None

    # ------------------------------------------------------------------ the file
    def _load(self) -> None:
        if self.path is None:
            return
        try:
            mtime = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return
        if mtime == self._mtime:
            return
        data = json.loads(self.path.read_text())
        self._keys = [GatewayKey(k["key_id"], bytes.fromhex(k["secret"]), float(k["created"])) for k in data["keys"]]
        self._mtime = mtime

    def _save(self) -> None:
        if self.path is None:
            return
        data = {"about": "deniable OHTTP gateway keys: secret, keep private",
                "keys": [{"key_id": k.key_id, "secret": k.secret.hex(), "created": k.created} for k in self._keys]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".ohttp-keys-")
        try:
            with os.fdopen(fd, "w") as f:  # mkstemp creates it 0600
                json.dump(data, f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            os.unlink(tmp)
            raise
        self._mtime = self.path.stat().st_mtime_ns

    # ------------------------------------------------------------------ rotation
    def _refresh(self, force: bool = False) -> None:
        """Load, rotate if forced or the newest key is due, forget keys past their overlap (under the lock)."""
        self._load()
        now = self._clock()
        changed = False
        if force or not self._keys or now - self._keys[-1].created >= self.rotate_every:
            if len(self._keys) == 256:  # every identifier held (overlap >= 255 rotations): the oldest goes
                self._keys.pop(0)
            held = {k.key_id for k in self._keys}
            key_id = (self._keys[-1].key_id + 1) % 256 if self._keys else 0
            while key_id in held:
                key_id = (key_id + 1) % 256
            self._keys.append(GatewayKey(key_id, _new_secret(), now))
            changed = True
        kept = [k for k, successor in zip(self._keys, self._keys[1:], strict=False)
                if now < successor.created + self.overlap] + [self._keys[-1]]
        if len(kept) != len(self._keys):
            self._keys, changed = kept, True
        if changed:
            self._save()

    def rotate(self) -> GatewayKey:
        """Draw a new key now (its predecessor stays accepted for the overlap); returns it."""
        with self._lock:
            self._refresh(force=True)
            return self._keys[-1]

    def current(self) -> GatewayKey:
        """The advertised key (drawn or rotated first when due)."""
        with self._lock:
            self._refresh()
            return self._keys[-1]

    def configs(self) -> list[KeyConfig]:
        """The advertised key configurations (the current key's)."""
        return [self.current().config]

    def accepted(self) -> dict[int, bytes]:
        """Key identifier -> secret of every key that opens requests now (current and overlapping)."""
        with self._lock:
            self._refresh()
            return {k.key_id: k.secret for k in self._keys}
