"""Copy one Kafka topic to another cluster, then prove the copy: the baseline of the bench's "whole" scenario.

What a competent user writes in one sitting with plain confluent-kafka, no Spark and nothing of
kafka_migration (this file imports neither):

1. create the target topic with the source topic's partition count;
2. copy every partition with one consumer and one idempotent producer, keeping partition, key,
   value, timestamp and headers (the producer settings are the project's defaults, written out,
   so that the comparison is about the architecture, not about tuning);
3. re-read both sides and compare, per partition, the record count and a SHA-256 over timestamp,
   key, value and headers (length-prefixed; null distinct from empty).

Exit 0 when every partition matches, 1 on a mismatch or a failed copy.

    python -m harness.bench.handwritten_copy_compare --source HOST:PORT --target HOST:PORT --topic T [--json]

(from the repository's root: its producer and consumer settings come from harness/bench/baselines.py)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from harness.bench.baselines import BASELINE_CONSUMER, BASELINE_PRODUCER

PRODUCER = BASELINE_PRODUCER  # the project's producer defaults, as the baseline copy uses them
CONSUMER = {**BASELINE_CONSUMER, "group.id": "handwritten-copy-compare"}


def partition_count(bootstrap: str, topic: str) -> int:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=30)
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        raise SystemExit(f"topic {topic!r} not found on {bootstrap}")
    return len(found.partitions)


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=30)[topic].result(60)
    deadline = time.monotonic() + 60
    while True:  # wait until every partition has a leader
        found = admin.list_topics(topic, timeout=15).topics.get(topic)
        complete = found is not None and found.error is None and len(found.partitions) == partitions
        if complete and all(p.leader >= 0 for p in found.partitions.values()):
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"topic {topic!r} on {bootstrap} has no leader after 60 s")
        time.sleep(0.05)


def copy(source: str, target: str, topic: str, partitions: int) -> int:
    errors: list[str] = []

    def delivered(err, msg):  # type: ignore[no-untyped-def]
        if err is not None:
            errors.append(err.str())

    consumer = Consumer({"bootstrap.servers": source, **CONSUMER})
    producer = Producer(
        {"bootstrap.servers": target, **PRODUCER, "delivery.report.only.error": True, "on_delivery": delivered}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    remaining = set(range(partitions))
    count = 0
    try:
        while remaining:
            for msg in consumer.consume(1000, 0.1):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        remaining.discard(msg.partition())
                        continue
                    raise SystemExit(f"reading {topic}: {err.str()}")
                while True:
                    try:
                        producer.produce(
                            topic,
                            msg.value(),
                            msg.key(),
                            partition=msg.partition(),
                            timestamp=msg.timestamp()[1],
                            headers=msg.headers(),
                        )
                        break
                    except BufferError:  # the local queue is full: let it drain
                        producer.poll(0.05)
                count += 1
            producer.poll(0)
            if errors:
                raise SystemExit(f"writing {topic}: {errors[0]}")
        left = producer.flush(300)
    finally:
        consumer.close()
    if left or errors:
        raise SystemExit(f"writing {topic}: {left} records unsent, {errors[:1]}")
    return count


def digest(bootstrap: str, topic: str, partitions: int) -> dict[int, tuple[int, str]]:
    """Per partition: (record count, SHA-256 over timestamp, key, value and headers of every record in order)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, **CONSUMER})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    hashes = {p: hashlib.sha256() for p in range(partitions)}
    counts = dict.fromkeys(range(partitions), 0)
    remaining = set(range(partitions))
    try:
        while remaining:
            for msg in consumer.consume(1000, 0.1):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        remaining.discard(msg.partition())
                        continue
                    raise SystemExit(f"reading {topic} on {bootstrap}: {err.str()}")
                key, value, headers = msg.key(), msg.value(), msg.headers()
                parts = [
                    b"%d|%d|%d|"
                    % (msg.timestamp()[1], -1 if key is None else len(key), -1 if value is None else len(value)),
                    key or b"",
                    value or b"",
                ]
                for name, data in headers or ():
                    parts.append(b"%d|%s|%d|" % (len(name), name.encode(), -1 if data is None else len(data)))
                    parts.append(data or b"")
                hashes[msg.partition()].update(b"".join(parts))
                counts[msg.partition()] += 1
    finally:
        consumer.close()
    return {p: (counts[p], hashes[p].hexdigest()) for p in range(partitions)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True, help="source bootstrap servers")
    parser.add_argument("--target", required=True, help="target bootstrap servers")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--json", action="store_true", help="end with one JSON line of the figures")
    args = parser.parse_args()

    started = time.monotonic()
    partitions = partition_count(args.source, args.topic)
    create_topic(args.target, args.topic, partitions)
    created = time.monotonic()
    copied = copy(args.source, args.target, args.topic, partitions)
    copy_done = time.monotonic()
    print(f"copied {copied:,} records of {args.topic} ({partitions} partitions) in {copy_done - created:.1f} s")
    source = digest(args.source, args.topic, partitions)
    target = digest(args.target, args.topic, partitions)
    done = time.monotonic()
    bad = [p for p in range(partitions) if source[p] != target[p]]
    for p in bad:
        (src_n, src_h), (tgt_n, tgt_h) = source[p], target[p]
        print(f"partition {p}: source {src_n:,} records {src_h[:12]}, target {tgt_n:,} records {tgt_h[:12]}")
    records = sum(n for n, _ in source.values())
    verdict = "MISMATCH" if bad else "OK"
    matching = partitions - len(bad)
    compared = done - copy_done
    print(f"{verdict}: {matching}/{partitions} partitions match, {records:,} records; compared in {compared:.1f} s")
    if args.json:
        figures = {
            "partitions": partitions,
            "records": records,
            "copied": copied,
            "mismatched_partitions": bad,
            "topic_seconds": round(created - started, 3),
            "copy_seconds": round(copy_done - created, 3),
            "compare_seconds": round(done - copy_done, 3),
            "seconds": round(done - started, 3),
        }
        print(json.dumps(figures))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
