"""Read many partitions' offset ranges with ONE consumer: the reads of a task's small slices.

``reader.read_range`` opens a consumer per range. Each new consumer costs a connection and a
metadata request, and a broker answers a new client's metadata with every topic of the cluster:
with thousands of small slices that, not the records, was the copy's and verification's time.
Here one consumer is assigned all ranges at once and each range's records come out in offset
order, with ``read_range``'s semantics: ``[start, end)`` skipping offsets that hold no record,
``end=None`` up to the high watermark the fetch reported (or the partition's end event),
read_committed, an offset that is not on the cluster named with topic[partition] and offset,
and a silent cluster failing after the stall timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, pairwise
from operator import ne
from typing import Any, NoReturn

from kafka_migration.exceptions import ClusterTimeoutError, CopyError
from kafka_migration.kafka.reader import BATCH, POLL_SECONDS, fetched_high_watermark, why_unreadable
from kafka_migration.kafka.settings import cluster_label, consumer_settings, stall_timeout
from kafka_migration.kafka.tls import check_tls_settings
from kafka_migration.model.config import Endpoint
from kafka_migration.model.text import offset_range, plural

# librdkafka's prefetch bound, queued.max.messages.kbytes, holds per assigned partition: with many
# partitions assigned at once, the default of one range's reader (16 MB) is split among them.
PREFETCH_KBYTES = 16384
MIN_PREFETCH_KBYTES = 1024


@dataclass(frozen=True)
class OffsetRange:
    """One partition's offsets ``[start, end)`` to read; ``end=None``: up to the partition's high watermark."""

    topic: str
    partition: int
    start: int
    end: int | None

    @property
    def empty(self) -> bool:
        return self.end is not None and self.end <= self.start


@dataclass
class _Progress:
    """Where one range's read stands."""

    wanted: OffsetRange
    next_offset: int
    received: bool = False  # a record of this read arrived (the fetched high watermark is then this read's)
    done: bool = False


def read_ranges(
    cluster: Endpoint,
    ranges: Sequence[OffsetRange],
    *,
    idle_timeout: float | None = None,
) -> Iterator[tuple[int, list[Any], bool]]:
    """Yield ``(index into ranges, records, done)`` of ``cluster``: each range's records in offset order, batch by
    batch; ``done`` on the last yield of a range (an empty range yields only ``(i, [], True)``, at once).

    Ranges of different partitions interleave as the fetches return them. Each partition is
    unassigned when its range is done, so it stops being fetched. Nothing is held beyond the batch
    yielded. Always closes the consumer, also when the caller stops early.
    """
    from confluent_kafka import Consumer, TopicPartition

    keys = [(r.topic, r.partition) for r in ranges]
    if len(set(keys)) != len(keys):
        raise ValueError("read_ranges reads each partition once: split ranges of one partition into separate reads")
    states = [_Progress(r, r.start) for r in ranges]
    for i, state in enumerate(states):
        if state.wanted.empty:
            state.done = True
            yield i, [], True
    open_ranges = {keys[i]: i for i, s in enumerate(states) if not s.done}
    if not open_ranges:
        return
    what, settings = cluster.role, cluster.settings
    check_tls_settings(what, settings)
    if idle_timeout is None:
        idle_timeout = stall_timeout(settings)
    label = cluster_label(what, settings)
    prefetch = max(MIN_PREFETCH_KBYTES, PREFETCH_KBYTES // len(open_ranges))
    config = consumer_settings({"queued.max.messages.kbytes": prefetch, **settings})
    consumer = Consumer(config)
    reading = _Reading(consumer, open_ranges, states, what, label)
    try:
        consumer.assign([TopicPartition(t, p, states[i].next_offset) for (t, p), i in open_ranges.items()])
        last_progress = time.monotonic()
        while open_ranges:
            messages = consumer.consume(num_messages=BATCH, timeout=POLL_SECONDS)
            if not messages:
                if time.monotonic() - last_progress > idle_timeout:
                    raise _stalled(what, label, idle_timeout, [states[i] for i in open_ranges.values()])
                continue
            last_progress = time.monotonic()
            batches = _by_range(reading, messages)
            finished = []
            for i, batch in sorted(batches.items()):
                state = states[i]
                if not state.done and state.wanted.end is None and state.received:
                    # At the high watermark the latest fetch reported: the end, without waiting for the
                    # partition-end event (one more fetch), as ``read_range`` does.
                    high = fetched_high_watermark(consumer, TopicPartition(*keys[i]))
                    state.done = 0 <= high <= state.next_offset
                if state.done:
                    finished.append(i)
                yield i, batch, state.done
            if finished:
                for i in finished:
                    open_ranges.pop(keys[i], None)
                consumer.incremental_unassign([TopicPartition(*keys[i]) for i in finished])
    finally:
        consumer.close()


@dataclass(frozen=True)
class _Reading:
    """What sorting a consume() result by range needs of the read: its consumer and cluster (to name a read error),
    the open ranges by partition and every range's state."""

    consumer: Any
    open_ranges: Mapping[tuple[str, int], int]
    states: list[_Progress]
    what: str
    label: str


def _by_range(reading: _Reading, messages: list[Any]) -> dict[int, list[Any]]:
    """One consume() result sorted by range: each open range's records inside it, in offset order (an entry,
    maybe empty, for every range the result touched); a range's state is ``done`` once its end was seen.

    A result comes in runs of one partition (a fetch answers partition by partition). The usual result, without
    errors: each run found at C speed and taken whole when its last offset is inside its range (offsets of one
    partition increase); a run that crosses its range's end, or a result with an error or an event, record by record.
    """
    if not all([m.error() is None for m in messages]):
        return _each(reading, messages, {})
    open_ranges, states = reading.open_ranges, reading.states
    keys = list(zip([m.topic() for m in messages], [m.partition() for m in messages], strict=True))
    starts = [0, *compress(range(1, len(keys)), map(ne, keys[1:], keys)), len(keys)]
    batches: dict[int, list[Any]] = {}
    for first, after in pairwise(starts):
        i = open_ranges.get(keys[first])
        if i is None or states[i].done:
            continue  # prefetched before its range ended, or no range's
        state = states[i]
        end = state.wanted.end
        last = messages[after - 1].offset()
        if end is not None and last >= end:
            _each(reading, messages[first:after], batches)
            continue
        batches.setdefault(i, []).extend(messages[first:after])
        state.next_offset = last + 1
        state.received = True
        state.done = end is not None and last == end - 1
    return batches


def _each(reading: _Reading, messages: list[Any], batches: dict[int, list[Any]]) -> dict[int, list[Any]]:
    """``_by_range`` record by record, into ``batches``: read errors, partition-end events, a range's end."""
    from confluent_kafka import KafkaError

    open_ranges, states = reading.open_ranges, reading.states
    for msg in messages:
        i = open_ranges.get((msg.topic(), msg.partition()))
        if i is None or states[i].done:
            continue  # prefetched before its range ended, or an event of no range
        state = states[i]
        batch = batches.setdefault(i, [])
        end = state.wanted.end
        error = msg.error()
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                _fail(reading.consumer, reading.what, reading.label, state, msg, error)
            state.done = end is None or msg.offset() >= end
            continue
        offset = msg.offset()
        state.next_offset = offset + 1
        state.received = True
        if end is not None and offset >= end:
            state.done = True
            continue
        batch.append(msg)
        state.done = end is not None and offset == end - 1
    return batches


def _stalled(what: str, label: str, idle_timeout: float, waiting: list[_Progress]) -> ClusterTimeoutError:
    first = waiting[0]
    r = first.wanted
    return ClusterTimeoutError(
        f"The {label} sent nothing for {idle_timeout:.0f}s (socket.timeout.ms) while reading "
        f"{what} {r.topic}[{r.partition}] at offset {first.next_offset} (range {offset_range(r.start, r.end)}, "
        f"one of {plural(len(waiting), 'range')} still open): "
        "it is unreachable or not answering. Rerun when it is reachable; the rerun resumes from "
        "what the target holds."
    )


def _fail(consumer: Any, what: str, label: str, state: _Progress, msg: Any, error: Any) -> NoReturn:
    r = state.wanted
    why = why_unreadable(consumer, error, r.topic, r.partition, state.next_offset, what)
    raise CopyError(
        f"Reading {what} {r.topic}[{r.partition}] on the {label} at offset {msg.offset()} failed: {error.str()}{why}"
    )


def read_all(
    cluster: Endpoint,
    ranges: Sequence[OffsetRange],
    *,
    idle_timeout: float | None = None,
) -> list[list[Any]]:
    """Every range's records, whole, one list per range (a window's verification holds them to compare)."""
    out: list[list[Any]] = [[] for _ in ranges]
    for i, batch, _done in read_ranges(cluster, ranges, idle_timeout=idle_timeout):
        out[i].extend(batch)
    return out
