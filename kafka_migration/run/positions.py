"""Where each partition's copy starts: from the ledger's checkpoint, an interrupted run, or the first-run rule.

Pure logic over what planning read from the clusters and the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafka_migration.model.checkpoints import RecordedPositions
from kafka_migration.model.state import TopicPair
from kafka_migration.model.text import offset_range, partition_list, per_partition
from kafka_migration.run.direction import Failback


@dataclass(frozen=True)
class Position:
    start: int
    target_start: int
    origin: str
    expired: int = 0

    @property
    def from_ledger(self) -> bool:
        return self.origin in ("checkpoint", "resume")


def partition_positions(
    pair: TopicPair,
    recorded: RecordedPositions,
    first_start: str | int,
    offsets_at_time: Mapping[int, int] | None,
    allow_gaps: bool,
    failback: Failback | None = None,
) -> tuple[dict[int, Position], list[str], list[str]]:
    """(positions per partition, problems that stop the run, warnings). A ``failback`` takes no gaps: its
    problem names the way out that a failback has (run/direction.py)."""
    source, target_topic, existing = pair.source, pair.target_topic, pair.existing
    checkpoints, pending = recorded.checkpoints, recorded.pending
    positions: dict[int, Position] = {}
    problems: list[str] = []
    warnings: list[str] = []
    expired: list[tuple[int, str]] = []  # (partition, the range that left the source)
    for p in range(source.partitions):
        key = (source.name, p, target_topic)
        earliest = source.earliest.get(p, 0)
        latest = source.latest.get(p, 0)
        cp = checkpoints.get(key)
        pend = pending.get(key)
        if cp is not None:
            # A source that now ends before the checkpoint is refused by stale_state.stale_state_problems.
            position = Position(cp.source_offset, cp.target_offset, "checkpoint")
        elif pend is not None:
            position = Position(pend.source_start, pend.target_start, "resume")
        else:
            target_start = existing.latest.get(p, 0) if existing is not None else 0
            if first_start == "earliest":
                position = Position(earliest, target_start, "earliest")
            elif first_start == "latest":
                position = Position(latest, target_start, "latest")
            else:
                at = (offsets_at_time or {}).get(p, -1)
                position = Position(latest if at < 0 else max(at, earliest), target_start, "timestamp")
        if position.start < earliest:
            expired.append((p, offset_range(position.start, earliest)))
            if allow_gaps:
                position = Position(earliest, position.target_start, position.origin, earliest - position.start)
            # Otherwise the run stops; the position stays, so that the partition still counts as the ledger's own.
        positions[p] = position
    if expired:
        message = (
            f"{source.name}: offsets left the source (retention or DeleteRecords) before they were copied, in "
            f"{partition_list(p for p, _ in expired)} ({per_partition(expired)})"
        )
        if allow_gaps:
            warnings.append(message + "; accepted (allow gaps)")
        elif failback is not None:
            problems.append(f"{message}; {failback.gap_way_out(source.name)}")
        else:
            problems.append(
                message + "; the target cannot be complete. Re-run with --allow-gaps (DAG param allow_gaps) "
                "to accept the loss and continue from the earliest offset."
            )
    return positions, problems, warnings
