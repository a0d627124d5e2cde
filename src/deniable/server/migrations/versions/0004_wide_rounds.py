"""Round indices as 64-bit integers: ``deniable_devices.last_round`` and ``deniable_round_aggregates.round``.

They were 32-bit on PostgreSQL (``INTEGER``), so a round index of ``2**31``
or more failed every write of its survey. The loader now keeps round indices
below ``2**31`` (:mod:`deniable.server._rounds`); the columns are widened
anyway, so that the database is never the limit. SQLite's integers are 64-bit
already: its tables are rebuilt with the declared type (Alembic's batch
mode), their rows kept.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_COLUMNS = {"deniable_devices": "last_round", "deniable_round_aggregates": "round"}


def _retype(old: sa.types.TypeEngine[int], new: sa.types.TypeEngine[int]) -> None:
    for table, column in _COLUMNS.items():
        with op.batch_alter_table(table) as batch:
            batch.alter_column(column, type_=new, existing_type=old, existing_nullable=False)


def upgrade() -> None:
    _retype(sa.Integer(), sa.BigInteger())


def downgrade() -> None:
    _retype(sa.BigInteger(), sa.Integer())
