"""The cutover point, as the ledger keeps a cutover, and what failback derives from it. Pure: no Kafka,
Airflow or Spark.

A cutover ends with a verified incremental run while nothing writes to the source. Its
record keeps, per partition, the source end and the target end at that moment: the
two clusters are identical up to there. Failback copies what was written to the
target after that point back to the source with an ordinary incremental run in the
reverse direction, started from checkpoints seeded at exactly those offsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_migration.cutover.refusal import Reason
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.checkpoints import Checkpoint, Key
from kafka_migration.model.offsets import MappedSegment
from kafka_migration.model.text import partition_list, per_partition, plural

DEFAULT_QUIET_SECONDS = 30.0

# Cutover statuses
CHECKING, REFUSED, RUNNING, COMPLETED, FAILED = "checking", "refused", "running", "completed", "failed"


@dataclass(frozen=True)
class PartitionEnds:
    """Source and target end offsets of one partition at the cutover: identical records below both."""

    partition: int
    source_end: int
    target_end: int


@dataclass(frozen=True)
class CutoverTopic:
    source_topic: str
    target_topic: str
    partitions: tuple[PartitionEnds, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source_topic": self.source_topic,
            "target_topic": self.target_topic,
            "partitions": [
                {"partition": p.partition, "source_end": p.source_end, "target_end": p.target_end}
                for p in self.partitions
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CutoverTopic:
        return cls(
            source_topic=data["source_topic"],
            target_topic=data["target_topic"],
            partitions=tuple(
                PartitionEnds(int(p["partition"]), int(p["source_end"]), int(p["target_end"]))
                for p in data["partitions"]
            ),
        )


@dataclass(frozen=True)
class Cutover:
    """A cutover as the ledger holds it (table km_cutovers)."""

    cutover_id: str
    source_cluster_id: str
    source_bootstrap: str
    target_cluster_id: str
    target_bootstrap: str
    status: str
    run_id: str | None = None
    topics: tuple[CutoverTopic, ...] = ()
    groups: tuple[str, ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    failback_run_id: str | None = None
    failback_status: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Cutover:
        return cls(
            cutover_id=row["cutover_id"],
            source_cluster_id=row["source_cluster_id"],
            source_bootstrap=row["source_bootstrap"],
            target_cluster_id=row["target_cluster_id"],
            target_bootstrap=row["target_bootstrap"],
            status=row["status"],
            run_id=row.get("run_id"),
            topics=tuple(CutoverTopic.from_dict(t) for t in row.get("topics") or []),
            groups=tuple(row.get("groups") or []),
            params=dict(row.get("params") or {}),
            failback_run_id=row.get("failback_run_id"),
            failback_status=row.get("failback_status"),
        )

    def reverse_topic_map(self) -> dict[str, str]:
        """Failback direction: target topic -> the source topic it was copied from."""
        return {t.target_topic: t.source_topic for t in self.topics}

    def reverse_checkpoints(self) -> dict[Key, Checkpoint]:
        """Checkpoints of the reverse direction (target -> source) at the cutover point: a normal incremental
        run from them copies exactly what the target received after the cutover, appended to the source."""
        return {
            (t.target_topic, p.partition, t.source_topic): Checkpoint(p.target_end, p.source_end, self.cutover_id)
            for t in self.topics
            for p in t.partitions
        }

    def failback_options(self) -> dict[str, Any]:
        """Run options of the failback: exactly the cutover's target topics, each back to its source name."""
        names = sorted(self.reverse_topic_map())
        return {
            "include": "|".join(re.escape(n) for n in names),
            "exclude": None,
            "rename": "{topic}",
            "topic_map": self.reverse_topic_map(),
            "start": "earliest",  # unused: every partition continues from a seeded checkpoint
            "allow_gaps": False,
            "failback_of": self.cutover_id,
        }

    def written_since(self, source_ends: Mapping[tuple[str, int], int]) -> list[str]:
        return [r.text for r in self.written_since_reasons(source_ends)]

    def written_since_reasons(self, source_ends: Mapping[tuple[str, int], int]) -> list[Reason]:
        """Source partitions that grew past their end at the cutover: someone still wrote to the old cluster,
        and appending the target's records after theirs would interleave two histories.

        After an earlier failback attempt got past its checks, growth may be its own copy; then the
        copy's reconciliation decides (it skips what it wrote itself and stops at anything else).
        """
        if self.failback_status in (RUNNING, FAILED, COMPLETED):
            return []
        problems = []
        for topic in self.topics:
            grown = [
                (p.partition, p.source_end, now)
                for p in topic.partitions
                if (now := source_ends.get((topic.source_topic, p.partition))) is not None and now > p.source_end
            ]
            if not grown:
                continue
            offsets = sum(now - end for _, end, now in grown)
            problems.append(
                Reason(
                    f"source topic {topic.source_topic} received {plural(offsets, 'offset')} after the cutover, in "
                    f"{partition_list(p for p, _, _ in grown)} (end offset at the cutover -> now: "
                    f"{per_partition([(p, f'{end} -> {now}') for p, end, now in grown])}). Someone still writes to the "
                    "original cluster: stop them. A failback appends the target's records after the cutover point and "
                    "would interleave them with these; nothing was written. To bring the target's records back anyway, "
                    f"copy them under new names with an ordinary run (kafka-migrate run --source "
                    f"{self.target_bootstrap} --target {self.source_bootstrap} "
                    f"--include '{re.escape(topic.target_topic)}' "
                    "--rename '{topic}.failback'); it writes new topics and changes no existing one.",
                    "source",
                    topic=topic.source_topic,
                )
            )
        return problems

    def ready_for_failback(self) -> None:
        if self.status != COMPLETED:
            raise ConfigurationError(
                f"Cutover {self.cutover_id} has status {self.status!r}; only a completed cutover can be failed "
                "back (list cutovers with 'kafka-migrate history --cutovers')."
            )
        if not self.topics:
            raise ConfigurationError(f"Cutover {self.cutover_id} recorded no topics; there is nothing to fail back.")


def cutover_topics(
    plan_topics: Iterable[tuple[str, str, Iterable[int]]],
    checkpoints: Mapping[Key, Checkpoint],
    quiet_ends: Mapping[tuple[str, int], int],
) -> tuple[tuple[CutoverTopic, ...], list[str]]:
    """The per-partition ends at the cutover, from the checkpoints the final run left; and the problems.

    ``plan_topics``: (source topic, target topic, partitions) of the final run. Every partition's
    checkpoint must sit at the end the pre-flight saw (``quiet_ends``): anything else means the run
    did not verify everything up to the source end.
    """
    topics = []
    problems = []
    for source_topic, target_topic, partitions in plan_topics:
        ends = []
        unverified: list[int] = []
        short: list[tuple[int, str]] = []
        for partition in sorted(partitions):
            cp = checkpoints.get((source_topic, partition, target_topic))
            quiet = quiet_ends.get((source_topic, partition))
            if cp is None:
                unverified.append(partition)
            elif quiet is not None and cp.source_offset != quiet:
                short.append((partition, f"verified below offset {cp.source_offset}, end offset {quiet}"))
            else:
                ends.append(PartitionEnds(partition, cp.source_offset, cp.target_offset))
        if unverified:
            problems.append(
                f"{source_topic} has no verified checkpoint to {target_topic} in {partition_list(unverified)}: the "
                "final run did not verify them. Look at the run's report, fix the cause and run the cutover again."
            )
        if short:
            problems.append(
                f"{source_topic} is not verified up to its end in {partition_list(p for p, _ in short)} "
                f"({per_partition(short)}): the final run did not reach the source end. Run the cutover again."
            )
        topics.append(CutoverTopic(source_topic, target_topic, tuple(ends)))
    return tuple(topics), problems


def invert(segment: MappedSegment) -> MappedSegment:
    """A verified segment read backwards: target offset -> source offset of the same record.

    Exact because the copy writes a target range densely (no markers, no gaps), so every target
    offset in it holds a record whose source offset the change points give.
    """
    points = tuple((t, s) for s, t in segment.points)
    first_source = segment.points[0][0] if segment.points else segment.source_end
    return MappedSegment(
        run_id=segment.run_id,
        source_start=segment.target_start,
        source_end=segment.target_end,
        target_start=first_source,
        target_end=segment.source_end,
        points=points,
    )


def combine_segments(
    reverse: Mapping[Key, list[MappedSegment]], forward: Mapping[Key, list[MappedSegment]], cutover: Cutover
) -> dict[Key, list[MappedSegment]]:
    """Everything that translates a position on the cutover's target back to its source, per reverse key.

    Below the cutover point the records are the forward copy's (its segments, inverted); from there on
    the failback runs copied them back (their own segments). A group that had not caught up on the target
    when failing back thus resumes on the source exactly where it stopped, not at the cutover point.
    """
    out: dict[Key, list[MappedSegment]] = {key: list(found) for key, found in reverse.items()}
    for topic in cutover.topics:
        for ends in topic.partitions:
            key = (topic.target_topic, ends.partition, topic.source_topic)
            below = [
                invert(seg)
                for seg in forward.get((topic.source_topic, ends.partition, topic.target_topic), [])
                if seg.target_end <= ends.target_end
            ]
            if below:
                out[key] = below + out.get(key, [])
    return out
