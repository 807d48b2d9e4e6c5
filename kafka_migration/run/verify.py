"""Verify one partition from independent reads of source and target.

The planned source range and everything the target partition holds from the
planned target start are read side by side and compared record by record on
their canonical encoding (a whole chunk of records at a time, see
``compare_ranges``), while count and checksum are kept for each side. It trusts
nothing the copy reported.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kafka_migration.kafka.reader import next_batch, read_range
from kafka_migration.model.checksums import (
    Fields,
    RangeChecksum,
    batch_fields,
    difference,
    encode_record,
    encode_records,
)
from kafka_migration.model.config import ClusterPair
from kafka_migration.model.offsets import OffsetMapBuilder
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run.schema_records import RecordProof
from kafka_migration.run.windows import WindowOutcome, lay_out, run_windowed, shares

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionVerification:
    source_topic: str
    target_topic: str
    partition: int
    source_start: int
    source_end: int
    target_start: int
    target_end: int
    source_records: int
    target_records: int
    source_checksum: str
    target_checksum: str
    match: bool
    first_difference: str | None
    first_source_offset: int | None
    first_target_offset: int | None
    seconds: float
    offset_map: list[tuple[int, int]] = field(default_factory=list)
    error: str | None = None
    # --schema-ids translate: the partition's keys and values by outcome (``SchemaCounts.to_dict``), as the
    # per-record proof found them; None where the slice was compared byte for byte.
    schema_counts: dict[str, Any] | None = None

    @classmethod
    def failed(cls, task: PartitionSlice, message: str) -> PartitionVerification:
        return cls(
            source_topic=task.source_topic,
            target_topic=task.target_topic,
            partition=task.partition,
            source_start=task.start,
            source_end=task.end,
            target_start=task.target_start,
            target_end=task.target_start,
            source_records=0,
            target_records=0,
            source_checksum="",
            target_checksum="",
            match=False,
            first_difference=f"verification could not read: {message}",
            first_source_offset=None,
            first_target_offset=None,
            seconds=0.0,
            error=message,
        )


@dataclass(frozen=True)
class RangeComparison:
    """What comparing a source range with a target range found (see ``compare_ranges``)."""

    source: RangeChecksum
    target: RangeChecksum
    target_end: int
    # (source offset, target offset, what differs) of the first differing record pair
    first: tuple[int | None, int | None, str] | None
    offset_map: list[tuple[int, int]]
    proof: RecordProof | None = None


def compare_ranges(
    source_batches: Iterable[list[Any]],
    target_batches: Iterable[list[Any]],
    target_start: int,
    progress: Callable[[int, int], None] | None = None,
    proof: RecordProof | None = None,
) -> RangeComparison:
    """Pair the n-th source record with the n-th target record, chunk by chunk; count and checksum each side.

    The two sides' batches are cut to equal lengths and each chunk's canonical encodings are
    built and compared in one piece: length-prefixed encodings of equally many records
    concatenate to equal bytes only when every pair is equal, so only a chunk that differs is
    gone through record by record, to name the first differing pair exactly. While both sides
    are byte-identical they share one running checksum (SHA-256 over equal bytes is equal); it
    forks at the first difference. The offset map needs work per record only where the
    offsets of a chunk are not contiguous (transaction markers, compaction) on either side.

    ``proof`` (translate mode, ``run.schema_records``): the source side is then the source records with their ids
    mapped, as the proof gives them from the raw source bytes; each pair of chunks is also proven record by record,
    and its first mismatch is the first difference unless the bytes differed earlier.
    """
    source_sum = RangeChecksum()
    target_sum: RangeChecksum | None = None  # None while the target has been equal to the source
    first: tuple[int | None, int | None, str] | None = None
    target_end = target_start
    mapping = OffsetMapBuilder()
    sources = iter(source_batches)
    targets = iter(target_batches)
    src: list[Any] = []
    tgt: list[Any] = []
    reported = 0
    while True:
        if not src:
            src = next_batch(sources)
        if not tgt:
            tgt = next_batch(targets)
        if not src and not tgt:
            break
        if src and tgt:
            n = min(len(src), len(tgt))
            s_chunk, src = (src, []) if n == len(src) else (src[:n], src[n:])
            t_chunk, tgt = (tgt, []) if n == len(tgt) else (tgt[:n], tgt[n:])
        elif src:
            n = len(src)
            s_chunk, src, t_chunk = src, [], []
        else:
            n = len(tgt)
            s_chunk, t_chunk, tgt = [], tgt, []
        t_fields = batch_fields(t_chunk)
        s_fields, proven = _expected(proof, s_chunk, t_chunk, t_fields)
        s_bytes = encode_records(*s_fields)
        # Equal fields encode to equal bytes: encode the target chunk only when it differs.
        t_bytes = s_bytes if t_fields == s_fields else encode_records(*t_fields)
        if t_chunk:
            target_end = t_chunk[-1].offset() + 1
        if target_sum is None and s_chunk and t_chunk and s_bytes == t_bytes:
            source_sum.add_encoded(s_bytes, n)
            _map_offsets(mapping, s_chunk, t_chunk)
        else:
            if target_sum is None:
                target_sum = source_sum.copy()
            if first is None:
                first = _earliest(_first_difference(mapping, s_chunk, t_chunk, s_fields, t_fields), proven)
            if s_chunk:
                source_sum.add_encoded(s_bytes, n)
            if t_chunk:
                target_sum.add_encoded(t_bytes, n)
        if first is None and proven is not None:  # the bytes are the expected ones, yet the proof refutes them
            first = proven
        if progress is not None and s_chunk and source_sum.count // 1000 != reported:
            reported = source_sum.count // 1000
            progress(source_sum.count, source_sum.bytes)
    return RangeComparison(
        source=source_sum,
        target=source_sum.copy() if target_sum is None else target_sum,
        target_end=target_end,
        first=first,
        offset_map=mapping.points,
        proof=proof,
    )


def _expected(
    proof: RecordProof | None, s_chunk: list[Any], t_chunk: list[Any], t_fields: Fields
) -> tuple[Fields, tuple[int, int, str] | None]:
    """A source chunk's fields as the target must hold them, and the first pair the proof refutes (translate mode:
    the ids mapped, each pair proven; else the fields as read)."""
    if proof is None or not s_chunk:
        return batch_fields(s_chunk), None
    return proof(s_chunk, t_chunk, t_fields)


def _earliest(
    found: tuple[int | None, int | None, str], proven: tuple[int, int, str] | None
) -> tuple[int | None, int | None, str]:
    """The first difference of a chunk: the bytes', unless the per-record proof refuted an earlier record (it
    names why: the wrong id, the lost header)."""
    source_offset = found[0]  # None only where the source chunk is empty, and then nothing was proven
    if proven is None or (source_offset is not None and source_offset < proven[0]):
        return found
    return proven


def _map_offsets(mapping: OffsetMapBuilder, s_chunk: list[Any], t_chunk: list[Any]) -> None:
    """Feed a chunk of equal record pairs to the offset map: one point when both sides are contiguous."""
    last = len(s_chunk) - 1
    s_first = s_chunk[0].offset()
    t_first = t_chunk[0].offset()
    if s_chunk[-1].offset() - s_first == last and t_chunk[-1].offset() - t_first == last:
        mapping.add(s_first, t_first)  # one difference throughout: the rest would add nothing
        return
    for s, t in zip(s_chunk, t_chunk, strict=True):
        mapping.add(s.offset(), t.offset())


def _first_difference(
    mapping: OffsetMapBuilder,
    s_chunk: list[Any],
    t_chunk: list[Any],
    s_fields: tuple[list[Any], ...],
    t_fields: tuple[list[Any], ...],
) -> tuple[int | None, int | None, str]:
    """The first differing pair of a chunk that differs, record by record (equal pairs before it are mapped)."""
    if not t_chunk:
        return (s_chunk[0].offset(), None, "record missing on the target")
    if not s_chunk:
        return (None, t_chunk[0].offset(), "extra record on the target")
    for i, (src, tgt) in enumerate(zip(s_chunk, t_chunk, strict=True)):
        a = (s_fields[0][i], s_fields[1][i], s_fields[2][i], s_fields[3][i])
        b = (t_fields[0][i], t_fields[1][i], t_fields[2][i], t_fields[3][i])
        if a == b or encode_record(*a) == encode_record(*b):
            mapping.add(src.offset(), tgt.offset())
            continue
        fields = difference(a, b)
        return (src.offset(), tgt.offset(), f"{fields} {'differ' if ',' in fields else 'differs'}")
    raise AssertionError("a chunk whose encoding differs has a differing record")


class _Counted:
    """The source batches, counted as they are read: how many records, and whether the range is done.

    ``compare_ranges`` asks the source for its next batch before the target's whenever both are used
    up, so a target reader waiting on ``target_complete`` always waits for records the source has
    already shown, or for the range's end: never for a source batch nobody asks for.
    """

    def __init__(self, batches: Iterator[list[Any]]) -> None:
        self.batches = batches
        self.records = 0
        self.done = False

    def __iter__(self) -> Iterator[list[Any]]:
        for batch in self.batches:
            self.records += len(batch)
            yield batch
        self.done = True

    def target_complete(self, target_records: int) -> bool:
        """At the target's high watermark: the end once the source range is read and the target holds as many."""
        return self.done and target_records >= self.records


def verify_partition(
    task: PartitionSlice,
    clusters: ClusterPair,
    progress: Callable[[int, int], None] | None = None,
    *,
    following: bool = False,
) -> PartitionVerification:
    """Compare the planned source range with the target from ``target_start`` (see ``compare_ranges``).

    ``following``: the copy of this slice may still be writing (it runs in another task at the same
    time). The target is then not ended at its high watermark until it holds as many records as the
    source range (waiting for the rest, bounded by the stall timeout); then it is read to its high
    watermark as usual, so extra records still count. Nothing of the copy is consulted.
    """
    started = time.monotonic()
    source_batches = read_range(clusters.source, task.source_topic, task.partition, task.start, task.end)
    counted = _Counted(source_batches) if following else None
    target_batches = read_range(
        clusters.target,
        task.target_topic,
        task.partition,
        task.target_start,
        None,
        follow=None if counted is None else counted.target_complete,
    )
    proof = None if task.id_map is None else RecordProof(task.id_map, task.source_topic, task.partition)
    try:
        found = compare_ranges(counted or source_batches, target_batches, task.target_start, progress, proof)
    finally:
        source_batches.close()  # closes the consumers now, also after a read error on the other side
        target_batches.close()
    return _verification(task, found, time.monotonic() - started)


def _verification(task: PartitionSlice, found: RangeComparison, seconds: float) -> PartitionVerification:
    """The verdict on one slice from what ``compare_ranges`` found."""
    first = found.first
    source_checksum = found.source.hexdigest()
    target_checksum = found.target.hexdigest()
    match = first is None and source_checksum == target_checksum
    return PartitionVerification(
        source_topic=task.source_topic,
        target_topic=task.target_topic,
        partition=task.partition,
        source_start=task.start,
        source_end=task.end,
        target_start=task.target_start,
        target_end=found.target_end,
        source_records=found.source.count,
        target_records=found.target.count,
        source_checksum=source_checksum,
        target_checksum=target_checksum,
        match=match,
        first_difference=None if first is None else first[2],
        first_source_offset=None if first is None else first[0],
        first_target_offset=None if first is None else first[1],
        seconds=round(seconds, 3),
        offset_map=found.offset_map if match else [],
        schema_counts=None if found.proof is None else found.proof.counts().to_dict(),
    )


def verify_window(
    window: list[PartitionSlice],
    clusters: ClusterPair,
    progress_address: tuple[str, int] | None = None,
) -> WindowOutcome[PartitionVerification]:
    """Verify small slices together: one consumer reads their source ranges, one their target partitions
    (each from ``target_start`` to its high watermark), then each slice is compared alone with
    ``compare_ranges``, exactly as ``verify_partition`` compares it.

    The window's records are held until compared: ``windows.WINDOW_RECORDS`` bounds them. A read
    error is raised: ``windows.run_windowed`` then verifies each slice alone, so the error is
    attributed to the slice it concerns (or, a cluster not answering, fails the window).
    """
    from kafka_migration.kafka.ranges import OffsetRange, read_all
    from kafka_migration.run.progress import ProgressSender

    started = time.time()
    clock = time.monotonic()
    sources = read_all(clusters.source, [OffsetRange(p.source_topic, p.partition, p.start, p.end) for p in window])
    targets = read_all(
        clusters.target, [OffsetRange(p.target_topic, p.partition, p.target_start, None) for p in window]
    )
    reading = shares(time.monotonic() - clock, [len(s) + len(t) for s, t in zip(sources, targets, strict=True)])
    results = []
    seconds = []
    for i, piece in enumerate(window):
        clock = time.monotonic()
        proof = None if piece.id_map is None else RecordProof(piece.id_map, piece.source_topic, piece.partition)
        found = compare_ranges([sources[i]], [targets[i]], piece.target_start, proof=proof)
        sources[i] = targets[i] = []  # compared: no longer held
        took = reading[i] + time.monotonic() - clock
        seconds.append(took)
        results.append(_verification(piece, found, took))
        sender = ProgressSender(progress_address, piece.source_topic, piece.partition)
        sender.update(found.source.count, found.source.bytes, final=True)
        sender.close()
    return WindowOutcome(results=list(results), stamps=lay_out(started, seconds))


def verify_partitions_safely(
    tasks: list[PartitionSlice],
    clusters: ClusterPair,
    progress_address: tuple[str, int] | None = None,
    following: bool = False,
) -> list[PartitionVerification]:
    """The slices of one Spark task: small ones a window at a time (``verify_window``), the others one after
    another (``verify_partition``); after a cluster timeout the rest are not attempted.

    ``following``: behind copies still running (``verify_partition(following=True)``), each slice alone.
    """
    from functools import partial

    from kafka_migration.run.progress import run_guarded_all

    if following:
        work = partial(verify_partition, following=True)
        return run_guarded_all(work, PartitionVerification.failed, tasks, clusters, progress_address)
    results = run_windowed(
        verify_partition,
        verify_window,
        PartitionVerification.failed,
        tasks,
        clusters,
        progress_address,
    )
    return _again_where_short(results, tasks, clusters)


# How long a target that read short is given before it is read once more: a partition's new leader knows the
# followers' positions, and so its high watermark, only from their next fetch (replica.fetch.wait.max.ms, 500 ms).
SETTLE_SECONDS = 3.0


def _again_where_short(
    results: list[PartitionVerification],
    tasks: list[PartitionSlice],
    clusters: ClusterPair,
) -> list[PartitionVerification]:
    """Verify once more, after ``SETTLE_SECONDS``, each slice whose target read ended short of the source range.

    A read ends at the high watermark the partition's leader reports; right after a leader change (a broker
    restarted, an election) the new leader's can lag the records it holds, so the target looks short although
    nothing is missing. The second read is the verdict: a target that is really short is short again.
    """
    short = [
        i for i, r in enumerate(results) if not r.match and r.error is None and r.target_records < r.source_records
    ]
    if not short:
        return results
    time.sleep(SETTLE_SECONDS)
    by_slice = {(t.source_topic, t.partition): t for t in tasks}
    settled = list(results)
    for i in short:
        first = results[i]
        settled[i] = verify_partition(by_slice[(first.source_topic, first.partition)], clusters)
        log.warning(
            "%s[%d]: the target read %d records, the source range %d; read again after %.0f s: %s",
            first.target_topic,
            first.partition,
            first.target_records,
            first.source_records,
            SETTLE_SECONDS,
            "it matches (the target's end was behind, e.g. right after a leader change)"
            if settled[i].match
            else "still different",
        )
    return settled


def verify_partitions_following(
    tasks: list[PartitionSlice],
    clusters: ClusterPair,
    progress_address: tuple[str, int] | None = None,
) -> list[PartitionVerification]:
    """``verify_partitions_safely`` behind copies still running: the follower tasks' work."""
    return verify_partitions_safely(tasks, clusters, progress_address, following=True)
