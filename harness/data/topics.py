"""Topic administration for tests, as an operator would do it: change configs, delete records, read the log's ends.

``log_range`` is what ListOffsets says (the log start offset, which retention and DeleteRecords
move, and the end); ``wait_for_log_start`` waits for the broker's retention thread, which runs every
``log.retention.check.interval.ms`` (2 s on the harness's clusters).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import IsolationLevel, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    OffsetSpec,
    ResourceType,
)

from kafka_migration.kafka.settings import client_settings


def admin(cluster: str | Mapping[str, Any]) -> AdminClient:
    settings = {"bootstrap.servers": cluster} if isinstance(cluster, str) else dict(cluster)
    return AdminClient(client_settings(settings))


def alter_configs(cluster: str | Mapping[str, Any], resource: ConfigResource, values: Mapping[str, str | None]) -> None:
    """IncrementalAlterConfigs: set each value, or delete the entry where the value is None."""
    ops = [
        ConfigEntry(
            name,
            value,
            incremental_operation=AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET,
        )
        for name, value in values.items()
    ]
    target = ConfigResource(resource.restype, resource.name, incremental_configs=ops)
    client = admin(cluster)  # held until the answers are in: a destroyed client fails its futures
    for future in client.incremental_alter_configs([target]).values():
        future.result(20)


def alter_topic(cluster: str | Mapping[str, Any], topic: str, values: Mapping[str, str | None]) -> None:
    alter_configs(cluster, ConfigResource(ResourceType.TOPIC, topic), values)


def topic_config(cluster: str | Mapping[str, Any], topic: str) -> dict[str, Any]:
    """DescribeConfigs of a topic: name -> ConfigEntry (value, source, ...)."""
    client = admin(cluster)
    (future,) = client.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    return dict(future.result(20))


def log_range(cluster: str | Mapping[str, Any], topic: str, partition: int) -> tuple[int, int]:
    """(log start offset, end offset) of one partition, as ListOffsets answers (read_uncommitted)."""
    client = admin(cluster)
    tp = TopicPartition(topic, partition)
    found = []
    for spec in (OffsetSpec.earliest(), OffsetSpec.latest()):
        futures = client.list_offsets({tp: spec}, isolation_level=IsolationLevel.READ_UNCOMMITTED)
        found.append(int(futures[tp].result(20).offset))
    return found[0], found[1]


def delete_records(cluster: str | Mapping[str, Any], before: Mapping[tuple[str, int], int]) -> None:
    """DeleteRecords: move each partition's log start offset to ``before`` (an operator's manual retention)."""
    client = admin(cluster)
    futures = client.delete_records([TopicPartition(t, p, o) for (t, p), o in before.items()])
    for future in futures.values():
        future.result(20)


def wait_for_log_start(
    cluster: str | Mapping[str, Any], topic: str, partition: int, at_least: int, timeout: float = 60.0
) -> int:
    """Wait until retention has moved the partition's log start offset to ``at_least`` or beyond; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        start, _ = log_range(cluster, topic, partition)
        if start >= at_least:
            return start
        if time.monotonic() > deadline:
            raise TimeoutError(f"{topic}[{partition}] still starts at {start} after {timeout}s (wanted {at_least})")
        time.sleep(0.5)
