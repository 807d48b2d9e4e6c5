"""The ledger's checkpoints and offset map: where each partition's verified copy ends, and how offsets translate.

Checkpoints only move forward; ``forget_checkpoints`` clears them for a topic that was recreated,
and ``seed_checkpoints`` places a failback's at the cutover point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, and_, bindparam, delete, func, insert, select, update

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.ledger.leases import LeaseKey, Leases
from kafka_migration.ledger.schema import (
    checkpoint_topic_ids,
    checkpoints,
    offset_map,
    segments,
    utc_now,
)
from kafka_migration.model.checkpoints import Checkpoint, Key, PendingSegment, TopicIds, Translation
from kafka_migration.model.offsets import MappedSegment, translate
from kafka_migration.model.plan import MigrationPlan, TopicPlan
from kafka_migration.model.text import offset_range


class CheckpointRecords:
    """Checkpoints, topic ids, pending segments and the offset map, a part of ``Ledger``."""

    engine: Engine
    leases: Leases

    # -- what earlier runs left ---------------------------------------------------------------------

    def checkpoints(self, source_cluster_id: str, target_cluster_id: str) -> dict[Key, Checkpoint]:
        with self.engine.connect() as c:
            result = c.execute(
                select(checkpoints).where(
                    checkpoints.c.source_cluster_id == source_cluster_id,
                    checkpoints.c.target_cluster_id == target_cluster_id,
                )
            )
            return {
                (r.source_topic, r.partition, r.target_topic): Checkpoint(r.source_offset, r.target_offset, r.run_id)
                for r in result
            }

    def topic_ids(self, source_cluster_id: str, target_cluster_id: str) -> dict[tuple[str, str], TopicIds]:
        """(source topic, target topic) -> the topic ids its last verified run saw."""
        with self.engine.connect() as c:
            result = c.execute(
                select(checkpoint_topic_ids).where(
                    checkpoint_topic_ids.c.source_cluster_id == source_cluster_id,
                    checkpoint_topic_ids.c.target_cluster_id == target_cluster_id,
                )
            )
            return {
                (r.source_topic, r.target_topic): TopicIds(r.source_topic_id, r.target_topic_id, r.run_id)
                for r in result
            }

    def pending_segments(
        self, source_cluster_id: str, target_cluster_id: str, checkpoints: Mapping[Key, Checkpoint] | None = None
    ) -> dict[Key, PendingSegment]:
        """Per partition, the oldest segment not verified since the last checkpoint (where a retry must resume)."""
        out: dict[Key, PendingSegment] = {}
        cps = self.checkpoints(source_cluster_id, target_cluster_id) if checkpoints is None else checkpoints
        with self.engine.connect() as c:
            forgotten = {
                (r.source_topic, r.target_topic): r.forgotten_through_segment
                for r in c.execute(
                    select(checkpoint_topic_ids).where(
                        checkpoint_topic_ids.c.source_cluster_id == source_cluster_id,
                        checkpoint_topic_ids.c.target_cluster_id == target_cluster_id,
                        checkpoint_topic_ids.c.forgotten_through_segment.is_not(None),
                    )
                )
            }
            result = c.execute(
                select(segments)
                .where(
                    segments.c.source_cluster_id == source_cluster_id,
                    segments.c.target_cluster_id == target_cluster_id,
                    segments.c.status.in_(("planned", "copied", "failed", "mismatch", "unverified")),
                )
                .order_by(segments.c.id)
            )
            for r in result:
                key = (r.source_topic, r.partition, r.target_topic)
                if r.id <= forgotten.get((r.source_topic, r.target_topic), -1):
                    continue  # forgotten with `kafka-migrate checkpoints forget`
                cp = cps.get(key)
                if cp is not None and r.source_start < cp.source_offset:
                    continue  # superseded by a later verified segment
                out.setdefault(key, PendingSegment(r.run_id, r.source_start, r.target_start))
        return out

    def forget_checkpoints(
        self,
        source_topic: str,
        target_topic: str | None = None,
        source_cluster_id: str | None = None,
        target_cluster_id: str | None = None,
    ) -> list[tuple[str, str, str, str]]:
        """Forget where a topic's copies stand (checkpoints, interrupted copies), so the next run starts afresh.

        For a source or target topic that was deleted and recreated. The runs and their evidence stay.
        Returns the (source cluster, source topic, target cluster, target topic) forgotten.
        """
        conditions = [segments.c.source_topic == source_topic]
        for column, value in (
            ("target_topic", target_topic),
            ("source_cluster_id", source_cluster_id),
            ("target_cluster_id", target_cluster_id),
        ):
            if value is not None:
                conditions.append(segments.c[column] == value)
        with self.engine.begin() as c:
            found = c.execute(
                select(
                    segments.c.source_cluster_id,
                    segments.c.source_topic,
                    segments.c.target_cluster_id,
                    segments.c.target_topic,
                    func.max(segments.c.id),
                )
                .where(*conditions)
                .group_by(
                    segments.c.source_cluster_id,
                    segments.c.source_topic,
                    segments.c.target_cluster_id,
                    segments.c.target_topic,
                )
            ).all()
            if not found:
                raise ConfigurationError(
                    f"The ledger has no copy of source topic {source_topic}"
                    + (f" to {target_topic}" if target_topic else "")
                    + " for these clusters; nothing to forget (kafka-migrate history lists the runs)."
                )
            held = self.leases.active(LeaseKey(*row[:4]) for row in found)
            if held:
                raise ConfigurationError(
                    "A run is copying this topic now: "
                    + "; ".join(f"target topic {x.key.target_topic} is held by {x.describe()}" for x in held)
                    + ". Nothing was forgotten; wait for it to finish."
                )
            for s_cluster, s_topic, t_cluster, t_topic, last_segment in found:
                key = {
                    "source_cluster_id": s_cluster,
                    "source_topic": s_topic,
                    "target_cluster_id": t_cluster,
                    "target_topic": t_topic,
                }
                c.execute(delete(checkpoints).where(and_(*(checkpoints.c[k] == v for k, v in key.items()))))
                where = and_(*(checkpoint_topic_ids.c[k] == v for k, v in key.items()))
                values = {
                    "source_topic_id": None,
                    "target_topic_id": None,
                    "run_id": "forgotten",
                    "forgotten_through_segment": last_segment,
                }
                if c.execute(update(checkpoint_topic_ids).where(where).values(**values)).rowcount == 0:
                    c.execute(insert(checkpoint_topic_ids).values(**key, **values))
        return [(row[0], row[1], row[2], row[3]) for row in found]

    def known_topics(self, source_cluster_id: str, target_cluster_id: str) -> dict[str, str]:
        """Source topics copied before (source -> target name) for this pair of clusters."""
        return {k[0]: k[2] for k in self.checkpoints(source_cluster_id, target_cluster_id)}

    # -- offset translation -----------------------------------------------------------------------

    def translate(
        self,
        source_topic: str,
        partition: int,
        offset: int,
        target_topic: str | None = None,
        source_cluster_id: str | None = None,
        target_cluster_id: str | None = None,
    ) -> Translation:
        conditions = [
            segments.c.source_topic == source_topic,
            segments.c.partition == partition,
            segments.c.status == "verified",
        ]
        for column, value in (
            (segments.c.target_topic, target_topic),
            (segments.c.source_cluster_id, source_cluster_id),
            (segments.c.target_cluster_id, target_cluster_id),
        ):
            if value is not None:
                conditions.append(column == value)
        with self.engine.connect() as c:
            found = c.execute(select(segments).where(*conditions).order_by(segments.c.source_start)).all()
            if not found:
                raise ConfigurationError(
                    f"The ledger has no verified copy of {source_topic}[{partition}]"
                    + (f" to {target_topic}" if target_topic else "")
                    + "; run a migration first."
                )
            pairs = {(r.source_cluster_id, r.target_cluster_id, r.target_topic) for r in found}
            if len(pairs) > 1:
                options = ", ".join(f"{s} -> {t} topic {n}" for s, t, n in sorted(pairs))
                raise ConfigurationError(
                    f"{source_topic}[{partition}] was copied to several places ({options}); "
                    "name --target-topic and/or the clusters."
                )
            covering = [r for r in found if r.source_start <= offset <= r.source_end and r.source_end > r.source_start]
            if not covering:
                low = min(r.source_start for r in found)
                high = max(r.source_end for r in found)
                raise ConfigurationError(
                    f"Source offset {offset} of {source_topic}[{partition}] is outside the verified copies "
                    f"(offsets {offset_range(low, high)}: positions {low} to {high} translate); it was not copied "
                    "yet or expired before the first run."
                )
            seg = covering[-1] if offset == covering[-1].source_end else covering[0]
            points = [
                (r.source_offset, r.target_offset)
                for r in c.execute(
                    select(offset_map).where(offset_map.c.segment_id == seg.id).order_by(offset_map.c.source_offset)
                )
            ]
        target_offset = translate(points, seg.source_end, seg.target_end, offset)
        return Translation(
            source_topic=source_topic,
            partition=partition,
            source_offset=offset,
            target_topic=seg.target_topic,
            target_offset=target_offset,
            run_id=seg.run_id,
            source_cluster_id=seg.source_cluster_id,
            target_cluster_id=seg.target_cluster_id,
        )

    def verified_segments(
        self, source_cluster_id: str, target_cluster_id: str, topics: Sequence[str] | None = None
    ) -> dict[Key, list[MappedSegment]]:
        """Every verified segment between two clusters (of the source ``topics``, or all) with its offset map, per
        (source topic, partition, target topic), oldest first: the input of ``offsets.translate_position``."""
        out: dict[Key, list[MappedSegment]] = {}
        where = [
            segments.c.source_cluster_id == source_cluster_id,
            segments.c.target_cluster_id == target_cluster_id,
            segments.c.status == "verified",
        ]
        if topics is not None:
            where.append(segments.c.source_topic.in_(sorted(set(topics))))
        with self.engine.connect() as c:
            found = c.execute(
                select(segments)
                .where(*where, segments.c.target_end.is_not(None))
                .order_by(segments.c.source_start, segments.c.id)
            ).all()
            points: dict[int, list[tuple[int, int]]] = {}
            if found:
                rows = c.execute(
                    select(offset_map)
                    .join(segments, segments.c.id == offset_map.c.segment_id)
                    .where(*where)
                    .order_by(offset_map.c.segment_id, offset_map.c.source_offset)
                )
                for r in rows:
                    points.setdefault(r.segment_id, []).append((r.source_offset, r.target_offset))
        for r in found:
            out.setdefault((r.source_topic, r.partition, r.target_topic), []).append(
                MappedSegment(
                    run_id=r.run_id,
                    source_start=r.source_start,
                    source_end=r.source_end,
                    target_start=r.target_start,
                    target_end=r.target_end,
                    points=tuple(points.get(r.id, ())),
                )
            )
        return out

    def seed_checkpoints(
        self, source_cluster_id: str, target_cluster_id: str, seeds: Mapping[Key, Checkpoint]
    ) -> dict[Key, Checkpoint]:
        """Place checkpoints where a run of this direction must start (a failback at the cutover point).

        A checkpoint already at or beyond its seed is kept (a retried failback continues from its
        progress); the checkpoints in force afterwards are returned.
        """
        now = utc_now()
        with self.engine.begin() as c:
            for (source_topic, partition, target_topic), seed in seeds.items():
                key = {
                    "source_cluster_id": source_cluster_id,
                    "source_topic": source_topic,
                    "partition": partition,
                    "target_cluster_id": target_cluster_id,
                    "target_topic": target_topic,
                }
                where = and_(*(checkpoints.c[k] == v for k, v in key.items()))
                current = c.execute(select(checkpoints.c.source_offset).where(where)).scalar()
                values = {
                    "source_offset": seed.source_offset,
                    "target_offset": seed.target_offset,
                    "run_id": seed.run_id,
                    "updated_at": now,
                }
                if current is None:
                    c.execute(insert(checkpoints).values(**key, **values))
                elif current < seed.source_offset:
                    c.execute(update(checkpoints).where(where).values(**values))
        found = self.checkpoints(source_cluster_id, target_cluster_id)
        return {key: found[key] for key in seeds}


def record_topic_ids(c: Any, plan: MigrationPlan, topics: Sequence[tuple[TopicPlan, str | None]]) -> None:
    """Record the topic ids (topic, id of a target created after planning) that verified checkpoints were
    checked against, in the caller's transaction ``c``."""
    if not topics:
        return
    pair = {"source_cluster_id": plan.source.cluster_id, "target_cluster_id": plan.target.cluster_id}
    existing = {
        (r.source_topic, r.target_topic)
        for r in c.execute(
            select(checkpoint_topic_ids.c.source_topic, checkpoint_topic_ids.c.target_topic).where(
                checkpoint_topic_ids.c.source_cluster_id == pair["source_cluster_id"],
                checkpoint_topic_ids.c.target_cluster_id == pair["target_cluster_id"],
            )
        )
    }
    rows = [
        {
            "b_source_topic": topic.source_topic,
            "b_target_topic": topic.target_topic,
            "source_topic_id": topic.source_topic_id,
            "target_topic_id": target_topic_id,
            "run_id": plan.run_id,
        }
        for topic, target_topic_id in topics
    ]
    old = [r for r in rows if (r["b_source_topic"], r["b_target_topic"]) in existing]
    new = [r for r in rows if (r["b_source_topic"], r["b_target_topic"]) not in existing]
    if old:
        c.execute(
            update(checkpoint_topic_ids)
            .where(
                checkpoint_topic_ids.c.source_cluster_id == pair["source_cluster_id"],
                checkpoint_topic_ids.c.target_cluster_id == pair["target_cluster_id"],
                checkpoint_topic_ids.c.source_topic == bindparam("b_source_topic"),
                checkpoint_topic_ids.c.target_topic == bindparam("b_target_topic"),
            )
            .values(
                source_topic_id=bindparam("source_topic_id"),
                target_topic_id=bindparam("target_topic_id"),
                run_id=bindparam("run_id"),
            ),
            old,
        )
    if new:
        c.execute(
            insert(checkpoint_topic_ids),
            [
                {
                    **pair,
                    "source_topic": r["b_source_topic"],
                    "target_topic": r["b_target_topic"],
                    "source_topic_id": r["source_topic_id"],
                    "target_topic_id": r["target_topic_id"],
                    "run_id": r["run_id"],
                }
                for r in new
            ],
        )


def advance_checkpoints(
    c: Any,
    plan: MigrationPlan,
    verified: Sequence[tuple[str, str, int, int, int]],
    now: datetime,
) -> None:
    """Move the checkpoints of verified partitions (source topic, target topic, partition, source end, target
    end) forward; never backwards (a late replay of an older run leaves a newer checkpoint alone)."""
    pair = {"source_cluster_id": plan.source.cluster_id, "target_cluster_id": plan.target.cluster_id}
    current = {
        (r.source_topic, r.partition, r.target_topic): r.source_offset
        for r in c.execute(
            select(
                checkpoints.c.source_topic,
                checkpoints.c.partition,
                checkpoints.c.target_topic,
                checkpoints.c.source_offset,
            ).where(
                checkpoints.c.source_cluster_id == pair["source_cluster_id"],
                checkpoints.c.target_cluster_id == pair["target_cluster_id"],
            )
        )
    }
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for source_topic, target_topic, partition, source_offset, target_offset in verified:
        values = {
            "source_offset": source_offset,
            "target_offset": target_offset,
            "run_id": plan.run_id,
            "updated_at": now,
        }
        at = current.get((source_topic, partition, target_topic))
        if at is None:
            inserts.append(
                {
                    **pair,
                    "source_topic": source_topic,
                    "partition": partition,
                    "target_topic": target_topic,
                    **values,
                }
            )
        elif source_offset >= at:  # never move a checkpoint backwards
            updates.append(
                {"b_source_topic": source_topic, "b_partition": partition, "b_target_topic": target_topic, **values}
            )
    if inserts:
        c.execute(insert(checkpoints), inserts)
    if updates:
        c.execute(
            update(checkpoints)
            .where(
                checkpoints.c.source_cluster_id == pair["source_cluster_id"],
                checkpoints.c.target_cluster_id == pair["target_cluster_id"],
                checkpoints.c.source_topic == bindparam("b_source_topic"),
                checkpoints.c.partition == bindparam("b_partition"),
                checkpoints.c.target_topic == bindparam("b_target_topic"),
            )
            .values({k: bindparam(k) for k in ("source_offset", "target_offset", "run_id", "updated_at")}),
            updates,
        )
