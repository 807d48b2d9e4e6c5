"""The single-process baselines: what someone would write without this project, one Python process,
plain confluent-kafka, no Spark.

* ``baseline_copy``: one consumer assigned to every source partition, one producer,
  a consume -> produce loop that keeps partition, key, value, headers and timestamp.
  The producer uses the same settings as the project (idempotent, acks=all, lz4,
  linger 20 ms, 1 MB batches) so the comparison is about the architecture, not about
  tuning; delivery errors are counted and fail the run.
* ``plain_verify``: one consumer per cluster, read side by side in one loop; per
  partition a count and a SHA-256 over a canonical encoding (timestamp, key, value,
  headers, null distinct from empty) of each side, then compared. Same evidence as
  the project's verification except that it does not name the first differing offset.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from harness.bench.seeding import create_topics
from kafka_migration.kafka.settings import client_settings

# The project's producer defaults (kafka_migration.kafka.settings.producer_settings), written out.
BASELINE_PRODUCER = {
    "linger.ms": 20,
    "batch.size": 1024 * 1024,
    "compression.type": "lz4",
    "queue.buffering.max.kbytes": 32768,
    "queue.buffering.max.messages": 100000,
    "enable.idempotence": True,
    "acks": "all",
}
BASELINE_CONSUMER = {
    "group.id": "bench-baseline",
    "enable.auto.commit": False,
    "enable.partition.eof": True,
    "auto.offset.reset": "earliest",
    "fetch.wait.max.ms": 10,  # as the project: the end of a partition is seen after an empty fetch
}


@dataclass
class LoopResult:
    records: int
    bytes: int
    seconds: float  # the loop: clients created -> everything delivered (or read)
    wall_seconds: float  # including target topic creation
    extra: dict[str, Any] = field(default_factory=dict)


def baseline_copy(
    source: str, target: str, topics: Mapping[str, int], rename: str = "{topic}", create: bool = True
) -> LoopResult:
    """Copy every partition of ``topics`` (name -> partitions) to the same partition of the renamed target topic."""
    wall_started = time.monotonic()
    names = {t: rename.format(topic=t) for t in topics}
    if create:
        create_topics(target, {names[t]: n for t, n in topics.items()})
    started = time.monotonic()
    errors: list[str] = []

    def on_error(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(err.str())

    consumer = Consumer(client_settings({"bootstrap.servers": source, **BASELINE_CONSUMER}))
    producer = Producer(
        client_settings(
            {
                "bootstrap.servers": target,
                **BASELINE_PRODUCER,
                "delivery.report.only.error": True,
                "on_delivery": on_error,
            }
        )
    )
    consumer.assign([TopicPartition(t, p, 0) for t, n in topics.items() for p in range(n)])
    remaining = {(t, p) for t, n in topics.items() for p in range(n)}
    produce = producer.produce
    poll = producer.poll
    count = 0
    size = 0
    eof = KafkaError._PARTITION_EOF
    try:
        while remaining:
            for msg in consumer.consume(1000, 0.1):
                err = msg.error()
                if err is not None:
                    if err.code() == eof:
                        remaining.discard((msg.topic(), msg.partition()))
                        continue
                    raise RuntimeError(f"baseline copy: {err.str()}")
                key = msg.key()
                value = msg.value()
                while True:
                    try:
                        produce(
                            names[msg.topic()],
                            value,
                            key,
                            partition=msg.partition(),
                            timestamp=msg.timestamp()[1],
                            headers=msg.headers(),
                        )
                        break
                    except BufferError:
                        poll(0.05)
                count += 1
                size += (len(key) if key else 0) + (len(value) if value else 0)
            poll(0)
            if errors:
                raise RuntimeError(f"baseline copy: delivery failed: {errors[0]}")
        left = producer.flush(300)
    finally:
        consumer.close()
    if left or errors:
        raise RuntimeError(f"baseline copy: {left} unsent, errors {errors[:1]}")
    done = time.monotonic()
    return LoopResult(count, size, done - started, done - wall_started)


def _canonical(msg: Any) -> bytes:
    key = msg.key()
    value = msg.value()
    headers = msg.headers()
    head = b"%d|%d|%d|" % (msg.timestamp()[1], -1 if key is None else len(key), -1 if value is None else len(value))
    parts = [head, key or b"", value or b""]
    if headers:
        for name, data in headers:
            parts.append(b"%d|%s|%d|" % (len(name), name.encode(), -1 if data is None else len(data)))
            parts.append(data or b"")
    return b"".join(parts)


def plain_verify(
    source: str, target: str, topics: Mapping[str, int], rename: str = "{topic}"
) -> tuple[LoopResult, list[str]]:
    """Read source and target side by side in one loop; compare count and checksum per partition.

    Returns the result (``records`` counts the source side) and the list of mismatching partitions.
    """
    started = time.monotonic()
    names = {t: rename.format(topic=t) for t in topics}
    sides = {}
    for side, bootstrap, mapping in (("source", source, {t: t for t in topics}), ("target", target, names)):
        consumer = Consumer(client_settings({"bootstrap.servers": bootstrap, **BASELINE_CONSUMER}))
        consumer.assign([TopicPartition(mapping[t], p, 0) for t, n in topics.items() for p in range(n)])
        sides[side] = {
            "consumer": consumer,
            "remaining": {(mapping[t], p) for t, n in topics.items() for p in range(n)},
            "hashes": {},
            "counts": {},
        }
    eof = KafkaError._PARTITION_EOF
    size = 0
    try:
        while any(s["remaining"] for s in sides.values()):
            for side, state in sides.items():
                if not state["remaining"]:
                    continue
                hashes = state["hashes"]
                counts = state["counts"]
                for msg in state["consumer"].consume(1000, 0.05):
                    err = msg.error()
                    tp = (msg.topic(), msg.partition())
                    if err is not None:
                        if err.code() == eof:
                            state["remaining"].discard(tp)
                            continue
                        raise RuntimeError(f"plain verify ({side}): {err.str()}")
                    h = hashes.get(tp)
                    if h is None:
                        h = hashes[tp] = hashlib.sha256()
                        counts[tp] = 0
                    h.update(_canonical(msg))
                    counts[tp] += 1
                    if side == "source":
                        key = msg.key()
                        value = msg.value()
                        size += (len(key) if key else 0) + (len(value) if value else 0)
    finally:
        for state in sides.values():
            state["consumer"].close()
    mismatches = []
    total = 0
    for t, n in topics.items():
        for p in range(n):
            src_n = sides["source"]["counts"].get((t, p), 0)
            tgt_n = sides["target"]["counts"].get((names[t], p), 0)
            src_h = sides["source"]["hashes"].get((t, p))
            tgt_h = sides["target"]["hashes"].get((names[t], p))
            total += src_n
            if src_n != tgt_n or (src_h and src_h.digest()) != (tgt_h and tgt_h.digest()):
                mismatches.append(f"{t}[{p}]: source {src_n} records, target {tgt_n}")
    seconds = time.monotonic() - started
    return LoopResult(total, size, seconds, seconds), mismatches
