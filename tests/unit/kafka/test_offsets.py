"""kafka_migration.kafka.offsets: ListOffsets of many partitions, on a simulated broker (offsets_broker.py). How a
real broker answers is in the planner's integration tests and the scale bench; no timing is asserted here."""

from __future__ import annotations

import math

import pytest
from confluent_kafka import KafkaError

from kafka_migration.exceptions import ConfigurationError, MigrationError
from kafka_migration.kafka.clients import KafkaCluster
from tests.unit.kafka.offsets_broker import SimulatedBroker, cluster_on, offset_of, simulated


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> SimulatedBroker:
    return simulated(monkeypatch)


def _wanted(topics: int, partitions: int = 1) -> dict[tuple[str, int], int]:
    return {(f"scale.{t:05d}", p): 1_700_000_000_000 for t in range(topics) for p in range(partitions)}


def test_thousands_of_partitions_are_asked_in_bounded_requests_and_every_one_answered(broker: SimulatedBroker) -> None:
    # Like the loaded broker of the scale issue: 1,000 partitions answered in time, 5,000 not.
    broker.answers_up_to = 1000
    wanted = _wanted(5000)
    found = cluster_on(broker).offsets_for_times(wanted)
    assert found == {key: offset_of(key) for key in wanted}
    assert max(broker.requests) <= KafkaCluster.LOOKUP_BATCH
    assert len(broker.requests) == math.ceil(5000 / KafkaCluster.LOOKUP_BATCH)  # no partition asked twice


def test_a_request_timed_out_whole_is_asked_again_in_halves_until_the_broker_answers(broker: SimulatedBroker) -> None:
    broker.answers_up_to = 70  # busier still: even a batch is too much
    wanted = _wanted(1000)
    cluster = cluster_on(broker)
    assert cluster.offsets_for_times(wanted) == {key: offset_of(key) for key in wanted}
    batch = KafkaCluster.LOOKUP_BATCH
    assert broker.requests[: math.ceil(1000 / batch)] == [batch] * math.ceil(1000 / batch)
    # 250 -> 125 -> 62: each timed-out request was asked again in two, never more than a batch at once.
    assert {batch // 2, batch // 4} <= set(broker.requests) and max(broker.requests) == batch
    assert broker.now < 2 * cluster.timeout  # within the first partitions' window


@pytest.mark.parametrize(
    "error",
    [KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError.OFFSET_NOT_AVAILABLE],
)
def test_a_partition_whose_leader_is_being_elected_is_asked_again_with_fresh_metadata(
    broker: SimulatedBroker, error: int
) -> None:
    # A rolling restart moves leaders while a run plans: the new leader answers after a few tries.
    broker.electing = {("scale.00003", 0): 3}
    broker.electing_error = error
    wanted = _wanted(10)
    assert cluster_on(broker).offsets_for_times(wanted) == {key: offset_of(key) for key in wanted}
    assert broker.requests == [10, 1, 1, 1]  # only the electing partition asked again
    assert broker.metadata_asked == ["scale.00003"] * 3  # its new leader looked up before each new request


def test_metadata_for_many_retried_topics_is_one_request(broker: SimulatedBroker) -> None:
    broker.electing = {key: 1 for key in _wanted(40)}
    cluster_on(broker).offsets_for_times(_wanted(40))
    assert broker.metadata_asked == [None]  # the whole cluster's, once; not one request per topic


def test_a_partition_that_never_answers_is_named_as_timed_out_with_how_many_were_asked(broker: SimulatedBroker) -> None:
    broker.never = frozenset({("scale.00550", 0)})  # in the third request
    broker.request_seconds = 5.0  # a slow broker: the third request is sent 10 s after the first
    cluster = cluster_on(broker)
    with pytest.raises(MigrationError) as caught:
        cluster.offsets_for_times(_wanted(600))
    message = str(caught.value)
    assert "could not find offsets by time: scale.00550[0]: timed out" in message
    assert f"within {2 * cluster.timeout:.0f}s" in message
    assert "(asked with 0 other partitions in one request, 600 in all; 1 still without an answer)" in message
    assert "nothing was written: try again" in message
    # Given up once the partition had its whole window from its own first request, not before, not much after.
    first_asked = 2 * broker.request_seconds
    window = 2 * cluster.timeout
    assert first_asked + window <= broker.now <= first_asked + window + 2 * (broker.request_seconds + 0.2)


def test_a_refusal_by_the_acls_names_the_permission_at_once(broker: SimulatedBroker) -> None:
    broker.refused = frozenset({"scale.00001"})
    with pytest.raises(ConfigurationError, match=r"Describe"):
        cluster_on(broker).offsets_at_ends({"scale.00000": 1, "scale.00001": 2})
    assert broker.requests == [3]  # not asked again


def test_earliest_and_latest_offsets_of_many_topics_come_back_per_topic(broker: SimulatedBroker) -> None:
    broker.answers_up_to = KafkaCluster.LOOKUP_BATCH
    found = cluster_on(broker).offsets_at_ends({f"scale.{t:05d}": 3 for t in range(300)})
    assert found[("earliest", "scale.00299")] == {p: offset_of(("scale.00299", p)) for p in range(3)}
    assert set(found) == {(k, f"scale.{t:05d}") for k in ("earliest", "latest") for t in range(300)}
    assert max(broker.requests) <= KafkaCluster.LOOKUP_BATCH


def test_no_partition_no_request(broker: SimulatedBroker) -> None:
    assert cluster_on(broker).offsets_for_times({}) == {}
    assert broker.requests == []
