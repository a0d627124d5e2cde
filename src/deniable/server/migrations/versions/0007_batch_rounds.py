"""The round of each shuffled batch of a survey with rounds (``deniable_shuffled_batches.round``).

A survey with rounds states the shuffled guarantee per round, for the batches
that round's responses came in: the gateway records the round a batch was
served in (null for a survey without rounds, and for a batch served across
the end of a round, whose responses it cannot split between the two rounds).
Batches recorded before this revision have no round.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("deniable_shuffled_batches") as batch:
        batch.add_column(sa.Column("round", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("deniable_shuffled_batches") as batch:
        batch.drop_column("round")
