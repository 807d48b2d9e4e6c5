"""The migration ledger: runs, per-partition evidence, checkpoints and offset maps."""

from kafka_migration.ledger.store import Ledger, LedgerError
from kafka_migration.ledger.urls import default_ledger_url

__all__ = ["Ledger", "LedgerError", "default_ledger_url"]
