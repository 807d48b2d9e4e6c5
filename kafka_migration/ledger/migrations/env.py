"""Alembic environment for the ledger; run through ``kafka_migration.ledger.store.Ledger.upgrade``."""

from __future__ import annotations

from alembic import context

from kafka_migration.ledger.schema import metadata

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("the ledger migrations run through kafka_migration.ledger.store.Ledger.upgrade()")
context.configure(connection=connection, target_metadata=metadata, version_table="km_alembic_version")
with context.begin_transaction():
    context.run_migrations()
