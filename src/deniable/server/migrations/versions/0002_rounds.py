"""Surveys in rounds: device-key salts, per-device accounting, per-round aggregates.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deniable_device_salts",
        sa.Column("survey_id", sa.String(64), primary_key=True),
        sa.Column("salt", sa.String(64), nullable=False),
    )
    op.create_table(
        "deniable_devices",
        sa.Column("survey_id", sa.String(64), primary_key=True),
        sa.Column("device", sa.String(64), primary_key=True),
        sa.Column("last_round", sa.Integer, nullable=False),
        sa.Column("reports", sa.Text, nullable=False),
        sa.Column("spent", sa.Float, nullable=False),
        sa.Column("spent_fresh", sa.Float, nullable=False),
    )
    op.create_table(
        "deniable_round_aggregates",
        sa.Column("survey_id", sa.String(64), primary_key=True),
        sa.Column("round", sa.Integer, primary_key=True),
        sa.Column("question_id", sa.String(64), primary_key=True),
        sa.Column("stat", sa.Text, nullable=False),
    )


def downgrade() -> None:
    for table in ("deniable_round_aggregates", "deniable_devices", "deniable_device_salts"):
        op.drop_table(table)
