"""Aggregates stored as bytes (revision 0003): a database of JSON-text aggregates reads the same after upgrading.

On SQLite and PostgreSQL. The JSON text a database held before revision 0003
is ``json.dumps(aggregate.to_json())``; the downgrade writes exactly that back,
and the upgrade turns it into the bytes the storage reads now.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
from alembic import command
from sqlalchemy import text

from deniable.client import privatize_answers
from deniable.server._database import make_engine
from deniable.server._schema import _config, current_revision, head_revision
from deniable.server._storage import Storage

START = 1_796_083_200.0  # 2026-12-01T00:00:00Z
MIXED = {"id": "mixed", "title": "Mixed", "budget": 20, "rate_limit": "off", "questions": [
    {"id": "yes", "text": "?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 1},
    {"id": "where", "text": "?", "type": "categorical", "categories": ["a", "b", "c"], "mechanism": "grr",
     "epsilon": 1},
    {"id": "minutes", "text": "?", "type": "number", "low": 0, "high": 600, "mechanism": "one-bit-mean",
     "epsilon": 1},
    {"id": "tool", "text": "?", "type": "free-text", "max_length": 6, "epsilon": 6},
]}
ANSWERS = {"yes": True, "where": "b", "minutes": 42.5, "tool": "vim"}
DESIGNS = {"id": "designs", "title": "Designs", "budget": 1.7, "questions": [
    {"id": "drug", "text": "?", "type": "yes-no", "design": {"model": "FR", "p": ["1/6", "1/6"]}},
    {"id": "copied", "text": "?", "type": "yes-no", "design": {"model": "SLD", "p": [0.3, 0.7]},
     "allow_infinite_epsilon": True},
    {"id": "age", "text": "?", "type": "integer", "randomized": False, "min": 16, "max": 99},
    {"id": "year", "text": "?", "type": "categorical", "randomized": False, "categories": ["first", "second"]},
]}
DESIGN_REPORTS = [{"drug": True, "copied": {"group": 1, "answer": False}, "age": 20, "year": "second"},
                  {"drug": False, "copied": {"group": 2, "answer": True}, "age": 31, "year": "first"}]
ROUNDS = {"id": "daily", "title": "Daily", "budget": 2, "rate_limit": "off",
          "rounds": {"every": "1d", "lifetime_epsilon": 2.8, "start": "2026-12-01T00:00:00Z"},
          "questions": [{"id": "sick", "text": "?", "type": "yes-no", "mechanism": "binary-rr", "epsilon": 0.5}]}


class Clock:
    now = START + 10.0

    def __call__(self) -> float:
        return self.now


def _key() -> str:
    return secrets.token_hex(8)


def _written(db_url: str) -> Storage:
    clock = Clock()
    storage = Storage(db_url, clock=clock)
    for survey in (MIXED, DESIGNS, ROUNDS):
        storage.add_survey(survey)
    public = storage.public("mixed")
    storage.submit("mixed", [{"idempotency_key": _key(), "reports": privatize_answers(public, ANSWERS)}
                             for _ in range(5)])
    storage.submit("designs", [{"idempotency_key": _key(), "reports": r} for r in DESIGN_REPORTS])
    public = storage.public("daily")
    for day in range(2):
        clock.now = START + 10.0 + day * 86_400
        storage.submit("daily", [{"idempotency_key": _key(), "device": secrets.token_urlsafe(16),
                                  "reports": privatize_answers(public, {"sick": day == 0})} for _ in range(3)])
    return storage


def _state(storage: Storage) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sid in ("mixed", "designs", "daily"):
        out[sid] = {qid: a.to_json() for qid, a in storage.aggregates(sid).items()}
        out[f"{sid} rounds"] = {r: {qid: a.to_json() for qid, a in aggs.items()}
                                for r, aggs in storage.round_aggregates(sid).items()}
    return out


def test_json_text_aggregates_read_the_same_after_the_upgrade(db_url: str) -> None:
    storage = _written(db_url)
    before = _state(storage)
    expected = {sid: storage.survey(sid) for sid in ("mixed", "designs", "daily")}
    storage.close()
    engine = make_engine(db_url, "NORMAL")
    with engine.begin() as conn:
        command.downgrade(_config(conn), "0002")
    with engine.connect() as conn:
        assert current_revision(conn) == "0002"
        for table in ("deniable_aggregates", "deniable_round_aggregates"):
            rows = conn.execute(text(f"SELECT survey_id, question_id, stat FROM {table}")).all()
            assert rows
            for sid, qid, stat in rows:  # the text the code before revision 0003 wrote
                question = expected[sid].question(qid)
                assert isinstance(stat, str)
                assert stat == json.dumps(question.aggregate_from_json(json.loads(stat)).to_json())
    engine.dispose()
    storage = Storage(db_url, clock=Clock())  # upgrades at start-up
    with engine.connect() as conn:
        assert current_revision(conn) == head_revision()
    assert _state(storage) == before
    assert storage.aggregates("mixed")["yes"].n == 5
    assert storage.submit("mixed", [{"idempotency_key": _key(), "reports": privatize_answers(
        storage.public("mixed"), ANSWERS)}]).accepted == 1
    assert storage.aggregates("mixed")["minutes"].n == 6
    storage.close()
    engine.dispose()


def test_a_stored_aggregate_of_another_configuration_is_refused(db_url: str) -> None:
    storage = Storage(db_url)
    storage.add_survey(MIXED)
    survey = storage.survey("mixed")
    blob = survey.question("yes").empty_aggregate().to_bytes()
    with pytest.raises(ValueError, match="not one of"):
        survey.question("where").aggregate_from_bytes(blob)
    with pytest.raises(ValueError, match="not one of"):
        survey.question("yes").aggregate_from_bytes(blob[:-1])
    storage.close()
