"""Aggregates stored as bytes: a header, then little-endian int64 counts and float64 sums.

The ``stat`` column of ``deniable_aggregates`` and ``deniable_round_aggregates``
held each aggregate's JSON text, parsed and checked on every write and read;
it now holds :meth:`deniable._aggregates.Packed.to_bytes`. Every stored
aggregate is converted through its question (its survey's stored
definition); the downgrade writes the JSON text back. A value that is bytes
already (a database this version made, stamped as the first revision) is
kept as it is.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_KEYS = {
    "deniable_aggregates": ("survey_id", "question_id", "shard"),
    "deniable_round_aggregates": ("survey_id", "round", "question_id"),
}


def _to_bytes(question: Any, value: Any) -> bytes:
    if isinstance(value, (bytes, memoryview)):
        return bytes(value)
    return bytes(question.aggregate_from_json(json.loads(value)).to_bytes())


def _to_text(question: Any, value: Any) -> str:
    return json.dumps(question.aggregate_from_bytes(bytes(value)).to_json())


def _rewrite(table: str, new_type: Any, convert: Callable[[Any, Any], Any]) -> None:
    """Replace ``table``'s ``stat`` column by one of ``new_type``, each value converted by its question."""
    from deniable.server._surveys import load_survey

    conn = op.get_bind()
    keys = _KEYS[table]
    with op.batch_alter_table(table) as batch:
        batch.add_column(sa.Column("stat_new", new_type, nullable=True))
    surveys = {
        sid: load_survey(json.loads(definition))
        for sid, definition in conn.execute(sa.text("SELECT id, definition FROM deniable_surveys"))
    }
    where = " AND ".join(f"{k} = :{k}" for k in keys)
    update = sa.text(f"UPDATE {table} SET stat_new = :stat WHERE {where}").bindparams(
        sa.bindparam("stat", type_=new_type)
    )
    for row in conn.execute(sa.text(f"SELECT {', '.join(keys)}, stat FROM {table}")).all():
        *key, value = row
        question = surveys[row.survey_id].question(row.question_id)
        conn.execute(update, {**dict(zip(keys, key, strict=True)), "stat": convert(question, value)})
    with op.batch_alter_table(table) as batch:
        batch.drop_column("stat")
        batch.alter_column("stat_new", new_column_name="stat", existing_type=new_type, nullable=False)


def upgrade() -> None:
    for table in _KEYS:
        _rewrite(table, sa.LargeBinary(), _to_bytes)


def downgrade() -> None:
    for table in _KEYS:
        _rewrite(table, sa.Text(), _to_text)
