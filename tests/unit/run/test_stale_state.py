"""Checkpoints that no longer describe the clusters: recreated, truncated or shrunk topics (pure logic).

The integration test tests/integration/test_stale_state.py produces each situation on real brokers;
these pin the rules and the messages (topic, partition, offsets, the way out).
"""

from __future__ import annotations

from kafka_migration.model.checkpoints import Checkpoint, PendingSegment, RecordedPositions, TopicIds
from kafka_migration.model.state import TopicPair, TopicState
from kafka_migration.run.stale_state import stale_state_problems


def state(name: str, latest: dict[int, int], topic_id: str | None = "id-1") -> TopicState:
    return TopicState(name, len(latest), 1, {}, dict.fromkeys(latest, 0), latest, topic_id)


CPS = {("orders", 0, "copy"): Checkpoint(100, 100, "r1"), ("orders", 1, "copy"): Checkpoint(50, 50, "r1")}
IDS = TopicIds("id-1", "tid-1", "r1")


def problems(source, target, cps=CPS, pending=None, ids=IDS):  # type: ignore[no-untyped-def]
    return stale_state_problems(
        TopicPair(source, "copy", target), RecordedPositions(cps, pending or {}), ids, ("src", "dst")
    )


def test_matching_state_and_new_records_are_fine() -> None:
    assert problems(state("orders", {0: 150, 1: 50}), state("copy", {0: 100, 1: 50}, "tid-1")) == []
    assert problems(state("orders", {0: 150, 1: 50}), None, cps={}) == []  # never copied: nothing to compare
    # a broker without topic ids: the offset rules still apply, nothing else is assumed
    assert problems(state("orders", {0: 150, 1: 50}, None), state("copy", {0: 100, 1: 50}, None)) == []


def test_source_recreated_with_fewer_records() -> None:
    (problem,) = problems(state("orders", {0: 30, 1: 50}, None), state("copy", {0: 100, 1: 50}, "tid-1"))
    assert (
        "source topic orders now ends before its checkpoints in partition 0 ([0] ends at 30, verified below 100 by "
        "run r1)" in problem
    )
    assert "--rename" in problem and "kafka-migrate checkpoints forget --topic orders --target-topic copy" in problem


def test_source_recreated_with_more_records_is_known_by_its_topic_id() -> None:
    (problem,) = problems(state("orders", {0: 400, 1: 400}, "id-2"), state("copy", {0: 100, 1: 50}, "tid-1"))
    assert "source topic orders was deleted and recreated since run r1 verified it" in problem
    assert "topic id id-1 then, id-2 now" in problem and "[0] verified below 100" in problem
    assert "[1] ends at 400" in problem
    assert "use another ledger (--ledger)" in problem  # a different cluster that reuses the cluster id


def test_target_deleted_after_a_verified_run() -> None:
    (problem,) = problems(state("orders", {0: 150, 1: 50}), None)
    assert (
        "target topic copy no longer exists, but run r1 verified orders there, in partitions 0–1 (2 partitions)"
        in problem
    )
    assert "[0] verified below 100; [1] verified below 50" in problem and "checkpoints forget" in problem
    # A topic that no longer exists is not to be deleted (issue 50): the way out forgets or renames.
    assert "Delete target topic" not in problem and "if it still exists" not in problem
    assert problem.endswith("to copy the source again from the start, or copy under another target name (--rename).")


def test_target_truncated_below_the_checkpoint_when_ids_cannot_tell() -> None:
    for ids in (None, TopicIds("id-1", None, "r1")):  # a ledger from before topic ids, or a broker without them
        (problem,) = problems(state("orders", {0: 150, 1: 50}), state("copy", {0: 100, 1: 20}, None), ids=ids)
        assert (
            "target topic copy now ends below what was written there in partition 1 ([1] ends at 20, verified below "
            "50 by run r1 (source below 50))" in problem
        )
    # The same topic id: the topic the checkpoints were verified in. Its end is not compared (records cannot be
    # removed from its end).
    assert problems(state("orders", {0: 150, 1: 50}), state("copy", {0: 100, 1: 20}, "tid-1")) == []


def test_target_recreated_is_known_by_its_topic_id_even_when_refilled() -> None:
    (problem,) = problems(state("orders", {0: 150, 1: 50}), state("copy", {0: 120, 1: 60}, "tid-2"))
    assert "target topic copy was deleted and recreated since run r1" in problem and "tid-1 then, tid-2" in problem


def test_target_recreated_with_fewer_partitions() -> None:
    found = problems(state("orders", {0: 150, 1: 50}), state("copy", {0: 100}, None))
    assert any("has 1 partition, but run r1 wrote orders to partition 1 there" in p for p in found)


def test_interrupted_run_whose_target_was_truncated() -> None:
    pending = {("orders", 0, "copy"): PendingSegment("r2", 0, 40)}
    (problem,) = problems(state("orders", {0: 150}), state("copy", {0: 10}, None), cps={}, pending=pending)
    assert "[0] ends at 10, below offset 40 where the interrupted run r2 began writing source offset 0" in problem


def test_a_topic_is_one_problem_whatever_its_partitions() -> None:
    """Twelve truncated partitions are one line naming the topic and the count, not twelve paragraphs."""
    cps = {("orders", p, "copy"): Checkpoint(100, 100, "r1") for p in range(12)}
    found = problems(
        state("orders", dict.fromkeys(range(12), 150)), state("copy", dict.fromkeys(range(12), 7), None), cps
    )
    (problem,) = found
    assert "in partitions 0–11 (12 partitions)" in problem and "; and 7 more)" in problem
    assert problem.count("Delete target topic") == 1
