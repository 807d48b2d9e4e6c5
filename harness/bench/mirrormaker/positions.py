"""Consumer groups committed where a switch to the target hurts, and how far off each tool leaves them.

The positions (one group each, on one partition, committed on the source while the group has no
members): the middle of a busy partition; just after a transaction's commit marker; inside an
aborted transaction; inside a gap a compaction left (the cleaner has run); at the end of a
partition; on a low-traffic topic, caught up and a few records behind.

A group's committed offset is the next offset it reads. A consumer switched to the target starts
at the offset the tool committed there; the first record it gets is compared with the record it
would have got next on the source, and the records between the two are counted in the source's
sequence of readable records (read_committed: no markers, no aborted records, no compacted ones):
negative, it re-reads that many; positive, it skips that many; 0 is exact.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BULK_PARTITION_MIDDLE = 0  # the busy partition's group
BULK_PARTITION_END = 1  # the caught-up group's
TX_TOPIC_SUFFIX = ".tx"
COMPACT_TOPIC_SUFFIX = ".compact"
LOW_TOPIC_SUFFIX = ".low"
GROUP_PREFIX = "bench.mm2.g."
TX_ROUNDS = 12
TX_RECORDS = 40
LOW_RECORDS = 30
LOW_BEHIND = 10
COMPACT_CONFIG = {  # a cleaner that runs within seconds on this partition
    "cleanup.policy": "compact",
    "segment.ms": "100",
    "min.cleanable.dirty.ratio": "0.01",
    "min.compaction.lag.ms": "0",
}


# --- the pure part (tests/harness/test_bench_mirrormaker.py) -----------------------------------------


def identity(key: bytes | None, value: bytes | None) -> bytes:
    """A record's identity for finding it on the other cluster: a digest of its key and value."""
    digest = hashlib.blake2b(digest_size=12)
    for part in (key, value):
        digest.update(b"-1|" if part is None else b"%d|" % len(part))
        digest.update(part or b"")
    return digest.digest()


class SourceLog:
    """The readable records of one source partition, in order: their offsets and identities."""

    def __init__(self, records: Iterable[tuple[int, bytes]]) -> None:
        pairs = sorted(records)
        self.offsets = [offset for offset, _ in pairs]
        self.index = {ident: i for i, (_, ident) in enumerate(pairs)}
        if len(self.index) != len(pairs):
            raise ValueError("records of a position's partition must be unique (key and value)")

    def __len__(self) -> int:
        return len(self.offsets)

    def next_index(self, committed: int) -> int:
        """Index of the record a consumer committed at ``committed`` reads next (len: none, it is at the end)."""
        return bisect.bisect_left(self.offsets, committed)

    def next_offset(self, committed: int) -> int | None:
        i = self.next_index(committed)
        return self.offsets[i] if i < len(self.offsets) else None


def displacement(log: SourceLog, committed: int, target_next: bytes | None) -> int:
    """Records between the one a consumer reads next on the source (committed at ``committed``) and the one
    it reads first on the target (its identity; None: nothing, it is at the end there): < 0 re-read, > 0
    skipped, 0 exact. A target record the source does not hold is an error (not a count)."""
    expected = log.next_index(committed)
    if target_next is None:
        return len(log) - expected
    try:
        actual = log.index[target_next]
    except KeyError:
        raise ValueError(
            f"the record at the target offset is not a record of the source partition (after {committed})"
        ) from None
    return actual - expected


@dataclass(frozen=True)
class Position:
    """A group committed at ``offset`` of ``topic``[``partition``] on the source."""

    name: str
    what: str
    topic: str
    partition: int
    offset: int

    @property
    def group(self) -> str:
        return GROUP_PREFIX + self.name


def outcome(log: SourceLog, position: Position, target_offset: int | None, target_next: bytes | None) -> dict[str, Any]:
    """What a consumer of ``position`` switched to the target meets: the tool's target offset and the
    records it re-reads or skips; without an offset, what auto.offset.reset would do instead."""
    if target_offset is None:
        expected = log.next_index(position.offset)
        return {
            "target_offset": None,
            "rereads": None,
            "skips": None,
            "rereads_if_earliest": expected,
            "skips_if_latest": len(log) - expected,
        }
    moved = displacement(log, position.offset, target_next)
    return {"target_offset": target_offset, "rereads": max(0, -moved), "skips": max(0, moved)}


def describe(result: Mapping[str, Any]) -> str:
    """One cell of the table: 'exact', 're-reads N', 'skips N', or 'no offset (...)'."""
    if result.get("target_offset") is None:
        earliest, latest = result["rereads_if_earliest"], result["skips_if_latest"]
        return f"no offset (earliest: re-reads {earliest:,}; latest: skips {latest:,})"
    if result["rereads"]:
        return f"re-reads {result['rereads']:,}"
    if result["skips"]:
        return f"skips {result['skips']:,}"
    return "exact"


def compacted_gap(offsets: Sequence[int]) -> tuple[int, int] | None:
    """The widest run of missing offsets between two surviving records: (first missing, last missing)."""
    best: tuple[int, int] | None = None
    for before, after in itertools.pairwise(offsets):
        if after - before > 1 and (best is None or after - before - 1 > best[1] - best[0] + 1):
            best = (before + 1, after - 1)
    return best


# --- seeding and reading (I/O) --------------------------------------------------------------------


def _settings(bootstrap: str, **extra: Any) -> dict[str, Any]:
    from kafka_migration.kafka.settings import client_settings

    return client_settings({"bootstrap.servers": bootstrap, **extra})


def read_partition(
    bootstrap: str, topic: str, partition: int, *, committed_only: bool = True, timeout: float = 60.0
) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every readable record of a partition: (offset, key, value), to its end."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        _settings(
            bootstrap,
            **{
                "group.id": "bench-positions-reader",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "isolation.level": "read_committed" if committed_only else "read_uncommitted",
                "fetch.wait.max.ms": 10,
            },
        )
    )
    out: list[tuple[int, bytes | None, bytes | None]] = []
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        while time.monotonic() < deadline:
            for message in consumer.consume(5000, 0.2):
                error = message.error()
                if error is None:
                    out.append((message.offset(), message.key(), message.value()))
                elif error.code() == KafkaError._PARTITION_EOF:
                    return out
                else:
                    raise RuntimeError(f"reading {topic}[{partition}]: {error.str()}")
        raise RuntimeError(f"reading {topic}[{partition}]: no end within {timeout} s")
    finally:
        consumer.close()


def source_log(bootstrap: str, topic: str, partition: int) -> SourceLog:
    records = read_partition(bootstrap, topic, partition)
    return SourceLog((offset, identity(key, value)) for offset, key, value in records)


def next_record(bootstrap: str, topic: str, partition: int, offset: int, timeout: float = 30.0) -> bytes | None:
    """Identity of the first readable record at or after ``offset`` (None: the partition ends before one)."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        _settings(
            bootstrap,
            **{
                "group.id": "bench-positions-reader",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": 10,
            },
        )
    )
    deadline = time.monotonic() + timeout
    try:
        consumer.assign([TopicPartition(topic, partition, offset)])
        while time.monotonic() < deadline:
            for message in consumer.consume(1, 0.2):
                error = message.error()
                if error is None:
                    return identity(message.key(), message.value())
                if error.code() == KafkaError._PARTITION_EOF:
                    return None
                raise RuntimeError(f"reading {topic}[{partition}] at {offset}: {error.str()}")
        raise RuntimeError(f"reading {topic}[{partition}] at {offset}: nothing within {timeout} s")
    finally:
        consumer.close()


def _create(bootstrap: str, topic: str, config: Mapping[str, str] | None = None) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient(_settings(bootstrap))
    admin.create_topics([NewTopic(topic, 1, 1, config=dict(config or {}))], operation_timeout=30)[topic].result(60)


def _produce(bootstrap: str, topic: str, records: Iterable[tuple[bytes, bytes]], **extra: Any) -> None:
    from confluent_kafka import Producer

    producer = Producer(_settings(bootstrap, **{"linger.ms": 5, "enable.idempotence": True, **extra}))
    for key, value in records:
        producer.produce(topic, value, key, partition=0)
    if producer.flush(60):
        raise RuntimeError(f"seeding {topic}: records left unsent")


def seed_transactions(bootstrap: str, topic: str) -> tuple[int, int]:
    """``TX_ROUNDS`` transactions of ``TX_RECORDS`` records, every third one aborted (rounds 1, 4, 7, ..).
    Returns (the offset just after round 2's commit marker, an offset inside aborted round 4)."""
    from confluent_kafka import Producer

    _create(bootstrap, topic)
    producer = Producer(_settings(bootstrap, **{"transactional.id": f"bench-positions-{topic}", "linger.ms": 5}))
    producer.init_transactions(30)
    for r in range(TX_ROUNDS):
        producer.begin_transaction()
        for j in range(TX_RECORDS):
            producer.produce(topic, b"tx-%02d-%03d" % (r, j), b"txk-%02d-%03d" % (r, j), partition=0)
        producer.flush(30)  # on the broker before the abort: librdkafka drops unsent records of an aborted one
        if r % 3 == 1:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
    rounds: dict[int, list[int]] = {}
    for offset, key, _ in read_partition(bootstrap, topic, 0, committed_only=False):
        rounds.setdefault(int((key or b"txk-99")[4:6]), []).append(offset)
    after_marker = max(rounds[2]) + 2  # round 2's last record, its commit marker, then this offset
    inside_aborted = min(rounds[4]) + TX_RECORDS // 2
    return after_marker, inside_aborted


def seed_compacted(bootstrap: str, topic: str, timeout: float = 120.0) -> int:
    """100 records of unique keys, 300 that cycle through 10 keys, 100 of unique keys again, and one more
    record a moment later (so the others leave the active segment); then wait for the cleaner, which
    leaves the last 10 of the 300. Every survivor's key is unique, so a target cleaner removes nothing.
    Returns an offset inside the gap the cleaner left."""
    _create(bootstrap, topic, COMPACT_CONFIG)
    records = [(b"u-%03d" % i, b"c-%03d" % i) for i in range(100)]
    records += [(b"dup-%d" % (i % 10), b"c-%03d" % i) for i in range(100, 400)]
    records += [(b"v-%03d" % i, b"c-%03d" % i) for i in range(400, 500)]
    _produce(bootstrap, topic, records)
    time.sleep(0.3)  # > segment.ms: the next record rolls the segment
    _produce(bootstrap, topic, [(b"last", b"c-500")])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        offsets = [offset for offset, _, _ in read_partition(bootstrap, topic, 0)]
        if len(offsets) == 100 + 10 + 100 + 1:
            gap = compacted_gap(offsets)
            assert gap is not None
            return (gap[0] + gap[1]) // 2
        time.sleep(1.0)
    raise RuntimeError(f"the log cleaner did not compact {topic} within {timeout} s")


def seed_low_traffic(bootstrap: str, topic: str) -> int:
    """``LOW_RECORDS`` records, a handful at a time. Returns the end offset."""
    _create(bootstrap, topic)
    for start in range(0, LOW_RECORDS, 5):
        _produce(bootstrap, topic, [(b"low-%02d" % i, b"l-%02d" % i) for i in range(start, start + 5)])
    return LOW_RECORDS


def commit(bootstrap: str, positions: Iterable[Position], timeout: float = 60.0) -> None:
    """Commit each position's group on the source (no members: AlterConsumerGroupOffsets). A cluster that
    has just started answers "coordinator load in progress" for a moment: retried until ``timeout``."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient

    from harness.kafka.mirrormaker import retriable

    admin = AdminClient(_settings(bootstrap))
    deadline = time.monotonic() + timeout
    for position in positions:
        tp = TopicPartition(position.topic, position.partition, position.offset)
        while True:
            futures = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(position.group, [tp])])
            try:
                result = futures[position.group].result(timeout=30)
                error = next((p.error for p in result.topic_partitions or [] if p.error is not None), None)
            except KafkaException as exc:
                error = exc.args[0]
            if error is None:
                break
            if not retriable(error) or time.monotonic() > deadline:
                raise RuntimeError(f"committing group {position.group} at {position.offset}: {error.str()}")
            time.sleep(0.5)


def seed(bootstrap: str, bulk_topic: str, bulk_ends: Mapping[int, int]) -> list[Position]:
    """The small topics beside the bulk topic, and a group at each position; returns the positions."""
    after_marker, inside_aborted = seed_transactions(bootstrap, bulk_topic + TX_TOPIC_SUFFIX)
    in_gap = seed_compacted(bootstrap, bulk_topic + COMPACT_TOPIC_SUFFIX)
    low = bulk_topic + LOW_TOPIC_SUFFIX
    low_end = seed_low_traffic(bootstrap, low)
    middle = bulk_ends[BULK_PARTITION_MIDDLE] // 2 + 17
    positions = [
        Position("busy-middle", "middle of a busy partition", bulk_topic, BULK_PARTITION_MIDDLE, middle),
        Position("after-marker", "just after a commit marker", bulk_topic + TX_TOPIC_SUFFIX, 0, after_marker),
        Position("in-aborted", "inside an aborted transaction", bulk_topic + TX_TOPIC_SUFFIX, 0, inside_aborted),
        Position("compacted-gap", "inside a compacted gap", bulk_topic + COMPACT_TOPIC_SUFFIX, 0, in_gap),
        Position("at-end", "at the end of a busy partition", bulk_topic, BULK_PARTITION_END, bulk_ends[1]),
        Position("low-end", "low-traffic topic, caught up", low, 0, low_end),
        Position("low-behind", f"low-traffic topic, {LOW_BEHIND} behind", low, 0, low_end - LOW_BEHIND),
    ]
    commit(bootstrap, positions)
    return positions


def measure(
    target: str,
    positions: Sequence[Position],
    logs: Mapping[tuple[str, int], SourceLog],
    offsets: Mapping[str, Mapping[tuple[str, int], int]],
) -> dict[str, dict[str, Any]]:
    """For each position: the target offset its group holds (``offsets``: group -> committed offsets on the
    target) and what a switched consumer re-reads or skips."""
    out = {}
    for position in positions:
        where = (position.topic, position.partition)
        target_offset = offsets.get(position.group, {}).get(where)
        following = None if target_offset is None else next_record(target, *where, target_offset)
        out[position.name] = outcome(logs[where], position, target_offset, following)
    return out
