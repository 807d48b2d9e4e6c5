"""What the ledger says about where copies stand, as plain values: checkpoints, topic ids, pending segments.

The ledger gives these; planning (positions, stale state) and the cutover take them, without the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Key = tuple[str, int, str]  # (source topic, partition, target topic)


@dataclass(frozen=True)
class Checkpoint:
    source_offset: int
    target_offset: int
    run_id: str


@dataclass(frozen=True)
class TopicIds:
    """The topic ids a topic's checkpoints were verified against (None: the broker gave none)."""

    source_topic_id: str | None
    target_topic_id: str | None
    run_id: str


@dataclass(frozen=True)
class PendingSegment:
    """A planned segment that never verified: its target range may hold part of a copy."""

    run_id: str
    source_start: int
    target_start: int


@dataclass(frozen=True)
class RecordedPositions:
    """Where the ledger says copies stand between two clusters: each partition's checkpoint, and the segments
    interrupted runs left pending."""

    checkpoints: Mapping[Key, Checkpoint]
    pending: Mapping[Key, PendingSegment]


@dataclass(frozen=True)
class Translation:
    """A source offset's target offset, and the verified run whose offset map gives it."""

    source_topic: str
    partition: int
    source_offset: int
    target_topic: str
    target_offset: int
    run_id: str
    source_cluster_id: str
    target_cluster_id: str
