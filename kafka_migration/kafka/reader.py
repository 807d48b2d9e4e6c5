"""Read a bounded offset range of one partition, in batches, with flat memory.

Shared by the copy and the verification, so both agree on what "the range" is:
offsets ``[start, end)`` of the source as fixed in the plan, skipping the offsets
that hold no record (transaction markers, compacted records). ``end=None`` reads
up to the high watermark the reader's latest fetch reported.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, NoReturn

from kafka_migration.exceptions import ClusterTimeoutError, CopyError
from kafka_migration.kafka.acls import AUTHORIZATION_FAILURES
from kafka_migration.kafka.settings import client_settings, cluster_label, consumer_settings, stall_timeout
from kafka_migration.kafka.tls import check_tls_settings
from kafka_migration.model.config import Endpoint
from kafka_migration.model.text import offset_range, plural

BATCH = 1000
# In the error of a reader that followed a writer and gave up waiting for more (``read_range(follow=...)``).
FOLLOW_GAVE_UP = "while the verification waited for the copy"
# consume() returns once it has the number of messages asked for, else after this long
# (also after the partition end was seen): short, so the end of a range costs no wait.
POLL_SECONDS = 0.01


def records(cluster: Endpoint, topic: str, partition: int, start: int, end: int | None) -> Generator[Any, None, None]:
    """One message at a time from ``read_range``."""
    for batch in read_range(cluster, topic, partition, start, end):
        yield from batch


def next_batch(batches: Iterator[list[Any]]) -> list[Any]:
    """The next non-empty batch of ``read_range``, or an empty list at the end of the range."""
    for batch in batches:
        if batch:
            return batch
    return []


def read_range(
    cluster: Endpoint,
    topic: str,
    partition: int,
    start: int,
    end: int | None,
    *,
    idle_timeout: float | None = None,
    follow: Callable[[int], bool] | None = None,
) -> Iterator[list[Any]]:
    """Yield lists of confluent_kafka messages from ``[start, end)`` of ``cluster``; always closes the consumer.

    Fails when nothing at all arrives for ``idle_timeout`` seconds (default: the cluster's
    socket.timeout.ms): a consumer cut off from its brokers stays silent and would wait forever.

    ``follow`` (with ``end=None``): reading behind a writer. At the high watermark it is asked,
    with the number of records yielded so far, whether that is the end; while it says no the
    reader waits for more records (bounded by ``idle_timeout`` as above). Records that arrive in
    the same consume() result after a partition-end event are kept (``_behind``).
    """
    from confluent_kafka import Consumer, TopicPartition

    if end is not None and end <= start:
        return
    what, settings = cluster.role, cluster.settings
    check_tls_settings(what, settings)  # on an executor: a certificate path missing here, named clearly
    if idle_timeout is None:
        idle_timeout = stall_timeout(settings)

    def fail(msg: Any, error: Any) -> NoReturn:
        raise CopyError(
            f"Reading {what} {topic}[{partition}] on the {cluster_label(what, settings)} at offset "
            f"{msg.offset()} failed: {error.str()}"
            + why_unreadable(consumer, error, topic, partition, next_offset, what)
        )

    consumer = Consumer(consumer_settings(settings))
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        last_progress = time.monotonic()
        next_offset = start
        yielded = 0
        waiting = False  # at the high watermark, told by ``follow`` to wait for more
        high = -1  # the high watermark of the latest fetch, once this read has received a record
        while True:
            # Never ask for more than the range still holds: consume() would wait for them. Open-ended:
            # one record first, then up to the fetched high watermark.
            if end is not None:
                wanted = max(1, min(BATCH, end - next_offset))
            elif follow is not None:  # behind a writer: whatever has arrived
                wanted = BATCH
            else:
                wanted = max(1, min(BATCH, high - next_offset)) if high >= 0 else 1
            messages = consumer.consume(num_messages=wanted, timeout=POLL_SECONDS)
            if not messages:
                if time.monotonic() - last_progress > idle_timeout:
                    if waiting:
                        raise ClusterTimeoutError(
                            f"{what.capitalize()} {topic}[{partition}] on the {cluster_label(what, settings)} got no "
                            f"new record for {idle_timeout:.0f}s (socket.timeout.ms) {FOLLOW_GAVE_UP} "
                            f"at offset {next_offset} ({plural(yielded, 'record')} read from offset {start}): "
                            "the copy stopped or failed before writing the whole range, or the target is not answering."
                        )
                    raise ClusterTimeoutError(
                        f"The {cluster_label(what, settings)} sent nothing for {idle_timeout:.0f}s "
                        f"(socket.timeout.ms) while reading {what} {topic}[{partition}] at offset {next_offset} "
                        f"(range {offset_range(start, end)}): it is unreachable or not answering. "
                        "Rerun when it is reachable; the rerun resumes from what the target holds."
                    )
                continue
            last_progress = time.monotonic()
            following = follow is not None and end is None
            batch, after, done = _behind(messages, fail) if following else _in_range(messages, end, fail)
            if after is not None:
                next_offset = after
            if batch:
                yielded += len(batch)
                yield batch
            if end is None and batch and not done:
                # At the high watermark the latest fetch reported: the end, without waiting for the
                # partition-EOF event, which needs one more fetch (an empty one, held fetch.wait.max.ms
                # by the broker). Read only once a record of this read arrived, so the value comes from
                # this read's fetches. Records held back by read_committed (an open transaction) never
                # reach it: then the EOF event ends the read, as before.
                high = fetched_high_watermark(consumer, TopicPartition(topic, partition))
                done = 0 <= high <= next_offset
            if done:
                if follow is None or end is not None or follow(yielded):
                    return
                waiting = True
    finally:
        consumer.close()


def why_unreadable(consumer: Any, error: Any, topic: str, partition: int, wanted: int, what: str) -> str:
    """`` (...)`` after a read error: the offsets that are gone when ``wanted`` is no longer on the cluster,
    the ACL when the principal may not read the topic; nothing for other errors."""
    from confluent_kafka import KafkaError

    if error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
        return f" ({missing_offsets(consumer, topic, partition, wanted, what)})"
    if error.name() in AUTHORIZATION_FAILURES:
        return f" ({what} cluster ACLs: allow this principal Read on topic {topic})"
    return ""


def missing_offsets(consumer: Any, topic: str, partition: int, wanted: int, what: str) -> str:
    """Why offset ``wanted`` cannot be read, with the offsets that are gone when the log start moved past it."""
    from confluent_kafka import KafkaException, TopicPartition

    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=5, cached=False)
    except KafkaException:
        low = high = -1
    if low > wanted:
        return (
            f"offsets {offset_range(wanted, low)} are no longer on the {what}, whose log now "
            f"starts at offset {low}: deleted by retention or DeleteRecords since the run was planned. Nothing "
            "is verified for this partition; the next run stops at the gap before writing, or accepts it with "
            "--allow-gaps (DAG param allow_gaps)"
        )
    if 0 <= high < wanted:
        return f"the {what} partition now ends at offset {high}, before {wanted}: the topic was truncated or recreated"
    return f"offset {wanted} is not on the {what}: deleted by retention, or the topic was truncated or recreated"


def _no_group_needed(msg: Any, error: Any) -> bool:
    """librdkafka's consumer always has a group.id, so it looks up that group's coordinator although the
    reader assigns partitions and commits nothing; a principal without an ACL on that group is refused
    (GROUP_AUTHORIZATION_FAILED, on no partition). The reader needs no group: not its error."""
    from confluent_kafka import KafkaError

    return error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED and msg.topic() is None


def fetched_high_watermark(consumer: Any, partition: Any) -> int:
    """The high watermark of the consumer's latest fetch of ``partition`` (no request), or -1 if none yet."""
    from confluent_kafka import KafkaException

    try:
        return int(consumer.get_watermark_offsets(partition, cached=True)[1])
    except KafkaException:
        return -1


def _in_range(
    messages: list[Any], end: int | None, fail: Callable[[Any, Any], NoReturn]
) -> tuple[list[Any], int | None, bool]:
    """The records of one consume() result inside the range, the offset after the last message seen
    (None when none was), and whether the range is done; ``fail`` raises for a read error."""
    # The usual batch: no errors, all inside the range. Offsets of one partition arrive in
    # increasing order, so the last one bounds them all: no Python work per message beyond
    # the error check (by identity: a KafkaError compared with None raises inside list.count).
    if all([m.error() is None for m in messages]):
        last = messages[-1].offset()
        if end is None or last < end:
            return messages, last + 1, end is not None and last == end - 1
    from confluent_kafka import KafkaError

    batch: list[Any] = []
    next_offset = None
    for msg in messages:
        error = msg.error()
        if error is not None:
            if error.code() == KafkaError._PARTITION_EOF:
                if end is None or msg.offset() >= end:
                    return batch, next_offset, True
                continue
            if _no_group_needed(msg, error):
                continue
            fail(msg, error)
        offset = msg.offset()
        next_offset = offset + 1
        if end is not None and offset >= end:
            return batch, next_offset, True
        batch.append(msg)
        if end is not None and offset == end - 1:
            return batch, next_offset, True
    return batch, next_offset, False


def _behind(messages: list[Any], fail: Callable[[Any, Any], NoReturn]) -> tuple[list[Any], int | None, bool]:
    """``_in_range`` for a reader following a writer: every record of one consume() result, also those
    after a partition-end event (new records the writer added since), and whether the result ends at
    the partition's end (its last message is that event)."""
    if all([m.error() is None for m in messages]):
        return messages, messages[-1].offset() + 1, False
    from confluent_kafka import KafkaError

    batch: list[Any] = []
    for msg in messages:
        error = msg.error()
        if error is None:
            batch.append(msg)
        elif error.code() != KafkaError._PARTITION_EOF and not _no_group_needed(msg, error):
            fail(msg, error)
    last = messages[-1].error()
    ends = last is not None and last.code() == KafkaError._PARTITION_EOF
    return batch, batch[-1].offset() + 1 if batch else None, ends


# One consumer per cluster (settings) and Python worker for ``end_offset``: a new consumer's connection
# and metadata cost far more than the ListOffsets request itself, and a task of small slices asks once
# per slice. Used for nothing else; tasks in a worker run one after another.
_WATERMARK_CONSUMERS: dict[str, Any] = {}


def end_offset(cluster: Endpoint, topic: str, partition: int, *, timeout: float | None = None) -> int:
    """The partition's high watermark now: one ListOffsets request, where reading to the end costs a fetch wait.

    A failure drops the worker's consumer; one that had served earlier calls gets one more try afresh,
    so a long-lived consumer's stale view never fails a slice that a new one would copy.
    """
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    what, settings = cluster.role, cluster.settings
    check_tls_settings(what, settings)
    timeout = stall_timeout(settings) if timeout is None else timeout
    key = json.dumps(sorted(settings.items()), default=str)
    deadline = time.monotonic() + timeout
    while True:
        consumer = _WATERMARK_CONSUMERS.get(key)
        reused = consumer is not None
        if consumer is None:
            consumer = _WATERMARK_CONSUMERS[key] = Consumer(consumer_settings(settings))
        try:
            return int(
                consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=timeout, cached=False)[1]
            )
        except KafkaException as exc:
            del _WATERMARK_CONSUMERS[key]
            consumer.close()
            code = exc.args[0].code()
            lost = code in (KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)
            # A partition whose leader is being elected (a topic created a moment ago, a broker restarting)
            # answers NOT_LEADER / LEADER_NOT_AVAILABLE for a while: ask again, afresh, until the timeout.
            electing = code in (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)
            if electing and time.monotonic() < deadline:
                time.sleep(0.1)
                continue
            if reused and not lost:
                continue
            raise (ClusterTimeoutError if lost else CopyError)(
                f"Could not read the end offset of {what} {topic}[{partition}] from the "
                f"{cluster_label(what, settings)} within {timeout:.0f}s: {exc.args[0].str()}. Check that the "
                f"{what} cluster is reachable and the topic exists, then rerun."
            ) from exc


# One admin client per cluster (settings) and Python worker for ``end_offsets``, for the reason above.
_WATERMARK_ADMINS: dict[str, Any] = {}


def end_offsets(cluster: Endpoint, partitions: Sequence[tuple[str, int]]) -> list[int]:
    """High watermarks of many partitions at once: one ListOffsets request per leader, where ``end_offset``
    sends one per partition (a window of small slices asked one each: 2 requests a topic per run).

    A partition the batch did not answer (leader being elected, unknown topic, refused, no answer) is
    asked alone with ``end_offset``, which waits out an election and names any other error.
    """
    from concurrent.futures import TimeoutError as FutureTimeout

    from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    wanted = list(partitions)
    if len(wanted) < 2:
        return [end_offset(cluster, topic, partition) for topic, partition in wanted]
    settings = cluster.settings
    check_tls_settings(cluster.role, settings)
    timeout = stall_timeout(settings)
    key = json.dumps(sorted(settings.items()), default=str)
    found: dict[tuple[str, int], int] = {}
    try:
        admin = _WATERMARK_ADMINS.get(key)
        if admin is None:
            admin = _WATERMARK_ADMINS[key] = AdminClient(client_settings(settings))
        futures = admin.list_offsets(
            {TopicPartition(t, p): OffsetSpec.latest() for t, p in set(wanted)},
            isolation_level=IsolationLevel.READ_UNCOMMITTED,
            request_timeout=timeout,
        )
        for tp, future in futures.items():
            try:
                found[(tp.topic, tp.partition)] = int(future.result(timeout=timeout + 5).offset)
            except (KafkaException, FutureTimeout, TimeoutError):
                continue  # asked alone below
    except (KafkaException, ValueError):  # no request sent: every partition alone
        _WATERMARK_ADMINS.pop(key, None)
    return [found[(t, p)] if (t, p) in found else end_offset(cluster, t, p) for t, p in wanted]
