"""Copy one partition's planned offset range: the work of one Spark task.

Runs inside an executor with plain confluent-kafka. Memory stays flat: records
stream from a bounded consumer queue into a bounded producer queue, and nothing
is kept once written. Any delivery error fails the task.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafka_migration.clients import producer_settings
from kafka_migration.exceptions import CopyError
from kafka_migration.plan import PartitionSlice
from kafka_migration.reader import read_range


@dataclass(frozen=True)
class PartitionCopyResult:
    source_topic: str
    target_topic: str
    partition: int
    start: int
    end: int
    records: int
    bytes: int
    seconds: float
    error: str | None = None


class _DeliveryErrors:
    """Collects failed deliveries; successful ones are not reported (delivery.report.only.error)."""

    def __init__(self) -> None:
        self.count = 0
        self.first: str | None = None

    def reset(self) -> None:
        self.count = 0
        self.first = None

    def __call__(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.count += 1
            if self.first is None:
                self.first = f"{err.str()} (target {msg.topic()}[{msg.partition()}])"


# One idempotent producer per target and Python worker: its start-up (producer id,
# connections) costs far more than copying a small partition, and Spark reuses
# Python workers across tasks. Tasks in a worker run one after another.
_PRODUCERS: dict[str, tuple[Any, _DeliveryErrors]] = {}


def _producer(target_settings: Mapping[str, Any], max_message_bytes: int) -> tuple[Any, _DeliveryErrors]:
    from confluent_kafka import Producer

    key = json.dumps([sorted(target_settings.items()), max_message_bytes], default=str)
    if key not in _PRODUCERS:
        errors = _DeliveryErrors()
        producer = Producer(
            {
                **producer_settings(target_settings, max_message_bytes),
                "delivery.report.only.error": True,
                "on_delivery": errors,
            }
        )
        _PRODUCERS[key] = (producer, errors)
    producer, errors = _PRODUCERS[key]
    errors.reset()
    return producer, errors


def copy_partition(
    task: PartitionSlice,
    source_settings: Mapping[str, Any],
    target_settings: Mapping[str, Any],
    progress: Callable[[int, int], None] | None = None,
    flush_timeout: float = 120.0,
) -> PartitionCopyResult:
    """Copy ``[task.start, task.end)`` of the source partition to the same target partition."""
    producer, errors = _producer(target_settings, task.max_message_bytes)
    started = time.monotonic()
    records = 0
    size = 0
    produce = producer.produce
    poll = producer.poll
    topic = task.target_topic
    partition = task.partition
    for batch in read_range(source_settings, task.source_topic, partition, task.start, task.end):
        for msg in batch:
            key = msg.key()
            value = msg.value()
            while True:
                try:
                    produce(
                        topic,
                        value=value,
                        key=key,
                        partition=partition,
                        timestamp=msg.timestamp()[1],
                        headers=msg.headers(),
                    )
                    break
                except BufferError:
                    poll(0.05)
            records += 1
            size += (len(key) if key else 0) + (len(value) if value else 0)
        poll(0)
        if errors.count:
            break
        if progress is not None:
            progress(records, size)
    remaining = producer.flush(flush_timeout)
    where = f"{task.source_topic}[{partition}] -> {task.target_topic}[{partition}]"
    if errors.count or remaining:
        _PRODUCERS.clear()  # do not reuse a producer in an unknown state
    if errors.count:
        raise CopyError(
            f"Copy {where} failed: {errors.count} record(s) were not delivered to the target; first error: "
            f"{errors.first}. Nothing after the failure was confirmed; rerun after fixing the cause."
        )
    if remaining:
        raise CopyError(
            f"Copy {where}: {remaining} record(s) still unconfirmed by the target after {flush_timeout:.0f}s; "
            "the target cluster is slow or unreachable. Rerun when it is healthy."
        )
    return PartitionCopyResult(
        source_topic=task.source_topic,
        target_topic=task.target_topic,
        partition=partition,
        start=task.start,
        end=task.end,
        records=records,
        bytes=size,
        seconds=round(time.monotonic() - started, 3),
    )
