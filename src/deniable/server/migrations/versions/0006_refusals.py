"""The refusals of responses, counted per survey, round and kind (the flood defences at work).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deniable_refusals",
        sa.Column("survey_id", sa.String(64), primary_key=True),
        sa.Column("round", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("count", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("deniable_refusals")
