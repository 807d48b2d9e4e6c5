"""The census of a run's source records (``model.census``): the planned ranges read, each key's and value's candidate
schema id kept with the first offset that carries it.

It runs before anything is written, and only when the run moves schemas (``--schema-ids keep`` or ``translate``):
- a run: this process reads while the Spark application starts, then Spark tasks from where it stopped, each
  reading its slices whole (``lead_census``, ``census_task``; spark/census_jobs.py runs them in the copy's own
  application before its copy is released, see spark/gate.py);
- a dry run or a DAG's plan task, a failback's too (run/census_takers.py decides): this process reads the ranges
  whole when they hold at most ``DRY_RUN_RECORDS`` offsets in all (the default of
  $KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS), else Spark reads them, in an application of its own
  (spark/census_jobs.py); or, a dry run's ``--dry-run-census ends``, this process reads the first and last records
  of each partition within that budget (``bounded_census``) and says so.

Only the first five bytes of a key or value are looked at, but a Kafka fetch brings whole records: the census costs
one more read of the source ranges (docs/schemas.md gives the figure measured).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import closing, suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kafka_migration.exceptions import CopyError
from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.config import Endpoint
from kafka_migration.model.plan import MigrationPlan, PartitionSlice
from kafka_migration.model.schemas import RecordPart
from kafka_migration.schemas.wire import Column, framed_heads

if TYPE_CHECKING:  # imported where they read: the launcher and the driver import this module for its files
    from kafka_migration.kafka.ranges import OffsetRange

HEADER = 5  # the magic byte 0 and the four id bytes (schemas.wire.ID_END)
REQUEST = "census-plan.json"  # in the run's directory: the plan as planned so far, whose ranges the census reads
ANSWER = "census.json"  # beside it: the census, or why it could not be taken
DRY_RUN_RECORDS = 200_000  # offsets a dry run's census reads at most
EDGE = 1_000  # records a bounded census reads at most from each end of a partition

_T = TypeVar("_T")
Tally = dict[bytes, list[int]]  # a header's five bytes -> [first offset, records]


def tally(batch: Sequence[Any], keys: Tally, values: Tally) -> None:
    """Count the candidate headers of a batch's keys and values (messages in offset order: the first seen is the
    first offset). A header is the byte 0 then four more; anything else is no candidate."""
    _tally_column(batch, [m.key() for m in batch], keys)
    _tally_column(batch, [m.value() for m in batch], values)


def _tally_column(batch: Sequence[Any], column: Column, found: Tally) -> None:
    """``tally`` of one column (the batch's keys, or values): the common ones (none framed; each framed) at C speed
    (``wire.framed_heads``), a mixed one record by record."""
    heads = framed_heads(column)
    if heads is None:  # mixed: some framed, some not
        for message, data in zip(batch, column, strict=True):
            if data and data[0] == 0 and len(data) >= HEADER:
                _count(found, data[:HEADER], message.offset(), 1)
        return
    if heads:
        counted = Counter(heads)
        for header in counted:  # in the order first seen
            _count(found, header, batch[heads.index(header)].offset(), counted[header])


def _count(found: Tally, header: bytes, offset: int, records: int) -> None:
    seen = found.get(header)
    if seen is None:
        found[header] = [offset, records]
    else:
        seen[1] += records


def sightings(topic: str, partition: int, keys: Tally, values: Tally) -> list[Sighting]:
    return [
        Sighting(topic, partition, part, int.from_bytes(header[1:HEADER], "big"), first, records)
        for part, found in ((RecordPart.KEY, keys), (RecordPart.VALUE, values))
        for header, (first, records) in found.items()
    ]


def census_of(source: Endpoint, ranges: Sequence[OffsetRange]) -> Census:
    """The census of ``ranges`` (each partition once), read whole with one consumer."""
    return census_until(source, ranges)[0]


def census_until(
    source: Endpoint, ranges: Sequence[OffsetRange], stop: Callable[[], bool] | None = None
) -> tuple[Census, list[OffsetRange]]:
    """The census of ``ranges`` read with one consumer until ``stop()`` says so (asked after each batch), and what
    is left of them then: the rest of each range not read to its end. Its ``planned`` offsets are those it covered,
    so that the census of what is left merges into the whole (``Census.merge``)."""
    from kafka_migration.kafka.ranges import OffsetRange, read_ranges

    tallies: dict[int, tuple[Tally, Tally]] = {}
    reached = {i: r.start for i, r in enumerate(ranges)}  # each range's next offset to read
    finished: set[int] = set()
    records = 0
    with closing(read_ranges(source, ranges)) as batches:  # stopped early: its consumer is closed at once
        for i, batch, done in batches:
            if batch:
                keys, values = tallies.setdefault(i, ({}, {}))
                tally(batch, keys, values)
                records += len(batch)
                reached[i] = batch[-1].offset() + 1
            if done:
                finished.add(i)
            if stop is not None and stop():
                break
    found = [s for i, (k, v) in tallies.items() for s in sightings(ranges[i].topic, ranges[i].partition, k, v)]
    left = [
        OffsetRange(r.topic, r.partition, reached[i], r.end)
        for i, r in enumerate(ranges)
        if i not in finished and reached[i] < (r.end or r.start)
    ]
    covered = sum(max(0, (r.end or r.start) - r.start) for r in ranges) - sum(r.end - r.start for r in left)
    return Census(tuple(found), records, covered), left


def rest_of(plan: MigrationPlan, left: Sequence[OffsetRange]) -> MigrationPlan:
    """``plan`` narrowed to what is ``left`` of its census (``census_until``): each partition's range starts where
    the census stopped, and those read whole are empty (``census_slices`` skips them). For the census alone."""
    starts = {(r.topic, r.partition): r.start for r in left}
    topics = tuple(
        replace(
            topic,
            partitions=tuple(
                replace(p, start=starts.get((topic.source_topic, p.partition), p.end)) for p in topic.partitions
            ),
        )
        for topic in plan.topics
    )
    return replace(plan, topics=topics)


def lead_census(
    plan: MigrationPlan, source: Endpoint, up: Callable[[], bool], rest: Callable[[MigrationPlan], Census]
) -> Census:
    """The census of ``plan`` read by this process while the Spark application starts (it would wait idle for it),
    the rest by ``rest`` (the driver's Spark job) from where this process stopped once the driver is ``up``: a census
    of a few million records is over before Spark is, a bigger one goes on in the executors."""
    from kafka_migration.kafka.ranges import OffsetRange

    ranges = [OffsetRange(s.source_topic, s.partition, s.start, s.end) for s in census_slices(plan)]
    found, left = _stepping_back(lambda stop: census_until(source, ranges, stop=lambda: stop() or up()))
    return found.merge(rest(rest_of(plan, left))) if left else found


def _stepping_back(read: Callable[[Callable[[], bool]], _T]) -> _T:
    """``read(stop)`` in a thread of lowered CPU priority (``_yield_cpu``), waited for here. Interrupted here (Ctrl-C),
    the read is told to stop after its batch (``stop()`` then says so), so that the process does not wait for it."""
    outcome: list[_T | BaseException] = []
    cancelled = threading.Event()

    def run() -> None:
        _yield_cpu()
        try:
            outcome.append(read(cancelled.is_set))
        except BaseException as exc:  # handed to the waiting thread, which raises it
            outcome.append(exc)

    reader = threading.Thread(target=run, name="lead-census", daemon=True)
    reader.start()
    try:
        reader.join()
    finally:
        cancelled.set()
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


LEAD_NICENESS = 10  # how far the lead census steps back for Spark's start-up (os.setpriority: 0 normal, 19 last)


def _yield_cpu() -> None:
    """Lower the calling thread's CPU priority by ``LEAD_NICENESS`` (a nice value is per thread on Linux, and the
    consumer's threads inherit it): the lead census uses what Spark's start-up leaves of the CPU, which it waits for
    anyway, and what it has not read when the driver is up goes to the driver's census. Elsewhere a nice value is the
    whole process's, which would slow the rest of the run: there it reads as it would."""
    if not sys.platform.startswith("linux"):
        return
    with suppress(OSError):  # not allowed here: it reads as it would
        os.setpriority(os.PRIO_PROCESS, 0, min(19, os.getpriority(os.PRIO_PROCESS, 0) + LEAD_NICENESS))


def census_task(slices: Sequence[PartitionSlice], source: Endpoint) -> dict[str, Any]:
    """A Spark task of the census: its slices read whole; the census as a plain dict (what travels to the driver)."""
    from kafka_migration.kafka.ranges import OffsetRange

    ranges = [OffsetRange(s.source_topic, s.partition, s.start, s.end) for s in slices]
    return census_of(source, ranges).to_dict()


def census_slices(plan: MigrationPlan) -> list[PartitionSlice]:
    """The ranges a census reads: those the copy will copy."""
    return [s for topic in plan.topics for s in topic.slices(include_empty=False)]


def bounded_ranges(
    slices: Sequence[PartitionSlice], budget: int = DRY_RUN_RECORDS, edge: int = EDGE
) -> tuple[list[OffsetRange], list[OffsetRange]]:
    """What a bounded census reads: every range whole when they hold ``budget`` offsets at most (no second list);
    else each partition's first and last records, ``edge`` at each end at most and ``budget`` in all (at least one
    at each end): the first ids a topic used and the newest."""
    from kafka_migration.kafka.ranges import OffsetRange

    whole = [OffsetRange(s.source_topic, s.partition, s.start, s.end) for s in slices]
    if sum(s.end - s.start for s in slices) <= budget:
        return whole, []
    per_end = max(1, min(edge, budget // (2 * len(slices))))
    heads = [OffsetRange(r.topic, r.partition, r.start, min(r.end or r.start, r.start + per_end)) for r in whole]
    tails = [
        OffsetRange(r.topic, r.partition, max(r.start + per_end, (r.end or r.start) - per_end), r.end)
        for r in whole
        if (r.end or r.start) - r.start > per_end
    ]
    return heads, tails


def bounded_census(plan: MigrationPlan, source: Endpoint, budget: int = DRY_RUN_RECORDS) -> Census:
    """A dry run's census, in this process (``bounded_ranges``); ``complete`` when it read every range whole."""
    slices = census_slices(plan)
    if not slices:
        return Census()
    heads, tails = bounded_ranges(slices, budget)
    if not tails:
        return census_of(source, heads)
    found = census_of(source, heads).merge(census_of(source, tails))
    return Census(found.sightings, found.records, sum(s.end - s.start for s in slices), complete=False)


def write_answer(path: Path, census: Census | None, error: str | None = None) -> None:
    """The driver's answer to the launcher's ``census`` word: the census, or why it could not be taken."""
    data = {"census": census.to_dict()} if census is not None else {"error": error or "unknown error"}
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data))
    os.replace(partial, path)  # whole or absent: the launcher reads it once the driver says it is written


def read_answer(path: Path) -> Census:
    """The census the driver wrote; CopyError when it could not take it (nothing was written to the target)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise CopyError(
            f"The census of the source records ({path}) cannot be read: {exc}; nothing was written."
        ) from exc
    if "census" not in data:
        raise CopyError(
            f"The census of the source records failed: {data.get('error')}; nothing was written. Check that the source "
            "is reachable and readable, then run again."
        )
    return Census.from_dict(data["census"])
