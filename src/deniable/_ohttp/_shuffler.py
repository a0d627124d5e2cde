"""The relay's shuffler: hold encapsulated reports on disk, release them in shuffled batches.

``deniable relay --shuffle`` answers each encapsulated request ``202`` with
a queued receipt (``{"status": "queued", "stored": false, "threshold": ...,
"max_delay": ...}``) once it is committed to the buffer (SQLite,
``synchronous=FULL``: an acknowledged report survives a killed relay and a
power cut). A batch is released when the buffer holds at least ``threshold``
reports and a delay drawn uniformly from ``[0, max_delay]`` seconds (OS
CSPRNG) has passed since it first did; what arrives during the delay joins
the batch. The batch, at most :data:`MAX_BATCH` reports, is put in a uniformly
random order (Fisher-Yates with :class:`secrets.SystemRandom`: each of the
``n!`` orders has probability exactly ``1/n!``) and posted to the gateway in
one request (``/.well-known/ohttp-gateway/batch``), which serves the reports
in that order; the collector thus learns neither the arrival order nor the
arrival time of a report, only its batch. The reports are deleted from the
buffer only after the gateway answered; a relay killed in between sends the
batch again after a restart, and the collector stores each response once
(its idempotency key, inside the encapsulation, makes a repeat a duplicate).

The shuffler never releases fewer than ``threshold`` reports, so each
report is hidden among at least ``threshold`` others of the batch (of every
survey the relay serves: it cannot tell them apart).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import sqlite3
import struct
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

__all__ = ["Buffer", "Shuffler", "shuffled", "check_settings", "MAX_BATCH", "encode_batch", "decode_batch",
           "BATCH_TYPE"]

MAX_BATCH = 10_000
"""Reports released in one batch at most (the collector's batch limit)."""
BATCH_TYPE = "application/x-deniable-ohttp-batch"
"""A batch of encapsulated requests: each prefixed by its 4-byte big-endian length."""


def encode_batch(items: Sequence[bytes]) -> bytes:
    """The batch body: each encapsulated request prefixed by its length (4 bytes, big-endian)."""
    return b"".join(struct.pack(">I", len(item)) + item for item in items)


def decode_batch(body: bytes) -> list[bytes]:
    """The encapsulated requests of a batch body (ValueError if it is cut short)."""
    items, at = [], 0
    while at < len(body):
        if at + 4 > len(body):
            raise ValueError("the batch ends inside a length")
        (n,) = struct.unpack(">I", body[at:at + 4])
        if at + 4 + n > len(body):
            raise ValueError("an item is longer than the batch")
        items.append(body[at + 4:at + 4 + n])
        at += 4 + n
    return items


class Buffer:
    """The durable buffer: one SQLite file, a row per acknowledged report (its bytes, no time, no address)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("CREATE TABLE IF NOT EXISTS pending (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")

    def put(self, body: bytes) -> None:
        """Keep ``body``; on disk (fsynced) when this returns."""
        with self._lock:
            self._db.execute("INSERT INTO pending (body) VALUES (?)", (body,))

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM pending").fetchone()[0])

    def take(self, limit: int = MAX_BATCH) -> list[tuple[int, bytes]]:
        """Up to ``limit`` kept reports (the oldest first), still kept until :meth:`remove`."""
        with self._lock:
            return [(int(i), bytes(b)) for i, b in
                    self._db.execute("SELECT id, body FROM pending ORDER BY id LIMIT ?", (limit,))]

    def remove(self, ids: Sequence[int]) -> None:
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("DELETE FROM pending WHERE id = ?", [(i,) for i in ids])
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


def shuffled(items: Sequence[bytes], rng: random.Random | None = None) -> list[bytes]:
    """``items`` in a uniformly random order (Fisher-Yates on the OS CSPRNG; ``rng``: a seeded one, tests only)."""
    out = list(items)
    (rng or secrets.SystemRandom()).shuffle(out)
    return out


def check_settings(threshold: int, max_delay: float) -> None:
    """ValueError unless ``1 <= threshold <= MAX_BATCH`` and ``0 <= max_delay <= 86400`` seconds."""
    if not 1 <= threshold <= MAX_BATCH or not 0 <= max_delay <= 86_400:
        raise ValueError(f"threshold must be in 1..{MAX_BATCH} and max_delay in 0..86400 seconds; "
                         f"got {threshold}, {max_delay}")


class Shuffler:
    """Batches with a threshold and a random delay, shuffled, forwarded (see the module docstring)."""

    def __init__(self, buffer: Buffer, *, threshold: int = 100, max_delay: float = 60.0, tick: float = 0.1,
                 clock: Callable[[], float] = time.monotonic, rng: random.Random | None = None) -> None:
        check_settings(threshold, max_delay)
        self.buffer, self.threshold, self.max_delay, self.tick = buffer, threshold, max_delay, tick
        self._clock = clock
        self._rng = secrets.SystemRandom() if rng is None else rng  # a seeded one for tests only
        self._due: float | None = None
        self._task: asyncio.Task[None] | None = None
        self.released: list[int] = []
        """The size of each batch released by this process, in order."""

    async def put(self, body: bytes) -> None:
        """Keep one encapsulated report (durably; from a worker thread, not on the event loop)."""
        await asyncio.to_thread(self.buffer.put, body)

    async def release_due(self, forward: Callable[[list[bytes]], Awaitable[bool]]) -> int:
        """Release one batch if one is due; its size (0 if none). ``forward`` says whether the gateway took it."""
        if self.buffer.count() < self.threshold:
            return 0
        now = self._clock()
        if self._due is None:
            self._due = now + self._rng.uniform(0.0, self.max_delay)
        if now < self._due:
            return 0
        kept = await asyncio.to_thread(self.buffer.take, MAX_BATCH)
        if not await forward(shuffled([body for _, body in kept], self._rng)):
            return 0  # the gateway did not take it: kept, tried again at the next tick
        await asyncio.to_thread(self.buffer.remove, [i for i, _ in kept])
        self._due = None
        self.released.append(len(kept))
        return len(kept)

    def start(self, forward: Callable[[list[bytes]], Awaitable[bool]]) -> None:
        async def loop() -> None:
            while True:
                await self.release_due(forward)
                await asyncio.sleep(self.tick)

        self._task = asyncio.get_running_loop().create_task(loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        self.buffer.close()
