"""kafka_migration.run.losses: which verified records a target no longer holds, through the offset map."""

from __future__ import annotations

from kafka_migration.model.checkpoints import Checkpoint
from kafka_migration.model.offsets import MappedSegment
from kafka_migration.model.plan import TargetLoss
from kafka_migration.model.state import TopicState
from kafka_migration.run.losses import loss_candidates, loss_message, target_losses

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
    return target_losses(source, "orders", target, CHECKPOINTS, SEGMENTS, kept_from or {}, marks or {}, accept)


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
