"""The bench's data: topics created and filled with seeded random records, and their end offsets.

Records are ``size`` bytes (key + value): a 10-byte key ``k%09d`` and a value from a pool of random
bytes, round-robin over the partitions, with explicit timestamps a day before the bench started.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_migration.kafka.settings import client_settings

KEY_BYTES = 10  # b"k%09d"
# Record timestamps: a day before the bench started, one millisecond apart. Apache Kafka deletes by
# time (7 days by default) whatever is older, so seeding with a fixed date in 2023 lost the data
# within seconds, on the source and on targets created without a retention override.
TIMESTAMP_BASE = int(time.time() * 1000) - 86_400_000


def seeding_producer(bootstrap: str) -> Producer:
    """The bench's seeding producer: large lz4 batches and a deep queue, idempotent (what every scenario seeds with)."""
    return Producer(
        client_settings(
            {
                "bootstrap.servers": bootstrap,
                "linger.ms": 100,
                "batch.size": 1024 * 1024,
                "compression.type": "lz4",
                "queue.buffering.max.messages": 500000,
                "queue.buffering.max.kbytes": 262144,
                "enable.idempotence": True,
            }
        )
    )


def admin(bootstrap: str) -> AdminClient:
    return AdminClient(client_settings({"bootstrap.servers": bootstrap}))


def create_topics(
    bootstrap: str, topics: Mapping[str, int], timeout: float = 60.0, replication_factor: int = 1
) -> None:
    """Create topics (name -> partitions) in one request and wait until every partition has a leader."""
    client = admin(bootstrap)
    new = [NewTopic(n, p, replication_factor) for n, p in topics.items()]
    futures = client.create_topics(new, operation_timeout=30)
    for future in futures.values():
        future.result(timeout=timeout)
    deadline = time.monotonic() + timeout
    pending = set(topics)
    while pending:
        metadata = client.list_topics(timeout=15)
        pending = {
            n
            for n in pending
            if n not in metadata.topics
            or metadata.topics[n].error is not None
            or len(metadata.topics[n].partitions) < topics[n]
            or any(p.leader < 0 for p in metadata.topics[n].partitions.values())
        }
        if pending and time.monotonic() > deadline:
            raise RuntimeError(f"topics without leader after {timeout}s: {sorted(pending)[:5]}")
        if pending:
            time.sleep(0.05)


def seed_topics(
    bootstrap: str,
    topics: Mapping[str, int],
    records: int,
    size: int = 200,
    rng_seed: int = 11,
    replication_factor: int = 1,
) -> float:
    """Create ``topics`` (on ``replication_factor`` replicas) and fill each with ``records`` records of ``size``
    bytes (key + value), round-robin over its partitions, with explicit timestamps. Returns the seconds taken."""
    started = time.monotonic()
    create_topics(bootstrap, topics, replication_factor=replication_factor)
    rng = random.Random(rng_seed)
    pool = [rng.randbytes(size - KEY_BYTES) for _ in range(4096)]
    p = seeding_producer(bootstrap)
    produce = p.produce
    for topic, partitions in topics.items():
        for i in range(records):
            args = (topic, pool[i & 4095], b"k%09d" % i)
            kwargs = {"partition": i % partitions, "timestamp": TIMESTAMP_BASE + i}
            while True:
                try:
                    produce(*args, **kwargs)
                    break
                except BufferError:
                    p.poll(0.05)
            if not i & 0xFFFF:
                p.poll(0)
    if p.flush(300):
        raise RuntimeError("seeding: records left unsent after 300 s")
    return time.monotonic() - started


def end_offsets(bootstrap: str, topics: Mapping[str, int]) -> dict[tuple[str, int], int]:
    consumer = Consumer(client_settings({"bootstrap.servers": bootstrap, "group.id": "bench-seeding"}))
    try:
        return {
            (t, p): consumer.get_watermark_offsets(TopicPartition(t, p), timeout=15, cached=False)[1]
            for t, n in topics.items()
            for p in range(n)
        }
    finally:
        consumer.close()
