"""Writing one checked request in its transaction: responses, invites, aggregates.

Idempotency rests on the unique ``(survey_id, idempotency_key)`` constraint:
a request is first inserted with ``ON CONFLICT DO NOTHING``
(:meth:`Writer.store_new`); if any key was already there, that transaction is
rolled back (:class:`KeyExists`) and the keys are looked up
(:meth:`Writer.store`), so that a retry with the same body is answered as a
duplicate and another body is a conflict. PostgreSQL writers lock the
aggregate rows of one of :data:`AGGREGATE_SHARDS` shards (``SELECT ... FOR
UPDATE``, always in question-id order, so writers cannot deadlock). Writers
to a survey with ``max_responses`` or rounds lock all its aggregate rows (in
shard, question-id order) and count its responses in the same transaction,
so the cap holds under concurrent writers; the devices of a survey with
rounds are charged then (:mod:`deniable.server._devices`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Dialect, bindparam, func, select, update
from sqlalchemy.sql import ClauseElement

from deniable.server._database import (
    aggregates_table,
    driver_cursor,
    invites_table,
    read_stat,
    responses_table,
    stat_bytes,
    surveys_table,
)
from deniable.server._devices import DeviceBook
from deniable.server._errors import Conflict, Forbidden, NotFound
from deniable.server._submissions import Prepared
from deniable.server._surveys import Survey
from deniable.wire import MAX_BATCH

__all__ = ["Writer", "KeyExists", "SubmitResult", "AGGREGATE_SHARDS", "survey_status"]

AGGREGATE_SHARDS = 16
"""Aggregate rows per question on PostgreSQL (one on SQLite, which has one writer anyway)."""

_IN_CHUNK = MAX_BATCH  # keys per IN (...) query (SQLite >= 3.32 allows 32766 parameters)

# statements built once (per-request construction costs more than executing them)
_s, _r, _a, _i = surveys_table.c, responses_table.c, aggregates_table.c, invites_table.c
_SELECT_STATUS = select(_s.status).where(_s.id == bindparam("sid"))
_SELECT_EXISTING = select(_r.idempotency_key, _r.body_hash).where(
    _r.survey_id == bindparam("sid"), _r.idempotency_key.in_(bindparam("keys", expanding=True))
)
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


class DriverStatement:
    """A statement compiled once for one database's driver, run on the transaction's own cursor.

    One request runs a handful of statements; SQLAlchemy's execution of a
    prepared construct (compiled-cache lookup, events, result wrapping)
    costs about 40 us each, the driver's own ``execute`` 5 us. The statement
    is rendered by SQLAlchemy for ``dialect`` (``FOR UPDATE`` only where the
    database has it) and its named parameters put in the driver's order.
    """

    def __init__(self, statement: ClauseElement, dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = str(compiled)
        # the parameters' order for the positional styles (SQLite's ?); None for psycopg's %(name)s
        self._order: list[str] | None = getattr(compiled, "positiontup", None)

    def _values(self, params: dict[str, Any]) -> Any:
        return params if self._order is None else tuple(params[name] for name in self._order)

    def rows(self, conn: Connection, params: dict[str, Any]) -> list[Any]:
        """Every row of the statement with ``params``."""
        with driver_cursor(conn, self.sql) as cursor:
            cursor.execute(self.sql, self._values(params))
            return list(cursor.fetchall())

    def many(self, conn: Connection, params: list[dict[str, Any]]) -> None:
        """Run the statement once per parameter set of ``params``."""
        with driver_cursor(conn, self.sql) as cursor:
            cursor.executemany(self.sql, [self._values(p) for p in params])


class KeyExists(Exception):
    """A key of the request is already stored: roll back and take :meth:`Writer.store`."""


@dataclass(frozen=True)
class SubmitResult:
    """Outcome of a stored request: how many responses are new and how many already stored."""

    accepted: int
    duplicates: int


def survey_status(conn: Connection, survey_id: str) -> str:
    """``"open"`` or ``"closed"``; :class:`~deniable.server._errors.NotFound` if no such survey."""
    status = conn.execute(_SELECT_STATUS, {"sid": survey_id}).scalar_one_or_none()
    if status is None:
        raise NotFound("id", f"no survey with id {survey_id!r:.80}")
    return str(status)


class Writer:
    """The writes of one database; ``mark`` is its driver's parameter mark (``?`` or ``%s``).

    ``shards`` aggregate rows per question; ``clock`` decides the round of a
    survey with rounds.
    """

    def __init__(self, mark: str, shards: int, clock: Callable[[], float], dialect: Dialect) -> None:
        self.shards = shards
        self._status = DriverStatement(_SELECT_STATUS, dialect)
        self._lock_shard = DriverStatement(_LOCK_AGGREGATES, dialect)
        self._update_aggregate = DriverStatement(_UPDATE_AGGREGATE, dialect)
        self.devices = DeviceBook(mark, clock)
        self._insert_many_sql = (
            f"INSERT INTO {responses_table.name} (survey_id, idempotency_key, body_hash, reports) "
            f"VALUES ({', '.join([mark] * 4)})"
        )
        self._insert_new_sql = f"{self._insert_many_sql} ON CONFLICT (survey_id, idempotency_key) DO NOTHING"

    def store_new(
        self, conn: Connection, survey: Survey, p: Prepared, where: Callable[[int], str]
    ) -> SubmitResult:
        """Store a request whose keys are all new, without looking them up first.

        ``INSERT ... ON CONFLICT DO NOTHING`` inserts every row or reveals (by
        its row count) that some key exists; then :class:`KeyExists` rolls the
        transaction back and :meth:`store` handles replays and conflicts.
        Invite-only surveys, closed surveys and keys repeated within the
        request always take that path.
        """
        if survey.invite_only or len(set(p.keys)) != len(p.keys):
            raise KeyExists
        if self._status.rows(conn, {"sid": survey.id}) != [("open",)]:  # closed (or gone: store says which)
            raise KeyExists
        everything = list(range(len(p.keys)))
        if self._insert(conn, survey, p, everything, self._insert_new_sql) != len(everything):
            raise KeyExists
        self._merge_aggregates(conn, survey, p, everything, where)
        return SubmitResult(len(everything), 0)

    def _insert(
        self, conn: Connection, survey: Survey, p: Prepared, indices: list[int], sql: str
    ) -> int:
        """Insert the responses ``indices``; the number of rows inserted.

        Straight through the driver's cursor: SQLAlchemy's per-row parameter
        processing would cost more than the insert itself.
        """
        rows = [(survey.id, p.keys[i], p.hashes[i], p.texts[i]) for i in indices]
        with driver_cursor(conn, sql) as cursor:
            if len(rows) == 1:
                cursor.execute(sql, rows[0])
            else:
                cursor.executemany(sql, rows)
            return int(cursor.rowcount)

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

    def store(
        self, conn: Connection, survey: Survey, p: Prepared, where: Callable[[int], str]
    ) -> SubmitResult:
        status = survey_status(conn, survey.id)
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
        self._merge_aggregates(conn, survey, p, new, where)
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
        self, conn: Connection, survey: Survey, p: Prepared, new: list[int], where: Callable[[int], str]
    ) -> None:
        """Add the responses ``new`` to one shard of every question's stored aggregate.

        A survey with ``max_responses`` or ``rounds`` locks all its aggregate
        rows first, so its writers take turns; then it counts the stored
        responses (this request's included, the rows being inserted already):
        over the cap, :class:`Conflict` rolls the whole request back; and
        charges the devices of a survey with rounds (:meth:`DeviceBook.charge`).
        """
        everything = len(new) == len(p.keys)
        cap = survey.policy.max_responses
        stored: list[tuple[str, bytes]]
        if cap is None and survey.rounds is None:
            shard = secrets.randbelow(self.shards)
            stored = [(qid, stat) for qid, stat in self._lock_shard.rows(conn, {"sid": survey.id, "part": shard})]
        else:
            shard = 0
            every = conn.execute(_LOCK_ALL_AGGREGATES, {"sid": survey.id}).all()
            count = conn.execute(_COUNT_RESPONSES, {"sid": survey.id}).scalar_one() if cap is not None else 0
            if cap is not None and count > cap:
                before = count - len(new)
                raise Conflict(
                    "id",
                    f"survey {survey.id!r} accepts at most {cap} responses (max_responses) and has "
                    f"{before}; " + ("it accepts no new responses" if before >= cap else
                                     f"this request's {len(new)} new responses would exceed it by {count - cap}"),
                )
            stored = [(qid, stat) for part, qid, stat in every if part == shard]
        added: dict[str, Any] = {}  # per question, the aggregate of the new responses that answered it
        for q in survey.questions:
            rows = p.rows(q.id, None if everything else new)
            if len(p.reports[q.id]) and rows != []:  # (a sampled survey's question may have none)
                added[q.id] = q.aggregate(p.reports, rows)
        if survey.rounds is not None:
            self.devices.charge(conn, survey, p, new, where, added)
        updates = []
        for qid, stat in stored:
            if qid in added:
                merged = read_stat(survey.question(qid), stat) + added[qid]
                updates.append({"sid": survey.id, "qid": qid, "part": shard, "new_stat": stat_bytes(merged)})
        if updates:
            self._update_aggregate.many(conn, updates)
