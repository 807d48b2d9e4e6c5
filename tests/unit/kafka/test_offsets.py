"""kafka_migration.kafka.offsets: ListOffsets of many partitions, on a simulated broker (offsets_broker.py). How a
real broker answers is in the planner's integration tests and the scale bench; no timing is asserted here."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from confluent_kafka import IsolationLevel, KafkaError, KafkaException

from kafka_migration.exceptions import ClusterUnreachableError, ConfigurationError, MigrationError
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.offsets import METADATA_ONE_BY_ONE
from tests.unit.kafka.offsets_broker import RECORDS, SimulatedBroker, cluster_on, offset_of, simulated


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


def test_planning_lookups_read_committed_and_each_partition_is_asked_for_its_own_time(broker: SimulatedBroker) -> None:
    wanted = {("scale.00000", 0): 1_700_000_000_000, ("scale.00000", 1): 1_700_000_500_000, ("scale.00007", 0): 5}
    cluster = cluster_on(broker)
    cluster.offsets_for_times(wanted)
    cluster.offsets_at_ends({"scale.00000": 2})
    assert broker.asked[0].asked == wanted
    assert [set(r.asked.values()) for r in broker.asked[1:]] == [{"earliest"}, {"latest"}]
    # A transaction still open is not planned from: read_committed, whatever the lookup.
    assert {r.isolation for r in broker.asked} == {IsolationLevel.READ_COMMITTED}
    assert {r.timeout for r in broker.asked} == {cluster.timeout}  # each request bounded by the client's timeout


def test_log_starts_read_uncommitted_of_the_topics_that_exist(broker: SimulatedBroker) -> None:
    broker.topics = {"scale.00001": 2, "scale.00002": 1, "scale.00003": 4}
    cluster = cluster_on(broker)
    starts = cluster.log_starts(["scale.00002", "scale.00001", "scale.00009", "scale.00001"])
    assert starts == {("scale.00002", 0): 2000, ("scale.00001", 0): 1000, ("scale.00001", 1): 1001}
    assert [(r.isolation, r.timeout) for r in broker.asked] == [(IsolationLevel.READ_UNCOMMITTED, cluster.timeout)]
    assert set(broker.asked[0].asked.values()) == {"earliest"}


def test_log_ends_are_the_high_watermark_and_the_last_stable_offset_of_the_topics_that_exist(
    broker: SimulatedBroker,
) -> None:
    broker.topics = {"scale.00001": 2, "scale.00002": 1}
    broker.open_transactions = {("scale.00001", 1): 7}  # 7 records of a transaction not yet committed
    ends = cluster_on(broker).log_ends(["scale.00002", "scale.00001", "scale.00009"])
    assert ends == {
        ("scale.00001", 0): (1000 + RECORDS, 1000 + RECORDS),
        ("scale.00001", 1): (1001 + RECORDS, 1001 + RECORDS - 7),
        ("scale.00002", 0): (2000 + RECORDS, 2000 + RECORDS),
    }
    assert list(ends) == sorted(ends)
    assert [r.isolation for r in broker.asked] == [IsolationLevel.READ_UNCOMMITTED, IsolationLevel.READ_COMMITTED]
    assert {a for r in broker.asked for a in r.asked.values()} == {"latest"}


def test_no_topic_that_exists_no_offset_request(broker: SimulatedBroker) -> None:
    broker.topics = {"scale.00001": 1}
    cluster = cluster_on(broker)
    assert cluster.log_starts(["scale.00009"]) == {} and cluster.log_ends([]) == {}
    assert broker.requests == []


@pytest.mark.parametrize(
    ("lookup", "what"),
    [
        (lambda c: c.offsets_for_times({("scale.00001", 1): 5}), "find offsets by time"),
        (lambda c: c.offsets_at_ends({"scale.00001": 2}), "list earliest offsets"),
        (lambda c: c.log_starts(["scale.00001"]), "list start offsets"),
        (lambda c: c.log_ends(["scale.00001"]), "list end offsets"),
    ],
)
def test_an_error_that_does_not_pass_names_the_lookup_and_the_partition_and_is_not_asked_again(
    broker: SimulatedBroker, lookup: Callable[[KafkaCluster], object], what: str
) -> None:
    broker.topics = {"scale.00001": 2}
    broker.failing = {("scale.00001", 1): KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART))}
    with pytest.raises(MigrationError) as caught:
        lookup(cluster_on(broker))
    assert str(caught.value) == (
        f"source cluster b:9092: could not {what}: scale.00001[1]: "
        'KafkaError{code=UNKNOWN_TOPIC_OR_PART,val=3,str="Broker: Unknown topic or partition"}'
    )
    assert len(broker.requests) == 1


def test_a_failure_that_carries_no_kafka_error_is_reported_not_asked_again(broker: SimulatedBroker) -> None:
    broker.failing = {("scale.00000", 0): KafkaException("the client failed")}
    with pytest.raises(MigrationError, match=r"could not find offsets by time: scale\.00000\[0\]: the client failed$"):
        cluster_on(broker).offsets_for_times(_wanted(3))
    assert broker.requests == [3]


def test_an_answer_the_client_never_gets_is_the_cluster_unreachable_at_once(broker: SimulatedBroker) -> None:
    broker.failing = {("scale.00002", 0): TimeoutError()}  # what waiting on a future that never completes raises
    with pytest.raises(ClusterUnreachableError, match=r"no answer to: find offsets by time: scale\.00002\[0\]"):
        cluster_on(broker).offsets_for_times(_wanted(3))
    assert broker.requests == [3]


def test_a_request_whose_every_partition_is_electing_a_leader_is_asked_again_whole(broker: SimulatedBroker) -> None:
    # The broker answered (the leader is moving): not a sign of overload, so the request is not split.
    broker.electing = dict.fromkeys(_wanted(4), 1)
    wanted = _wanted(4)
    assert cluster_on(broker).offsets_for_times(wanted) == {key: offset_of(key) for key in wanted}
    assert broker.requests == [4, 4]


def test_a_request_whose_every_partition_timed_out_is_asked_again_in_halves(broker: SimulatedBroker) -> None:
    # librdkafka's own timeout (_TIMED_OUT) for each partition: the request was too much for the broker.
    broker.answers_up_to = 2
    broker.overload_error = KafkaError._TIMED_OUT
    wanted = _wanted(4)
    assert cluster_on(broker).offsets_for_times(wanted) == {key: offset_of(key) for key in wanted}
    assert broker.requests == [4, 2, 2]


def test_a_request_of_two_that_timed_out_is_asked_again_one_partition_each(broker: SimulatedBroker) -> None:
    broker.answers_up_to = 1
    wanted = _wanted(2)
    assert cluster_on(broker).offsets_for_times(wanted) == {key: offset_of(key) for key in wanted}
    assert broker.requests == [2, 1, 1]


def test_a_partition_is_given_up_when_its_window_is_over_exactly(broker: SimulatedBroker) -> None:
    # Each try costs 2 s of the simulated clock (a 1.8 s request, the 0.2 s pause); the window, twice the 4.9 s
    # timeout, is over at the fifth answer: not asked a sixth time.
    broker.never = frozenset({("scale.00000", 0)})
    broker.request_seconds = 1.8
    with pytest.raises(MigrationError, match="timed out"):
        cluster_on(broker, timeout=4.9).offsets_for_times(_wanted(1))
    assert broker.requests == [1] * 5 and broker.now == 9.8


def test_the_timed_out_message_in_full(broker: SimulatedBroker) -> None:
    broker.never = frozenset({("scale.00001", 0)})
    with pytest.raises(MigrationError) as caught:
        cluster_on(broker).offsets_for_times(_wanted(3))
    assert str(caught.value) == (
        "source cluster b:9092: could not find offsets by time: scale.00001[0]: timed out, no answer from its "
        "leader within 30s (asked with 0 other partitions in one request, 3 in all; 1 still without an answer). "
        "The broker is overloaded, or the leader is down and not yet replaced; nothing was written: try again."
    )


def test_the_acl_refusal_names_the_permission_and_the_command_that_grants_it(broker: SimulatedBroker) -> None:
    broker.refused = frozenset({"scale.00001"})
    with pytest.raises(ConfigurationError) as caught:
        cluster_on(broker).offsets_at_ends({"scale.00001": 1})
    assert str(caught.value) == (
        "The source cluster b:9092 does not allow this connection's principal: Describe on topic scale.00001 (to "
        "read its offsets; Read implies it) (TOPIC_AUTHORIZATION_FAILED). Add the ACL: kafka-acls.sh "
        "--bootstrap-server b:9092 --command-config <admin.properties> --add --allow-principal User:<principal> "
        "--operation Describe --topic scale.00001. Nothing was written."
    )


@pytest.mark.parametrize(
    ("topics", "asked"),
    [
        (METADATA_ONE_BY_ONE, [f"scale.{t:05d}" for t in range(METADATA_ONE_BY_ONE)]),  # one request per topic
        (METADATA_ONE_BY_ONE + 1, [None]),  # one for the whole cluster
    ],
)
def test_metadata_is_refreshed_per_topic_for_a_few_and_for_the_cluster_for_more(
    broker: SimulatedBroker, topics: int, asked: list[str | None]
) -> None:
    broker.electing = dict.fromkeys(_wanted(topics), 1)
    cluster = cluster_on(broker)
    cluster.offsets_for_times(_wanted(topics))
    assert broker.metadata_asked == asked
    assert set(broker.metadata_timeouts) == {cluster.timeout}  # bounded: never waits forever for metadata


def test_a_metadata_refresh_that_fails_does_not_fail_the_lookup(broker: SimulatedBroker) -> None:
    broker.electing = {("scale.00001", 0): 2}
    broker.metadata_fails = True
    wanted = _wanted(3)
    assert cluster_on(broker).offsets_for_times(wanted) == {key: offset_of(key) for key in wanted}
    assert broker.metadata_asked == ["scale.00001", "scale.00001"]
