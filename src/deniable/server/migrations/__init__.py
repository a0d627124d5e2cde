"""Alembic migrations of the collection service's schema (run by :func:`deniable.server._schema.upgrade`)."""
