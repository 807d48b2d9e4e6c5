"""Exact source-to-target offset translation from recorded change points.

Within a copied segment, target offset minus source offset stays constant except
where the source has offsets without a record (transaction markers, compaction,
expired ranges). The map keeps only the records where that difference changes;
any source offset in the segment translates from the nearest change point at or
below it. A source offset without a record translates to the target offset of
the next record, which is what a consumer position means.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class OffsetMapBuilder:
    """Fed (source offset, target offset) of each copied record in order."""

    points: list[tuple[int, int]] = field(default_factory=list)
    _delta: int | None = None

    def add(self, source_offset: int, target_offset: int) -> None:
        delta = target_offset - source_offset
        if delta != self._delta:
            self.points.append((source_offset, target_offset))
            self._delta = delta


def translate(points: Sequence[tuple[int, int]], source_end: int, target_end: int, offset: int) -> int:
    """Target offset for a source offset in ``[first point, source_end]`` of one segment."""
    if not points:
        return target_end
    if offset >= source_end:
        return target_end
    sources = [s for s, _ in points]
    i = bisect.bisect_right(sources, offset) - 1
    if i < 0:
        return points[0][1]
    s, t = points[i]
    candidate = t + (offset - s)
    upper = points[i + 1][1] if i + 1 < len(points) else target_end
    return min(candidate, upper)


@dataclass(frozen=True)
class MappedSegment:
    """One verified segment of a partition with its offset map, as the ledger holds it."""

    run_id: str
    source_start: int
    source_end: int
    target_start: int
    target_end: int
    points: tuple[tuple[int, int], ...] = ()

    def first_record_target(self) -> int:
        """Target offset of the segment's first copied record (its target end when it holds none)."""
        return translate(self.points, self.source_end, self.target_end, self.source_start)


# Where a source offset lies relative to a partition's verified segments.
WITHIN = "within"  # inside a verified segment: exact
AT_END = "end"  # the end of the verified range: the target end of that range
BEFORE = "before"  # before the first copied record (start at latest / a time, or expired): the first copied record
GAP = "gap"  # in a range that expired between two runs: the next copied record
BEYOND = "beyond"  # past what has been verified: not translatable


@dataclass(frozen=True)
class SegmentTranslation:
    """A consumer position translated through a partition's verified segments.

    ``proof_source_offset`` is where the record the consumer reads next starts on the source
    (the offset itself, or the first copied offset when it lay before the copy); ``source_limit``
    and ``target_limit`` bound the verified range, so a proof reads only what was verified.
    """

    kind: str
    source_offset: int
    target_offset: int | None
    run_id: str | None
    proof_source_offset: int
    source_limit: int
    target_limit: int


def translate_position(segments: Sequence[MappedSegment], offset: int) -> SegmentTranslation:
    """Translate a consumer position (the next offset to read) through one partition's verified segments.

    Segments of successive runs chain (each starts where the previous verified one ended), so the
    verified range is ``[first start, last end]``. ``offset`` equal to the last end maps to the
    target end; beyond it nothing can be said (kind ``beyond``, ``target_offset`` None).
    """
    if not segments:
        raise ValueError("translate_position needs at least one segment")
    ordered = sorted(segments, key=lambda s: (s.source_start, s.source_end))
    last = max(ordered, key=lambda s: (s.source_end, s.target_end))
    source_limit, target_limit = last.source_end, last.target_end

    def result(kind: str, target: int | None, run_id: str | None, proof_from: int) -> SegmentTranslation:
        return SegmentTranslation(kind, offset, target, run_id, proof_from, source_limit, target_limit)

    if offset > source_limit:
        return result(BEYOND, None, None, offset)
    if offset == source_limit:
        return result(AT_END, target_limit, last.run_id, offset)
    first = ordered[0]
    if offset < first.source_start:
        return result(BEFORE, first.first_record_target(), first.run_id, first.source_start)
    for seg in ordered:
        if seg.source_start <= offset < seg.source_end:
            return result(WITHIN, translate(seg.points, seg.source_end, seg.target_end, offset), seg.run_id, offset)
    following = next(s for s in ordered if s.source_start > offset)
    return result(GAP, following.first_record_target(), following.run_id, following.source_start)
