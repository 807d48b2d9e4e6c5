"""Consumer-group clients for tests: commit positions, keep a group active, read where a group resumes.

The consumers use a short session timeout, so that a test's member leaves its group soon after
the test closes it. The product itself never joins groups.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from harness.data.seed import producer, send
from kafka_migration.kafka.settings import client_settings

FAST_GROUP = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500, "max.poll.interval.ms": 10000}
# The two consumer group protocols of Apache Kafka 4: the classic one (JoinGroup/SyncGroup, timeouts set by the
# client) and KIP-848's (ConsumerGroupHeartbeat: the broker assigns, and owns the session timeout).
CLASSIC = "classic"
CONSUMER = "consumer"


def group_consumer(
    bootstrap: str, group: str, *, settings: Mapping[str, Any] | None = None, protocol: str = CLASSIC, **extra: Any
) -> Consumer:
    """A consumer of ``group``; ``settings`` for a secured cluster; ``protocol`` classic or consumer (KIP-848)."""
    timeouts = FAST_GROUP if protocol == CLASSIC else {"max.poll.interval.ms": 10000}
    return Consumer(
        client_settings(
            {
                **(settings or {}),
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "group.protocol": protocol,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 100,
                **timeouts,
                **extra,
            }
        )
    )


def commit(
    bootstrap: str,
    group: str,
    offsets: Mapping[tuple[str, int], int],
    settings: Mapping[str, Any] | None = None,
) -> None:
    """Commit positions for a group as a consumer does (the next offset to read), without joining it."""
    consumer = group_consumer(bootstrap, group, settings=settings)
    try:
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def _state(admin: Any, group: str) -> str:
    """The group's state; "LOADING" while its coordinator loads (a cluster's first group request makes the
    offsets topic) or moves: Kafka calls those errors retriable."""
    from confluent_kafka import KafkaError, KafkaException

    try:
        return str(admin.describe_consumer_groups([group])[group].result(10).state.name)
    except KafkaException as exc:
        retriable = (
            KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
            KafkaError.COORDINATOR_NOT_AVAILABLE,
            KafkaError.NOT_COORDINATOR,
        )
        if exc.args and exc.args[0].code() in retriable:
            return "LOADING"
        raise


@contextlib.contextmanager
def active_member(
    bootstrap: str, group: str, topics: list[str], timeout: float = 60.0, protocol: str = CLASSIC
) -> Iterator[None]:
    """A running consumer in ``group`` (subscribed, polling, committing nothing) until the block ends."""
    from confluent_kafka.admin import AdminClient

    consumer = group_consumer(bootstrap, group, protocol=protocol)
    consumer.subscribe(topics)
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            consumer.poll(0.2)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    admin = AdminClient(client_settings({"bootstrap.servers": bootstrap}))
    deadline = time.monotonic() + timeout
    try:
        while _state(admin, group) != "STABLE":
            if time.monotonic() > deadline:
                raise TimeoutError(f"group {group} did not become STABLE within {timeout}s")
            time.sleep(0.3)
        yield
    finally:
        stop.set()
        thread.join(10)
        consumer.close()  # leaves the group: EMPTY again


def resume_records(
    bootstrap: str,
    group: str,
    topic: str,
    partitions: Iterable[int],
    timeout: float = 60.0,
    protocol: str = CLASSIC,
    settings: Mapping[str, Any] | None = None,
) -> dict[int, dict[str, Any]]:
    """Subscribe as ``group`` and return the first record each partition delivers (offset and fields)."""
    wanted = set(partitions)
    consumer = group_consumer(bootstrap, group, settings=settings, protocol=protocol, **{"auto.offset.reset": "error"})
    consumer.subscribe([topic])
    found: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    try:
        while wanted - set(found):
            if time.monotonic() > deadline:
                raise TimeoutError(f"group {group} got nothing from {sorted(wanted - set(found))} within {timeout}s")
            msg = consumer.poll(0.2)
            if msg is None or msg.error() or msg.partition() in found:
                continue
            found[msg.partition()] = {
                "offset": msg.offset(),
                "key": msg.key(),
                "value": msg.value(),
                "headers": list(msg.headers() or []),
                "timestamp": msg.timestamp()[1],
            }
    finally:
        consumer.close()  # nothing committed: the group's positions stay as they were
    return found


@contextlib.contextmanager
def busy_producer(bootstrap: str, topic: str, partitions: int) -> Iterator[None]:
    """Keep writing to ``topic`` until the block ends."""
    stop = threading.Event()

    def write() -> None:
        p = producer(bootstrap, **{"linger.ms": 5})
        i = 0
        while not stop.is_set():
            send(p, topic, i % partitions, f"busy-{i}".encode(), b"still writing")
            p.poll(0)
            i += 1
            stop.wait(0.05)
        p.flush(10)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(15)
