"""The migration ledger: runs, per-partition evidence, checkpoints and offset maps."""

from kafka_migration.ledger.store import Checkpoint, Ledger, PendingSegment, default_ledger_url

__all__ = ["Checkpoint", "Ledger", "PendingSegment", "default_ledger_url"]
