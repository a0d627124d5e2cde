"""Storage of surveys, privatized reports and their mergeable aggregates (SQLAlchemy 2 Core).

Tables
------
``surveys``     one row per survey: its canonical definition (mechanism configs
                included, so results decode with exactly what devices used) and status.
``responses``   one row per response: the idempotency key, a hash of the
                canonical body, and the reports as compact canonical JSON
                (``{"<question id>": <report>, ...}``). No IP address, no timestamp.
``aggregates``  per question, the :class:`deniable.SupportCounts` of every stored
                report, as JSON (on PostgreSQL split over 16 shard rows that a
                writer picks at random, merged with ``+`` on reading). Updated in
                the same transaction as the reports it counts, so results read
                k counts per shard, never the reports.
``invites``     single-use invite tokens (only their SHA-256 is stored).

Every write is one transaction: a request is either stored entirely or not at
all, and the server answers 2xx only after the commit returned. Idempotency
rests on the unique ``(survey_id, idempotency_key)`` constraint: a request is
first inserted with ``ON CONFLICT DO NOTHING``; if any key was already there,
that transaction is rolled back and the keys are looked up, so that a retry
with the same body is answered as a duplicate and another body is a conflict.

SQLite runs in WAL mode and takes the write lock at ``BEGIN IMMEDIATE``, so
concurrent writers (threads or processes) serialize instead of losing
aggregate updates. Durability is ``PRAGMA synchronous``: the default
``NORMAL`` writes every commit to the WAL file before it returns, so a killed
(even ``kill -9``) server loses no acknowledged report; only a power cut or
kernel crash can lose the last commits. ``sqlite_synchronous="FULL"`` also
survives those, at the price of one fsync per commit (a few hundred commits/s
on a typical virtual disk instead of thousands). PostgreSQL commits durably
(its own fsync and group commit) and locks the aggregate rows (``SELECT ...
FOR UPDATE``, always in question-id order, so writers cannot deadlock).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    bindparam,
    create_engine,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError

from deniable.aggregates import SupportCounts
from deniable.server.surveys import Survey, load_survey

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
]

MAX_BATCH = 10_000
"""Most responses accepted in one batch request."""

_IN_CHUNK = MAX_BATCH  # keys per IN (...) query (SQLite >= 3.32 allows 32766 parameters)
AGGREGATE_SHARDS = 16
KEY_PATTERN = re.compile(r"[A-Za-z0-9_-]{8,128}")
"""Idempotency keys: chosen by the device, 8-128 URL-safe characters."""
_BODY_FIELDS = frozenset({"idempotency_key", "invite_token", "reports"})

metadata = MetaData()
_ID = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER keys only

surveys_table = Table(
    "deniable_surveys",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("definition", Text, nullable=False),
    Column("status", String(16), nullable=False),
)
responses_table = Table(
    "deniable_responses",
    metadata,
    Column("id", _ID, primary_key=True, autoincrement=True),
    Column("survey_id", String(64), nullable=False),
    Column("idempotency_key", String(128), nullable=False),
    Column("body_hash", String(64), nullable=False),
    Column("reports", Text, nullable=False),
    UniqueConstraint("survey_id", "idempotency_key", name="uq_deniable_response_key"),
)
aggregates_table = Table(
    "deniable_aggregates",
    metadata,
    Column("survey_id", String(64), primary_key=True),
    Column("question_id", String(64), primary_key=True),
    Column("shard", Integer, primary_key=True),
    Column("stat", Text, nullable=False),
)
invites_table = Table(
    "deniable_invites",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("survey_id", String(64), nullable=False),
    Column("used_by", String(128), nullable=True),
)


# statements built once (per-request construction costs more than executing them)
_s, _r, _a, _i = surveys_table.c, responses_table.c, aggregates_table.c, invites_table.c
_SELECT_STATUS = select(_s.status).where(_s.id == bindparam("sid"))
_SELECT_DEFINITION = select(_s.definition).where(_s.id == bindparam("sid"))
_SELECT_EXISTING = select(_r.idempotency_key, _r.id, _r.body_hash).where(
    _r.survey_id == bindparam("sid"), _r.idempotency_key.in_(bindparam("keys", expanding=True))
)
_SELECT_AGGREGATES = select(_a.question_id, _a.stat).where(_a.survey_id == bindparam("sid"))
_LOCK_AGGREGATES = (  # (SQLite ignores FOR UPDATE; BEGIN IMMEDIATE has locked the database)
    select(_a.question_id, _a.stat)
    .where(_a.survey_id == bindparam("sid"), _a.shard == bindparam("part"))
    .order_by(_a.question_id)  # one lock order for every writer
    .with_for_update()
)
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

# --------------------------------------------------------------------- errors
class StorageError(Exception):
    """A request the storage refuses; ``field`` is the JSON path of the cause."""

    status = 400

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def detail(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


class NotFound(StorageError):
    status = 404


class Conflict(StorageError):
    status = 409


class Forbidden(StorageError):
    status = 403


class Invalid(StorageError):
    status = 422


class _KeyExists(Exception):
    """Internal: a key of the request is already stored (take the look-up path)."""


@dataclass(frozen=True)
class SubmitResult:
    """Outcome of a stored request: new and already-stored responses.

    ``response_id`` is set for a one-response request (new or replayed).
    """

    accepted: int
    duplicates: int
    response_id: str | None = None


# ---------------------------------------------------------------- preparation
@dataclass
class _Prepared:
    keys: list[str]
    tokens: list[str | None]  # SHA-256 of the invite tokens
    texts: list[str]  # canonical reports JSON per response
    hashes: list[str]  # body hash per response
    reports: dict[str, NDArray[Any]]  # validated reports per question, aligned with keys


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _fail_first(m: Any, items: list[Any]) -> tuple[int, str]:
    """Index and message of the first report in ``items`` that ``m`` rejects."""
    for i, item in enumerate(items):
        try:
            m.reports_from_json([item])
        except (ValueError, TypeError, OverflowError) as exc:
            return i, str(exc).replace(" report 0", " report", 1)
    raise AssertionError("the batch failed validation but no single report did")  # pragma: no cover


def prepare(
    survey: Survey, bodies: Sequence[Mapping[str, Any]], where: Callable[[int], str]
) -> _Prepared:
    """Validate every response of a request against its questions' mechanisms.

    Raises :class:`Invalid` naming the first bad field (``where(i)`` is the
    JSON path prefix of response ``i``). Validation is vectorized per
    question; only on failure are reports checked one by one to name the bad one.
    """
    question_ids = [q.id for q in survey.questions]
    expected = set(question_ids)
    for i, body in enumerate(bodies):
        key = body.get("idempotency_key")
        if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
            raise Invalid(
                f"{where(i)}idempotency_key", f"must be 8-128 characters of A-Z a-z 0-9 _ -; "
                f"got {key!r:.140}"
            )
        token = body.get("invite_token")
        if token is not None and not isinstance(token, str):
            raise Invalid(f"{where(i)}invite_token", f"must be a string; got {token!r:.60}")
        if len(body) > 2 and not body.keys() <= _BODY_FIELDS:
            extra = sorted(set(body) - _BODY_FIELDS)[0]
            raise Invalid(f"{where(i)}{extra}", f"is not a field of a response {sorted(_BODY_FIELDS)}")
        reports = body.get("reports")
        if not isinstance(reports, Mapping):
            raise Invalid(f"{where(i)}reports", "must be an object {question id: report}")
        if reports.keys() != expected:
            for qid in question_ids:
                if qid not in reports:
                    raise Invalid(
                        f"{where(i)}reports.{qid}",
                        f"is missing: every question of survey {survey.id!r} is answered exactly "
                        f"once (questions: {question_ids})",
                    )
            extra = sorted(set(reports) - expected)[0]
            raise Invalid(
                f"{where(i)}reports.{extra}",
                f"is not a question of survey {survey.id!r} (questions: {question_ids})",
            )
    validated: dict[str, NDArray[Any]] = {}
    canonical: list[list[Any]] = []
    for q in survey.questions:
        items = [body["reports"][q.id] for body in bodies]
        try:
            checked = q.mechanism.reports_from_json(items)
        except (ValueError, TypeError, OverflowError):
            i, message = _fail_first(q.mechanism, items)
            raise Invalid(f"{where(i)}reports.{q.id}", message) from None
        validated[q.id] = checked
        canonical.append(q.mechanism.reports_to_json(checked))
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    texts = [encode(dict(zip(question_ids, row, strict=True))) for row in zip(*canonical, strict=True)]
    tokens = [None if (t := body.get("invite_token")) is None else _sha256(t) for body in bodies]
    hashes = [_sha256(f"{text}\n{token or ''}") for text, token in zip(texts, tokens, strict=True)]
    keys = [body["idempotency_key"] for body in bodies]
    return _Prepared(keys, tokens, texts, hashes, validated)


# -------------------------------------------------------------------- engine
def normalize_url(db_url: str) -> str:
    """``postgres://`` and ``postgresql://`` mean psycopg 3; SQLite must be a file."""
    url = make_url(db_url)
    if url.drivername in ("postgres", "postgresql"):
        url = url.set(drivername="postgresql+psycopg")
    if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
        raise ValueError(
            f"db_url {db_url!r} is an in-memory SQLite database; give a file, "
            "e.g. sqlite:///deniable.db"
        )
    return url.render_as_string(hide_password=False)


def _make_engine(db_url: str, sqlite_synchronous: str) -> Engine:
    url = normalize_url(db_url)
    if make_url(url).get_backend_name() != "sqlite":
        return create_engine(url, pool_pre_ping=True, pool_size=8, max_overflow=16)
    engine = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # let SQLAlchemy's "begin" event below emit BEGIN, not the sqlite3 module
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={sqlite_synchronous}")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        read_only = conn.get_execution_options().get("deniable_read_only", False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")

    return engine


def _nan_to_none(values: Any) -> list[Any]:
    return [None if isinstance(v, float) and not math.isfinite(v) else v for v in
            np.asarray(values, dtype=float).tolist()]


# ------------------------------------------------------------------- storage
class Storage:
    """Surveys, privatized reports and aggregates in SQLite or PostgreSQL.

    >>> storage = Storage("sqlite:///deniable.db")            # doctest: +SKIP
    >>> storage.estimates("honor-code")["questions"][0]["estimate"]  # doctest: +SKIP

    ``sqlite_synchronous`` is SQLite's ``PRAGMA synchronous`` (``"NORMAL"``,
    the default, in WAL mode: a commit survives a killed process but the last
    commits may be lost on power loss; ``"FULL"``: a commit survives a power cut).
    """

    def __init__(self, db_url: str, *, sqlite_synchronous: str = "NORMAL") -> None:
        if sqlite_synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError(
                f"sqlite_synchronous must be FULL, NORMAL or EXTRA; got {sqlite_synchronous!r}"
            )
        self.engine = _make_engine(db_url, sqlite_synchronous.upper())
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
        metadata.create_all(self.engine)
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
            conn = conn.execution_options(deniable_read_only=True)
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
                                    "stat": json.dumps(q.mechanism.aggregate([]).to_json()),
                                }
                                for q in survey.questions
                                for shard in range(self.shards)
                            ],
                        )
                    elif stored != survey.canonical():
                        raise Conflict(
                            "id",
                            f"a different survey with id {survey.id!r} is already stored; "
                            "its reports must keep the configuration they were made with, "
                            "so give the new survey another id",
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
        with self._read() as conn:
            stored = conn.execute(_SELECT_DEFINITION, {"sid": survey_id}).scalar_one_or_none()
        if stored is None:
            raise NotFound("id", f"no survey with id {survey_id!r:.80}")
        survey = load_survey(json.loads(stored))
        self._surveys[survey_id] = survey
        return survey

    def survey_ids(self) -> list[str]:
        with self._read() as conn:
            return list(conn.execute(select(surveys_table.c.id).order_by(surveys_table.c.id)).scalars())

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
            "epsilon_total": survey.epsilon_total,
            "invite_only": survey.invite_only,
            "questions": [q.to_json() for q in survey.questions],
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
                [{"token_hash": _sha256(t), "survey_id": survey_id, "used_by": None} for t in tokens],
            )
        return tokens

    # --------------------------------------------------------------- reports
    def submit(
        self,
        survey_id: str,
        bodies: Sequence[Mapping[str, Any]],
        where: Callable[[int], str] = lambda i: "",
    ) -> SubmitResult:
        """Validate and store responses in one transaction (all or nothing).

        Each body is ``{"idempotency_key", "invite_token" (optional), "reports"}``.
        A key already stored with the same body is a duplicate (answered, not
        stored again); with a different body it is a :class:`Conflict`.
        """
        survey = self.survey(survey_id)
        if len(bodies) > MAX_BATCH:
            raise Invalid("responses", f"at most {MAX_BATCH} responses per batch; got {len(bodies)}")
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

    def _store_new(self, conn: Connection, survey: Survey, p: _Prepared) -> SubmitResult:
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
        inserted, response_id = self._insert(conn, survey, p, everything, self._insert_new_sql)
        if inserted != len(everything):
            raise _KeyExists
        self._merge_aggregates(conn, survey, p, everything)
        return SubmitResult(len(everything), 0, response_id)

    def _insert(
        self, conn: Connection, survey: Survey, p: _Prepared, indices: list[int], sql: str
    ) -> tuple[int, str | None]:
        """Insert the responses ``indices``: (rows inserted, the new id of a single one).

        Straight through the driver: SQLAlchemy's per-row parameter processing
        would cost more than the insert itself.
        """
        rows = [(survey.id, p.keys[i], p.hashes[i], p.texts[i]) for i in indices]
        if len(rows) == 1:
            new_id = conn.exec_driver_sql(f"{sql} RETURNING id", rows[0]).scalar()
            return (0, None) if new_id is None else (1, str(new_id))
        return conn.exec_driver_sql(sql, rows).rowcount, None

    def _existing(self, conn: Connection, survey_id: str, keys: list[str]) -> dict[str, tuple[int, str]]:
        found: dict[str, tuple[int, str]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), _IN_CHUNK):
            rows = conn.execute(
                _SELECT_EXISTING, {"sid": survey_id, "keys": unique[start : start + _IN_CHUNK]}
            )
            for key, rid, body_hash in rows:
                found[key] = (int(rid), body_hash)
        return found

    def _store(
        self, conn: Connection, survey: Survey, p: _Prepared, where: Callable[[int], str]
    ) -> SubmitResult:
        status = self._status(conn, survey.id)
        existing = self._existing(conn, survey.id, p.keys)
        new: list[int] = []
        first: dict[str, int] = {}
        replay_id: int | None = None
        for i, key in enumerate(p.keys):
            if key in existing:
                rid, body_hash = existing[key]
                replay_id = rid
                if body_hash != p.hashes[i]:
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
            return SubmitResult(0, duplicates, None if replay_id is None else str(replay_id))
        if status != "open":
            raise Conflict("id", f"survey {survey.id!r} is closed; it accepts no new responses")
        if survey.invite_only:
            self._claim_invites(conn, survey.id, p, new, where)
        response_id = self._insert(conn, survey, p, new, self._insert_many_sql)[1]
        self._merge_aggregates(conn, survey, p, new)
        return SubmitResult(len(new), duplicates, response_id)

    def _claim_invites(
        self, conn: Connection, survey_id: str, p: _Prepared, new: list[int],
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
        self, conn: Connection, survey: Survey, p: _Prepared, new: list[int]
    ) -> None:
        everything = len(new) == len(p.keys)
        index = np.asarray(new, dtype=np.int64)
        shard = secrets.randbelow(self.shards)
        stored = conn.execute(
            _LOCK_AGGREGATES, {"sid": survey.id, "part": shard}
        ).all()
        updates = []
        for qid, stat in stored:
            m = survey.question(qid).mechanism
            reports = p.reports[qid] if everything else p.reports[qid][index]
            merged = SupportCounts.from_json(json.loads(stat)) + m.aggregate(reports)
            updates.append(
                {"sid": survey.id, "qid": qid, "part": shard,
                 "new_stat": json.dumps(merged.to_json())}
            )
        conn.execute(_UPDATE_AGGREGATE, updates)

    # --------------------------------------------------------------- results
    def aggregates(self, survey_id: str) -> dict[str, SupportCounts]:
        """The stored aggregate of every question."""
        self.survey(survey_id)
        with self._read() as conn:
            rows = conn.execute(_SELECT_AGGREGATES, {"sid": survey_id}).all()
        merged: dict[str, SupportCounts] = {}
        for qid, stat in rows:
            part = SupportCounts.from_json(json.loads(stat))
            merged[qid] = merged[qid] + part if qid in merged else part
        return merged

    def estimates(self, survey_id: str, level: float = 0.95) -> dict[str, Any]:
        """Per question: debiased estimate, standard errors, CIs, n, epsilon, Norm-Sub.

        Reads only the aggregates (k counts per question), whatever the
        number of stored reports. Undefined values (no reports yet) are ``None``.
        """
        survey = self.survey(survey_id)
        stats = self.aggregates(survey_id)
        questions = []
        for q in survey.questions:
            est = q.mechanism.estimate_from(stats[q.id])
            entry: dict[str, Any] = {
                "id": q.id,
                "text": q.text,
                "type": q.type,
                "mechanism": q.mechanism.name,
                "epsilon": q.epsilon,
                "n": est.n,
                "categories": q.categories,
            }
            if est.n:
                low, high = est.ci(level)
                consistent = est.consistent("norm-sub").frequencies
            else:
                low = high = consistent = np.full(q.mechanism.k, np.nan)
            entry.update(
                estimate=_nan_to_none(est.frequencies),
                std_error=_nan_to_none(est.std_errors),
                ci_low=_nan_to_none(low),
                ci_high=_nan_to_none(high),
                observed=_nan_to_none(est.observed),
                consistent=_nan_to_none(consistent),
            )
            questions.append(entry)
        return {
            "id": survey.id,
            "title": survey.title,
            "n_responses": questions[0]["n"],
            "level": level,
            "questions": questions,
        }

    def iter_responses(self, survey_id: str, chunk: int = 10_000) -> Iterator[list[tuple[int, str]]]:
        """Stored responses in chunks of ``(response id, reports JSON text)``, in id order."""
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
