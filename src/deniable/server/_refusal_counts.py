"""The flood defences at work: refused responses counted per survey, round and kind, kept in the database.

Every refused ``POST /surveys/{id}/responses`` and ``.../responses/batch``
(one count per request, a batch being one) of a survey the service has loaded
is counted by the kind of its refusal (:data:`KINDS`):

``rate_limited``  429: over the survey's per-address ``rate_limit``;
``conflict``      409: a reused idempotency key with another body, a closed
                  or full survey, a device's second response in one round;
``forbidden``     401 and 403: no valid relay token or invite, a device over
                  its ``lifetime_epsilon``, a cross-site or unshuffled post;
``invalid``       any other 4xx (400, 413, 415, 422): a malformed request.

A 404 (no such survey) is not counted: there is no survey to count it for.
The round is the survey's round by the server's clock when the refusal was
answered (``-1``: a survey without rounds, or before its start).

Counting costs the accepted responses nothing: :class:`RefusalCounter`
looks only at the status of the posts' answers, and a refusal adds one to a
counter in memory (no database access while refusing, so a flood of
refusals does not queue on SQLite's single writer). :class:`RefusalCounts`
writes what was counted in one transaction (an upsert adding to each row)
at most every ``interval`` seconds from a timer thread, and when the storage
closes; readers see the stored counts plus those not yet written. A crash
loses at most the last ``interval`` seconds of counts. Nothing about the
request is kept: no address, no time, no body.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager

from sqlalchemy import Connection, select
from sqlalchemy.dialects import postgresql, sqlite
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deniable.server._database import refusals_table

__all__ = ["KINDS", "NO_ROUND", "kind_of", "RefusalCounts", "RefusalCounter", "refusals_json"]

KINDS = ("rate_limited", "conflict", "forbidden", "invalid")
"""The kinds of refusal counted, in the order the results list them."""

NO_ROUND = -1
"""The round of a refusal to a survey without rounds (or before its first round)."""

FLUSH_INTERVAL_S = 1.0
"""The longest counts wait in memory before they are written."""

_log = logging.getLogger("deniable.server")
_POSTS = re.compile(r"/surveys/([^/]+)/responses(?:/batch)?/?")


def kind_of(status: int) -> str | None:
    """The kind of refusal an HTTP ``status`` is (:data:`KINDS`), or None: not a counted refusal."""
    if status == 429:
        return "rate_limited"
    if status == 409:
        return "conflict"
    if status in (401, 403):
        return "forbidden"
    if 400 <= status < 500 and status != 404:
        return "invalid"
    return None


class RefusalCounts:
    """Counts of refusals by ``(survey, round, kind)``: added in memory, written to ``deniable_refusals``.

    ``write`` opens a write transaction of the storage (SQLite's writers take
    turns on its lock), ``read`` a read-only one.
    """

    def __init__(
        self,
        write: Callable[[], AbstractContextManager[Connection]],
        read: Callable[[], AbstractContextManager[Connection]],
        dialect: str,
        interval: float = FLUSH_INTERVAL_S,
    ) -> None:
        self._write, self._read, self._interval = write, read, interval
        self._insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        self._pending: Counter[tuple[str, int, str]] = Counter()
        self._lock = threading.Lock()
        self._flushing = threading.Lock()  # one writer of counts at a time
        self._timer: threading.Timer | None = None
        self._closed = False

    def add(self, survey_id: str, round_: int | None, kind: str, count: int = 1) -> None:
        """Count ``count`` refusals (no I/O: written within ``interval`` seconds by a timer)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {kind!r}")
        with self._lock:
            self._pending[(survey_id, NO_ROUND if round_ is None else int(round_), kind)] += count
            if self._timer is None and not self._closed:
                self._timer = threading.Timer(self._interval, self._flush_from_timer)
                self._timer.daemon = True
                self._timer.start()

    def _flush_from_timer(self) -> None:
        with self._lock:
            self._timer = None
        try:
            self.flush()
        except Exception:  # noqa: BLE001 - the counts were put back; the next refusal tries again
            _log.exception("deniable: writing the refusal counts failed; they are kept for the next try")

    def flush(self) -> None:
        """Write the counts held in memory (one transaction; put back if it fails)."""
        with self._flushing:
            with self._lock:
                pending, self._pending = self._pending, Counter()
            if not pending:
                return
            rows = [{"survey_id": s, "round": r, "kind": k, "count": n} for (s, r, k), n in pending.items()]
            statement = self._insert(refusals_table)
            statement = statement.on_conflict_do_update(
                index_elements=["survey_id", "round", "kind"],
                set_={"count": refusals_table.c["count"] + statement.excluded["count"]},
            )
            try:
                with self._write() as conn:
                    conn.execute(statement, rows)
            except BaseException:
                with self._lock:
                    self._pending.update(pending)
                raise

    def counts(self, survey_id: str) -> dict[int, dict[str, int]]:
        """Per round (``-1``: none), the refusals of each kind: those stored plus those not yet written."""
        c = refusals_table.c
        with self._read() as conn:
            rows = conn.execute(select(c.round, c.kind, c["count"]).where(c.survey_id == survey_id)).all()
        with self._lock:
            pending = [(r, k, n) for (s, r, k), n in self._pending.items() if s == survey_id]
        out: dict[int, dict[str, int]] = {}
        for round_, kind, count in [*rows, *pending]:
            one = out.setdefault(int(round_), dict.fromkeys(KINDS, 0))
            one[kind] = one.get(kind, 0) + int(count)
        return dict(sorted(out.items()))

    def close(self) -> None:
        """Stop the timer and write what is left."""
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.flush()


def refusals_json(per_round: Mapping[int, Mapping[str, int]], round_: int | None = None) -> dict[str, int]:
    """The refusals of each kind of one round, or of every round together (``round_`` None)."""
    if round_ is not None:
        return dict(per_round.get(round_, dict.fromkeys(KINDS, 0)))
    return {kind: sum(one[kind] for one in per_round.values()) for kind in KINDS}


class RefusalCounter:
    """ASGI middleware: ``count(survey_id, kind)`` for each refused post of responses.

    It looks at the status of answers to ``POST /surveys/{id}/responses``
    and ``.../responses/batch`` only (:meth:`Storage.count_refusal
    <deniable.server._storage.Storage.count_refusal>` counts it for a survey
    the storage has loaded).
    """

    def __init__(self, app: ASGIApp, count: Callable[[str, str], None]) -> None:
        self.app, self.count = app, count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = _POSTS.fullmatch(scope.get("path", "")) if scope["type"] == "http" else None
        if match is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        survey_id = match.group(1)

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                kind = kind_of(int(message["status"]))
                if kind is not None:
                    self.count(survey_id, kind)
            await send(message)

        await self.app(scope, receive, counting)
