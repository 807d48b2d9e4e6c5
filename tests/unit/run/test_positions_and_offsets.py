"""Where partitions start (checkpoints, resumes, first-run rules, gaps) and exact offset translation."""

from __future__ import annotations

from kafka_migration.model.checkpoints import Checkpoint, PendingSegment, RecordedPositions
from kafka_migration.model.offsets import OffsetMapBuilder, translate
from kafka_migration.model.state import TopicPair, TopicState
from kafka_migration.run.positions import partition_positions


def source(earliest: int = 0, latest: int = 100, partitions: int = 1) -> TopicState:
    return TopicState(
        "orders",
        partitions,
        1,
        {},
        dict.fromkeys(range(partitions), earliest),
        dict.fromkeys(range(partitions), latest),
    )


def positions(state: TopicState, cps=None, pending=None, first="earliest", times=None, allow_gaps=False):  # type: ignore[no-untyped-def]
    pair, recorded = TopicPair(state, "orders", None), RecordedPositions(cps or {}, pending or {})
    return partition_positions(pair, recorded, first, times, allow_gaps)


def test_first_run_rules() -> None:
    assert positions(source(5, 100))[0][0].start == 5
    assert positions(source(5, 100), first="latest")[0][0].start == 100
    at, _, _ = positions(source(0, 100, partitions=2), first=1234, times={0: 40, 1: -1})
    assert (at[0].start, at[1].start) == (40, 100)  # -1: no record at or after that time yet


def test_checkpoint_wins_and_resume_follows_an_interrupted_run() -> None:
    cps = {("orders", 0, "orders"): Checkpoint(60, 57, "r1")}
    pos, problems, _ = positions(source(), cps=cps)
    assert (pos[0].start, pos[0].target_start, pos[0].origin, problems) == (60, 57, "checkpoint", [])
    pending = {("orders", 0, "orders"): PendingSegment("r2", 0, 0)}
    pos, _, _ = positions(source(), pending=pending)
    assert (pos[0].start, pos[0].origin) == (0, "resume")


def test_expired_records_are_a_gap_that_fails_unless_allowed() -> None:
    # Recorded situation: retention removed offsets 60..79 after the checkpoint.
    cps = {("orders", 0, "orders"): Checkpoint(60, 60, "r1")}
    pos, problems, _ = positions(source(earliest=80), cps=cps)
    assert problems[0].startswith(
        "orders: offsets left the source (retention or DeleteRecords) before they were copied, in partition 0 "
        "([0] 60–79 (20 offsets))"
    )
    assert (pos[0].start, pos[0].origin) == (60, "checkpoint")  # still the ledger's own partition: no other conflict
    assert "--allow-gaps" in problems[0]
    pos, problems, warnings = positions(source(earliest=80), cps=cps, allow_gaps=True)
    assert problems == [] and pos[0].start == 80 and pos[0].expired == 20 and "accepted" in warnings[0]


def test_offset_map_and_translation_across_gaps() -> None:
    # source records at 0,1,2 then a transaction marker at 3, records at 4,5, markers at 6,7, record at 8
    builder = OffsetMapBuilder()
    for target, src in enumerate([0, 1, 2, 4, 5, 8]):
        builder.add(src, target)
    assert builder.points == [(0, 0), (4, 3), (8, 5)]
    expected = {0: 0, 2: 2, 3: 3, 4: 3, 5: 4, 6: 5, 7: 5, 8: 5, 9: 6}
    for offset, target in expected.items():
        assert translate(builder.points, source_end=9, target_end=6, offset=offset) == target, offset


def test_gaps_in_many_partitions_are_one_problem_for_the_topic() -> None:
    cps = {("orders", p, "orders"): Checkpoint(60, 60, "r1") for p in range(4)}
    _, problems, _ = positions(source(earliest=80, partitions=4), cps=cps)
    (problem,) = problems
    assert "in partitions 0–3 (4 partitions)" in problem and problem.count("--allow-gaps") == 1
