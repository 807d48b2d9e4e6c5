"""Consumer group offset sync, the pure part: what to write for each group and partition, and the verdict.

A group's committed offset on the source is the next offset it will read. Through the
ledger's verified segments of that partition (``offsets.translate_position``) it becomes
the target offset of the same next record: exact across transaction markers, aborted
batches, compaction gaps and runs that started at ``latest`` or a time. The rules users
of MirrorMaker 2 know stay: a group with members on the target is never touched, and a
target offset already ahead is never moved back unless rewinding is allowed.

No Kafka imports: the inputs are plain values read by ``kafka.groups`` and the ledger, so
every rule is tested on data; ``groups.sync.sync_groups`` does the I/O around it. The values
themselves (actions, outcomes, results) are in ``model.groups``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kafka_migration.model.config import compile_group_pattern
from kafka_migration.model.groups import (
    BOTH_AT_END,
    DIFFERENT,
    KEEP,
    KEPT_AHEAD,
    NONE,
    NOT_PROVEN,
    NOT_TRANSLATABLE,
    PENDING,
    SAME_RECORD,
    SKIP,
    SYNCED,
    TARGET_ACTIVE,
    UNCHANGED,
    UNREADABLE,
    WOULD_SYNC,
    WRITE,
    WRITE_FAILED,
    GroupSync,
    GroupSyncResult,
    PartitionSync,
)
from kafka_migration.model.offsets import AT_END, BEFORE, BEYOND, GAP, MappedSegment, translate_position
from kafka_migration.model.state import CommittedOffset, ConsumerGroup
from kafka_migration.model.text import plural

# -- selection ----------------------------------------------------------------------------------


def select_groups(group_ids: Iterable[str], include: str, exclude: str | None) -> list[str]:
    """Group ids that fully match ``include`` and not ``exclude``, sorted."""
    inc = compile_group_pattern("group (--group, Param groups)", include)
    exc = compile_group_pattern("exclude-group (--exclude-group, Param exclude_groups)", exclude) if exclude else None
    return sorted(g for g in set(group_ids) if inc.fullmatch(g) and not (exc and exc.fullmatch(g)))


@dataclass(frozen=True)
class Routes:
    """Where each migrated source topic went on this target cluster, from the ledger's verified segments."""

    targets: dict[str, str]  # source topic -> target topic
    ambiguous: dict[str, tuple[str, ...]]  # source topics copied to several target topics

    @classmethod
    def from_keys(cls, keys: Iterable[tuple[str, int, str]]) -> Routes:
        seen: dict[str, set[str]] = {}
        for source_topic, _partition, target_topic in keys:
            seen.setdefault(source_topic, set()).add(target_topic)
        return cls(
            targets={s: next(iter(t)) for s, t in seen.items() if len(t) == 1},
            ambiguous={s: tuple(sorted(t)) for s, t in seen.items() if len(t) > 1},
        )

    def migrated(self, topic: str) -> bool:
        return topic in self.targets or topic in self.ambiguous


# -- planning -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Through:
    """What every committed offset of a group is translated through: the routes and verified segments the
    ledger holds, the source's log ends, and whether a target offset may move back."""

    routes: Routes
    segments: Mapping[tuple[str, int, str], Sequence[MappedSegment]]
    source_ends: Mapping[tuple[str, int], int]
    allow_rewind: bool


def plan_group(
    source: ConsumerGroup,
    target: ConsumerGroup,
    routes: Routes,
    segments: Mapping[tuple[str, int, str], Sequence[MappedSegment]],
    source_ends: Mapping[tuple[str, int], int],
    allow_rewind: bool = False,
) -> GroupSync:
    """Decide, for every committed offset of ``source`` on a migrated topic, what the target group gets."""
    partitions = []
    ignored = sorted({t for (t, _p) in source.offsets if not routes.migrated(t)})
    through = _Through(routes, segments, source_ends, allow_rewind)
    for (topic, partition), committed in sorted(source.offsets.items()):
        if not routes.migrated(topic) or committed.offset < 0:
            continue
        partitions.append(_plan_partition(source, target, (topic, partition), committed, through))
    return GroupSync(
        group_id=source.group_id,
        source_state=source.state,
        source_active=source.active,
        target_state=target.state if target.exists else "NONE",
        target_active=target.active,
        partitions=tuple(partitions),
        ignored_topics=tuple(ignored),
    )


def _plan_partition(
    source: ConsumerGroup,
    target: ConsumerGroup,
    key: tuple[str, int],
    committed: CommittedOffset,
    through: _Through,
) -> PartitionSync:
    topic, partition = key
    routes, segments, source_ends = through.routes, through.segments, through.source_ends
    base = PartitionSync(
        group_id=source.group_id,
        source_topic=topic,
        partition=partition,
        source_offset=committed.offset,
        metadata=committed.metadata,
        source_end=source_ends.get((topic, partition)),
        target_topic=routes.targets.get(topic),
        target_offset=None,
        previous_target_offset=None,
        translation=None,
        translated_by=None,
        action=SKIP,
        outcome=NOT_TRANSLATABLE,
    )
    target_topic = routes.targets.get(topic)
    segs = segments.get((topic, partition, target_topic)) if target_topic else None
    if not segs:
        return replace(base, reason=_no_copy_reason(topic, partition, routes))
    t = translate_position(segs, committed.offset)
    previous = target.offsets.get((target_topic, partition))
    base = replace(
        base,
        target_offset=t.target_offset,
        previous_target_offset=previous.offset if previous is not None else None,
        translation=t.kind,
        translated_by=t.run_id,
        proof_source_offset=t.proof_source_offset,
        source_limit=t.source_limit,
        target_limit=t.target_limit,
    )
    if t.kind == BEYOND or t.target_offset is None:
        return replace(
            base,
            reason=f"committed offset {committed.offset} is beyond the verified copy (it ends before offset "
            f"{t.source_limit}); run the migration first, then sync again. The target group was not touched.",
        )
    notes = []
    if t.kind == BEFORE:
        notes.append(
            f"offset {committed.offset} is before the first copied record (the copy starts at source offset "
            f"{t.proof_source_offset}): mapped to the first copied record"
        )
    elif t.kind == GAP:
        notes.append(
            f"offset {committed.offset} lies in a range that expired before it was copied: mapped to the next "
            "copied record"
        )
    elif t.kind == AT_END:
        notes.append("at the end of the verified copy")
    if source.active:
        notes.append(f"the group is still active on the source ({source.state}): its offsets will move on")
    if target.active:
        return replace(
            base,
            action=SKIP,
            outcome=TARGET_ACTIVE,
            reason=f"the group has active members on the target ({target.state}); it is never touched while "
            "consumers run there. Stop them and sync again.",
        )
    if previous is not None and previous.offset == t.target_offset:
        return replace(base, action=NONE, outcome=PENDING, reason=_join(["already at the translated offset", *notes]))
    if previous is not None and previous.offset > t.target_offset and not through.allow_rewind:
        return replace(
            base,
            action=KEEP,
            outcome=KEPT_AHEAD,
            reason=f"the target group is at offset {previous.offset}, ahead of the translated {t.target_offset}; "
            "not moved back. Rerun with --allow-rewind to move it back.",
        )
    if previous is not None and previous.offset > t.target_offset:
        notes.append(f"moved back from {previous.offset} (rewind allowed)")
    return replace(base, action=WRITE, outcome=PENDING, reason=_join(notes))


def _no_copy_reason(topic: str, partition: int, routes: Routes) -> str:
    if topic in routes.ambiguous:
        return (
            f"{topic} was copied to several target topics on this cluster ({', '.join(routes.ambiguous[topic])}); "
            "the group's target topic is ambiguous. Sync it by hand with kafka-migrate offsets translate "
            "--target-topic."
        )
    return (
        f"{topic}[{partition}] has no verified copy in the ledger; run the migration (kafka-migrate run or the "
        "kafka_migration DAG) first, then sync again."
    )


def _join(notes: Sequence[str | None]) -> str | None:
    return "; ".join(n for n in notes if n) or None


# -- after writing and proving ----------------------------------------------------------------------


def judge_proof(source_record: bytes | None, target_record: bytes | None) -> str:
    """Compare the canonical encodings of the next record on each side (None: the verified range ends there)."""
    if source_record is None and target_record is None:
        return BOTH_AT_END
    if source_record is not None and source_record == target_record:
        return SAME_RECORD
    return DIFFERENT


def conclude(
    partition: PartitionSync, proof: str | None, dry_run: bool, write_error: str | None = None
) -> PartitionSync:
    """The final outcome of a planned partition, from the write and the proof."""
    if partition.outcome != PENDING:
        return partition
    if write_error is not None:
        return replace(partition, outcome=WRITE_FAILED, reason=_join([write_error, partition.reason]))
    if proof not in (SAME_RECORD, BOTH_AT_END):
        detail = {
            DIFFERENT: f"the record at target offset {partition.target_offset} is not the record at source offset "
            f"{partition.proof_source_offset}",
            UNREADABLE: "the records at the two offsets could not be read",
        }.get(proof or "", "no proof")
        return replace(
            partition,
            outcome=NOT_PROVEN,
            proof=proof,
            reason=_join([detail + "; check the ledger's verification of this partition", partition.reason]),
        )
    if partition.action == NONE:
        return replace(partition, outcome=UNCHANGED, proof=proof)
    return replace(partition, outcome=WOULD_SYNC if dry_run else SYNCED, proof=proof)


# -- rendering --------------------------------------------------------------------------------------


def render_sync(result: GroupSyncResult) -> str:
    """A plain-text table of every group partition, for the CLI and task logs."""
    ignored = {g.group_id: g.ignored_topics for g in result.groups if g.ignored_topics}
    return render_rows([p.to_dict() for p in result.partitions], ignored)


def render_rows(rows: Sequence[Mapping[str, Any]], ignored: Mapping[str, Sequence[str]] | None = None) -> str:
    """The table of ``render_sync`` from plain rows (``PartitionSync.to_dict`` or ``SyncedPartition.to_dict``)."""
    header = ("group", "source partition", "offset", "lag", "target partition", "offset", "outcome", "proof")
    table = []
    notes = []
    for r in rows:
        source = f"{r['source_topic']}[{r['partition']}]"
        lag = r.get("lag")  # model/groups.lag_left, computed once
        table.append(
            (
                r["group_id"],
                source,
                str(r["source_offset"]),
                "-" if lag is None else str(lag),
                f"{r['target_topic']}[{r['partition']}]" if r.get("target_topic") else "-",
                "-" if r.get("target_offset") is None else str(r["target_offset"]),
                r["outcome"],
                r.get("proof") or "-",
            )
        )
        if r.get("reason"):
            notes.append(f"  group {r['group_id']} {source}: {r['reason']}")
    if not table:
        return "No group partition to sync."
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(header)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in (header, *table)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for group_id, topics in (ignored or {}).items():
        notes.append(f"  group {group_id}: ignored (not migrated here): {', '.join(topics)}")
    return "\n".join(lines + (["", "Notes:", *notes] if notes else []))


def verdict_line(result: GroupSyncResult) -> str:
    """The closing line of a sync. A dry run records nothing, so it names no sync id: there is none to show."""
    parts = result.partitions
    groups = len(result.groups)
    name = "Group sync dry run (not recorded)" if result.dry_run else f"Group sync {result.sync_id}"
    if result.ok:
        verb = "would be synced" if result.dry_run else "synced"
        counted = f"{plural(groups, 'group')}, {plural(len(parts), 'partition')}"
        return f"{name}: {counted} {verb} and proven."
    bad = result.failures()
    named = ", ".join(f"{p.name()} ({p.outcome})" for p in bad[:5]) + (" ..." if len(bad) > 5 else "")
    return (
        f"{name} INCOMPLETE: {len(bad):,} of {plural(len(parts), 'partition')} not synced and "
        "proven: "
        f"{named}. See the notes above."
    )
