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
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, bindparam, case, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from deniable.accounting import TOLERANCE, spent, spent_fresh
from deniable.aggregates import SupportCounts
from deniable.server.database import (
    READ_ONLY,
    aggregates_table,
    device_salts_table,
    devices_table,
    invites_table,
    make_engine,
    normalize_url,
    responses_table,
    round_aggregates_table,
    surveys_table,
)
from deniable.server.errors import Conflict, Forbidden, Invalid, NotFound, StorageError
from deniable.server.policy import POLICY_FIELDS
from deniable.server.questions import Tally
from deniable.server.rounds import SALT_BYTES, device_hash, iso_utc, load_rounds
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
_d, _ra = devices_table.c, round_aggregates_table.c
_SELECT_SALT = select(device_salts_table.c.salt).where(device_salts_table.c.survey_id == bindparam("sid"))
_SELECT_ROUND_AGGREGATES = select(_ra.question_id, _ra.stat).where(
    _ra.survey_id == bindparam("sid"), _ra.round == bindparam("round")
)
_SELECT_ALL_ROUND_AGGREGATES = (
    select(_ra.round, _ra.question_id, _ra.stat).where(_ra.survey_id == bindparam("sid")).order_by(_ra.round)
)
_UPDATE_ROUND_AGGREGATE = (
    update(round_aggregates_table)
    .where(_ra.survey_id == bindparam("sid"), _ra.round == bindparam("rnd"), _ra.question_id == bindparam("qid"))
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
        self._insert_many_sql = (
            f"INSERT INTO {responses_table.name} (survey_id, idempotency_key, body_hash, reports) "
            f"VALUES ({', '.join([mark] * 4)})"
        )
        self._insert_new_sql = (
            f"{self._insert_many_sql} ON CONFLICT (survey_id, idempotency_key) DO NOTHING"
        )
        self._mark = mark
        self._select_devices_sql = (
            f"SELECT device, last_round, reports, spent FROM {devices_table.name} "
            f"WHERE survey_id = {mark} AND device IN "
        )
        self._insert_device_sql = (
            f"INSERT INTO {devices_table.name} (survey_id, device, last_round, reports, spent, spent_fresh) "
            f"VALUES ({', '.join([mark] * 6)})"
        )
        self._update_device_sql = (
            f"UPDATE {devices_table.name} SET last_round = {mark}, reports = {mark}, spent = {mark}, "
            f"spent_fresh = {mark} WHERE survey_id = {mark} AND device = {mark}"
        )
        self._write_lock: AbstractContextManager[Any] = (
            threading.Lock() if self.dialect == "sqlite" else nullcontext()
        )
        upgrade(self.engine)  # create or migrate the schema (deniable.server.schema)
        self._surveys: dict[str, Survey] = {}
        self._salts: dict[str, bytes] = {}

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
                                    "stat": json.dumps(q.empty_aggregate().to_json()),
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
                            update(surveys_table).where(_s.id == survey.id).values(definition=survey.canonical())
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
            **self._rounds_public(survey),
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
        checked by :func:`~deniable.server.submissions.prepare` (:class:`Invalid`
        names the first bad field, ``where(i)`` being the path prefix of body ``i``).
        A key already stored with the same body is a duplicate (answered, not
        stored again); with a different body it is a :class:`Conflict`.
        """
        survey = self.survey(survey_id)
        prepared = prepare(survey, bodies, where)
        try:  # the common case first: every key is new
            with self._write() as conn:
                return self._store_new(conn, survey, prepared, where)
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

    def _store_new(
        self, conn: Connection, survey: Survey, p: Prepared, where: Callable[[int], str]
    ) -> SubmitResult:
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
        self._merge_aggregates(conn, survey, p, everything, where)
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
        accounts the devices of a survey with rounds (:meth:`_account_rounds`).
        """
        everything = len(new) == len(p.keys)
        cap = survey.policy.max_responses
        stored: list[tuple[str, str]]
        if cap is None and survey.rounds is None:
            shard = secrets.randbelow(self.shards)
            stored = [(qid, stat) for qid, stat in conn.execute(_LOCK_AGGREGATES, {"sid": survey.id, "part": shard})]
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
            self._account_rounds(conn, survey, p, new, where, added)
        updates = []
        for qid, stat in stored:
            if qid in added:
                merged = survey.question(qid).aggregate_from_json(json.loads(stat)) + added[qid]
                updates.append({"sid": survey.id, "qid": qid, "part": shard, "new_stat": json.dumps(merged.to_json())})
        if updates:
            conn.execute(_UPDATE_AGGREGATE, updates)

    def _salt(self, conn: Connection, survey_id: str) -> bytes:
        salt = self._salts.get(survey_id)
        if salt is None:
            text = conn.execute(_SELECT_SALT, {"sid": survey_id}).scalar_one()
            salt = self._salts[survey_id] = bytes.fromhex(text)
        return salt

    def _account_rounds(
        self, conn: Connection, survey: Survey, p: Prepared, new: list[int], where: Callable[[int], str],
        added: Mapping[str, Any],
    ) -> None:
        """Count the responses ``new`` against their devices; add them to this round's aggregates.

        Called with the survey's writers locked out. Refuses (the whole
        request rolls back) a device that already answered this round or a
        later one (:class:`Conflict`), and a report that would take a device's
        spent epsilon (:func:`deniable.accounting.spent`) over the survey's
        ``lifetime_epsilon`` (:class:`Forbidden`).
        """
        rounds = survey.rounds
        assert rounds is not None and p.devices is not None
        current = rounds.round_at(self.clock())
        if current < 0:
            raise Conflict(
                "id", f"survey {survey.id!r} runs in rounds from {iso_utc(rounds.start or 0)} (rounds.start); "
                "it accepts responses from then on"
            )
        salt = self._salt(conn, survey.id)
        hashes = {i: device_hash(salt, p.devices[i]) for i in new}
        # device: last round, reports per question (canonical JSON text and parsed), spent
        known: dict[str, tuple[int, str, dict[str, int], float]] = {}
        parsed: dict[str, dict[str, int]] = {}  # devices share few distinct counts: parse each once
        unique = list(dict.fromkeys(hashes.values()))
        for start in range(0, len(unique), _IN_CHUNK):
            chunk = unique[start : start + _IN_CHUNK]
            sql = self._select_devices_sql + f"({', '.join([self._mark] * len(chunk))})"
            for device, last, text, eps in conn.exec_driver_sql(sql, (survey.id, *chunk)).fetchall():
                counts = parsed.get(text)
                if counts is None:
                    counts = parsed[text] = json.loads(text)
                known[device] = (last, text, counts, eps)
        stored = set(known)
        every_question = [q.id for q in survey.questions]
        answered: dict[int, list[str]] = {i: every_question for i in new}
        if p.answered is not None:  # allocation: sample, one question each
            answered = {i: [] for i in new}
            for qid, mine in p.answered.items():
                for i in mine:
                    if i in answered:
                        answered[i].append(qid)
        lifetime = rounds.lifetime_epsilon
        ends = iso_utc((rounds.start or 0) + (current + 1) * rounds.every)
        encode = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
        # devices share few distinct (reports so far, questions answered): compute each step once
        steps: dict[tuple[str, tuple[str, ...]], tuple[str, dict[str, int], float, float]] = {}
        for i in new:
            device = hashes[i]
            last, text, counts, before = known.get(device, (-1, "{}", {}, 0.0))
            if last >= current:
                raise Conflict(
                    f"{where(i)}device",
                    f"this device already answered round {last} of survey {survey.id!r}; a device answers "
                    f"once per round (this is round {current}, the next starts at {ends})",
                )
            step = (text, tuple(answered[i]))
            if step not in steps:
                after_counts = dict(counts)
                for qid in answered[i]:
                    after_counts[qid] = after_counts.get(qid, 0) + 1
                steps[step] = (encode(after_counts), after_counts, spent(survey.costs, after_counts),
                               spent_fresh(survey.costs, after_counts))
            after_text, after_counts, after, _ = steps[step]
            if after > lifetime * (1 + TOLERANCE):
                raise Forbidden(
                    f"{where(i)}device",
                    f"this report would take the device over the lifetime budget of survey {survey.id!r}: "
                    f"lifetime_epsilon is {lifetime:.6g} and this device has spent {before:.6g}; this "
                    f"round's report would cost {after - before:.6g} more ({after:.6g} in all)",
                )
            known[device] = (current, after_text, after_counts, after)
        fresh = {after_text: eps_fresh for after_text, _, _, eps_fresh in steps.values()}
        # straight through the driver, as the responses are (no per-row parameter processing)
        inserts, updates = [], []
        for device in dict.fromkeys(hashes.values()):
            last, text, _, eps = known[device]
            values = (last, text, eps, fresh[text])
            if device in stored:
                updates.append((*values, survey.id, device))
            else:
                inserts.append((survey.id, device, *values))
        if inserts:
            conn.exec_driver_sql(self._insert_device_sql, inserts)
        if updates:
            conn.exec_driver_sql(self._update_device_sql, updates)
        this_round = {
            qid: stat for qid, stat in conn.execute(_SELECT_ROUND_AGGREGATES, {"sid": survey.id, "round": current})
        }
        round_inserts, round_updates = [], []
        for qid, part in added.items():
            q = survey.question(qid)
            if qid in this_round:
                merged = q.aggregate_from_json(json.loads(this_round[qid])) + part
                round_updates.append({"sid": survey.id, "rnd": current, "qid": qid,
                                      "new_stat": json.dumps(merged.to_json())})
            else:
                round_inserts.append({"survey_id": survey.id, "round": current, "question_id": qid,
                                      "stat": json.dumps(part.to_json())})
        if round_inserts:
            conn.execute(insert(round_aggregates_table), round_inserts)
        if round_updates:
            conn.execute(_UPDATE_ROUND_AGGREGATE, round_updates)

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
            out.setdefault(int(round_), {})[qid] = survey.question(qid).aggregate_from_json(json.loads(stat))
        for aggregates in out.values():
            for q in survey.questions:
                aggregates.setdefault(q.id, q.empty_aggregate())
        return dict(sorted(out.items()))

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

    def count_responses(self, survey_id: str) -> int:
        """Number of stored response rows (scans them; results use the aggregates instead)."""
        r = responses_table.c
        with self._read() as conn:
            return int(
                conn.execute(select(func.count()).where(r.survey_id == survey_id)).scalar_one()
            )
