"""The ledger's consumer group syncs: every sync's rows, per group and partition, and their summaries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, case, delete, func, insert, select

from kafka_migration.ledger.schema import (
    group_syncs,
    utc_now,
)
from kafka_migration.model.groups import GOOD_OUTCOMES, GroupSyncResult


class GroupSyncRecords:
    """Consumer group syncs, a part of ``Ledger``."""

    engine: Engine

    # -- consumer group syncs -------------------------------------------------------------------

    def record_group_sync(self, result: GroupSyncResult) -> None:
        """Store a group sync's rows, replacing an earlier record of the same sync id (a retried task)."""
        now = utc_now()
        rows = [
            {
                "sync_id": result.sync_id,
                "run_id": result.run_id,
                "synced_at": now,
                "source_cluster_id": result.source_cluster_id,
                "target_cluster_id": result.target_cluster_id,
                "group_id": p.group_id,
                "source_topic": p.source_topic,
                "partition": p.partition,
                "source_offset": p.source_offset,
                "source_end": p.source_end,
                "target_topic": p.target_topic,
                "target_offset": p.target_offset,
                "previous_target_offset": p.previous_target_offset,
                "translation": p.translation,
                "translated_by": p.translated_by,
                "outcome": p.outcome,
                "proof": p.proof,
                "reason": p.reason,
            }
            for p in result.partitions
        ]
        with self.engine.begin() as c:
            c.execute(delete(group_syncs).where(group_syncs.c.sync_id == result.sync_id))
            if rows:
                c.execute(insert(group_syncs), rows)

    def group_sync_rows(self, *, sync_id: str | None = None, run_id: str | None = None) -> list[dict[str, Any]]:
        """Rows of one sync, or of every sync that was part of a run, by group, topic and partition."""
        conditions = []
        if sync_id is not None:
            conditions.append(group_syncs.c.sync_id == sync_id)
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
            return [dict(r._mapping) for r in result]

    def group_syncs(self, limit: int = 50) -> list[dict[str, Any]]:
        """One summary per sync, newest first: when, clusters, groups, partitions, and how many are not ok."""
        with self.engine.connect() as c:
            result = c.execute(
                select(*sync_summary_columns())
                .group_by(group_syncs.c.sync_id)
                .order_by(func.max(group_syncs.c.synced_at).desc())
                .limit(limit)
            )
            return [dict(r._mapping) for r in result]


def sync_summary_columns() -> tuple[Any, ...]:
    """The columns of one summary per sync (grouped by sync_id): when, clusters, groups, partitions, and how
    many partitions ended in an outcome that is not good."""
    good = group_syncs.c.outcome.in_(sorted(GOOD_OUTCOMES))
    return (
        group_syncs.c.sync_id,
        func.max(group_syncs.c.run_id).label("run_id"),
        func.max(group_syncs.c.synced_at).label("synced_at"),
        func.max(group_syncs.c.source_cluster_id).label("source_cluster_id"),
        func.max(group_syncs.c.target_cluster_id).label("target_cluster_id"),
        func.count(func.distinct(group_syncs.c.group_id)).label("groups"),
        func.count().label("partitions"),
        func.sum(case((good, 0), else_=1)).label("not_ok"),
    )
