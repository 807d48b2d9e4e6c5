"""kafka_migration.run.losses: which verified records a target no longer holds, through the offset map."""

from __future__ import annotations

from dataclasses import replace

from kafka_migration.model.checkpoints import Checkpoint
from kafka_migration.model.offsets import MappedSegment
from kafka_migration.model.plan import TargetLoss
from kafka_migration.model.state import TopicState
from kafka_migration.run.losses import (
    Verified,
    _source_offset,
    loss_candidates,
    loss_message,
    target_losses,
    unaccepted_message,
    verdict_line,
)
from tests.unit.factories import migration_plan

KEY = ("orders", 0, "orders")


def state(earliest: int, latest: int) -> TopicState:
    return TopicState("orders", 1, 1, {}, {0: earliest}, {0: latest})


# Two runs verified source 0–99 and 100–199; the source had a transaction marker at 50, so the target is one
# behind from there: source 51 -> target 50.
SEGMENTS = {
    KEY: [
        MappedSegment("run-1", 0, 100, 0, 99, ((0, 0), (51, 50))),
        MappedSegment("run-2", 100, 200, 99, 199, ((100, 99),)),
    ]
}
CHECKPOINTS = {KEY: Checkpoint(200, 199, "run-2")}


def losses(source: TopicState, target: TopicState, kept_from=None, marks=None, accept=False):  # type: ignore[no-untyped-def]
    return target_losses(
        source, "orders", target, Verified(CHECKPOINTS, SEGMENTS, marks or {}), kept_from or {}, accept
    )


def test_a_target_that_starts_at_its_first_verified_record_lost_nothing() -> None:
    assert loss_candidates("orders", "orders", state(0, 199), CHECKPOINTS) == []
    assert losses(state(0, 200), state(0, 199)) == []


def test_a_log_start_past_verified_records_the_source_holds_is_a_loss_with_both_ranges() -> None:
    (loss,) = losses(state(0, 200), state(120, 199))
    assert (loss.target_start, loss.target_end, loss.records) == (0, 120, 120)
    assert (loss.source_start, loss.source_end) == (0, 121)  # through the marker at source offset 50
    assert loss.verified_by == "run-1" and not loss.accepted


def test_records_the_source_removed_too_or_that_are_past_its_retention_are_no_loss() -> None:
    (loss,) = losses(state(60, 200), state(120, 199))  # the source itself starts at 60 now (target 59)
    assert (loss.target_start, loss.target_end) == (59, 120)
    assert losses(state(121, 200), state(120, 199)) == []  # the source holds none of the lost ones
    assert losses(state(0, 200), state(120, 199), kept_from={0: 150}) == []  # all past the source's retention
    assert losses(state(0, 200), state(199, 199), kept_from={0: 200}) == []  # every verified record past it


def test_an_accepted_mark_hides_what_was_accepted_and_a_further_loss_shows_again() -> None:
    assert losses(state(0, 200), state(120, 199), marks={KEY: 120}) == []
    (loss,) = losses(state(0, 200), state(150, 199), marks={KEY: 120})
    assert (loss.target_start, loss.target_end) == (120, 150)
    (accepted,) = losses(state(0, 200), state(150, 199), accept=True)
    assert accepted.accepted


def test_the_message_names_topic_records_ranges_run_and_the_way_out() -> None:
    found = losses(state(0, 200), state(120, 199))
    text = loss_message(found, "kafka-2:9092")
    assert text.startswith("TARGET LOST VERIFIED RECORDS: target topic orders no longer holds 120 verified records")
    assert "[0] target offsets 0–119 (source 0–120, verified by run run-1)" in text
    assert "--rename" in text and "--accept-target-loss" in text and "kafka-2:9092" in text


def ranges(found: list[TargetLoss]) -> list[tuple[int, int, int, int, int]]:
    return [(x.target_start, x.target_end, x.source_start, x.source_end, x.records) for x in found]


def test_a_loss_of_a_single_record_is_reported_with_its_exact_ranges() -> None:
    """One record is the smallest loss there is: a range that starts one record late would hide it entirely."""
    # The target's log start passed its first verified record (run-1's source 0).
    assert ranges(losses(state(0, 200), state(1, 199))) == [(0, 1, 0, 1, 1)]
    # One record more than was accepted as lost before.
    assert ranges(losses(state(0, 200), state(121, 199), marks={KEY: 120})) == [(120, 121, 121, 122, 1)]
    # The source holds from 60 (target 59, past the marker): target 59 alone is lost.
    assert ranges(losses(state(60, 200), state(60, 199))) == [(59, 60, 60, 61, 1)]


# The message is what an operator reads before deciding to re-migrate or accept: said in full.
LOST_120 = (
    "TARGET LOST VERIFIED RECORDS: target topic orders no longer holds 120 verified records of orders: its log start "
    "moved past them in [0] target offsets 0–119 (source 0–120, verified by run run-1); "
)
WAY_OUT = (
    "the source still holds them. Offsets cannot be re-created on a topic: re-migrate to a new target topic "
    "(--rename, e.g. '{topic}.v2'), or accept the loss with --accept-target-loss (recorded in the ledger and the "
    "report). Find what deleted them on kafka-2:9092: the topic's retention.ms and retention.bytes, DeleteRecords, "
    "a replica lost without its data."
)


def test_the_message_in_full_unaccepted_and_accepted() -> None:
    assert loss_message(losses(state(0, 200), state(120, 199)), "kafka-2:9092") == LOST_120 + WAY_OUT
    accepted = loss_message(losses(state(0, 200), state(120, 199), accept=True), "kafka-2:9092")
    assert accepted == LOST_120 + (
        "accepted (--accept-target-loss), recorded in the ledger; later runs do not report these again."
    )


def two_partitions(earliest: dict[int, int]) -> TopicState:
    return TopicState("orders", 2, 1, {}, earliest, {0: 199, 1: 199})


def test_only_partitions_verified_before_whose_target_start_moved_are_looked_at() -> None:
    checkpoints = {("orders", 1, "orders"): Checkpoint(200, 199, "run-2")}
    assert loss_candidates("orders", "orders", two_partitions({0: 5, 1: 0}), checkpoints) == []  # p0 is not p1
    assert loss_candidates("orders", "orders", two_partitions({0: 5}), checkpoints) == []  # p1 not read: no look
    assert loss_candidates("orders", "orders", two_partitions({0: 0, 1: 1}), checkpoints) == [1]  # moved by one
    assert loss_candidates("orders", "copy", two_partitions({0: 5, 1: 5}), checkpoints) == []  # another target
    assert loss_candidates("orders", "orders", None, checkpoints) == []


def test_each_partition_is_judged_on_its_own_whatever_the_ones_before_it_found() -> None:
    """Partition 0 has no offset map (a failback seeded its checkpoint), then none it still holds, then nothing
    lost; partition 1, after it each time, lost source 0–120: its loss is found all the same."""
    p1 = ("orders", 1, "orders")
    checkpoints = {KEY: Checkpoint(200, 199, "run-2"), p1: Checkpoint(200, 199, "run-2")}
    target = two_partitions({0: 120, 1: 120})

    def found(source_earliest: dict[int, int], segments: dict, target: TopicState = target) -> list[TargetLoss]:  # type: ignore[type-arg]
        source = TopicState("orders", 2, 1, {}, source_earliest, {0: 200, 1: 200})
        return target_losses(source, "orders", target, Verified(checkpoints, segments, {}), {}, False)

    only_p1 = {p1: SEGMENTS[KEY]}
    (loss,) = found({}, only_p1)  # no map for partition 0; the source's earliest unknown: from 0
    assert (loss.source_topic, loss.partition, loss.target_start, loss.target_end) == ("orders", 1, 0, 120)
    both = {KEY: SEGMENTS[KEY], p1: SEGMENTS[KEY]}
    assert [x.partition for x in found({0: 250, 1: 0}, both)] == [1]  # partition 0: the source holds none
    # Partition 0: the target starts at 50, but the source itself starts at 60 (target 59): nothing it holds is lost.
    (loss,) = found({0: 60, 1: 0}, both, two_partitions({0: 50, 1: 120}))
    assert (loss.partition, loss.target_start, loss.target_end) == (1, 0, 120)


def test_a_loss_from_where_the_second_run_begins_names_that_run() -> None:
    (loss,) = losses(state(100, 200), state(150, 199))  # source 100 is target 99: the second run's first record
    assert (loss.target_start, loss.source_start, loss.verified_by) == (99, 100, "run-2")


# The inverse of the offset map: target offset -> the source offset of the record copied there.
GAPPED = [  # target offsets 100–149 and 250–299 were never written by these runs
    MappedSegment("run-1", 0, 100, 0, 100, ((0, 0),)),
    MappedSegment("run-2", 100, 200, 150, 250, ((100, 150),)),
    MappedSegment("run-3", 200, 300, 300, 400, ((200, 300),)),
]


def test_a_target_offset_maps_back_through_the_change_points() -> None:
    segs = SEGMENTS[KEY]
    assert [_source_offset(segs, t) for t in (0, 49, 50, 60, 98, 99, 150)] == [0, 49, 51, 61, 99, 100, 151]


def test_a_target_offset_outside_every_segment_maps_to_the_next_copied_record_or_the_end() -> None:
    assert _source_offset(GAPPED, 120) == 100  # in the first gap: the second run's first record
    assert _source_offset(GAPPED, 260) == 200
    assert _source_offset(GAPPED, 400) == 300  # past every segment: the end of the last


def test_a_loss_that_starts_in_a_gap_of_the_target_names_the_checkpoints_run() -> None:
    checkpoints = {KEY: Checkpoint(300, 400, "run-3")}
    source = TopicState("orders", 1, 1, {}, {0: 0}, {0: 300})
    lost = target_losses(source, "orders", state(330, 400), Verified(checkpoints, {KEY: GAPPED}, {KEY: 120}), {}, False)
    assert [(x.target_start, x.target_end, x.source_start, x.source_end, x.verified_by) for x in lost] == [
        (120, 330, 100, 230, "run-3")
    ]


def test_the_ledger_message_and_the_closing_line_of_a_run_with_unaccepted_losses() -> None:
    lost = losses(state(0, 200), state(120, 199))[0]
    other = replace(lost, source_topic="clicks", target_topic="clicks", partition=2, target_end=10)
    accepted = replace(lost, source_topic="audit", target_topic="audit", accepted=True)
    plan = replace(migration_plan(run_id="run-9"), target_losses=(lost, other, accepted))
    clicks = (
        "TARGET LOST VERIFIED RECORDS: target topic clicks no longer holds 10 verified records of clicks: its log "
        "start moved past them in [2] target offsets 0–9 (source 0–120, verified by run run-1); "
    )
    assert unaccepted_message(plan) == clicks + WAY_OUT.replace("kafka-2:9092", "tgt:9092") + " " + (
        LOST_120 + WAY_OUT.replace("kafka-2:9092", "tgt:9092")
    )
    assert verdict_line(plan) == (
        "Migration run-9 NOT verified: the target LOST 130 records that earlier runs verified, in 2 partitions"
    )
    one = replace(plan, target_losses=(replace(lost, target_end=1),))
    assert verdict_line(one).endswith("the target LOST 1 record that earlier runs verified, in 1 partition")
    assert unaccepted_message(replace(plan, target_losses=(accepted,))) is None


def test_a_loss_up_to_the_checkpoint_ends_at_the_checkpoints_source_offset() -> None:
    """The second run verified source 100–149 and found only transaction markers: it copied no record (target
    99–99). A target that lost everything up to its checkpoint lost source 0–149, the whole verified range."""
    segments = {KEY: [SEGMENTS[KEY][0], MappedSegment("run-2", 100, 150, 99, 99, ())]}
    checkpoints = {KEY: Checkpoint(150, 99, "run-2")}
    (loss,) = target_losses(state(0, 150), "orders", state(99, 99), Verified(checkpoints, segments, {}), {}, False)
    assert (loss.target_start, loss.target_end, loss.source_start, loss.source_end) == (0, 99, 0, 150)
