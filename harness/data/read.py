"""Independent reads of whole partitions, for tests that check the target themselves."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from kafka_migration.kafka.settings import client_settings


def read_partition(
    bootstrap: str,
    topic: str,
    partition: int,
    start: int = 0,
    timeout: float = 20.0,
    settings: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Every record from ``start`` to the high watermark, as plain dicts (offset, key, value, headers, timestamp).

    ``settings``: extra librdkafka settings, e.g. TLS for a cluster behind a TLS proxy.
    """
    import time

    consumer = Consumer(
        client_settings(
            {
                **(settings or {}),
                "bootstrap.servers": bootstrap,
                "group.id": "harness-reader",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "fetch.wait.max.ms": 100,
            }
        )
    )
    consumer.assign([TopicPartition(topic, partition, start)])
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            if msg.error():
                if msg.error().code() == KafkaError._PARTITION_EOF:
                    return out
                raise RuntimeError(msg.error().str())
            out.append(
                {
                    "offset": msg.offset(),
                    "key": msg.key(),
                    "value": msg.value(),
                    "headers": list(msg.headers() or []),
                    "timestamp": msg.timestamp()[1],
                }
            )
        raise TimeoutError(f"no end of partition seen for {topic}[{partition}] within {timeout}s")
    finally:
        consumer.close()


def without_offsets(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "offset"} for r in records]
