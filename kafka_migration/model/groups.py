"""Consumer group sync as plain values: what the sync does with each partition, its outcomes and proofs.

Shared by the rules that decide them (``groups.rules``), the sync that carries them out
(``groups.sync``), the ledger that records them and the reports that show them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from kafka_migration.model.state import CommittedOffset

# What the sync does with one partition.
WRITE = "write"  # write the translated offset to the target group
NONE = "none"  # the target group already holds it
KEEP = "keep"  # the target group is ahead: not moved back
SKIP = "skip"  # not translatable, or the target group is active

# Outcomes, as stored in the ledger and shown in reports.
SYNCED = "synced"  # written and proven
WOULD_SYNC = "would_sync"  # dry run: would be written; the translation is proven
UNCHANGED = "unchanged"  # the target already held the translated offset; proven
KEPT_AHEAD = "kept_ahead"  # the target group is further ahead; not rewound
TARGET_ACTIVE = "target_active"  # the group has members on the target; untouched
NOT_TRANSLATABLE = "not_translatable"  # beyond the verified copy, or no verified copy
NOT_PROVEN = "not_proven"  # the records at the two offsets differ, or could not be read
WRITE_FAILED = "write_failed"  # the target refused the write
PENDING = "pending"  # planned, before writing and proof

GOOD_OUTCOMES = frozenset({SYNCED, WOULD_SYNC, UNCHANGED})

# Proofs: what reading both clusters at the two offsets showed.
SAME_RECORD = "same_record"
BOTH_AT_END = "both_at_end"
DIFFERENT = "different"
UNREADABLE = "unreadable"

EXIT_OK, EXIT_INCOMPLETE = 0, 1


def lag_left(source_end: int | None, source_offset: int) -> int | None:
    """Records a group still has to read on the source (None: the end was not read). The one place it is
    computed: the sync, the ledger's rows, the CLI, the report and the console all ask here."""
    return None if source_end is None else max(0, source_end - source_offset)


@dataclass(frozen=True)
class PartitionSync:
    """One group's position in one source partition, its translation, and what became of it."""

    group_id: str
    source_topic: str
    partition: int
    source_offset: int
    metadata: str | None
    source_end: int | None  # source log end when read (lag = end - offset)
    target_topic: str | None
    target_offset: int | None  # translated; None when not translatable
    previous_target_offset: int | None  # the target group's committed offset before the sync
    translation: str | None  # offsets.WITHIN / AT_END / BEFORE / GAP / BEYOND, None without a verified copy
    translated_by: str | None  # run id of the verified segment used
    action: str
    outcome: str
    reason: str | None = None
    proof: str | None = None
    # Where the proof reads: the source record the group reads next, within the verified ranges.
    proof_source_offset: int | None = None
    source_limit: int | None = None
    target_limit: int | None = None

    @property
    def lag(self) -> int | None:
        """Records the group still has to read on the source (not migrated ones included)."""
        return lag_left(self.source_end, self.source_offset)

    @property
    def ok(self) -> bool:
        return self.outcome in GOOD_OUTCOMES

    @property
    def needs_proof(self) -> bool:
        return self.action in (WRITE, NONE)

    def name(self) -> str:
        return f"group {self.group_id} {self.source_topic}[{self.partition}]"

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "source_topic": self.source_topic,
            "partition": self.partition,
            "source_offset": self.source_offset,
            "source_end": self.source_end,
            "lag": self.lag,
            "target_topic": self.target_topic,
            "target_offset": self.target_offset,
            "previous_target_offset": self.previous_target_offset,
            "translation": self.translation,
            "translated_by": self.translated_by,
            "outcome": self.outcome,
            "proof": self.proof,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class SyncedPartition:
    """One partition of a group sync as the ledger recorded it: the sync's identity and clusters, the group's
    position on both sides, and what became of it. What every reader of the ledger's syncs gets."""

    sync_id: str
    run_id: str | None
    synced_at: datetime
    source_cluster_id: str
    target_cluster_id: str
    group_id: str
    source_topic: str
    partition: int
    source_offset: int
    source_end: int | None
    target_topic: str | None
    target_offset: int | None
    previous_target_offset: int | None
    translation: str | None
    translated_by: str | None
    outcome: str
    proof: str | None = None
    reason: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> SyncedPartition:
        return cls(**{f.name: row.get(f.name) for f in fields(cls)})

    @property
    def lag(self) -> int | None:
        return lag_left(self.source_end, self.source_offset)

    @property
    def ok(self) -> bool:
        return self.outcome in GOOD_OUTCOMES

    def to_dict(self) -> dict[str, Any]:
        """Its fields, its lag and whether it is ok (``synced_at`` as stored: a datetime)."""
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "lag": self.lag, "ok": self.ok}


@dataclass(frozen=True)
class GroupSync:
    """One consumer group: its state on both clusters and its partitions."""

    group_id: str
    source_state: str
    source_active: bool
    target_state: str
    target_active: bool
    partitions: tuple[PartitionSync, ...]
    ignored_topics: tuple[str, ...] = ()  # committed offsets on topics this ledger did not migrate

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.partitions)

    def writes(self) -> dict[tuple[str, int], CommittedOffset]:
        """Target (topic, partition) -> offset and metadata to write."""
        return {
            (p.target_topic, p.partition): CommittedOffset(p.target_offset, p.metadata)  # type: ignore[arg-type]
            for p in self.partitions
            if p.action == WRITE and p.target_topic is not None and p.target_offset is not None
        }


@dataclass(frozen=True)
class GroupSyncResult:
    """The outcome of one group sync.

    ``sync_id`` identifies the sync in the ledger; ``run_id`` is the migration run it was part of
    (a DAG run or a cutover), None for a standalone ``kafka-migrate groups sync``. ``exit_code``
    is 0 when every partition of every selected group is synced (or unchanged) and proven, 1 otherwise.
    """

    sync_id: str
    run_id: str | None
    source_cluster_id: str
    target_cluster_id: str
    dry_run: bool
    allow_rewind: bool
    groups: tuple[GroupSync, ...]

    @property
    def partitions(self) -> list[PartitionSync]:
        return [p for g in self.groups for p in g.partitions]

    @property
    def ok(self) -> bool:
        return all(g.ok for g in self.groups)

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.ok else EXIT_INCOMPLETE

    def failures(self) -> list[PartitionSync]:
        return [p for p in self.partitions if not p.ok]

    def target_offsets(self) -> dict[str, dict[tuple[str, int], int]]:
        """Per group, the target offset each partition starts from after the sync (for cutover checklists)."""
        out: dict[str, dict[tuple[str, int], int]] = {}
        for p in self.partitions:
            if p.ok and p.target_topic is not None and p.target_offset is not None:
                out.setdefault(p.group_id, {})[(p.target_topic, p.partition)] = p.target_offset
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "sync_id": self.sync_id,
            "run_id": self.run_id,
            "source_cluster_id": self.source_cluster_id,
            "target_cluster_id": self.target_cluster_id,
            "dry_run": self.dry_run,
            "allow_rewind": self.allow_rewind,
            "ok": self.ok,
            "groups": [
                {
                    "group_id": g.group_id,
                    "source_state": g.source_state,
                    "source_active": g.source_active,
                    "target_state": g.target_state,
                    "target_active": g.target_active,
                    "ignored_topics": list(g.ignored_topics),
                    "partitions": [p.to_dict() for p in g.partitions],
                }
                for g in self.groups
            ],
        }
