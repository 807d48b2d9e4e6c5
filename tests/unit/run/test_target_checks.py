"""kafka_migration.run.target_checks: the planner's lookups by time, against a simulated broker that answers
ListOffsets only up to some size per request (tests/unit/kafka/offsets_broker.py), so that the batching stays honest
at the scale of thousands of topics; no timing is asserted."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import cast

import pytest

from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.ledger import Ledger
from kafka_migration.model.checkpoints import Checkpoint, Key
from kafka_migration.model.offsets import MappedSegment
from kafka_migration.model.plan import ClusterInfo, PartitionPlan, TargetLoss, TopicPlan
from kafka_migration.model.state import TopicState
from kafka_migration.run import target_checks
from kafka_migration.run.losses import loss_message
from kafka_migration.run.target_checks import PlanningReads, drop_aged, find_losses
from tests.unit.factories import topic_plan, topic_state
from tests.unit.kafka.offsets_broker import SimulatedBroker, cluster_on, simulated

TOPICS = 5000
RECORDS = 100
AGED = 30  # records older than the target keeps, at the start of every odd topic


def _name(i: int) -> str:
    return f"scale.{i:05d}"


def _first_kept(key: tuple[str, int]) -> int:
    """The first offset at or after the asked time: AGED in odd topics, 0 (nothing older) in even ones."""
    return AGED if int(key[0].rsplit(".", 1)[1]) % 2 else 0


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> SimulatedBroker:
    fake = simulated(monkeypatch)
    fake.answer = _first_kept
    fake.answers_up_to = 1000  # as the loaded broker of the scale issue: 5,000 in one request timed out
    return fake


def _plans(count: int) -> tuple[list[TopicPlan], dict[str, TopicState]]:
    states = {
        _name(i): topic_state(_name(i), 1, configs={"retention.ms": "604800000"}, latest=RECORDS) for i in range(count)
    }
    return [topic_plan(_name(i), (RECORDS,)) for i in range(count)], states


def test_thousands_of_topics_have_their_aged_records_left_out_through_bounded_requests(broker: SimulatedBroker) -> None:
    plans, states = _plans(TOPICS)
    topics, warnings, problems = drop_aged(cluster_on(broker), plans, states, {}, set())
    assert problems == []
    starts = {t.source_topic: (t.partitions[0].start, t.partitions[0].aged) for t in topics}
    assert starts == {_name(i): (AGED, AGED) if i % 2 else (0, 0) for i in range(TOPICS)}
    assert len(warnings) == TOPICS // 2 and warnings[0].startswith(f"{_name(1)}: {AGED} offsets in partition 0")
    assert max(broker.requests) <= KafkaCluster.LOOKUP_BATCH and sum(broker.requests) == TOPICS  # each asked once


def test_only_partitions_whose_start_the_lookup_can_move_are_asked(broker: SimulatedBroker) -> None:
    plans, states = _plans(4)
    plans[1] = topic_plan(_name(1), (0,))  # nothing to copy
    states[_name(2)] = topic_state(_name(2), 1, configs={"retention.ms": "-1"}, latest=RECORDS)  # kept forever
    states[_name(3)] = topic_state(_name(3), 1, configs={"cleanup.policy": "compact"}, latest=RECORDS)
    drop_aged(cluster_on(broker), plans, states, {}, set())
    assert broker.requests == [1]  # topic 0 alone


def test_a_target_that_keeps_less_gets_the_records_at_risk_counted_for_its_refusal(broker: SimulatedBroker) -> None:
    plans, states = _plans(2)
    short = {_name(1): topic_state(_name(1), 1, configs={"retention.ms": "86400000"}, latest=0)}
    topics, warnings, problems = drop_aged(cluster_on(broker), plans, states, short, {_name(1)})
    assert warnings == [] and topics[1].partitions[0].start == 0  # a refused topic's plan is left as it is
    assert problems == [
        f"{AGED} records of source topic '{_name(1)}' are older than target topic '{_name(1)}' keeps "
        "(retention.ms=86400000 (1 day)) in partition 0: the target would delete them at its next retention pass."
    ]


NOW_MS = 1_700_000_000_000
WEEK_MS, DAY_MS = 604_800_000, 86_400_000


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(target_checks.time, "time", lambda: NOW_MS / 1000)
    return NOW_MS


def _kept(ms: int) -> dict[str, str]:
    return {"retention.ms": str(ms)}


def _partition(
    p: int, start: int, end: int, *, earliest: int = 0, origin: str = "earliest", aged: int = 0
) -> PartitionPlan:
    return PartitionPlan(p, start, end, target_start=0, earliest=earliest, latest=end, origin=origin, aged=aged)


def _plan(name: str, *partitions: PartitionPlan) -> TopicPlan:
    return replace(topic_plan(name), partitions=partitions)


def test_each_partition_is_asked_for_the_time_its_target_topic_keeps_back_to(
    broker: SimulatedBroker, clock: int
) -> None:
    plans, states = _plans(3)  # the source keeps a week
    targets = {
        _name(1): topic_state(_name(1), 1, configs=_kept(DAY_MS)),  # existing, keeps less (accepted: not refused)
        _name(2): topic_state(_name(2), 1, configs=_kept(-1)),  # existing, keeps forever: nothing ages
    }
    drop_aged(cluster_on(broker), plans, states, targets, set())
    # A topic created on the target gets the source's retention.
    assert broker.times_asked() == {(_name(0), 0): clock - WEEK_MS, (_name(1), 0): clock - DAY_MS}


def test_partitions_with_records_to_copy_from_their_first_are_asked_whatever_comes_before(
    broker: SimulatedBroker,
) -> None:
    plans, states = _plans(3)
    states[_name(0)] = topic_state(_name(0), 1, configs=_kept(-1), latest=RECORDS)  # kept forever, listed first
    plans[1] = _plan(
        _name(1),
        _partition(0, 0, 0),  # nothing to copy
        _partition(1, 99, 100),  # one record
        _partition(2, 40, 100, origin="resume"),  # where the last run stopped: its earlier records were taken
    )
    states[_name(1)] = topic_state(_name(1), 3, configs=_kept(WEEK_MS), latest=RECORDS)
    drop_aged(cluster_on(broker), plans, states, {}, set())
    assert set(broker.times_asked()) == {(_name(1), 1), (_name(2), 0)}


def test_a_partition_whose_every_record_is_older_than_the_target_keeps_is_left_out_whole(
    broker: SimulatedBroker,
) -> None:
    broker.answer = lambda key: -1  # no record at or after the asked time
    plans, states = _plans(1)
    topics, warnings, problems = drop_aged(cluster_on(broker), plans, states, {}, set())
    assert topics[0].partitions == (replace(plans[0].partitions[0], start=RECORDS, aged=RECORDS),)
    assert problems == []
    assert warnings == [
        f"{_name(0)}: {RECORDS} offsets in partition 0 hold records older than target topic {_name(0)} keeps "
        "(retention.ms=604800000 (7 days)); not copied: the target would delete them at its next retention pass, "
        "so no run verifies them (they are past the source's own time retention too, or a target that keeps less "
        "was accepted)"
    ]


def test_aged_offsets_count_from_where_the_plan_started_and_add_to_those_aged_before(broker: SimulatedBroker) -> None:
    broker.answer = lambda key: 30
    plans, states = _plans(1)
    plans[0] = _plan(_name(0), _partition(0, 10, 100, earliest=10, aged=5))
    topics, warnings, _ = drop_aged(cluster_on(broker), plans, states, {}, set())
    assert topics[0].partitions == (_partition(0, 30, 100, earliest=10, aged=25),)
    assert warnings[0].startswith(f"{_name(0)}: 20 offsets in partition 0 hold records older")


def test_a_partition_not_asked_keeps_its_plan_beside_one_that_aged(broker: SimulatedBroker) -> None:
    plans, states = _plans(2)
    plans[1] = _plan(_name(1), _partition(0, 0, 0), _partition(1, 0, RECORDS))
    states[_name(1)] = topic_state(_name(1), 2, configs=_kept(WEEK_MS), latest=RECORDS)
    topics, warnings, _ = drop_aged(cluster_on(broker), plans, states, {}, set())
    assert topics[1].partitions == (_partition(0, 0, 0), _partition(1, AGED, RECORDS, aged=AGED))
    assert [w.split(" hold ")[0] for w in warnings] == [f"{_name(1)}: {AGED} offsets in partition 1"]


def test_records_at_risk_are_counted_per_partition_from_the_source_log_start(broker: SimulatedBroker) -> None:
    plans, states = _plans(3)
    refused = _name(1)
    first = {(refused, 0): 30, (refused, 1): -1, (refused, 2): 50}
    broker.answer = lambda key: first.get(key, 0)
    plans[1] = _plan(
        refused,
        _partition(0, 10, 100, earliest=10),  # 20 older than the target keeps
        _partition(1, 0, 100),  # every record older: 100
        _partition(2, 50, 100, earliest=50),  # none older
    )
    states[refused] = topic_state(refused, 3, configs=_kept(WEEK_MS), latest=RECORDS)
    short = {refused: topic_state(refused, 3, configs=_kept(DAY_MS), latest=0)}
    topics, warnings, problems = drop_aged(cluster_on(broker), plans, states, short, {refused})
    assert topics == plans and warnings == []  # the refused topic as it was, and the topics after it
    assert problems == [
        f"120 records of source topic '{refused}' are older than target topic '{refused}' keeps "
        "(retention.ms=86400000 (1 day)) in partitions 0–1 (2 partitions): the target would delete them at its next "
        "retention pass."
    ]


# find_losses: verified records a target topic lost, through the ledger's offset map.

SOURCE_INFO = ClusterInfo("source", "s:9092", "source-id", 1)
TARGET_INFO = ClusterInfo("target", "t:9092", "target-id", 1)


@dataclass
class FakeLedger:
    """The ledger's verified offset maps and accepted losses between the clusters of SOURCE_INFO and TARGET_INFO
    (other cluster ids: none); keeps the source topics each lookup asked for."""

    segments: dict[Key, list[MappedSegment]]
    marks: dict[Key, int] = field(default_factory=dict)
    topics_asked: list[object] = field(default_factory=list)

    def _ours(self, source_cluster_id: str, target_cluster_id: str) -> bool:
        return (source_cluster_id, target_cluster_id) == (SOURCE_INFO.cluster_id, TARGET_INFO.cluster_id)

    def verified_segments(
        self, source_cluster_id: str, target_cluster_id: str, topics: list[str] | None = None
    ) -> dict[Key, list[MappedSegment]]:
        self.topics_asked.append(topics)
        if not self._ours(source_cluster_id, target_cluster_id):
            return {}
        return {k: v for k, v in self.segments.items() if topics is None or k[0] in topics}

    def accepted_loss_marks(self, source_cluster_id: str, target_cluster_id: str) -> dict[Key, int]:
        return dict(self.marks) if self._ours(source_cluster_id, target_cluster_id) else {}


@dataclass
class Verified:
    """Topics earlier runs verified (source offsets 0-100 of each partition to target 0-100) and what planning
    reads of them now: the source's states, the target's (whose log start may have moved), the checkpoints."""

    states: dict[str, TopicState] = field(default_factory=dict)
    targets: dict[str, TopicState] = field(default_factory=dict)
    checkpoints: dict[Key, Checkpoint] = field(default_factory=dict)
    ledger: FakeLedger = field(default_factory=lambda: FakeLedger({}))

    def topic(
        self,
        source: str,
        target_starts: dict[int, int],
        *,
        target: str | None = None,
        kept: int = WEEK_MS,
        target_kept: int = WEEK_MS,
        latest: dict[int, int] | None = None,
    ) -> None:
        target = target or source
        count = len(target_starts)
        self.states[source] = topic_state(source, count, configs=_kept(kept), latest=latest or 100)
        self.targets[target] = topic_state(target, count, configs=_kept(target_kept), earliest=target_starts)
        for p in range(count):
            self.checkpoints[(source, p, target)] = Checkpoint(100, 100, "run-1")
            self.ledger.segments[(source, p, target)] = [MappedSegment("run-1", 0, 100, 0, 100, ((0, 0),))]

    def find(
        self, broker: SimulatedBroker, *, accept_loss: bool = False, accept_less: bool = False, ledger: bool = True
    ) -> tuple[list[TargetLoss], list[str]]:
        pairs = [(s, t) for s, _, t in sorted(self.checkpoints)]
        return find_losses(
            cluster_on(broker),
            cast(Ledger, self.ledger) if ledger else None,
            (SOURCE_INFO, TARGET_INFO),
            PlanningReads(list(dict.fromkeys(pairs)), self.states, self.targets, self.checkpoints),
            accept_loss,
            accept_less,
        )


def _loss(
    topic: str, partition: int, start: int, end: int, *, accepted: bool = False, target: str | None = None
) -> TargetLoss:
    return TargetLoss(topic, target or topic, partition, start, end, start, end, "run-1", accepted)


def test_verified_records_each_target_topic_lost_are_found_per_topic(broker: SimulatedBroker, clock: int) -> None:
    verified = Verified()
    verified.topic("orders", {0: 40})  # the target's log start moved to 40
    verified.topic("payments", {0: 20, 1: 0})  # partition 1 lost nothing
    verified.topic("kept", {0: 0})
    verified.topic("deleted", {0: 60})  # gone from the source since: planning read no state of it
    del verified.states["deleted"]
    first = {("orders", 0): 0, ("payments", 0): 10}  # payments keeps records from offset 10 on
    broker.answer = first.__getitem__
    losses, lines = verified.find(broker)
    assert losses == [_loss("orders", 0, 0, 40), _loss("payments", 0, 10, 20)]
    assert lines == [
        loss_message([_loss("orders", 0, 0, 40)], "t:9092"),
        loss_message([_loss("payments", 0, 10, 20)], "t:9092"),
    ]
    # One lookup for both topics, as far back as the source keeps.
    assert [r.asked for r in broker.asked] == [dict.fromkeys(first, clock - WEEK_MS)]
    assert verified.ledger.topics_asked == [["orders", "payments"]]  # the offset maps of those topics only


@pytest.mark.parametrize(
    ("kept", "target_kept", "accept_less", "asked"),
    [
        (WEEK_MS, DAY_MS, False, WEEK_MS),  # lost past the source's retention: a loss
        (WEEK_MS, DAY_MS, True, DAY_MS),  # a target that keeps less was accepted: what it ages out is no loss
        (-1, DAY_MS, True, DAY_MS),
        (-1, DAY_MS, False, None),  # the source keeps everything: no lookup, all it holds counts
    ],
)
def test_the_lookup_reaches_back_as_far_as_losses_count(
    broker: SimulatedBroker, clock: int, kept: int, target_kept: int, accept_less: bool, asked: int | None
) -> None:
    verified = Verified()
    verified.topic("orders", {0: 40}, kept=kept, target_kept=target_kept)
    broker.answer = lambda key: 0
    losses, _ = verified.find(broker, accept_less=accept_less)
    assert losses == [_loss("orders", 0, 0, 40)]
    assert broker.times_asked() == ({("orders", 0): clock - asked} if asked is not None else {})


def test_records_all_past_the_source_retention_are_no_loss(broker: SimulatedBroker) -> None:
    verified = Verified()
    verified.topic("orders", {0: 40, 1: 40}, latest={0: 30, 1: 100})
    first = {("orders", 0): 0, ("orders", 1): -1}  # every record of partition 1 is past the source's retention
    broker.answer = first.__getitem__
    losses, lines = verified.find(broker)
    assert losses == [_loss("orders", 0, 0, 40)]
    assert len(lines) == 1


def test_a_loss_accepted_before_counts_from_its_mark_and_one_accepted_now_is_marked(broker: SimulatedBroker) -> None:
    verified = Verified()
    verified.topic("orders", {0: 40})
    verified.ledger.marks = {("orders", 0, "orders"): 25}
    broker.answer = lambda key: 0
    assert verified.find(broker)[0] == [_loss("orders", 0, 25, 40)]
    losses, lines = verified.find(broker, accept_loss=True)
    assert losses == [_loss("orders", 0, 25, 40, accepted=True)]
    assert "accepted (--accept-target-loss)" in lines[0]


def test_no_ledger_or_no_target_log_start_moved_nothing_is_asked(broker: SimulatedBroker) -> None:
    verified = Verified()
    verified.topic("orders", {0: 40})
    assert verified.find(broker, ledger=False) == ([], [])
    verified = Verified()
    verified.topic("orders", {0: 0})
    assert verified.find(broker) == ([], [])
    assert broker.requests == [] and verified.ledger.topics_asked == []


def test_a_source_topic_verified_into_two_target_topics_has_each_looked_at(broker: SimulatedBroker) -> None:
    # Re-migrated under another name (--rename '{topic}.v2', as the loss message advises): the ledger holds both.
    verified = Verified()
    verified.topic("orders", {0: 40})
    verified.topic("orders", {0: 10}, target="orders.v2")
    broker.answer = lambda key: 0
    losses, lines = verified.find(broker)
    assert losses == [_loss("orders", 0, 0, 40), _loss("orders", 0, 0, 10, target="orders.v2")]
    assert len(lines) == 2 and "target topic orders.v2 no longer holds 10 verified records" in lines[1]
    assert broker.requests == [1]  # both count back to the source's retention: one lookup


def test_two_target_topics_that_keep_back_to_different_times_get_a_lookup_each(
    broker: SimulatedBroker, clock: int
) -> None:
    verified = Verified()
    verified.topic("orders", {0: 40}, target_kept=DAY_MS)
    verified.topic("orders", {0: 10}, target="orders.v2", target_kept=2 * DAY_MS)
    first = {clock - DAY_MS: 20, clock - 2 * DAY_MS: 5}  # where each target's accepted retention reaches back to
    broker.answer = lambda key: first[broker.asked[-1].asked[key]]
    losses, _ = verified.find(broker, accept_less=True)
    assert losses == [_loss("orders", 0, 20, 40), _loss("orders", 0, 5, 10, target="orders.v2")]
    assert [r.asked for r in broker.asked] == [{("orders", 0): clock - DAY_MS}, {("orders", 0): clock - 2 * DAY_MS}]
