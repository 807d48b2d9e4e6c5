"""kafka_migration.run.target_checks: the planner's lookups by time, against a simulated broker that answers
ListOffsets only up to some size per request (tests/unit/kafka/offsets_broker.py), so that the batching stays honest
at the scale of thousands of topics; no timing is asserted."""

from __future__ import annotations

import pytest

from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.plan import TopicPlan
from kafka_migration.model.state import TopicState
from kafka_migration.run.target_checks import drop_aged
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
