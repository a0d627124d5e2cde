"""The sizes of the shuffled batches each survey's responses came in (``deniable relay --shuffle``).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "deniable_shuffled_batches",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("survey_id", sa.String(64), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("deniable_shuffled_batches")
