"""Copy one partition's planned offset range: the work of one Spark task.

Runs inside an executor. The loops are here; the clients they drive are ``kafka/``'s, used directly: the
producer of ``kafka.records``, the consumers of ``kafka.reader`` and ``kafka.ranges``. Memory stays flat: records
stream from a bounded consumer queue into a bounded producer queue, and nothing is kept once written. Any
delivery error fails the task.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafka_migration.exceptions import ClusterTimeoutError, CopyError, ForeignRecordsError, describe_failure
from kafka_migration.kafka.reader import end_offset, end_offsets, next_batch, read_range
from kafka_migration.kafka.records import KEY_OF, VALUE_OF, DeliveryErrors, Producer, copy_producer
from kafka_migration.kafka.replicas import replica_problems
from kafka_migration.kafka.settings import cluster_label, delivery_timeout
from kafka_migration.model.checksums import (
    Fields,
    batch_fields,
    difference,
    encode_record,
    encode_records,
    message_fields,
)
from kafka_migration.model.config import ClusterPair, Endpoint
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.model.state import KAFKA_DEFAULT_MAX_MESSAGE_BYTES
from kafka_migration.model.text import offset_range, plural
from kafka_migration.run.schema_records import Rewritten, translated_batches, translated_fields, translated_window
from kafka_migration.run.windows import WindowOutcome, lay_out, run_windowed, shares

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionCopyResult:
    source_topic: str
    target_topic: str
    partition: int
    start: int
    end: int
    records: int  # written by this attempt
    bytes: int
    seconds: float
    resumed_records: int = 0  # found already on the target from an interrupted attempt
    error: str | None = None

    @classmethod
    def failed(cls, task: PartitionSlice, message: str) -> PartitionCopyResult:
        return cls(task.source_topic, task.target_topic, task.partition, task.start, task.end, 0, 0, 0.0, error=message)


def reconcile(task: PartitionSlice, clusters: ClusterPair) -> tuple[int, int]:
    """Check what the target partition already holds from ``target_start``; return (records, resume offset).

    An interrupted copy leaves a prefix of the planned range on the target (the
    idempotent producer keeps order). Anything else there was written by someone
    else, and the partition is left alone. Counters from before a crash are not
    trusted: the target itself is read, unless it ends where the plan starts writing.
    """
    if end_offset(clusters.target, task.target_topic, task.partition) == task.target_start:
        return 0, task.start
    source_batches = read_range(clusters.source, task.source_topic, task.partition, task.start, task.end)
    target_batches = read_range(clusters.target, task.target_topic, task.partition, task.target_start, None)
    try:
        id_map = task.id_map
        if id_map is None:
            return reconcile_batches(task, source_batches, target_batches)
        return reconcile_batches(
            task,
            source_batches,
            target_batches,
            lambda chunk: translated_fields(
                chunk, id_map, task.source_topic, task.partition, strict=not task.pass_unknown_ids
            ),
        )
    finally:
        source_batches.close()
        target_batches.close()


def reconcile_batches(
    task: PartitionSlice,
    source_batches: Iterable[list[Any]],
    target_batches: Iterable[list[Any]],
    expected: Callable[[list[Any]], Fields] = batch_fields,
) -> tuple[int, int]:
    """``reconcile`` on the two sides' batches: chunks of equal length compared in one piece each.

    ``expected`` gives a source chunk's fields as the copy writes them (translate mode: the ids mapped). Only a
    chunk whose canonical encodings differ is gone through record by record, to name the first foreign record
    exactly.
    """
    present = 0
    resume_from = task.start
    where = f"target {task.target_topic}[{task.partition}]"
    sources = iter(source_batches)
    src: list[Any] = []
    for tgt in target_batches:
        while tgt:
            if not src:
                src = next_batch(sources)
            if not src:
                raise ForeignRecordsError(
                    f"{where} holds more records after offset {task.target_start} than the planned source range "
                    f"{offset_range(task.start, task.end)} has (first extra at target offset {tgt[0].offset()}); "
                    "another producer writes to it. Nothing more was written to this partition; stop that producer and "
                    "clean the target partition, or copy under another name (--rename)."
                )
            n = min(len(src), len(tgt))
            s_chunk, src = (src, []) if n == len(src) else (src[:n], src[n:])
            t_chunk, tgt = (tgt, []) if n == len(tgt) else (tgt[:n], tgt[n:])
            s_fields = expected(s_chunk)
            t_fields = batch_fields(t_chunk)
            if s_fields != t_fields and encode_records(*s_fields) != encode_records(*t_fields):
                _refuse_foreign(where, s_chunk, t_chunk, s_fields)
            present += n
            resume_from = s_chunk[-1].offset() + 1
    return present, resume_from


def _refuse_foreign(where: str, s_chunk: list[Any], t_chunk: list[Any], s_fields: Fields) -> None:
    """Name the first record of a chunk that differs from what the copy writes (``s_fields``) as foreign."""
    for i, (s, t) in enumerate(zip(s_chunk, t_chunk, strict=True)):
        mine = (s_fields[0][i], s_fields[1][i], s_fields[2][i], s_fields[3][i])
        if encode_record(*mine) != encode_record(*message_fields(t)):
            fields = difference(mine, message_fields(t))
            raise ForeignRecordsError(
                f"{where} offset {t.offset()} holds a record this pipeline did not write (it should be source offset "
                f"{s.offset()}; {fields} {'differ' if ',' in fields else 'differs'}). Nothing more was written to "
                "this partition; stop the other producer and clean the target partition, or copy under another "
                "name (--rename)."
            )


# One idempotent producer per target and Python worker: its start-up (producer id,
# connections) costs far more than copying a small partition, and Spark reuses
# Python workers across tasks. Tasks in a worker run one after another.
_PRODUCERS: dict[str, tuple[Producer, DeliveryErrors]] = {}
# librdkafka finds a record's topic by walking every topic its client has written to (a linked list,
# rd_kafka_topic_find), once per produce(): a worker's producer that wrote to thousands of topics paid
# for each record in proportion to them. A producer is replaced once it has written to this many.
PRODUCER_TOPICS = 500
_PRODUCER_TOPICS: dict[str, set[str]] = {}


def warm_producer(target: Endpoint) -> None:
    """Start this worker's producer for topics with Kafka's default max.message.bytes ahead of the tasks.

    An idempotent producer's start (connections, producer id) took ~1 s here, paid by each worker's
    first copy; made while the driver waits for the plan, it is ready when the copy starts. A failure
    is left to the copy task itself to report, with its context.
    """
    try:
        _producer(target, KAFKA_DEFAULT_MAX_MESSAGE_BYTES)
    except Exception:  # the first copy task reports it, with its context
        _PRODUCERS.clear()


def _producer(target: Endpoint, max_message_bytes: int, topics: Iterable[str] = ()) -> tuple[Producer, DeliveryErrors]:
    """This worker's producer for ``topics`` (flushed: called between slices and windows), a new one once the
    cached one would have written to more than PRODUCER_TOPICS topics."""
    target_settings = target.settings
    key = json.dumps([sorted(target_settings.items()), max_message_bytes], default=str)
    written = _PRODUCER_TOPICS.get(key, set()) if key in _PRODUCERS else set()
    wanted = written | set(topics)
    if written and len(wanted) > max(len(written), PRODUCER_TOPICS):
        retired, _ = _PRODUCERS.pop(key)
        _KNOWN.pop(id(retired), None)
        retired.flush(delivery_timeout(target_settings))  # empty when the last slice confirmed its records
        wanted = set(topics)
    _PRODUCER_TOPICS[key] = wanted
    if key not in _PRODUCERS:
        errors = DeliveryErrors()
        _PRODUCERS[key] = (copy_producer(target, max_message_bytes, errors), errors)
    producer, errors = _PRODUCERS[key]
    errors.reset()
    return producer, errors


# The topics each cached producer (by id, dropped with it) has metadata for, from its last listing of the cluster.
_KNOWN: dict[int, frozenset[str]] = {}
# librdkafka asks the cluster about each topic the first time a producer writes to it: one Metadata request per
# new topic, 70% of a run's requests to a target of small topics (691-711 for 1,000 new topics). Measured on a
# warm broker, one listing of all topics cost it 3.4 µs per topic listed, a one-topic request 480 µs: a listing
# is asked for when a window brings at least LEARN_TOPICS new topics, and one for every LEARN_RATIO the cluster
# had at the last listing (well under the 140 at which the two cost the same, as the client parses it too).
LEARN_TOPICS = 20
LEARN_RATIO = 50


def _learn_topics(producer: Any, topics: set[str], timeout: float) -> None:
    """Give ``producer`` the metadata of ``topics`` in one request where that is cheaper than one per topic; a
    failure only leaves it asking per topic, as it would have."""
    known = _KNOWN.get(id(producer), frozenset())
    new = len(topics - known)
    if new < LEARN_TOPICS or new * LEARN_RATIO < len(known):
        return
    try:
        listed = producer.list_topics(timeout=min(timeout, 30.0))
    except Exception as exc:  # an optimisation: the writes ask per topic instead
        log.debug("Listing the target's topics for the copy's producer: %s", exc)
        return
    _KNOWN[id(producer)] = frozenset(listed.topics)


def _produce_when_room(
    produce: Callable[..., None], poll: Callable[[float], int], errors: DeliveryErrors, args: tuple, kwargs: dict
) -> bool:
    """Produce once the full queue has room; False when a failed delivery shows up while waiting.

    Delivery reports arrive only from poll(), so only this wait can reveal one.
    """
    while True:
        poll(0.05)
        if errors.count:
            return False
        try:
            produce(*args, **kwargs)
            return True
        except BufferError:
            continue


def _produce_batch(
    batch: list[Any] | Rewritten, topic: str, partition: int, producer: Producer, errors: DeliveryErrors
) -> tuple[int, int]:
    """Queue a batch of source records for ``topic[partition]``; (records, bytes of keys and values) queued.

    A ``Rewritten`` batch (translate mode) is written with its keys and values as rewritten. Stops early once a
    delivery has failed (no use queueing more); ``errors.count`` tells.
    """
    if isinstance(batch, Rewritten):
        rows: Iterable[tuple[Any, bytes | None, bytes | None]] = zip(*batch, strict=True)
    else:
        rows = zip(batch, map(KEY_OF, batch), map(VALUE_OF, batch), strict=True)
    produce = producer.produce
    poll = producer.poll
    written = 0
    size = 0
    for msg, key, value in rows:
        headers = msg.headers()
        timestamp = msg.timestamp()[1]
        try:
            # Positional arguments, and no headers=None: produce() looks up each keyword, per record.
            if headers is None:
                produce(topic, value, key, partition, timestamp=timestamp)
            else:
                produce(topic, value, key, partition, timestamp=timestamp, headers=headers)
        except BufferError:
            extra = {"timestamp": timestamp} if headers is None else {"timestamp": timestamp, "headers": headers}
            if not _produce_when_room(produce, poll, errors, (topic, value, key, partition), extra):
                break  # the target stopped acknowledging: no use queueing more
        written += 1
        size += (len(key) if key else 0) + (len(value) if value else 0)
    if not errors.count:
        poll(0)
    return written, size


def _confirm(
    producer: Producer,
    errors: DeliveryErrors,
    target: Endpoint,
    where: str,
    partitions: Iterable[tuple[str, int]] = (),
) -> None:
    """Flush the producer; raise when any record queued since ``errors.reset()`` was not acknowledged.

    ``where`` names what was copied (one slice, or the slices of a window copied together); ``partitions`` are
    the target partitions written, asked about after a failure (too few replicas in sync is said as such).
    """
    timeout = delivery_timeout(target.settings)
    if errors.count:
        producer.purge(in_queue=True, in_flight=False)  # queued ones would only time out in turn
    remaining = producer.flush(timeout + 30.0)
    label = cluster_label(target.role, target.settings)
    if errors.count or remaining:
        _PRODUCERS.clear()  # do not reuse a producer in an unknown state
        _KNOWN.clear()
    if errors.count:
        why = replica_problems(target.settings, partitions)
        raise (ClusterTimeoutError if errors.timed_out else CopyError)(
            f"Copy {where} failed: the {label} did not acknowledge {plural(errors.count, 'record')} within "
            f"{timeout:.0f}s (message.timeout.ms); first error: {errors.first}. "
            + (f"{why} " if why else "")
            + "Nothing after the failure was confirmed; rerun when the target is healthy: the rerun resumes from "
            "what the target holds."
        )
    if remaining:
        raise ClusterTimeoutError(
            f"Copy {where}: {plural(remaining, 'record')} still unconfirmed by the {label} after "
            f"{timeout + 30.0:.0f}s; the target cluster is slow or unreachable. Rerun when it is healthy."
        )


def copy_partition(
    task: PartitionSlice,
    clusters: ClusterPair,
    progress: Callable[[int, int], None] | None = None,
) -> PartitionCopyResult:
    """Copy ``[task.start, task.end)`` of the source partition to the same target partition.

    Resumes after whatever an interrupted attempt already wrote (see ``reconcile``). Bounded
    when a cluster stops answering: a silent source fails the read after socket.timeout.ms, an
    unacknowledged record fails after the target's message.timeout.ms, and then the records
    still queued are dropped instead of waited for (the rerun reconciles with the target).
    """
    started = time.monotonic()
    resumed, resume_from = reconcile(task, clusters)
    producer, errors = _producer(clusters.target, task.max_message_bytes, (task.target_topic,))
    written = 0
    size = 0
    topic = task.target_topic
    partition = task.partition
    batches = read_range(clusters.source, task.source_topic, partition, resume_from, task.end)
    for batch in translated_batches(
        batches, task.id_map, task.source_topic, partition, strict=not task.pass_unknown_ids
    ):
        count, nbytes = _produce_batch(batch, topic, partition, producer, errors)
        written += count
        size += nbytes
        if errors.count:
            break
        if progress is not None:
            progress(written, size)
    _confirm(
        producer,
        errors,
        clusters.target,
        f"{task.source_topic}[{partition}] -> {task.target_topic}[{partition}]",
        [(topic, partition)],
    )
    return PartitionCopyResult(
        source_topic=task.source_topic,
        target_topic=task.target_topic,
        partition=partition,
        start=task.start,
        end=task.end,
        records=written,
        bytes=size,
        seconds=round(time.monotonic() - started, 3),
        resumed_records=resumed,
    )


def copy_window(
    window: list[PartitionSlice],
    clusters: ClusterPair,
    progress_address: tuple[str, int] | None = None,
) -> WindowOutcome[PartitionCopyResult]:
    """Copy small slices together: one source consumer for all, one producer flush for the window.

    A slice whose target partition does not end at its ``target_start`` (an interrupted attempt
    left a prefix, or someone else wrote there) is handed back (None) for ``copy_partition``, which
    reconciles it. A failed delivery fails every slice of the window, as none is confirmed before
    the flush; the rerun reconciles each with what the target holds. A source read error hands
    the slices not yet read completely back too (``copy_partition`` resumes and names the error for
    the one it concerns), unless the source stopped answering: then they fail with that error.
    Slices of one window share the producer of one ``max_message_bytes`` (see ``windows.run_windowed``).
    """
    from kafka_migration.kafka.ranges import OffsetRange, read_ranges
    from kafka_migration.run.progress import ProgressSender

    started = time.time()
    clock = time.monotonic()
    ends = end_offsets(clusters.target, [(piece.target_topic, piece.partition) for piece in window])
    clean = [piece for piece, end in zip(window, ends, strict=True) if end == piece.target_start]
    producer, errors = _producer(clusters.target, window[0].max_message_bytes, {p.target_topic for p in clean})
    _learn_topics(producer, {p.target_topic for p in clean}, delivery_timeout(clusters.target.settings))
    written = [0] * len(clean)
    sizes = [0] * len(clean)
    finished = [False] * len(clean)
    senders = [ProgressSender(progress_address, piece.source_topic, piece.partition) for piece in clean]
    ranges = [OffsetRange(piece.source_topic, piece.partition, piece.start, piece.end) for piece in clean]
    read_error: Exception | None = None
    reads = read_ranges(clusters.source, ranges)
    maps = [piece.id_map for piece in clean]
    translated = reads if not any(maps) else translated_window(reads, maps, clean)
    try:
        for i, batch, done in translated:
            count, nbytes = _produce_batch(batch, clean[i].target_topic, clean[i].partition, producer, errors)
            written[i] += count
            sizes[i] += nbytes
            if errors.count:
                break
            finished[i] = done
            senders[i].update(written[i], sizes[i], final=done)
    except Exception as exc:  # the records queued so far are still confirmed (or failed) below
        read_error = exc
    finally:
        reads.close()  # the consumer now, also when a failed delivery ended the loop early
        for sender in senders:
            sender.close()
    names = ", ".join(f"{p.source_topic}[{p.partition}]" for p in clean[:3]) + (" ..." if len(clean) > 3 else "")
    lost = None
    unconfirmed = None
    try:
        _confirm(
            producer,
            errors,
            clusters.target,
            f"of {plural(len(clean), 'partition')} copied together ({names})",
            [(p.target_topic, p.partition) for p in clean],
        )
    except (ClusterTimeoutError, CopyError) as exc:  # every slice of the window: none is known to be complete
        unconfirmed = describe_failure(exc)
        if isinstance(exc, ClusterTimeoutError):
            lost = unconfirmed
    if isinstance(read_error, ClusterTimeoutError):
        lost = describe_failure(read_error)
    seconds = shares(time.monotonic() - clock, written)
    stamps = dict(zip(map(id, clean), lay_out(started, seconds), strict=True))
    results: dict[int, PartitionCopyResult | None] = {}
    for i, piece in enumerate(clean):
        if unconfirmed is not None:
            results[id(piece)] = PartitionCopyResult.failed(piece, unconfirmed)
        elif finished[i]:
            results[id(piece)] = PartitionCopyResult(
                piece.source_topic,
                piece.target_topic,
                piece.partition,
                piece.start,
                piece.end,
                written[i],
                sizes[i],
                round(seconds[i], 3),
            )
        elif lost is not None:
            results[id(piece)] = PartitionCopyResult.failed(piece, lost)
    now = time.time()
    return WindowOutcome(
        results=[results.get(id(piece)) for piece in window],
        stamps=[stamps.get(id(piece), (now, now)) for piece in window],
        lost=None if lost is None else f"{names} found: {lost}",
    )


def copy_partitions_safely(
    tasks: list[PartitionSlice],
    clusters: ClusterPair,
    progress_address: tuple[str, int] | None = None,
) -> list[PartitionCopyResult]:
    """The slices of one Spark task: small ones a window at a time (``copy_window``), the others one after
    another (``copy_partition``); after a cluster timeout the rest are not attempted."""
    return run_windowed(
        copy_partition,
        copy_window,
        PartitionCopyResult.failed,
        tasks,
        clusters,
        progress_address,
        key=lambda piece: piece.max_message_bytes,
    )
