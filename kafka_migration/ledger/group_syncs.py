"""The ledger's consumer group syncs: every sync's rows, per group and partition, and their summaries."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine, delete, insert, select

from kafka_migration.ledger.schema import (
    group_syncs,
    utc_now,
)
from kafka_migration.model.groups import GroupSyncResult, SyncedPartition

# A partition's values the ledger stores (PartitionSync.to_dict gives them, and lag, which is derived).
STORED = frozenset(c.name for c in group_syncs.c) - {"id", "sync_id", "run_id", "synced_at"}


class GroupSyncRecords:
    """Consumer group syncs, a part of ``Ledger``."""

    engine: Engine

    # -- consumer group syncs -------------------------------------------------------------------

    def record_group_sync(self, result: GroupSyncResult) -> None:
        """Store a group sync's rows, replacing an earlier record of the same sync id (a retried task)."""
        now = utc_now()
        sync = {
            "sync_id": result.sync_id,
            "run_id": result.run_id,
            "synced_at": now,
            "source_cluster_id": result.source_cluster_id,
            "target_cluster_id": result.target_cluster_id,
        }
        rows = [{**sync, **{k: v for k, v in p.to_dict().items() if k in STORED}} for p in result.partitions]
        with self.engine.begin() as c:
            c.execute(delete(group_syncs).where(group_syncs.c.sync_id == result.sync_id))
            if rows:
                c.execute(insert(group_syncs), rows)

    def group_sync_rows(
        self, *, sync_id: str | None = None, run_id: str | None = None, sync_ids: Sequence[str] | None = None
    ) -> list[SyncedPartition]:
        """The partitions of one sync, of several, or of every sync that was part of a run, by sync, group,
        topic and partition."""
        conditions = []
        if sync_id is not None:
            conditions.append(group_syncs.c.sync_id == sync_id)
        if sync_ids is not None:
            if not sync_ids:
                return []
            conditions.append(group_syncs.c.sync_id.in_(list(sync_ids)))
        if run_id is not None:
            conditions.append(group_syncs.c.run_id == run_id)
        with self.engine.connect() as c:
            result = c.execute(
                select(group_syncs)
                .where(*conditions)
                .order_by(
                    group_syncs.c.sync_id, group_syncs.c.group_id, group_syncs.c.source_topic, group_syncs.c.partition
                )
            )
            return [SyncedPartition.from_row(r._mapping) for r in result]
