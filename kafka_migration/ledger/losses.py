"""Verified records a target lost: found by a run's planning, recorded with the run, accepted or not."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, delete, func, insert, select

from kafka_migration.ledger.schema import runs, target_losses, utc_now
from kafka_migration.model.checkpoints import Key
from kafka_migration.model.plan import MigrationPlan, TargetLoss


class LossRecords:
    """The target losses table, a part of ``Ledger``."""

    engine: Engine

    def accepted_loss_marks(self, source_cluster_id: str, target_cluster_id: str) -> dict[Key, int]:
        """Per (source topic, partition, target topic): target offsets below this were lost and accepted."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(
                    target_losses.c.source_topic,
                    target_losses.c.partition,
                    target_losses.c.target_topic,
                    func.max(target_losses.c.target_end),
                )
                .where(
                    target_losses.c.source_cluster_id == source_cluster_id,
                    target_losses.c.target_cluster_id == target_cluster_id,
                    target_losses.c.accepted == 1,
                )
                .group_by(target_losses.c.source_topic, target_losses.c.partition, target_losses.c.target_topic)
            )
            return {(r[0], r[1], r[2]): int(r[3]) for r in rows}

    def run_losses(self, run_id: str) -> list[TargetLoss]:
        with self.engine.connect() as c:
            rows = c.execute(
                select(target_losses)
                .where(target_losses.c.run_id == run_id)
                .order_by(target_losses.c.source_topic, target_losses.c.partition)
            )
            return [_loss(r) for r in rows]

    def open_losses(self, source_cluster_id: str, target_cluster_id: str) -> list[TargetLoss]:
        """The losses the newest run between the two clusters found and did not accept (for the console)."""
        with self.engine.connect() as c:
            newest = c.execute(
                select(runs.c.run_id)
                .where(
                    runs.c.source_cluster_id == source_cluster_id,
                    runs.c.target_cluster_id == target_cluster_id,
                    runs.c.status != "dry_run",
                )
                .order_by(runs.c.started_at.desc())
                .limit(1)
            ).scalar()
        if newest is None:
            return []
        return [loss for loss in self.run_losses(newest) if not loss.accepted]


def _loss(r: object) -> TargetLoss:
    return TargetLoss(
        source_topic=r.source_topic,  # type: ignore[attr-defined]
        target_topic=r.target_topic,  # type: ignore[attr-defined]
        partition=r.partition,  # type: ignore[attr-defined]
        source_start=r.source_start,  # type: ignore[attr-defined]
        source_end=r.source_end,  # type: ignore[attr-defined]
        target_start=r.target_start,  # type: ignore[attr-defined]
        target_end=r.target_end,  # type: ignore[attr-defined]
        verified_by=r.verified_by,  # type: ignore[attr-defined]
        accepted=bool(r.accepted),  # type: ignore[attr-defined]
    )


def record_losses(c: Any, plan: MigrationPlan) -> None:
    """Store the losses a run's planning found, in the transaction that opens the run (a retried start replaces
    them): accepted ones move the partition's accepted mark for later runs."""
    c.execute(delete(target_losses).where(target_losses.c.run_id == plan.run_id))
    if not plan.target_losses:
        return
    now = utc_now()
    c.execute(
        insert(target_losses),
        [
            {
                "run_id": plan.run_id,
                "source_cluster_id": plan.source.cluster_id,
                "target_cluster_id": plan.target.cluster_id,
                "source_topic": loss.source_topic,
                "partition": loss.partition,
                "target_topic": loss.target_topic,
                "source_start": loss.source_start,
                "source_end": loss.source_end,
                "target_start": loss.target_start,
                "target_end": loss.target_end,
                "verified_by": loss.verified_by,
                "accepted": int(loss.accepted),
                "found_at": now,
            }
            for loss in plan.target_losses
        ],
    )
