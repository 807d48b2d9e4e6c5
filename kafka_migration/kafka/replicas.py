"""Why a target refuses writes, in its own terms: the partitions' in-sync replicas against min.insync.replicas.

librdkafka retries a write the leader refuses for want of in-sync replicas (NOT_ENOUGH_REPLICAS) until the
record's ``message.timeout.ms``, then reports only that it timed out. When a copy's writes failed, this asks the
target once (metadata and the topics' configs) and names the partitions that have too few replicas in sync, or
no leader, so the operator knows to bring brokers back rather than to look at the network.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.text import plural

TIMEOUT = 5.0  # seconds: a diagnosis after a failure must not hold the failure up


def replica_problems(settings: Mapping[str, Any], partitions: Iterable[tuple[str, int]]) -> str | None:
    """One sentence naming the ``partitions`` (topic, partition) that cannot take acks=all writes now, or None
    when they all can (or the target cannot say)."""
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    wanted = sorted(set(partitions))
    if not wanted:
        return None
    try:
        admin = AdminClient(client_settings({**settings, "socket.timeout.ms": int(TIMEOUT * 1000)}))
        topics = sorted({t for t, _ in wanted})
        metadata = admin.list_topics(timeout=TIMEOUT)
        futures = admin.describe_configs([ConfigResource(ResourceType.TOPIC, t) for t in topics])
        minimum = {
            resource.name: int(future.result(TIMEOUT)["min.insync.replicas"].value)
            for resource, future in futures.items()
        }
    except Exception:  # a diagnosis only: the failure itself is reported anyway
        return None
    found = []
    for topic, partition in wanted:
        described = metadata.topics.get(topic)
        part = described.partitions.get(partition) if described is not None else None
        if part is None:
            continue
        in_sync, replicas = sorted(part.isrs), sorted(part.replicas)
        if part.leader < 0:
            found.append(f"{topic}[{partition}] has no leader (replicas {replicas})")
        elif len(in_sync) < minimum.get(topic, 1):
            found.append(
                f"{topic}[{partition}] has {plural(len(in_sync), 'in-sync replica')} ({in_sync} of {replicas}), "
                f"below min.insync.replicas={minimum[topic]}"
            )
    if not found:
        return None
    return (
        "The target refuses acks=all writes (NOT_ENOUGH_REPLICAS) while "
        + "; ".join(found)
        + ": bring its brokers back (or wait for their replicas to catch up), then rerun."
    )
