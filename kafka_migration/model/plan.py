"""The migration plan: a small, serialisable description of one run (never record data).

End offsets are fixed here, when the plan is made; every later step reads them
from the plan, so records appended to the source during the run are left for the
next run.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any

from kafka_migration.model.schemas import IdMap


@dataclass(frozen=True)
class ClusterInfo:
    role: str
    bootstrap: str
    cluster_id: str
    broker_count: int


@dataclass(frozen=True)
class PartitionPlan:
    """Copy source offsets ``[start, end)`` of one partition to the same target partition.

    ``target_start`` is the target partition's end offset when the plan was made:
    the first copied record lands there.
    """

    partition: int
    start: int
    end: int
    target_start: int
    earliest: int
    latest: int
    origin: str = "earliest"  # checkpoint, resume, earliest, latest, timestamp
    expired: int = 0  # offsets that left the source (retention) before they were copied
    # Offsets older than the target topic keeps (its retention.ms): not copied, the target would delete them at
    # its next retention pass (run/retention.py).
    aged: int = 0

    @property
    def offset_span(self) -> int:
        """Offsets in the range; the record count is lower where the source has gaps."""
        return max(0, self.end - self.start)


@dataclass(frozen=True)
class TargetLoss:
    """Verified records a target partition no longer holds although the source still does (its log start moved
    past them: DeleteRecords, a shorter retention, a lost replica). Ranges are half-open, as everywhere inside."""

    source_topic: str
    target_topic: str
    partition: int
    source_start: int
    source_end: int
    target_start: int
    target_end: int
    verified_by: str  # the run that verified the first lost record
    accepted: bool = False  # the operator accepted it (--accept-target-loss); later runs do not report it again

    @property
    def records(self) -> int:
        """The copy writes each record at its own target offset, so the lost target offsets are lost records."""
        return max(0, self.target_end - self.target_start)


@dataclass(frozen=True)
class PartitionSlice:
    """The unit of work of one Spark task: one partition's planned range, copied or verified."""

    source_topic: str
    target_topic: str
    partition: int
    start: int
    end: int
    target_start: int
    max_message_bytes: int = 1048588
    # --schema-ids translate: the topic's source schema id -> target id; the copy rewrites each key's and value's
    # schema header through it and the verification proves each record by it. None: copied byte for byte.
    id_map: IdMap | None = None
    # --unknown-schema-ids pass: a header whose id the map lacks is copied unchanged (and counted) instead of refused.
    pass_unknown_ids: bool = False


@dataclass(frozen=True)
class TopicPlan:
    source_topic: str
    target_topic: str
    partitions: tuple[PartitionPlan, ...]
    replication_factor: int
    configs: dict[str, str]
    skipped_configs: dict[str, str]
    create: bool
    warnings: tuple[str, ...] = ()
    # How each entry of ``configs`` and ``skipped_configs`` was decided (topic_configs.decide_configs).
    config_decisions: dict[str, str] = field(default_factory=dict)
    # Topic ids when planned (Kafka 2.8+); stored with the checkpoints to recognise a recreated topic.
    source_topic_id: str | None = None
    target_topic_id: str | None = None
    # The largest record the source topic allows, which sizes the copy's producer (None in older plans:
    # then ``configs`` says, or Kafka's default); a created topic may leave it at the target's default.
    max_message_bytes: int | None = None
    # --schema-ids translate: the id map of the topic's subjects (``IdMap.to_dict``, and ``pass_unknown_ids``:
    # --unknown-schema-ids pass), None where its records are copied byte for byte (off and keep modes, or no
    # subject of the topic on the source registry).
    schema_ids: dict[str, Any] | None = None

    @property
    def offset_span(self) -> int:
        return sum(p.offset_span for p in self.partitions)

    @cached_property
    def id_map(self) -> IdMap | None:
        return None if self.schema_ids is None else IdMap.from_dict(self.schema_ids)

    def slices(self, include_empty: bool) -> list[PartitionSlice]:
        """Copying skips empty ranges; verification includes them (the target must be empty too)."""
        max_bytes = self.max_message_bytes or int(
            self.configs.get("max.message.bytes", PartitionSlice.max_message_bytes)
        )
        return [
            PartitionSlice(
                source_topic=self.source_topic,
                target_topic=self.target_topic,
                partition=p.partition,
                start=p.start,
                end=p.end,
                target_start=p.target_start,
                max_message_bytes=max_bytes,
                id_map=self.id_map,
                pass_unknown_ids=bool(self.schema_ids and self.schema_ids.get("pass_unknown_ids")),
            )
            for p in self.partitions
            if include_empty or p.offset_span > 0
        ]


@dataclass(frozen=True)
class MigrationPlan:
    run_id: str
    created_at: str
    source: ClusterInfo
    target: ClusterInfo
    options: dict[str, Any]
    topics: tuple[TopicPlan, ...]
    skipped_topics: dict[str, str] = field(default_factory=dict)
    jobs: tuple[tuple[str, ...], ...] = ()
    disappeared_topics: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    # Verified records the target lost since earlier runs (run/losses.py), accepted or not.
    target_losses: tuple[TargetLoss, ...] = ()
    # --schema-ids keep or translate: the subject versions, what the sync did with each, and the id map
    # (``model.schema_runs.SchemaRun.to_dict``: registry URLs without secrets). None: schemas stay behind.
    schemas: dict[str, Any] | None = None

    @property
    def offset_span(self) -> int:
        return sum(t.offset_span for t in self.topics)

    @property
    def unaccepted_losses(self) -> tuple[TargetLoss, ...]:
        return tuple(loss for loss in self.target_losses if not loss.accepted)

    @cached_property
    def _by_source_topic(self) -> dict[str, TopicPlan]:
        return {t.source_topic: t for t in self.topics}

    def topic(self, source_topic: str) -> TopicPlan:
        """One topic's plan by its source name (a dict lookup: 5,000 topics are looked up one by one)."""
        return self._by_source_topic[source_topic]

    def job_topics(self, job: int) -> tuple[TopicPlan, ...]:
        return tuple(self.topic(name) for name in self.jobs[job])

    def run_order(self, topics: Sequence[TopicPlan] | None = None) -> list[TopicPlan]:
        """``topics`` (default: all) in the order a run takes them: the biggest first, so that they do not end
        up as the long tail, then in the plan's order (whatever order ``topics`` come in: a job's topics are
        dealt across jobs); the target topics are created in this order too, as the copy follows them."""
        rank = self._rank
        return sorted(self.topics if topics is None else topics, key=lambda t: (-t.offset_span, rank[t.source_topic]))

    @cached_property
    def _rank(self) -> dict[str, int]:
        return {t.source_topic: i for i, t in enumerate(self.topics)}

    def to_dict(self) -> dict[str, Any]:
        """As ``dataclasses.asdict`` gives it, several times faster (it dominated planning at 1,000 topics)."""
        return _plain(self)  # type: ignore[no-any-return]

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.to_json())
        tmp.replace(path)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MigrationPlan:
        topics = tuple(
            TopicPlan(
                **{
                    **t,
                    "partitions": tuple(PartitionPlan(**p) for p in t["partitions"]),
                    "warnings": tuple(t.get("warnings", ())),
                }
            )
            for t in data["topics"]
        )
        return cls(
            run_id=data["run_id"],
            created_at=data["created_at"],
            source=ClusterInfo(**data["source"]),
            target=ClusterInfo(**data["target"]),
            options=dict(data["options"]),
            topics=topics,
            skipped_topics=dict(data.get("skipped_topics", {})),
            jobs=tuple(tuple(j) for j in data.get("jobs", ())),
            disappeared_topics=dict(data.get("disappeared_topics", {})),
            warnings=tuple(data.get("warnings", ())),
            target_losses=tuple(TargetLoss(**loss) for loss in data.get("target_losses", ())),
            schemas=data.get("schemas"),
        )

    @classmethod
    def read(cls, path: Path) -> MigrationPlan:
        return cls.from_dict(json.loads(Path(path).read_text()))


def group_into_jobs(topics: list[TopicPlan], topics_per_job: int) -> tuple[tuple[str, ...], ...]:
    """Group topics into Spark applications so many small topics share one start-up.

    Topics are dealt largest first across ``ceil(n / topics_per_job)`` jobs, which
    balances the work between jobs that run side by side.
    """
    if not topics:
        return ()
    n_jobs = -(-len(topics) // topics_per_job)
    buckets: list[list[TopicPlan]] = [[] for _ in range(n_jobs)]
    # The least loaded job that is not full (lowest index on ties), from a heap: n log(jobs), not n x jobs.
    open_jobs = [(0, i) for i in range(n_jobs)]
    for topic in sorted(topics, key=lambda t: (-t.offset_span, t.source_topic)):
        load, best = heapq.heappop(open_jobs)
        buckets[best].append(topic)
        if len(buckets[best]) < topics_per_job:
            heapq.heappush(open_jobs, (load + topic.offset_span, best))
    return tuple(tuple(t.source_topic for t in sorted(b, key=lambda t: t.source_topic)) for b in buckets)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    """``dataclasses.asdict``'s conversion (dataclasses to dicts, containers copied, tuples kept), without its
    per-call field lookups and deep copies of immutable leaves."""
    names = _FIELDS.get(type(value))
    if names is None and hasattr(type(value), "__dataclass_fields__"):
        names = _FIELDS[type(value)] = tuple(f.name for f in fields(value))
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return type(value)((_plain(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    import copy

    return copy.deepcopy(value)
