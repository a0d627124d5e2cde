"""Storage of surveys, privatized reports and their mergeable aggregates.

Every write is one transaction: a request is either stored entirely or not at
all, and the server answers 2xx only after the commit returned. Each
question's aggregate (:mod:`deniable._aggregates`, decoded through the
question's mechanism) is updated in the same transaction as the reports it
counts, so results read the aggregates, never the reports. The tables and the
engine settings (SQLite WAL and durability, PostgreSQL) are in
:mod:`deniable.server._database`; requests are checked by
:mod:`deniable.server._submissions` before anything is written.

How a request is written (idempotency, locks, the response cap) is
:mod:`deniable.server._writes`; the devices of surveys with rounds,
:mod:`deniable.server._devices` under the rules of :mod:`deniable.server._ledger`.
"""

from __future__ import annotations

import json
import math
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, bindparam, case, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from deniable._accounting import TOLERANCE
from deniable._aggregates import SupportCounts
from deniable.server._database import (
    READ_ONLY,
    aggregates_table,
    begin_at_once,
    device_salts_table,
    devices_table,
    invites_table,
    make_engine,
    normalize_url,
    read_stat,
    responses_table,
    round_aggregates_table,
    shuffled_batches_table,
    stat_bytes,
    surveys_table,
)
from deniable.server._errors import Conflict, Forbidden, Invalid, NotFound, StorageError
from deniable.server._policy import POLICY_FIELDS
from deniable.server._questions import Tally
from deniable.server._refusal_counts import RefusalCounts
from deniable.server._rounds import SALT_BYTES, load_rounds
from deniable.server._schema import upgrade
from deniable.server._submissions import Prepared, prepare, token_hash
from deniable.server._surveys import ID_PATTERN, Survey, load_survey
from deniable.server._writes import AGGREGATE_SHARDS, KeyExists, SubmitResult, Writer, survey_status
from deniable.wire import MAX_BATCH

__all__ = [
    "Storage",
    "StorageError",
    "NotFound",
    "Conflict",
    "Forbidden",
    "Invalid",
    "SubmitResult",
    "normalize_url",
    "MAX_BATCH",
    "AGGREGATE_SHARDS",
]

# statements built once (per-request construction costs more than executing them)
_SELECT_DEFINITION = select(surveys_table.c.definition).where(surveys_table.c.id == bindparam("sid"))
_SELECT_AGGREGATES = select(aggregates_table.c.question_id, aggregates_table.c.stat).where(
    aggregates_table.c.survey_id == bindparam("sid")
)
_SELECT_ALL_ROUND_AGGREGATES = (
    select(round_aggregates_table.c.round, round_aggregates_table.c.question_id, round_aggregates_table.c.stat)
    .where(round_aggregates_table.c.survey_id == bindparam("sid"))
    .order_by(round_aggregates_table.c.round)
)


def _without_settings(definition: str) -> str:
    """A stored canonical definition without its settings (:data:`~deniable.server._policy.POLICY_FIELDS`)."""
    data = {k: v for k, v in json.loads(definition).items() if k not in POLICY_FIELDS}
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


class _Busy(Exception):
    """Another process holds SQLite's write lock (:meth:`Storage.submit_at_once` does not wait for it)."""


# ------------------------------------------------------------------- storage
class Storage:
    """Surveys, privatized reports and aggregates in SQLite or PostgreSQL.

    >>> storage = Storage("sqlite:///deniable.db")            # doctest: +SKIP
    >>> storage.aggregates("honor-code")["violated"].counts    # doctest: +SKIP

    ``sqlite_synchronous`` is SQLite's ``PRAGMA synchronous`` (``"NORMAL"``,
    the default, in WAL mode: a commit survives a killed process but the last
    commits may be lost on power loss; ``"FULL"``: a commit survives a power cut).
    ``clock`` gives the time (seconds since the epoch) that decides a survey's
    round; tests pass one they can move forward.
    """

    def __init__(
        self, db_url: str, *, sqlite_synchronous: str = "NORMAL", clock: Callable[[], float] = time.time
    ) -> None:
        self.clock = clock
        self.engine = make_engine(db_url, sqlite_synchronous)
        self.dialect = self.engine.dialect.name
        # PostgreSQL: writers lock one of several aggregate rows per question (results merge
        # them), so concurrent transactions do not queue on one row lock through each commit
        self.shards = 1 if self.dialect == "sqlite" else AGGREGATE_SHARDS
        mark = "?" if self.engine.dialect.paramstyle == "qmark" else "%s"
        self._writer = Writer(mark, self.shards, clock, self.engine.dialect)
        self._sqlite_lock = threading.Lock() if self.dialect == "sqlite" else None
        self._write_lock: AbstractContextManager[Any] = self._sqlite_lock or nullcontext()
        # where a commit returns without waiting for the disk (SQLite's WAL at NORMAL): see submit_at_once
        self._at_once = self._sqlite_lock is not None and sqlite_synchronous.upper() == "NORMAL"
        upgrade(self.engine)  # create or migrate the schema (deniable.server._schema)
        self._surveys: dict[str, Survey] = {}
        self.refusals = RefusalCounts(self._write, self._read, self.dialect)
        """Refused responses by survey, round and kind (:mod:`deniable.server._refusal_counts`)."""

    def close(self) -> None:
        self.refusals.close()
        self.engine.dispose()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        # SQLite has one writer at a time; queueing this process's threads on a lock hands
        # the database over at once, where SQLite's busy handler would sleep and poll
        with self._write_lock, self.engine.begin() as conn:
            yield conn

    @contextmanager
    def _write_held(self) -> Iterator[Connection]:
        # a write transaction with the write lock already held, begun without waiting (_Busy if it would wait)
        with self.engine.connect() as conn:
            begun = begin_at_once(conn)
            if begun is None:
                raise _Busy
            with begun:
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn:
            conn = conn.execution_options(**{READ_ONLY: True})
            with conn.begin():
                yield conn

    # ------------------------------------------------------------- surveys
    def add_survey(self, source: Any) -> Survey:
        """Store a survey (a Survey, dict or file); a no-op if the identical one is stored.

        Raises :class:`Conflict` if a different survey already has its id:
        stored reports must keep decoding with the configuration they were made with.
        """
        survey = load_survey(source)
        for attempt in range(2):
            try:
                with self._write() as conn:
                    stored = conn.execute(
                        _SELECT_DEFINITION, {"sid": survey.id}
                    ).scalar_one_or_none()
                    survey = self._with_start(survey, stored)
                    if stored is None:
                        conn.execute(
                            insert(surveys_table).values(
                                id=survey.id, definition=survey.canonical(), status="open"
                            )
                        )
                        conn.execute(
                            insert(aggregates_table),
                            [
                                {
                                    "survey_id": survey.id,
                                    "question_id": q.id,
                                    "shard": shard,
                                    "stat": stat_bytes(q.empty_aggregate()),
                                }
                                for q in survey.questions
                                for shard in range(self.shards)
                            ],
                        )
                        if survey.rounds is not None:
                            conn.execute(insert(device_salts_table).values(
                                survey_id=survey.id, salt=secrets.token_hex(SALT_BYTES)
                            ))
                    elif stored != survey.canonical():
                        if _without_settings(stored) != survey.canonical(settings=False):
                            raise Conflict(
                                "id",
                                f"a different survey with id {survey.id!r} is already stored; "
                                "its reports must keep the configuration they were made with, "
                                "so give the new survey another id",
                            )
                        # only its settings (rate limit, cap, results access) changed: take the new ones
                        conn.execute(
                            update(surveys_table)
                            .where(surveys_table.c.id == survey.id)
                            .values(definition=survey.canonical())
                        )
                break
            except IntegrityError:  # another process stored it at the same time
                if attempt:
                    raise
        self._surveys[survey.id] = survey
        return survey

    def _with_start(self, survey: Survey, stored: str | None) -> Survey:
        """A survey with rounds but no ``start``: the stored survey's start, or now for a new survey."""
        if survey.rounds is None or survey.rounds.start is not None:
            return survey
        before = None if stored is None else json.loads(stored).get("rounds")
        if isinstance(before, dict) and before.get("start") is not None:
            start = load_rounds(before).start
            assert start is not None
        else:
            start = self.clock()
        return replace(survey, rounds=survey.rounds.starting(start))

    def survey(self, survey_id: str) -> Survey:
        """The stored survey (cached: definitions never change once stored)."""
        cached = self._surveys.get(survey_id)
        if cached is not None:
            return cached
        if not ID_PATTERN.fullmatch(survey_id):  # not stored (and PostgreSQL refuses NUL in text)
            raise NotFound("id", f"no survey with id {survey_id!r:.80}")
        with self._read() as conn:
            stored = conn.execute(_SELECT_DEFINITION, {"sid": survey_id}).scalar_one_or_none()
        if stored is None:
            raise NotFound("id", f"no survey with id {survey_id!r:.80}")
        survey = load_survey(json.loads(stored))
        self._surveys[survey_id] = survey
        return survey

    def count_refusal(self, survey_id: str, kind: str) -> None:
        """Count a refused post of responses in the survey's current round (:attr:`refusals`), if this
        process has loaded the survey (no database access: no survey to count for otherwise)."""
        survey = self._surveys.get(survey_id)
        if survey is not None:
            self.refusals.add(survey_id, self.current_round(survey) if survey.rounds is not None else None, kind)

    def status(self, survey_id: str) -> str:
        with self._read() as conn:
            return survey_status(conn, survey_id)

    def public(self, survey_id: str) -> dict[str, Any]:
        """The survey as devices fetch it (``GET /surveys/{id}``)."""
        survey = self.survey(survey_id)
        return {
            "id": survey.id,
            "title": survey.title,
            "status": self.status(survey_id),
            "budget": survey.budget,
            "epsilon_total": survey.epsilon_total if math.isfinite(survey.epsilon_total) else None,
            "invite_only": survey.invite_only,
            "allocation": survey.allocation,
            **self._rounds_public(survey),
            **({} if survey.policy.transport.kind == "direct" else {"transport": survey.policy.transport.to_json()}),
            "questions": [q.public_json() for q in survey.questions],
        }

    def _rounds_public(self, survey: Survey) -> dict[str, Any]:
        if survey.rounds is None:
            return {}
        return {"rounds": survey.rounds.to_json(), "current_round": self.current_round(survey)}

    def current_round(self, survey: Survey) -> int | None:
        """The round of a survey with rounds by the server's clock (None before ``rounds.start``)."""
        assert survey.rounds is not None
        current = survey.rounds.round_at(self.clock())
        return current if current >= 0 else None

    def close_survey(self, survey_id: str) -> None:
        """Stop accepting new responses (retries of stored ones are still answered)."""
        self.survey(survey_id)
        with self._write() as conn:
            conn.execute(
                update(surveys_table).where(surveys_table.c.id == survey_id).values(status="closed")
            )

    def create_invites(self, survey_id: str, count: int) -> list[str]:
        """``count`` new single-use invite tokens (only their hashes are stored)."""
        survey = self.survey(survey_id)
        if not survey.invite_only:
            raise Conflict(
                "id", f"survey {survey_id!r} is open to everyone (invite_only: false); "
                "invites would not be checked"
            )
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_BATCH:
            raise Invalid("count", f"must be an integer in 1..{MAX_BATCH}; got {count!r}")
        tokens = [secrets.token_urlsafe(24) for _ in range(count)]
        with self._write() as conn:
            conn.execute(
                insert(invites_table),
                [{"token_hash": token_hash(t), "survey_id": survey_id, "used_by": None} for t in tokens],
            )
        return tokens

    # --------------------------------------------------------------- reports
    def submit(
        self,
        survey_id: str,
        bodies: Sequence[Mapping[str, Any]],
        where: Callable[[int], str] = lambda i: "",
    ) -> SubmitResult:
        """Check and store responses in one transaction (all or nothing).

        Each body is ``{"idempotency_key", "invite_token" (optional), "reports"}``,
        checked by :func:`~deniable.server._submissions.prepare` (:class:`Invalid`
        names the first bad field, ``where(i)`` being the path prefix of body ``i``).
        A key already stored with the same body is a duplicate (answered, not
        stored again); with a different body it is a :class:`Conflict`.
        """
        survey = self.survey(survey_id)
        return self._store(survey, prepare(survey, bodies, where), where, self._write)

    def submit_at_once(
        self,
        survey_id: str,
        bodies: Sequence[Mapping[str, Any]],
        where: Callable[[int], str] = lambda i: "",
    ) -> SubmitResult | None:
        """:meth:`submit`, where it can be done without waiting; else None, and nothing is stored.

        It is done on SQLite at ``synchronous`` NORMAL (a commit does not wait
        for the disk), when no other thread of this process and no other
        process is writing: then a single response is stored on the calling
        thread (the service's event loop), where handing it to a worker thread
        would cost more CPU than storing it. Refusals are raised as by
        :meth:`submit`. On None the caller calls :meth:`submit` (from a worker
        thread), which waits its turn.
        """
        lock = self._sqlite_lock
        if lock is None or not self._at_once or not lock.acquire(blocking=False):
            return None
        try:
            survey = self.survey(survey_id)
            return self._store(survey, prepare(survey, bodies, where), where, self._write_held)
        except _Busy:
            return None
        finally:
            lock.release()

    def _store(
        self, survey: Survey, prepared: Prepared, where: Callable[[int], str],
        write: Callable[[], AbstractContextManager[Connection]],
    ) -> SubmitResult:
        try:  # the common case first: every key is new
            with write() as conn:
                return self._writer.store_new(conn, survey, prepared, where)
        except KeyExists:
            pass  # rolled back; look the keys up
        for attempt in range(3):
            try:
                with write() as conn:
                    return self._writer.store(conn, survey, prepared, where)
            except IntegrityError:
                # the same key was stored concurrently (PostgreSQL); look again
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # --------------------------------------------------------------- results
    def aggregates(self, survey_id: str) -> dict[str, SupportCounts | Tally]:
        """The stored aggregate of every question (its shards merged), by question id.

        Each is decoded through the question's mechanism, which checks that
        it was made by that exact configuration (survey questions are
        frequency questions, so each is a :class:`~deniable.SupportCounts`; design and
        plain questions keep a :class:`~deniable.server._questions.Tally`).
        """
        survey = self.survey(survey_id)
        with self._read() as conn:
            rows = conn.execute(_SELECT_AGGREGATES, {"sid": survey_id}).all()
        merged: dict[str, Any] = {}
        for qid, stat in rows:
            part = read_stat(survey.question(qid), stat)
            merged[qid] = merged[qid] + part if qid in merged else part
        return merged

    def round_aggregates(self, survey_id: str) -> dict[int, dict[str, SupportCounts | Tally]]:
        """Per round (ascending), the aggregate of that round's reports of every question, by question id.

        A question no report of the round answered has its empty aggregate;
        rounds without any response are left out.
        """
        survey = self.survey(survey_id)
        with self._read() as conn:
            rows = conn.execute(_SELECT_ALL_ROUND_AGGREGATES, {"sid": survey_id}).all()
        out: dict[int, dict[str, Any]] = {}
        for round_, qid, stat in rows:
            out.setdefault(int(round_), {})[qid] = read_stat(survey.question(qid), stat)
        for aggregates in out.values():
            for q in survey.questions:
                aggregates.setdefault(q.id, q.empty_aggregate())
        return dict(sorted(out.items()))

    def round_stats(self, survey_id: str, first: int, stop: int) -> dict[int, dict[str, bytes]]:
        """Rounds ``first`` to ``stop - 1`` with responses (ascending): each question's stored aggregate,
        as its bytes (decode with :func:`~deniable.server._database.read_stat`)."""
        self.survey(survey_id)
        ra = round_aggregates_table.c
        with self._read() as conn:
            rows = conn.execute(
                select(ra.round, ra.question_id, ra.stat)
                .where(ra.survey_id == survey_id, ra.round >= first, ra.round < stop)
                .order_by(ra.round)
            ).all()
        out: dict[int, dict[str, bytes]] = {}
        for round_, qid, stat in rows:
            out.setdefault(int(round_), {})[qid] = bytes(stat)
        return out

    def count_rounds(self, survey_id: str) -> int:
        """How many rounds of a survey have responses."""
        ra = round_aggregates_table.c
        with self._read() as conn:
            return int(conn.execute(
                select(func.count(ra.round.distinct())).where(ra.survey_id == survey_id)
            ).scalar_one())

    def device_budgets(self, survey_id: str, shares: Sequence[float] = (0.25, 0.5, 0.75, 1.0)) -> dict[str, Any]:
        """How much of ``lifetime_epsilon`` the devices of a survey with rounds have spent.

        ``devices`` seen; per share ``s`` of ``lifetime_epsilon``, how many
        devices have spent at least ``s`` of it, counted with the memoization
        cap (``spent``, what the server enforces) and without it
        (``spent_fresh``, every report counted); and the largest of each.
        Computed in the database (no device row is read out).
        """
        survey = self.survey(survey_id)
        if survey.rounds is None:
            raise Conflict("id", f"survey {survey_id!r} does not run in rounds")
        lifetime = survey.rounds.lifetime_epsilon
        d = devices_table.c
        columns: list[Any] = [func.count(), func.max(d.spent), func.max(d.spent_fresh)]
        for share in shares:
            floor = share * lifetime * (1 - TOLERANCE)
            columns.append(func.sum(case((d.spent >= floor, 1), else_=0)))
            columns.append(func.sum(case((d.spent_fresh >= floor, 1), else_=0)))
        with self._read() as conn:
            row = conn.execute(select(*columns).where(d.survey_id == survey_id)).one()
        devices = int(row[0])
        return {
            "devices": devices,
            "lifetime_epsilon": lifetime,
            "max_spent": float(row[1] or 0.0),
            "max_spent_fresh": float(row[2] or 0.0),
            "at_least": [
                {"share": share, "devices": int(row[3 + 2 * k] or 0), "devices_fresh": int(row[4 + 2 * k] or 0)}
                for k, share in enumerate(shares)
            ],
        }

    def iter_responses(self, survey_id: str, chunk: int = 10_000) -> Iterator[list[tuple[int, str]]]:
        """Stored responses in chunks of ``(row, reports JSON text)``, in row order.

        ``row`` is the database's sequential row id (not the receipt a device
        gets, which is a hash of the survey and the idempotency key).
        """
        self.survey(survey_id)
        r = responses_table.c
        last = -1
        while True:
            with self._read() as conn:
                rows = conn.execute(
                    select(r.id, r.reports)
                    .where(r.survey_id == survey_id, r.id > last)
                    .order_by(r.id)
                    .limit(chunk)
                ).all()
            if not rows:
                return
            yield [(int(rid), text) for rid, text in rows]
            last = int(rows[-1][0])

    def newest_response_id(self) -> int:
        """The row id of the newest stored response (0 if none): a mark for :meth:`responses_since`."""
        with self._read() as conn:
            return int(conn.execute(select(func.max(responses_table.c.id))).scalar_one() or 0)

    def responses_since(self, mark: int) -> dict[str, int]:
        """The responses stored after the row ``mark``, counted by survey (a range of the primary key only)."""
        r = responses_table.c
        with self._read() as conn:
            rows = conn.execute(select(r.survey_id, func.count()).where(r.id > mark).group_by(r.survey_id))
            return {str(sid): int(n) for sid, n in rows}

    def add_shuffled_batch(self, survey_id: str, size: int, round_index: int | None = None) -> None:
        """Record that a shuffled batch stored ``size`` new responses of the survey (no time is kept);
        ``round_index``: the round of a survey with rounds it was served in (None if it spanned two)."""
        with self._write() as conn:
            conn.execute(insert(shuffled_batches_table).values(survey_id=survey_id, size=size, round=round_index))

    def round_batches(self, survey_id: str, first: int, stop: int) -> dict[int, list[int]]:
        """The sizes of the shuffled batches of rounds ``first`` to ``stop - 1`` of a survey with rounds, by round."""
        b = shuffled_batches_table.c
        out: dict[int, list[int]] = {}
        with self._read() as conn:
            rows = conn.execute(select(b.round, b.size).where(
                b.survey_id == survey_id, b.round >= first, b.round < stop).order_by(b.id))
            for index, size in rows:
                out.setdefault(int(index), []).append(int(size))
        return out

    def shuffled_batches(self, survey_id: str) -> list[int]:
        """The sizes of the survey's shuffled batches, in the order they came."""
        b = shuffled_batches_table.c
        with self._read() as conn:
            sizes = conn.execute(select(b.size).where(b.survey_id == survey_id).order_by(b.id)).scalars()
            return [int(n) for n in sizes]

    def count_responses(self, survey_id: str) -> int:
        """Number of stored response rows (scans them; results use the aggregates instead)."""
        r = responses_table.c
        with self._read() as conn:
            return int(
                conn.execute(select(func.count()).where(r.survey_id == survey_id)).scalar_one()
            )
