"""Nothing doubled when the target's acknowledgements are lost: the copy's producer retries, and the target still
holds every source record exactly once, in order.

The target's proxy forwards each Produce request to the broker, which appends the records, and then cuts the
connection in place of the answer, for the first few answers (harness/servers/lost_acks.py). The client cannot
know the write happened and sends it again. An idempotent producer's retry is recognised by the broker (same
producer id and sequence numbers) and not appended again; a producer without idempotence appends the batch once
more each time, which the control case shows on the same fault.

The product's copy path runs in this process (``copy_partitions_safely``, what a Spark task runs: the window path
for small slices, ``copy_partition`` for one alone) on the session's proxied pair (tests/conftest.py ``proxied``):
seconds, no Spark.
"""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import Producer

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from harness.servers.lost_acks import LostAcks
from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.config import ClusterPair
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run import copy
from tests.conftest import ProxiedPair

pytestmark = pytest.mark.integration

PER_PARTITION = 1_500
LOST = 3  # Produce answers lost in a row: the first write and its first two retries
SHORT = {"socket.timeout.ms": 10_000, "message.timeout.ms": 30_000}  # a hang fails in seconds, not minutes


@pytest.fixture(autouse=True)
def fresh_producers(monkeypatch: pytest.MonkeyPatch) -> None:
    """No producer cached by an earlier test: the copy's producer connects while the fault is set."""
    monkeypatch.setattr(copy, "_PRODUCERS", {})
    monkeypatch.setattr(copy, "_PRODUCER_TOPICS", {})


def seed(bootstrap: str, topic: str, partitions: int) -> list[list[dict[str, Any]]]:
    create_topic(bootstrap, topic, partitions)
    p = producer(bootstrap)
    for i in range(partitions * PER_PARTITION):
        send(p, topic, i % partitions, f"key-{i}".encode(), b"v" * 100, headers=[("i", str(i).encode())])
    p.flush(30)
    return [without_offsets(read_partition(bootstrap, topic, n)) for n in range(partitions)]


def doubled(expected: list[dict[str, Any]], found: list[dict[str, Any]]) -> str:
    """What differs, in a few words: the count, and the first record out of place (or the first extra one)."""
    first = next((i for i, (e, f) in enumerate(zip(expected, found, strict=False)) if e != f), None)
    if first is None and len(found) > len(expected):
        first = len(expected)
    where = (
        "" if first is None else f"; first difference at target offset {first}: source record {found[first]['headers']}"
    )
    return f"{len(found)} records on the target for {len(expected)} on the source{where}"


@pytest.mark.parametrize("partitions", [2, 1], ids=["window of slices", "one slice"])
def test_lost_acknowledgements_leave_every_record_once_and_in_order(
    proxied: ProxiedPair, unique: str, partitions: int
) -> None:
    source, target = proxied
    topic = f"lost-acks-{unique}"
    expected = seed(source.bootstrap, topic, partitions)
    create_topic(target.bootstrap, topic, partitions)
    fault = LostAcks(count=LOST)
    target.proxy.set_fault(fault)

    slices = [PartitionSlice(topic, topic, n, 0, PER_PARTITION, 0) for n in range(partitions)]
    clusters = ClusterPair.of_settings(
        {"bootstrap.servers": source.bootstrap, **SHORT}, {"bootstrap.servers": target.bootstrap, **SHORT}
    )
    results = copy.copy_partitions_safely(slices, clusters)

    assert fault.lost == LOST, f"the fault lost {fault.lost} of {LOST} answers: the test proved nothing"
    assert [r.error for r in results] == [None] * partitions
    for n in range(partitions):
        found = without_offsets(read_partition(target.bootstrap, topic, n))
        assert found == expected[n], doubled(expected[n], found)


def test_control_the_same_fault_doubles_the_records_of_a_producer_without_idempotence(
    proxied: ProxiedPair, unique: str
) -> None:
    """The fault is real: a producer as the copy's but without idempotence writes a batch once per lost answer
    more. Were this to pass with nothing doubled, the test above would prove nothing."""
    _, target = proxied
    topic = f"lost-acks-control-{unique}"
    create_topic(target.bootstrap, topic, 1)
    fault = LostAcks(count=LOST)
    target.proxy.set_fault(fault)
    settings = {"bootstrap.servers": target.bootstrap, "enable.idempotence": False, "acks": "all", **SHORT}
    p = Producer(client_settings(settings))
    for i in range(PER_PARTITION):
        p.produce(topic, value=b"v" * 100, partition=0, headers=[("i", str(i).encode())])
    assert p.flush(60) == 0
    assert fault.lost == LOST
    found = read_partition(target.bootstrap, topic, 0)
    assert len(found) > PER_PARTITION, "a producer without idempotence was not doubled: the fault did not bite"
