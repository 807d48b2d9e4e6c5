"""kafka_migration.model.offsets: a source offset translated through the change points of the offset map and
through a partition's verified segments (how runs record the map: tests/unit/run/test_positions_and_offsets.py)."""

from __future__ import annotations

import pytest

from kafka_migration.model.offsets import AT_END, BEFORE, GAP, WITHIN, MappedSegment, translate, translate_position


def test_an_offset_before_the_first_change_point_is_its_target_offset() -> None:
    """The segment's range starts at 0 but its first copied record is source 10 (target 5): offsets below it
    have no record, and a consumer there reads that first record next."""
    points = [(10, 5), (20, 14)]
    assert [translate(points, 30, 24, offset) for offset in (3, 10, 15, 19, 20, 25, 30)] == [5, 5, 10, 14, 14, 19, 24]


# Run 1 verified source 0-99 (target 0-98: a marker at 50), run 2 nothing new (source 100-100), and records
# 100-149 expired before run 3 verified 150-199 (target 99-148).
SEGMENTS = [
    MappedSegment("run-1", 0, 100, 0, 99, ((0, 0), (51, 50))),
    MappedSegment("run-2", 100, 100, 99, 99, ()),
    MappedSegment("run-3", 150, 200, 99, 149, ((150, 99),)),
]


def test_a_position_translated_through_the_segments() -> None:
    def where(offset: int) -> tuple[str, int, int | None, str | None, int]:
        found = translate_position(SEGMENTS, offset)
        assert (found.source_limit, found.target_limit) == (200, 149)
        return found.kind, found.source_offset, found.target_offset, found.run_id, found.proof_source_offset

    assert where(60) == (WITHIN, 60, 59, "run-1", 60)
    # Records 100-149 expired: a consumer at 100 or 120 reads 150 next, copied by run 3.
    assert where(100) == (GAP, 100, 99, "run-3", 150)
    assert where(120) == (GAP, 120, 99, "run-3", 150)
    assert where(200) == (AT_END, 200, 149, "run-3", 200)
    late = translate_position([MappedSegment("run-4", 50, 80, 10, 40, ((50, 10),))], 20)  # started after 20
    assert (late.kind, late.target_offset, late.run_id, late.proof_source_offset) == (BEFORE, 10, "run-4", 50)


def test_no_segment_no_translation() -> None:
    with pytest.raises(ValueError, match=r"^translate_position needs at least one segment$"):
        translate_position([], 5)
