"""Verify one partition from independent reads of source and target.

The planned source range and everything the target partition holds from the
planned target start are read side by side and compared record by record on
their canonical encoding, while count and checksum are kept for each side. It
trusts nothing the copy reported.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka_migration.offsets import OffsetMapBuilder
from kafka_migration.plan import PartitionSlice
from kafka_migration.reader import records
from kafka_migration.records import RangeChecksum, difference, encode_record, message_fields


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


def verify_partition(
    task: PartitionSlice,
    source_settings: Mapping[str, Any],
    target_settings: Mapping[str, Any],
    progress: Callable[[int, int], None] | None = None,
) -> PartitionVerification:
    started = time.monotonic()
    source_sum = RangeChecksum()
    target_sum = RangeChecksum()
    first: tuple[int | None, int | None, str] | None = None
    target_end = task.target_start
    mapping = OffsetMapBuilder()
    source_iter = records(source_settings, task.source_topic, task.partition, task.start, task.end, "source")
    target_iter = records(target_settings, task.target_topic, task.partition, task.target_start, None, "target")
    add_source = source_sum.add
    add_target = target_sum.add
    for src, tgt in itertools.zip_longest(source_iter, target_iter):
        src_fields = tgt_fields = src_bytes = tgt_bytes = None
        if src is not None:
            src_fields = message_fields(src)
            src_bytes = encode_record(*src_fields)
            add_source(src_bytes)
            if progress is not None and not source_sum.count % 1000:
                progress(source_sum.count, source_sum.bytes)
        if tgt is not None:
            tgt_fields = message_fields(tgt)
            # Equal fields encode to equal bytes: encode the target record only when it differs.
            tgt_bytes = src_bytes if tgt_fields == src_fields else encode_record(*tgt_fields)
            add_target(tgt_bytes)
            target_end = tgt.offset() + 1
        if first is None:
            if src_bytes == tgt_bytes:
                mapping.add(src.offset(), tgt.offset())
            elif tgt is None:
                first = (src.offset(), None, "record missing on the target")
            elif src is None:
                first = (None, tgt.offset(), "extra record on the target")
            else:
                fields = difference(src_fields, tgt_fields)  # type: ignore[arg-type]
                first = (src.offset(), tgt.offset(), f"{fields} {'differ' if ',' in fields else 'differs'}")
    match = first is None and source_sum.hexdigest() == target_sum.hexdigest()
    return PartitionVerification(
        source_topic=task.source_topic,
        target_topic=task.target_topic,
        partition=task.partition,
        source_start=task.start,
        source_end=task.end,
        target_start=task.target_start,
        target_end=target_end,
        source_records=source_sum.count,
        target_records=target_sum.count,
        source_checksum=source_sum.hexdigest(),
        target_checksum=target_sum.hexdigest(),
        match=match,
        first_difference=None if first is None else first[2],
        first_source_offset=None if first is None else first[0],
        first_target_offset=None if first is None else first[1],
        seconds=round(time.monotonic() - started, 3),
        offset_map=mapping.points if match else [],
    )


def verify_partitions_safely(
    tasks: list[PartitionSlice],
    source_settings: Mapping[str, Any],
    target_settings: Mapping[str, Any],
    progress_address: tuple[str, int] | None = None,
) -> list[PartitionVerification]:
    """The slices of one Spark task, one after another; after a cluster timeout the rest are not attempted."""
    from kafka_migration.progress import run_guarded_all

    return run_guarded_all(
        verify_partition, PartitionVerification.failed, tasks, source_settings, target_settings, progress_address
    )
