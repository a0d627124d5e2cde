"""The schema of deniable 0.1: surveys, responses, aggregates (sharded), invites.

A database made before migrations existed (by ``metadata.create_all``) has
exactly this schema and is stamped with this revision instead of running it.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # SQLite autoincrements INTEGER keys only


def upgrade() -> None:
    op.create_table(
        "deniable_surveys",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("definition", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
    )
    op.create_table(
        "deniable_responses",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("survey_id", sa.String(64), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column("reports", sa.Text, nullable=False),
        sa.UniqueConstraint("survey_id", "idempotency_key", name="uq_deniable_response_key"),
    )
    op.create_table(
        "deniable_aggregates",
        sa.Column("survey_id", sa.String(64), primary_key=True),
        sa.Column("question_id", sa.String(64), primary_key=True),
        sa.Column("shard", sa.Integer, primary_key=True),
        sa.Column("stat", sa.Text, nullable=False),
    )
    op.create_table(
        "deniable_invites",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("survey_id", sa.String(64), nullable=False),
        sa.Column("used_by", sa.String(128), nullable=True),
    )


def downgrade() -> None:
    for table in ("deniable_invites", "deniable_aggregates", "deniable_responses", "deniable_surveys"):
        op.drop_table(table)
