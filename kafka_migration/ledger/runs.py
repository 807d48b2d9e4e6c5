"""The ledger's runs and their evidence: a run's plan and segments, each partition's copy and verification.

Runs and segments come back as ``model/recorded`` values (``RecordedRun``, ``RecordedSegment``).

Storing a topic's verified partitions also advances their checkpoints (``ledger.checkpoints``), in the
same transaction.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, bindparam, delete, insert, select, update

from kafka_migration.ledger.checkpoints import advance_checkpoints, record_topic_ids
from kafka_migration.ledger.losses import record_losses
from kafka_migration.ledger.schema import (
    offset_map,
    runs,
    segments,
    utc_now,
)
from kafka_migration.ledger.schema_ids import record_schema_ids
from kafka_migration.model.plan import MigrationPlan, TopicPlan
from kafka_migration.model.recorded import RecordedRun, RecordedSegment
from kafka_migration.model.results import TopicOutcome
from kafka_migration.model.timings import RunTimings


class RunRecords:
    """Runs and evidence, a part of ``Ledger``."""

    engine: Engine

    # -- runs -----------------------------------------------------------------------------------

    def start_run(
        self, plan: MigrationPlan, trigger: str, dag_id: str | None = None, dag_run_id: str | None = None
    ) -> None:
        """Record the run and its planned segments. Safe to call again for a retried planning task."""
        with self.engine.begin() as c:
            exists = c.execute(select(runs.c.run_id).where(runs.c.run_id == plan.run_id)).first()
            values = {
                "trigger": trigger,
                "dag_id": dag_id,
                "dag_run_id": dag_run_id,
                "params": dict(plan.options),
                "source_cluster_id": plan.source.cluster_id,
                "source_bootstrap": plan.source.bootstrap,
                "target_cluster_id": plan.target.cluster_id,
                "target_bootstrap": plan.target.bootstrap,
                "status": "dry_run" if plan.options.get("dry_run") else "running",
                "topics": len(plan.topics),
                "records": 0,
                "warnings": list(plan.warnings),
                "plan": plan.to_dict(),
            }
            if exists:
                c.execute(update(runs).where(runs.c.run_id == plan.run_id).values(**values))
                c.execute(delete(segments).where(segments.c.run_id == plan.run_id))
            else:
                c.execute(insert(runs).values(run_id=plan.run_id, started_at=utc_now(), **values))
            if plan.options.get("dry_run"):
                return
            record_losses(c, plan)
            record_schema_ids(c, plan)
            rows = [
                {
                    "run_id": plan.run_id,
                    "source_cluster_id": plan.source.cluster_id,
                    "source_topic": t.source_topic,
                    "partition": p.partition,
                    "target_cluster_id": plan.target.cluster_id,
                    "target_topic": t.target_topic,
                    "source_start": p.start,
                    "source_end": p.end,
                    "target_start": p.target_start,
                    "expired_offsets": p.expired,
                    "status": "planned",
                }
                for t in plan.topics
                for p in t.partitions
            ]
            if rows:
                c.execute(insert(segments), rows)

    def finish_run(
        self,
        run_id: str,
        status: str,
        records: int,
        message: str | None = None,
        timings: RunTimings | None = None,
    ) -> None:
        values: dict[str, Any] = {"status": status, "records": records, "ended_at": utc_now(), "message": message}
        if timings is not None:
            values["timings"] = timings.to_dict()
        with self.engine.begin() as c:
            c.execute(update(runs).where(runs.c.run_id == run_id).values(**values))

    def set_run_timings(self, run_id: str, timings: RunTimings | None) -> None:
        """Store where the run's wall time went (known only once the run is over), for reports and history."""
        if timings is None:
            return
        with self.engine.begin() as c:
            c.execute(update(runs).where(runs.c.run_id == run_id).values(timings=timings.to_dict()))

    def set_report_digest(self, run_id: str, sha256: str) -> None:
        with self.engine.begin() as c:
            c.execute(update(runs).where(runs.c.run_id == run_id).values(report_sha256=sha256))

    def runs(self, limit: int = 50) -> list[RecordedRun]:
        """The newest runs, each whole (its plan too); the console's paged list is ``runs_page``."""
        with self.engine.connect() as c:
            result = c.execute(select(runs).order_by(runs.c.started_at.desc()).limit(limit))
            return [RecordedRun.from_row(r._mapping) for r in result]

    def run(self, run_id: str) -> RecordedRun | None:
        with self.engine.connect() as c:
            row = c.execute(select(runs).where(runs.c.run_id == run_id)).first()
            return RecordedRun.from_row(row._mapping) if row else None

    def run_segments(self, run_id: str) -> list[RecordedSegment]:
        """The run's partitions, by source topic and partition."""
        with self.engine.connect() as c:
            result = c.execute(
                select(segments)
                .where(segments.c.run_id == run_id)
                .order_by(segments.c.source_topic, segments.c.partition)
            )
            return [RecordedSegment.from_row(r._mapping) for r in result]

    # -- evidence -------------------------------------------------------------------------------------

    def record_nothing_new(self, plan: MigrationPlan) -> None:
        with self.engine.begin() as c:
            c.execute(update(segments).where(segments.c.run_id == plan.run_id).values(status="nothing_new"))

    def record_topic(
        self,
        plan: MigrationPlan,
        topic: TopicPlan,
        copy: TopicOutcome | None,
        verify: TopicOutcome | None,
        target_topic_id: str | None = None,
    ) -> None:
        """Store one topic's copy and verification results; advance checkpoints of verified partitions.

        ``target_topic_id`` is the id of a target topic created after planning (the plan has the others).
        """
        self.record_topics(plan, [(topic, copy, verify, target_topic_id)])

    def record_topics(
        self,
        plan: MigrationPlan,
        results: Sequence[tuple[TopicPlan, TopicOutcome | None, TopicOutcome | None, str | None]],
    ) -> None:
        """``record_topic`` for many topics at once: one transaction, a few bulk statements, not a few per partition.

        Each item is (topic plan, copy outcome, verify outcome, id of a target topic created after planning).
        A run of 1,000 topics stores its evidence in well under a second instead of 1,000 commits.
        """
        now = utc_now()
        updates: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        verified_parts: list[tuple[TopicPlan, Any, dict[str, Any]]] = []
        advanced: dict[str, tuple[TopicPlan, str | None]] = {}
        for topic, copy, verify, target_topic_id in results:
            copied = {p["partition"]: p for p in (copy.partitions if copy else [])}
            verified = {p["partition"]: p for p in (verify.partitions if verify else [])}
            # the report's "shared a Spark job" note: the larger of the two steps' job sizes
            shared = [o.job_topics for o in (copy, verify) if o is not None and getattr(o, "job_topics", None)]
            job_topics = max(shared) if shared else None
            for part in topic.partitions:
                cp_row = copied.get(part.partition)
                v = verified.get(part.partition)
                values = _segment_values(part.offset_span, copy, cp_row, v)
                if job_topics is not None:
                    values["job_topics"] = job_topics
                values.update(b_topic=topic.source_topic, b_partition=part.partition)
                updates.setdefault(tuple(sorted(values)), []).append(values)
                if values["status"] == "verified" and v is not None:
                    verified_parts.append((topic, part, v))
                    advanced[topic.source_topic] = (topic, target_topic_id or topic.target_topic_id)
        with self.engine.begin() as c:
            by_segment = segments.c.run_id == plan.run_id
            for rows in updates.values():
                c.execute(
                    update(segments)
                    .where(
                        by_segment,
                        segments.c.source_topic == bindparam("b_topic"),
                        segments.c.partition == bindparam("b_partition"),
                    )
                    .values({k: bindparam(k) for k in rows[0] if not k.startswith("b_")}),
                    rows,
                )
            if not verified_parts:
                return
            wanted = {(t.source_topic, part.partition) for t, part, _ in verified_parts}
            segment_ids = {
                (r.source_topic, r.partition): r.id
                for r in c.execute(
                    select(segments.c.id, segments.c.source_topic, segments.c.partition).where(by_segment)
                )
                if (r.source_topic, r.partition) in wanted
            }
            ids = [segment_ids[(t.source_topic, part.partition)] for t, part, _ in verified_parts]
            for chunk in _chunks(ids, 500):
                c.execute(delete(offset_map).where(offset_map.c.segment_id.in_(chunk)))
            points = [
                {"segment_id": segment_id, "source_offset": s, "target_offset": t}
                for segment_id, (_, _, v) in zip(ids, verified_parts, strict=True)
                for s, t in v.get("offset_map", [])
            ]
            if points:
                c.execute(insert(offset_map), points)
            advance_checkpoints(
                c,
                plan,
                [
                    (t.source_topic, t.target_topic, part.partition, part.end, v["target_end"])
                    for t, part, v in verified_parts
                ],
                now,
            )
            record_topic_ids(c, plan, list(advanced.values()))


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _segment_values(
    offset_span: int, copy: TopicOutcome | None, cp_row: Mapping[str, Any] | None, v: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The columns a partition's copy and verification results set on its segment."""
    status = _segment_status(offset_span, copy, cp_row, v)
    values: dict[str, Any] = {"status": status}
    if cp_row:
        values.update(
            copied_records=cp_row.get("records"),
            copied_bytes=cp_row.get("bytes"),
            resumed_records=cp_row.get("resumed_records"),
            copy_seconds=cp_row.get("seconds"),
            error=cp_row.get("error"),
        )
    elif copy is not None and copy.error and offset_span > 0:
        values["error"] = copy.error
    if v:
        values.update(
            target_end=v["target_end"],
            source_records=v["source_records"],
            target_records=v["target_records"],
            source_checksum=v["source_checksum"],
            target_checksum=v["target_checksum"],
            first_difference=v["first_difference"],
            first_source_offset=v["first_source_offset"],
            first_target_offset=v["first_target_offset"],
            verify_seconds=v["seconds"],
        )
        if v.get("schema_counts") is not None:
            values["schema_counts"] = v["schema_counts"]
    return values


def _segment_status(
    span: int, copy: TopicOutcome | None, copied: Mapping[str, Any] | None, verified: Mapping[str, Any] | None
) -> str:
    if copied is not None and copied.get("error"):
        return "failed"
    if span > 0 and copied is None and copy is not None and copy.status != "ok":
        return "failed"
    if verified is None:
        return "copied" if copied is not None else "planned"
    if verified.get("error"):
        return "unverified"  # the verification could not read a side: no verdict on the records
    return "verified" if verified["match"] else "mismatch"
