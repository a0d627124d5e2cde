"""Alembic environment: migrate the connection that :func:`deniable.server._schema.upgrade` passes in.

That connection's transaction (holding the migration lock) is used as is, so
the whole upgrade commits or rolls back at once.
"""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, transactional_ddl=True)
with context.begin_transaction():
    context.run_migrations()
