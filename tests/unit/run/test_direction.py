"""Advice that fits the run's direction: a failback's target is the original cluster, never to be deleted.

The same situations, planned as an ordinary run and as the failback of a cutover: the ordinary run's
way out may delete its own target topic and forget checkpoints; the failback's names what happened,
says that nothing was written, and offers only a copy under new names, which changes no existing topic.
"""

from __future__ import annotations

import pytest

from kafka_migration.cutover.point import Cutover, CutoverTopic, PartitionEnds
from kafka_migration.model.checkpoints import Checkpoint, RecordedPositions, TopicIds
from kafka_migration.model.config import MigrationOptions
from kafka_migration.model.state import TopicPair, TopicState
from kafka_migration.run.direction import Failback
from kafka_migration.run.positions import partition_positions
from kafka_migration.run.stale_state import stale_state_problems
from kafka_migration.run.topics import compatibility_problems
from tests.unit.factories import topic_state

FAILBACK = Failback("cutover-7", "new:9092", "old:9092")
CPS = {("copy.orders", 0, "orders"): Checkpoint(100, 120, "cutover-7")}
IDS = TopicIds("sid-1", "tid-1", "cutover-7")

DESTRUCTIVE = ("delete target topic", "Delete target topic", "delete the target topic", "or delete it", "Empty or")


def state(name: str, latest: dict[int, int], topic_id: str | None) -> TopicState:
    return TopicState(name, len(latest), 1, {}, dict.fromkeys(latest, 0), latest, topic_id)


def _stale(target: TopicState | None, failback: Failback | None, source_id: str = "sid-1") -> list[str]:
    source = state("copy.orders", {0: 150}, source_id)
    pair, recorded = TopicPair(source, "orders", target), RecordedPositions(CPS, {})
    return stale_state_problems(pair, recorded, IDS, ("new-cluster", "old-cluster"), failback)


SITUATIONS = {
    "target deleted": lambda fb: _stale(None, fb),
    "target recreated": lambda fb: _stale(state("orders", {0: 3}, "tid-2"), fb),
    "target truncated": lambda fb: stale_state_problems(
        TopicPair(state("copy.orders", {0: 150}, None), "orders", state("orders", {0: 3}, None)),
        RecordedPositions(CPS, {}),
        None,
        ("n", "o"),
        fb,
    ),
    "source recreated": lambda fb: _stale(state("orders", {0: 120}, "tid-1"), fb, source_id="sid-2"),
    "fewer partitions": lambda fb: compatibility_problems(
        topic_state("copy.orders", 6), topic_state("orders", 3, latest=0), failback=fb
    ),
    "unknown records": lambda fb: compatibility_problems(
        topic_state("copy.orders", 3), topic_state("orders", 3, latest=5), failback=fb
    ),
    "cleanup policy": lambda fb: compatibility_problems(
        topic_state("copy.orders", configs={"cleanup.policy": "compact"}), topic_state("orders", latest=0), failback=fb
    ),
}


@pytest.mark.parametrize("situation", sorted(SITUATIONS))
def test_an_ordinary_run_may_delete_its_own_target_topic(situation: str) -> None:
    (problem,) = SITUATIONS[situation](None)
    assert any(word in problem for word in DESTRUCTIVE) or "--rename" in problem
    assert "failback" not in problem


@pytest.mark.parametrize("situation", sorted(SITUATIONS))
def test_a_failback_never_advises_deleting_or_forgetting_on_the_original_cluster(situation: str) -> None:
    (problem,) = SITUATIONS[situation](FAILBACK)
    for word in DESTRUCTIVE:
        assert word not in problem
    assert "checkpoints forget" not in problem
    assert "This run is the failback of cutover cutover-7: target topic orders is on the original cluster" in problem
    assert (
        "do not delete it, empty it or forget its checkpoints; the failback stopped before writing anything" in problem
    )
    assert (
        "kafka-migrate run --source new:9092 --target old:9092 --include 'copy\\.orders' --rename '{topic}.failback'"
        in problem
    )


def test_what_happened_is_said_the_same_way_in_both_directions() -> None:
    (ordinary,) = _stale(None, None)
    (failback,) = _stale(None, FAILBACK)
    happened = "target topic orders no longer exists, but run cutover-7 verified copy.orders there, in partition 0"
    assert ordinary.startswith(happened) and failback.startswith(happened)


def test_a_failback_run_knows_it_is_one_through_its_options() -> None:
    cutover = Cutover(
        "cutover-7", "old-cluster", "old:9092", "new-cluster", "new:9092", "completed", "run-1",
        (CutoverTopic("orders", "copy.orders", (PartitionEnds(0, 120, 100),)),),
    )  # fmt: skip
    options = MigrationOptions.from_mapping(cutover.failback_options())
    assert options.failback_of == "cutover-7"
    assert MigrationOptions.from_mapping({**vars(options), "topics_per_job": 3}).failback_of == "cutover-7"  # the CLI
    assert (
        MigrationOptions().failback_of is None
        and MigrationOptions.from_mapping({"failback_of": ""}).failback_of is None
    )


def test_records_lost_before_a_failback_copied_them_are_named_with_the_failbacks_way_out() -> None:
    source = TopicState("copy.orders", 1, 1, {}, {0: 130}, {0: 150}, "sid-1")  # 100-129 left by retention
    cps = {("copy.orders", 0, "orders"): Checkpoint(100, 120, "cutover-7")}
    pair, recorded = TopicPair(source, "orders", None), RecordedPositions(cps, {})
    _, ordinary, _ = partition_positions(pair, recorded, "earliest", None, False)
    _, failback, _ = partition_positions(pair, recorded, "earliest", None, False, FAILBACK)
    assert "Re-run with --allow-gaps" in ordinary[0]
    lost = "copy.orders: offsets left the source (retention or DeleteRecords) before they were copied, in partition 0"
    assert failback[0].startswith(lost) and "--allow-gaps" not in failback[0]
    assert "this failback of cutover cutover-7 does not skip records: it stopped before writing anything" in failback[0]
    assert "--include 'copy\\.orders' --rename '{topic}.failback')" in failback[0]
