"""Persistent device state for memoizing mechanisms (repeated collection).

A memoizing mechanism (RAPPOR's permanent randomized response, and any
mechanism whose lifetime guarantee rests on randomness drawn once per device)
keeps its promise only while the device keeps that randomness. A client
re-created without it draws a fresh permanent response, and reports from the
re-created clients can be averaged: the lifetime bound is then lost.

The state of one device for one mechanism configuration is a small JSON
object::

    {"format": "deniable.client-state", "version": 1,
     "mechanism": "rappor", "fingerprint": "<the configuration's fingerprint>",
     "secret": "<64 hex digits: 32 bytes from the OS CSPRNG>",
     "fields": {"cohort": 17}}

``secret`` keys every memoized draw (:meth:`ClientState.source`); ``fields``
holds what the mechanism draws once in plain form (RAPPOR's cohort).
:func:`load_or_create` reads the state, or creates it exactly once, and
refuses a state written for another mechanism configuration (its
fingerprint differs), since reusing a secret across configurations would
correlate their permanent responses, and re-drawing would void the lifetime
bound.

Where the state lives is a :class:`StateStore`: :class:`FileStore` (a path,
created with owner-only permissions 0600 before anything is written to it,
and moved into place atomically, so no reader ever sees it partly written or
readable by others) or :class:`MemoryStore` (one process; for tests). A
mechanism's ``client(state=...)`` takes a path or a store.

>>> from deniable._client_state import MemoryStore, load_or_create
>>> store = MemoryStore()
>>> a = load_or_create(store, "rappor", "0123abcd", lambda source: {"cohort": 3})
>>> b = load_or_create(store, "rappor", "0123abcd", lambda source: {"cohort": 5})
>>> a.secret == b.secret and b.fields["cohort"]
3
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol, TypeAlias, runtime_checkable

from deniable import _randomness as randomness
from deniable._randomness import Source
from deniable.errors import StateError

__all__ = [
    "STATE_FORMAT",
    "STATE_VERSION",
    "StateError",
    "StateStore",
    "FileStore",
    "MemoryStore",
    "ClientState",
    "StateLike",
    "store_of",
    "load_or_create",
    "SecretStream",
]

STATE_FORMAT = "deniable.client-state"
"""The ``format`` field of a device's state file."""
STATE_VERSION = 1
"""The ``version`` field of a device's state file; another version is refused."""
SECRET_BYTES = 32


@runtime_checkable
class StateStore(Protocol):
    """Where one device keeps one state (a JSON object).

    ``load()`` returns the stored object or None if there is none.
    ``create(state)`` stores it only if none is stored yet and returns what is
    stored afterwards (the given state, or the one another process created
    first), so concurrent first uses agree on one state.

    Examples
    --------
    >>> import deniable as dn
    >>> isinstance(dn.MemoryStore(), dn.StateStore), isinstance("state.json", dn.StateStore)
    (True, False)
    """

    def load(self) -> dict[str, Any] | None: ...

    def create(self, state: dict[str, Any]) -> dict[str, Any]: ...


class MemoryStore:
    """A state held in this process only (tests, simulations); lost on exit.

    ``load`` and ``create`` return copies, so a caller cannot change what is
    held.

    Examples
    --------
    >>> import deniable as dn
    >>> store = dn.MemoryStore()
    >>> store.load() is None
    True
    >>> store.create({"cohort": 3}) == store.create({"cohort": 5}) == {"cohort": 3}
    True
    """

    def __init__(self) -> None:
        self._state: dict[str, Any] | None = None

    def load(self) -> dict[str, Any] | None:
        return None if self._state is None else json.loads(json.dumps(self._state))

    def create(self, state: dict[str, Any]) -> dict[str, Any]:
        if self._state is None:
            self._state = json.loads(json.dumps(state))
        return json.loads(json.dumps(self._state))

    def __repr__(self) -> str:
        return f"MemoryStore({'empty' if self._state is None else 'holding a state'})"


class FileStore:
    """A state in a file readable and writable by its owner only.

    Creation writes a temporary file in the same directory, opened with
    ``O_CREAT | O_EXCL`` and mode 0600 (so it is never readable by others,
    whatever the umask), syncs it, and links it to ``path`` (which fails if
    ``path`` exists: the first creator wins and the others read its state).
    Loading refuses, on POSIX systems, a file that the group or others may
    read or write (``chmod 600`` it), as ``ssh`` does for private keys.

    Parameters
    ----------
    path : str or os.PathLike
        The state file; its directory must exist.

    Raises
    ------
    StateError
        From ``load`` or ``create``: the file cannot be opened or created,
        is readable by others, or is not a JSON object.

    Examples
    --------
    >>> import os, tempfile
    >>> import deniable as dn
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     store = dn.FileStore(os.path.join(folder, "state.json"))
    ...     first = store.create({"cohort": 3})
    ...     print(first, store.load() == first)
    {'cohort': 3} True
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, Any] | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StateError(f"client state {str(self.path)!r} cannot be opened: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if sys.platform != "win32" and mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise StateError(
                    f"client state {str(self.path)!r} is accessible by other users (mode "
                    f"{stat.S_IMODE(mode):04o}); it must be 0600 (chmod 600 it)"
                )
            text = fh.read()
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise StateError(f"client state {str(self.path)!r} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise StateError(f"client state {str(self.path)!r} must hold a JSON object")
        return data

    def create(self, state: dict[str, Any]) -> dict[str, Any]:
        directory = self.path.parent
        tmp = directory / f".{self.path.name}.{randomness.SECURE.random_bytes(8).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(tmp, flags, 0o600)
        except OSError as exc:
            raise StateError(f"client state {str(self.path)!r} cannot be created: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "wb") as fh:
                if hasattr(os, "fchmod"):
                    os.fchmod(fh.fileno(), 0o600)  # the umask may have removed the owner's bits
                fh.write(json.dumps(state, sort_keys=True).encode())
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass  # another process created it first: use theirs
        finally:
            tmp.unlink(missing_ok=True)
        stored = self.load()
        if stored is None:  # pragma: no cover - removed between link and load
            raise StateError(f"client state {str(self.path)!r} vanished while it was created")
        return stored

    def __repr__(self) -> str:
        return f"FileStore({str(self.path)!r})"


StateLike: TypeAlias = "str | os.PathLike[str] | StateStore"
"""Where a device keeps its state: a file path, or a ``StateStore``."""


def store_of(state: StateLike) -> StateStore:
    """A path becomes a :class:`FileStore`; a store is returned as is."""
    if isinstance(state, (str, os.PathLike)):
        return FileStore(state)
    if isinstance(state, StateStore):
        return state
    raise TypeError(f"state must be a file path or a StateStore (load/create); got {type(state).__name__}")


@dataclass(frozen=True, repr=False)
class ClientState:
    """One device's memoized randomness for one mechanism configuration.

    ``secret`` (32 bytes) never leaves the device and is not shown by
    ``repr``; ``fields`` are the mechanism's once-drawn values (read-only).
    :func:`load_or_create` makes it; it is rarely built by hand.

    Parameters
    ----------
    mechanism : str
        The mechanism's wire id (``"rappor"``).
    fingerprint : str
        The fingerprint of the mechanism configuration it belongs to.
    secret : bytes
        32 bytes from the OS CSPRNG that key every memoized draw
        (:meth:`source`).
    fields : Mapping, optional
        The mechanism's values drawn once in plain form (RAPPOR's cohort).

    Examples
    --------
    >>> import deniable as dn
    >>> state = dn.ClientState("rappor", "0123abcd", bytes(32), {"cohort": 3})
    >>> state
    ClientState(mechanism='rappor', fingerprint='0123abcd', fields={'cohort': 3})
    >>> state.source("prr").random_bytes(4) == state.source("prr").random_bytes(4)
    True
    """

    mechanism: str
    fingerprint: str
    secret: bytes
    fields: Mapping[str, Any] = field(default_factory=dict)

    def source(self, *label: str) -> SecretStream:
        """A deterministic byte source for the memoized draw named by ``label``.

        SHAKE-256 of ``HMAC-SHA256(secret, label parts joined by NUL)``: the
        same label gives the same bytes on every run, different labels give
        independent-looking streams, and without the secret they are
        unpredictable (as a CSPRNG output is).
        """
        key = hmac.new(self.secret, "\x00".join(label).encode(), "sha256").digest()
        return SecretStream(key)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "version": STATE_VERSION,
            "mechanism": self.mechanism,
            "fingerprint": self.fingerprint,
            "secret": self.secret.hex(),
            "fields": dict(self.fields),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "client state") -> ClientState:
        if data.get("format") != STATE_FORMAT or data.get("version") != STATE_VERSION:
            raise StateError(
                f"{where} must have format {STATE_FORMAT!r} and version {STATE_VERSION}; "
                f"got {data.get('format')!r} version {data.get('version')!r}"
            )
        secret, fields = data.get("secret"), data.get("fields")
        try:
            raw = bytes.fromhex(secret) if isinstance(secret, str) else b""
        except ValueError:
            raw = b""
        if len(raw) != SECRET_BYTES:
            raise StateError(f"{where}: field 'secret' must be {2 * SECRET_BYTES} hex digits")
        if not isinstance(fields, dict):
            raise StateError(f"{where}: field 'fields' must be an object")
        mechanism, fingerprint = data.get("mechanism"), data.get("fingerprint")
        if not isinstance(mechanism, str) or not isinstance(fingerprint, str):
            raise StateError(f"{where}: fields 'mechanism' and 'fingerprint' must be strings")
        return cls(mechanism, fingerprint, raw, MappingProxyType(dict(fields)))

    def __repr__(self) -> str:
        return (
            f"ClientState(mechanism={self.mechanism!r}, fingerprint={self.fingerprint!r}, "
            f"fields={dict(self.fields)})"
        )


def load_or_create(
    state: StateLike,
    mechanism: str,
    fingerprint: str,
    draw_fields: Callable[[Source], dict[str, Any]],
) -> ClientState:
    """The device's state for this configuration: read it, or create it once.

    ``mechanism`` is the wire id and ``fingerprint`` the configuration's
    fingerprint (``m.fingerprint``). If nothing is stored, a fresh secret is
    drawn from the OS CSPRNG and ``draw_fields(source)`` draws the
    mechanism's plain fields (JSON values) from the same CSPRNG; the result is
    stored before it is returned. A stored state for another mechanism or
    configuration raises :class:`StateError` naming both fingerprints: a
    device that needs a new configuration needs a new state (another path).

    Parameters
    ----------
    state : str, os.PathLike or StateStore
        Where the state lives: a file path (a :class:`FileStore`) or a store.
    mechanism : str
        The mechanism's wire id.
    fingerprint : str
        The configuration's fingerprint (``m.fingerprint``).
    draw_fields : callable
        ``draw_fields(source)`` returns the mechanism's plain fields (a dict
        of JSON values), drawn from the byte source ``source``; called only
        when the state is created.

    Returns
    -------
    ClientState
        The stored state (the one created now, or the one stored before).

    Raises
    ------
    StateError
        The stored state is for another mechanism or configuration, is
        malformed, or cannot be read or created.
    TypeError
        ``state`` is neither a path nor a store.

    Examples
    --------
    >>> import deniable as dn
    >>> store = dn.MemoryStore()
    >>> a = dn.load_or_create(store, "rappor", "0123abcd", lambda source: {"cohort": 3})
    >>> b = dn.load_or_create(store, "rappor", "0123abcd", lambda source: {"cohort": 5})
    >>> a.secret == b.secret, b.fields["cohort"]
    (True, 3)
    """
    store = store_of(state)
    where = f"client state {store!r}"
    data = store.load()
    if data is None:
        fresh = ClientState(
            mechanism, fingerprint, randomness.SECURE.random_bytes(SECRET_BYTES), draw_fields(randomness.SECURE)
        )
        data = store.create(fresh.to_json())
    loaded = ClientState.from_json(data, where)
    if (loaded.mechanism, loaded.fingerprint) != (mechanism, fingerprint):
        raise StateError(
            f"{where} belongs to mechanism {loaded.mechanism!r} with configuration fingerprint "
            f"{loaded.fingerprint!r}, not to {mechanism!r} with fingerprint {fingerprint!r}; reusing it "
            "would tie two configurations' permanent responses together: give this configuration its "
            "own state"
        )
    return loaded


class SecretStream:
    """Deterministic byte source: SHAKE-256 of a key (for memoized draws only).

    ``secure`` is True because its output is unpredictable without the key;
    it is not a simulation generator.
    """

    secure = True

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._used = 0

    def random_bytes(self, n: int) -> bytes:
        out = hashlib.shake_256(self._key).digest(self._used + n)[self._used :]
        self._used += n
        return out

    def __repr__(self) -> str:
        return "SecretStream(<key hidden>)"
