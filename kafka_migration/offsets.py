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
