"""Storage of surveys, privatized reports and their mergeable aggregates.

Every write is one transaction: a request is either stored entirely or not at
all, and the server answers 2xx only after the commit returned. Each
question's aggregate (:mod:`deniable.aggregates`, decoded through the
question's mechanism) is updated in the same transaction as the reports it
counts, so results read the aggregates, never the reports. The tables and the
engine settings (SQLite WAL and durability, PostgreSQL) are in
:mod:`deniable.server.database`; requests are checked by
:mod:`deniable.server.submissions` before anything is written.

Idempotency rests on the unique ``(survey_id, idempotency_key)`` constraint:
a request is first inserted with ``ON CONFLICT DO NOTHING``; if any key was
already there, that transaction is rolled back and the keys are looked up, so
that a retry with the same body is answered as a duplicate and another body
is a conflict. PostgreSQL writers lock the aggregate rows of one of
:data:`AGGREGATE_SHARDS` shards (``SELECT ... FOR UPDATE``, always in
question-id order, so writers cannot deadlock). Writers to a survey with
``max_responses`` lock all its aggregate rows (in shard, question-id order)
and count its responses in the same transaction, so the cap holds under
concurrent writers.
"""

from __future__ import annotations

import json
import math
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from deniable.aggregates import SupportCounts
from deniable.server.database import (
    READ_ONLY,
    aggregates_table,
    invites_table,
    make_engine,
    normalize_url,
    responses_table,
    surveys_table,
)
from deniable.server.errors import Conflict, Forbidden, Invalid, NotFound, StorageError
from deniable.server.policy import POLICY_FIELDS
from deniable.server.questions import Tally
from deniable.server.schema import upgrade
from deniable.server.submissions import Prepared, prepare, token_hash
from deniable.server.surveys import ID_PATTERN, Survey, load_survey
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

_IN_CHUNK = MAX_BATCH  # keys per IN (...) query (SQLite >= 3.32 allows 32766 parameters)
AGGREGATE_SHARDS = 16
"""Aggregate rows per question on PostgreSQL (one on SQLite, which has one writer anyway)."""

# statements built once (per-request construction costs more than executing them)
_s, _r, _a, _i = surveys_table.c, responses_table.c, aggregates_table.c, invites_table.c
_SELECT_STATUS = select(_s.status).where(_s.id == bindparam("sid"))
_SELECT_DEFINITION = select(_s.definition).where(_s.id == bindparam("sid"))
_SELECT_EXISTING = select(_r.idempotency_key, _r.body_hash).where(
    _r.survey_id == bindparam("sid"), _r.idempotency_key.in_(bindparam("keys", expanding=True))
)
_SELECT_AGGREGATES = select(_a.question_id, _a.stat).where(_a.survey_id == bindparam("sid"))
_LOCK_AGGREGATES = (  # (SQLite ignores FOR UPDATE; BEGIN IMMEDIATE has locked the database)
    select(_a.question_id, _a.stat)
    .where(_a.survey_id == bindparam("sid"), _a.shard == bindparam("part"))
    .order_by(_a.question_id)  # one lock order for every writer
    .with_for_update()
)
_LOCK_ALL_AGGREGATES = (
    select(_a.shard, _a.question_id, _a.stat)
    .where(_a.survey_id == bindparam("sid"))
    .order_by(_a.shard, _a.question_id)
    .with_for_update()
)
_COUNT_RESPONSES = select(func.count()).where(_r.survey_id == bindparam("sid"))
_UPDATE_AGGREGATE = (
    update(aggregates_table)
    .where(
        _a.survey_id == bindparam("sid"),
        _a.question_id == bindparam("qid"),
        _a.shard == bindparam("part"),
    )
    .values(stat=bindparam("new_stat"))
)
_SELECT_INVITES = (
    select(_i.token_hash, _i.used_by)
    .where(_i.survey_id == bindparam("sid"), _i.token_hash.in_(bindparam("hashes", expanding=True)))
    .with_for_update()
)
_UPDATE_INVITE = (
    update(invites_table).where(_i.token_hash == bindparam("h")).values(used_by=bindparam("k"))
)


def _without_settings(definition: str) -> str:
    """A stored canonical definition without its settings (:data:`~deniable.server.policy.POLICY_FIELDS`)."""
    data = {k: v for k, v in json.loads(definition).items() if k not in POLICY_FIELDS}
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


class _KeyExists(Exception):
    """Internal: a key of the request is already stored (take the look-up path)."""


@dataclass(frozen=True)
class SubmitResult:
    """Outcome of a stored request: how many responses are new and how many already stored."""

    accepted: int
    duplicates: int


# ------------------------------------------------------------------- storage
class Storage:
    """Surveys, privatized reports and aggregates in SQLite or PostgreSQL.

    >>> storage = Storage("sqlite:///deniable.db")            # doctest: +SKIP
    >>> storage.aggregates("honor-code")["violated"].counts    # doctest: +SKIP

    ``sqlite_synchronous`` is SQLite's ``PRAGMA synchronous`` (``"NORMAL"``,
    the default, in WAL mode: a commit survives a killed process but the last
    commits may be lost on power loss; ``"FULL"``: a commit survives a power cut).
    """

    def __init__(self, db_url: str, *, sqlite_synchronous: str = "NORMAL") -> None:
        self.engine = make_engine(db_url, sqlite_synchronous)
        self.dialect = self.engine.dialect.name
        # PostgreSQL: writers lock one of several aggregate rows per question (results merge
        # them), so concurrent transactions do not queue on one row lock through each commit
        self.shards = 1 if self.dialect == "sqlite" else AGGREGATE_SHARDS
        mark = "?" if self.engine.dialect.paramstyle == "qmark" else "%s"
        self._insert_many_sql = (
            f"INSERT INTO {responses_table.name} (survey_id, idempotency_key, body_hash, reports) "
            f"VALUES ({', '.join([mark] * 4)})"
        )
        self._insert_new_sql = (
            f"{self._insert_many_sql} ON CONFLICT (survey_id, idempotency_key) DO NOTHING"
        )
        self._write_lock: AbstractContextManager[Any] = (
            threading.Lock() if self.dialect == "sqlite" else nullcontext()
        )
        upgrade(self.engine)  # create or migrate the schema (deniable.server.schema)
        self._surveys: dict[str, Survey] = {}

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        # SQLite has one writer at a time; queueing this process's threads on a lock hands
        # the database over at once, where SQLite's busy handler would sleep and poll
        with self._write_lock, self.engine.begin() as conn:
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
                                    "stat": json.dumps(q.empty_aggregate().to_json()),
                                }
                                for q in survey.questions
                                for shard in range(self.shards)
                            ],
                        )
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
                            update(surveys_table).where(_s.id == survey.id).values(definition=survey.canonical())
                        )
                break
            except IntegrityError:  # another process stored it at the same time
                if attempt:
                    raise
        self._surveys[survey.id] = survey
        return survey

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

    def status(self, survey_id: str) -> str:
        with self._read() as conn:
            return self._status(conn, survey_id)

    def _status(self, conn: Connection, survey_id: str) -> str:
        status = conn.execute(_SELECT_STATUS, {"sid": survey_id}).scalar_one_or_none()
        if status is None:
            raise NotFound("id", f"no survey with id {survey_id!r:.80}")
        return str(status)

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
            "questions": [q.public_json() for q in survey.questions],
        }

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
        checked by :func:`~deniable.server.submissions.prepare` (:class:`Invalid`
        names the first bad field, ``where(i)`` being the path prefix of body ``i``).
        A key already stored with the same body is a duplicate (answered, not
        stored again); with a different body it is a :class:`Conflict`.
        """
        survey = self.survey(survey_id)
        prepared = prepare(survey, bodies, where)
        try:  # the common case first: every key is new
            with self._write() as conn:
                return self._store_new(conn, survey, prepared)
        except _KeyExists:
            pass  # rolled back; look the keys up
        for attempt in range(3):
            try:
                with self._write() as conn:
                    return self._store(conn, survey, prepared, where)
            except IntegrityError:
                # the same key was stored concurrently (PostgreSQL); look again
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _store_new(self, conn: Connection, survey: Survey, p: Prepared) -> SubmitResult:
        """Store a request whose keys are all new, without looking them up first.

        ``INSERT ... ON CONFLICT DO NOTHING`` inserts every row or reveals (by
        its row count) that some key exists; then :class:`_KeyExists` rolls the
        transaction back and :meth:`_store` handles replays and conflicts.
        Invite-only surveys, closed surveys and keys repeated within the
        request always take that path.
        """
        if survey.invite_only or len(set(p.keys)) != len(p.keys):
            raise _KeyExists
        if self._status(conn, survey.id) != "open":
            raise _KeyExists
        everything = list(range(len(p.keys)))
        if self._insert(conn, survey, p, everything, self._insert_new_sql) != len(everything):
            raise _KeyExists
        self._merge_aggregates(conn, survey, p, everything)
        return SubmitResult(len(everything), 0)

    def _insert(
        self, conn: Connection, survey: Survey, p: Prepared, indices: list[int], sql: str
    ) -> int:
        """Insert the responses ``indices``; the number of rows inserted.

        Straight through the driver: SQLAlchemy's per-row parameter processing
        would cost more than the insert itself.
        """
        rows = [(survey.id, p.keys[i], p.hashes[i], p.texts[i]) for i in indices]
        return conn.exec_driver_sql(sql, rows[0] if len(rows) == 1 else rows).rowcount

    def _existing(self, conn: Connection, survey_id: str, keys: list[str]) -> dict[str, str]:
        """The body hash of every key of ``keys`` already stored for the survey."""
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _IN_CHUNK):
            rows = conn.execute(
                _SELECT_EXISTING, {"sid": survey_id, "keys": unique[start : start + _IN_CHUNK]}
            )
            found.update({key: body_hash for key, body_hash in rows})
        return found

    def _store(
        self, conn: Connection, survey: Survey, p: Prepared, where: Callable[[int], str]
    ) -> SubmitResult:
        status = self._status(conn, survey.id)
        existing = self._existing(conn, survey.id, p.keys)
        new: list[int] = []
        first: dict[str, int] = {}
        for i, key in enumerate(p.keys):
            if key in existing:
                if existing[key] != p.hashes[i]:
                    raise Conflict(
                        f"{where(i)}idempotency_key",
                        "was already used for a different response; a retry must resend the "
                        "identical body, a new response needs a new key",
                    )
            elif key in first:
                if p.hashes[first[key]] != p.hashes[i]:
                    raise Conflict(
                        f"{where(i)}idempotency_key",
                        f"repeats the key of response {first[key]} with a different body",
                    )
            else:
                first[key] = i
                new.append(i)
        duplicates = len(p.keys) - len(new)
        if not new:
            return SubmitResult(0, duplicates)
        if status != "open":
            raise Conflict("id", f"survey {survey.id!r} is closed; it accepts no new responses")
        if survey.invite_only:
            self._claim_invites(conn, survey.id, p, new, where)
        self._insert(conn, survey, p, new, self._insert_many_sql)
        self._merge_aggregates(conn, survey, p, new)
        return SubmitResult(len(new), duplicates)

    def _claim_invites(
        self, conn: Connection, survey_id: str, p: Prepared, new: list[int],
        where: Callable[[int], str],
    ) -> None:
        owner: dict[str, int] = {}
        for i in new:
            token = p.tokens[i]
            if token is None:
                raise Forbidden(
                    f"{where(i)}invite_token",
                    f"survey {survey_id!r} is invite-only: send an unused invite token",
                )
            if token in owner:
                raise Forbidden(
                    f"{where(i)}invite_token", f"is also used by response {owner[token]} of this batch"
                )
            owner[token] = i
        hashes = list(owner)
        state: dict[str, str | None] = {}
        for start in range(0, len(hashes), _IN_CHUNK):
            rows = conn.execute(
                _SELECT_INVITES, {"sid": survey_id, "hashes": hashes[start : start + _IN_CHUNK]}
            )
            state.update({h: used for h, used in rows})
        for token, i in owner.items():
            if token not in state:
                raise Forbidden(f"{where(i)}invite_token", f"is not an invite of survey {survey_id!r}")
            if state[token] is not None:
                raise Forbidden(f"{where(i)}invite_token", "was already used; each invite is single-use")
        conn.execute(_UPDATE_INVITE, [{"h": p.tokens[i], "k": p.keys[i]} for i in new])

    def _merge_aggregates(
        self, conn: Connection, survey: Survey, p: Prepared, new: list[int]
    ) -> None:
        """Add the responses ``new`` to one shard of every question's stored aggregate.

        A survey with ``max_responses`` locks all its aggregate rows first, so
        its writers take turns, and counts the stored responses (this
        request's included, the rows being inserted already): over the cap,
        :class:`Conflict` rolls the whole request back.
        """
        everything = len(new) == len(p.keys)
        cap = survey.policy.max_responses
        stored: list[tuple[str, str]]
        if cap is None:
            shard = secrets.randbelow(self.shards)
            stored = [(qid, stat) for qid, stat in conn.execute(_LOCK_AGGREGATES, {"sid": survey.id, "part": shard})]
        else:
            shard = 0
            every = conn.execute(_LOCK_ALL_AGGREGATES, {"sid": survey.id}).all()
            count = conn.execute(_COUNT_RESPONSES, {"sid": survey.id}).scalar_one()
            if count > cap:
                before = count - len(new)
                raise Conflict(
                    "id",
                    f"survey {survey.id!r} accepts at most {cap} responses (max_responses) and has "
                    f"{before}; " + ("it accepts no new responses" if before >= cap else
                                     f"this request's {len(new)} new responses would exceed it by {count - cap}"),
                )
            stored = [(qid, stat) for part, qid, stat in every if part == shard]
        updates = []
        for qid, stat in stored:
            q = survey.question(qid)
            rows = p.rows(qid, None if everything else new)
            if len(p.reports[qid]) == 0 or rows == []:
                continue  # a sampled survey's question that no new response answered
            merged = q.aggregate_from_json(json.loads(stat)) + q.aggregate(p.reports, rows)
            updates.append(
                {"sid": survey.id, "qid": qid, "part": shard, "new_stat": json.dumps(merged.to_json())}
            )
        if updates:
            conn.execute(_UPDATE_AGGREGATE, updates)

    # --------------------------------------------------------------- results
    def aggregates(self, survey_id: str) -> dict[str, SupportCounts | Tally]:
        """The stored aggregate of every question (its shards merged), by question id.

        Each is decoded through the question's mechanism, which checks that
        it was made by that exact configuration (survey questions are
        frequency questions, so each is a :class:`~deniable.SupportCounts`; design and
        plain questions keep a :class:`~deniable.server.questions.Tally`).
        """
        survey = self.survey(survey_id)
        with self._read() as conn:
            rows = conn.execute(_SELECT_AGGREGATES, {"sid": survey_id}).all()
        merged: dict[str, Any] = {}
        for qid, stat in rows:
            part = survey.question(qid).aggregate_from_json(json.loads(stat))
            merged[qid] = merged[qid] + part if qid in merged else part
        return merged

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

    def count_responses(self, survey_id: str) -> int:
        """Number of stored response rows (scans them; results use the aggregates instead)."""
        r = responses_table.c
        with self._read() as conn:
            return int(
                conn.execute(select(func.count()).where(r.survey_id == survey_id)).scalar_one()
            )
