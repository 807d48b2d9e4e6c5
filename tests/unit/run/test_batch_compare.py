"""Batch-wise verification and reconciliation give exactly what the per-record reference gives.

``compare_ranges`` (verify.py), ``reconcile_batches`` (copy.py), ``encode_records`` (records.py)
and the fast path of ``read_range`` (reader.py) work on whole batches for speed. Each is checked
here against a straightforward per-record reference (the logic they replaced) on generated
inputs: nulls and empties, headers, differences at the first record, at a chunk boundary, inside
a chunk and in the last record, missing and extra records, offset gaps on either side, and
different batch sizes on the two sides.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError

from kafka_migration.exceptions import ForeignRecordsError
from kafka_migration.kafka.reader import _in_range
from kafka_migration.kafka.records import DeliveryErrors
from kafka_migration.model.checksums import (
    RangeChecksum,
    batch_fields,
    difference,
    encode_record,
    encode_records,
    message_fields,
)
from kafka_migration.model.offsets import OffsetMapBuilder
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.model.text import offset_range
from kafka_migration.run.copy import _produce_when_room, reconcile_batches
from kafka_migration.run.verify import compare_ranges


class Msg:
    """The confluent_kafka.Message methods the pipeline calls."""

    def __init__(self, offset: int, key: Any, value: Any, headers: Any, timestamp: int, error: Any = None) -> None:
        self._offset, self._key, self._value, self._headers, self._ts, self._error = (
            offset,
            key,
            value,
            headers,
            timestamp,
            error,
        )

    def offset(self) -> int:
        return self._offset

    def key(self) -> Any:
        return self._key

    def value(self) -> Any:
        return self._value

    def headers(self) -> Any:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return (1, self._ts)

    def error(self) -> Any:
        return self._error

    def changed(self, **fields: Any) -> Msg:
        now = {"offset": self._offset, "key": self._key, "value": self._value, "headers": self._headers}
        now["timestamp"] = self._ts
        return Msg(**{**now, **fields})


# --- the per-record references (the logic before batching) -------------------------------------


def reference_verify(
    sources: Iterable[Any], targets: Iterable[Any], target_start: int, progress: Callable[[int, int], None] | None
) -> tuple[Any, ...]:
    source_sum = RangeChecksum()
    target_sum = RangeChecksum()
    first = None
    target_end = target_start
    mapping = OffsetMapBuilder()
    for src, tgt in itertools.zip_longest(sources, targets):
        src_fields = tgt_fields = src_bytes = tgt_bytes = None
        if src is not None:
            src_fields = message_fields(src)
            src_bytes = encode_record(*src_fields)
            source_sum.add(src_bytes)
            if progress is not None and not source_sum.count % 1000:
                progress(source_sum.count, source_sum.bytes)
        if tgt is not None:
            tgt_fields = message_fields(tgt)
            tgt_bytes = src_bytes if tgt_fields == src_fields else encode_record(*tgt_fields)
            target_sum.add(tgt_bytes)
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
    return (
        source_sum.count,
        target_sum.count,
        source_sum.hexdigest(),
        target_sum.hexdigest(),
        target_end,
        first,
        mapping.points,
        source_sum.bytes,
    )


def reference_reconcile(task: PartitionSlice, sources: Iterable[Any], targets: Iterable[Any]) -> tuple[int, int]:
    present = 0
    resume_from = task.start
    where = f"target {task.target_topic}[{task.partition}]"
    source_iter = iter(sources)
    for tgt in targets:
        src = next(source_iter, None)
        if src is None:
            raise ForeignRecordsError(
                f"{where} holds more records after offset {task.target_start} than the planned source range "
                f"{offset_range(task.start, task.end)} has (first extra at target offset {tgt.offset()}); "
                "another producer writes to it. Nothing more was written to this partition; stop that producer and "
                "clean the target partition, or copy under another name (--rename)."
            )
        if encode_record(*message_fields(src)) != encode_record(*message_fields(tgt)):
            fields = difference(message_fields(src), message_fields(tgt))
            raise ForeignRecordsError(
                f"{where} offset {tgt.offset()} holds a record this pipeline did not write (it should be "
                f"source offset {src.offset()}; {fields} {'differ' if ',' in fields else 'differs'}). Nothing more "
                "was written to this partition; stop the other producer and clean the target partition, or "
                "copy under another name (--rename)."
            )
        present += 1
        resume_from = src.offset() + 1
    return present, resume_from


def reference_in_range(messages: list[Any], end: int | None) -> tuple[list[Any], int | None, bool, str | None]:
    batch: list[Any] = []
    next_offset = None
    for msg in messages:
        error = msg.error()
        if error is not None:
            if error.code() == KafkaError._PARTITION_EOF:
                if end is None or msg.offset() >= end:
                    return batch, next_offset, True, None
                continue
            return batch, next_offset, True, f"fail at {msg.offset()}"
        offset = msg.offset()
        next_offset = offset + 1
        if end is not None and offset >= end:
            return batch, next_offset, True, None
        batch.append(msg)
        if end is not None and offset == end - 1:
            return batch, next_offset, True, None
    return batch, next_offset, False, None


# --- generated inputs ---------------------------------------------------------------------------


def random_bytes(rng: random.Random) -> bytes | None:
    return rng.choice([None, b"", b"x", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12)))])


def random_headers(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.6:
        return None
    if roll < 0.65:
        return []
    return [(rng.choice(["h", "é", ""]), random_bytes(rng)) for _ in range(rng.randrange(1, 3))]


def random_records(rng: random.Random, n: int, start: int, gaps: bool, plain: bool) -> list[Msg]:
    out = []
    offset = start
    for i in range(n):
        if plain:
            out.append(Msg(offset, b"k%d" % i, b"v" * (i % 7), None, 1_000 + i))
        else:
            out.append(Msg(offset, random_bytes(rng), random_bytes(rng), random_headers(rng), rng.randrange(-1, 3)))
        offset += 1 + (rng.random() < 0.1 and gaps) * rng.randrange(1, 3)  # a transaction marker
    return out


def regap(records: list[Msg], start: int, rng: random.Random, gaps: bool) -> list[Msg]:
    """The same records at other offsets (the target side of a copy)."""
    out = []
    offset = start
    for m in records:
        out.append(m.changed(offset=offset))
        offset += 1 + (rng.random() < 0.1 and gaps) * rng.randrange(1, 3)
    return out


def batches(records: list[Msg], sizes: Iterator[int]) -> Iterator[list[Msg]]:
    i = 0
    while i < len(records):
        n = next(sizes)
        yield records[i : i + n]  # an empty batch now and then, as a consumer may give
        i += n


def size_pattern(rng: random.Random) -> Iterator[int]:
    kind = rng.choice(["fixed", "random", "one"])
    if kind == "fixed":
        return itertools.repeat(rng.choice([1, 3, 7, 16, 1000]))
    if kind == "one":
        return itertools.repeat(1)
    return iter(lambda: rng.randrange(0, 20), -1)


def mutate(rng: random.Random, target: list[Msg], where: str) -> list[Msg]:
    if not target:
        return target
    i = {"first": 0, "last": len(target) - 1}.get(where, rng.randrange(len(target)))
    m = target[i]
    change = rng.choice(["key", "value", "headers", "timestamp", "drop", "insert", "null"])
    if change == "drop":
        return target[:i] + target[i + 1 :]
    if change == "insert":
        return [*target[:i], m.changed(value=b"intruder"), *(t.changed(offset=t.offset() + 1) for t in target[i:])]
    if change == "null":
        changed = m.changed(key=None) if m.key() is not None else m.changed(key=b"")
    elif change == "headers":
        changed = m.changed(headers=[("h", None)] if m.headers() != [("h", None)] else [("h", b"")])
    elif change == "timestamp":
        changed = m.changed(timestamp=m.timestamp()[1] + 1)
    else:
        changed = m.changed(**{change: (getattr(m, change)() or b"") + b"!"})
    return [*target[:i], changed, *target[i + 1 :]]


def scenario(seed: int) -> tuple[list[Msg], list[Msg], int, Iterator[int], Iterator[int]]:
    rng = random.Random(seed)
    n = rng.choice([0, 1, 2, 5, 16, 17, 40, 1001])
    plain = rng.random() < 0.5
    source = random_records(rng, n, rng.randrange(0, 5), gaps=rng.random() < 0.4, plain=plain)
    target_start = rng.randrange(0, 9)
    target = regap(source, target_start, rng, gaps=rng.random() < 0.4)
    what = rng.choice(["equal", "equal", "first", "last", "middle", "cut", "extra", "two"])
    if what in ("first", "last", "middle"):
        target = mutate(rng, target, what)
    elif what == "two":
        target = mutate(rng, mutate(rng, target, "middle"), "middle")
    elif what == "cut":
        target = target[: rng.randrange(len(target) + 1)]
    elif what == "extra":
        last = target[-1].offset() + 1 if target else target_start
        target = target + random_records(rng, rng.randrange(1, 4), last, gaps=False, plain=plain)
    return source, target, target_start, size_pattern(rng), size_pattern(rng)


# --- the tests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(160))
def test_compare_ranges_equals_the_per_record_reference(seed: int) -> None:
    source, target, target_start, s_sizes, t_sizes = scenario(seed)
    ref_progress: list[tuple[int, int]] = []
    expected = reference_verify(source, target, target_start, lambda c, b: ref_progress.append((c, b)))
    progress: list[tuple[int, int]] = []
    found = compare_ranges(
        batches(source, s_sizes), batches(target, t_sizes), target_start, lambda c, b: progress.append((c, b))
    )
    got = (
        found.source.count,
        found.target.count,
        found.source.hexdigest(),
        found.target.hexdigest(),
        found.target_end,
        found.first,
        found.offset_map,
        found.source.bytes,
    )
    assert got == expected
    # Progress: about every 1,000 source records, with the byte count the reference had at that count.
    bytes_at = {}
    total = RangeChecksum()
    for m in source:
        total.add(encode_record(*message_fields(m)))
        bytes_at[total.count] = total.bytes
    assert [c // 1000 for c, _ in progress] == sorted({c // 1000 for c, _ in progress})
    assert all(bytes_at[c] == b for c, b in progress)
    assert {c // 1000 for c, _ in ref_progress} <= {c // 1000 for c, _ in progress}


def explicit(where: str) -> tuple[list[Msg], list[Msg]]:
    source = [Msg(o, b"k%d" % o, b"v", None, o) for o in range(10)]
    target = [m.changed(offset=m.offset() + 100) for m in source]
    if where == "first":
        target[0] = target[0].changed(value=b"V")
    elif where == "boundary":  # first record of the second chunk of 4
        target[4] = target[4].changed(headers=[("h", None)])
    elif where == "middle":
        target[6] = target[6].changed(key=None, timestamp=0)
    elif where == "last":
        target[9] = target[9].changed(value=None)
    elif where == "missing":
        target = target[:7]
    elif where == "extra":
        target = [*target, Msg(110, None, None, None, 0)]
    elif where == "gaps":  # transaction markers: gaps at different places on each side
        source = [m.changed(offset=m.offset() + (m.offset() >= 3) + 2 * (m.offset() >= 8)) for m in source]
        target = [m.changed(offset=m.offset() + 5 * (m.offset() >= 105)) for m in target]
    elif where == "empty target":
        target = []
    elif where == "empty source":
        source = []
    elif where == "both empty":
        source, target = [], []
    return source, target


NAMED = ("equal", "first", "boundary", "middle", "last", "missing", "extra", "gaps")


@pytest.mark.parametrize("where", [*NAMED, "empty target", "empty source", "both empty"])
@pytest.mark.parametrize(("s_size", "t_size"), [(4, 4), (4, 3), (1, 10), (10, 1)])
def test_compare_ranges_named_cases(where: str, s_size: int, t_size: int) -> None:
    source, target = explicit(where)
    expected = reference_verify(source, target, 100, None)
    found = compare_ranges(batches(source, itertools.repeat(s_size)), batches(target, itertools.repeat(t_size)), 100)
    assert (found.source.count, found.target.count, found.source.hexdigest(), found.target.hexdigest()) == tuple(
        expected[:4]
    )
    assert (found.target_end, found.first, found.offset_map) == tuple(expected[4:7])
    if where == "gaps":
        assert found.first is None and len(found.offset_map) == 4


def task_for(source: list[Msg], target_start: int) -> PartitionSlice:
    start = source[0].offset() if source else 0
    end = source[-1].offset() + 1 if source else 1
    return PartitionSlice(
        source_topic="s", target_topic="t", partition=3, start=start, end=end, target_start=target_start
    )


@pytest.mark.parametrize("seed", range(100))
def test_reconcile_batches_equals_the_per_record_reference(seed: int) -> None:
    source, target, target_start, s_sizes, t_sizes = scenario(seed)
    task = task_for(source, target_start)
    try:
        expected: Any = reference_reconcile(task, source, target)
    except ForeignRecordsError as exc:
        expected = str(exc)
    try:
        got: Any = reconcile_batches(task, batches(source, s_sizes), batches(target, t_sizes))
    except ForeignRecordsError as exc:
        got = str(exc)
    assert got == expected


@pytest.mark.parametrize("where", NAMED)
def test_reconcile_named_cases(where: str) -> None:
    source, target = explicit(where)
    task = task_for(source, 100)
    try:
        expected: Any = reference_reconcile(task, source, target)
    except ForeignRecordsError as exc:
        expected = str(exc)
    try:
        got: Any = reconcile_batches(task, batches(source, itertools.repeat(4)), batches(target, itertools.repeat(3)))
    except ForeignRecordsError as exc:
        got = str(exc)
    assert got == expected
    if where in ("equal", "missing", "gaps"):
        assert isinstance(got, tuple)
    else:
        assert isinstance(got, str)


@pytest.mark.parametrize("seed", range(100))
def test_encode_records_is_the_concatenation_of_encode_record(seed: int) -> None:
    rng = random.Random(seed)
    records = [
        (random_bytes(rng), random_bytes(rng), random_headers(rng), rng.randrange(-(2**63), 2**63))
        for _ in range(rng.randrange(0, 30))
    ]
    if rng.random() < 0.3:
        records = [(b"k", b"v" * 5, None, 7)] * len(records)  # the fast path: no nulls, no headers
    keys, values, headers, timestamps = ([r[i] for r in records] for i in range(4))
    assert encode_records(keys, values, headers, timestamps) == b"".join(encode_record(*r) for r in records)
    messages = [Msg(i, *r) for i, r in enumerate(records)]
    assert batch_fields(messages) == (keys, values, headers, timestamps)


def test_encode_records_keeps_tuple_and_list_headers_equal() -> None:
    assert encode_records([b"k"], [b"v"], [(("h", b"1"),)], [1]) == encode_records([b"k"], [b"v"], [[("h", b"1")]], [1])
    assert encode_records([None], [b""], [[]], [1]) == encode_record(None, b"", None, 1)


def test_range_checksum_add_encoded_and_copy() -> None:
    one = RangeChecksum()
    for piece in (b"ab", b"c", b"def"):
        one.add(piece)
    many = RangeChecksum()
    many.add_encoded(b"abc", 2)
    fork = many.copy()
    many.add_encoded(b"def", 1)
    assert (many.hexdigest(), many.count, many.bytes) == (one.hexdigest(), one.count, one.bytes)
    assert (fork.hexdigest(), fork.count, fork.bytes) != (one.hexdigest(), one.count, one.bytes)
    fork.add(b"def")
    assert (fork.hexdigest(), fork.count, fork.bytes) == (one.hexdigest(), one.count, one.bytes)


EOF_ = KafkaError._PARTITION_EOF


# Real KafkaError objects: they raise when compared with None, so the fast path must test by identity.
@pytest.mark.parametrize("seed", range(100))
def test_read_range_batches_equal_the_per_message_loop(seed: int) -> None:
    rng = random.Random(seed)
    messages: list[Any] = []
    offset = rng.randrange(0, 5)
    for _ in range(rng.randrange(1, 12)):
        roll = rng.random()
        if roll < 0.1:
            messages.append(Msg(offset, None, None, None, 0, error=KafkaError(EOF_)))
        elif roll < 0.13:
            messages.append(Msg(offset, None, None, None, 0, error=KafkaError(KafkaError.OFFSET_OUT_OF_RANGE)))
        else:
            messages.append(Msg(offset, b"k", b"v", None, 0))
            offset += 1 + (rng.random() < 0.2)
    end = rng.choice([None, offset + 1, offset, offset - 1, offset - 2, messages[0].offset() + 1])

    def fail(msg: Any, error: Any) -> Any:
        raise RuntimeError(f"fail at {msg.offset()}")

    expected = reference_in_range(messages, end)
    try:
        batch, after, done = _in_range(messages, end, fail)
        got = (batch, after, done, None)
    except RuntimeError as exc:
        got = (expected[0], expected[1], True, str(exc))  # what was read before the failure is not used
    assert got == expected


class FakeQueue:
    """produce() raises BufferError ``full`` times; poll() reports a failed delivery from ``fail_at`` polls on."""

    def __init__(self, full: int, fail_at: int | None) -> None:
        self.full, self.fail_at, self.polls, self.produced = full, fail_at, 0, []
        self.errors = DeliveryErrors()

    def produce(self, *args: Any, **kwargs: Any) -> None:
        if self.full:
            self.full -= 1
            raise BufferError("queue full")
        self.produced.append((args, kwargs))

    def poll(self, timeout: float) -> int:
        self.polls += 1
        if self.fail_at is not None and self.polls >= self.fail_at:
            self.errors.count += 1
        return 0


@pytest.mark.parametrize(
    ("full", "fail_at", "produced", "polls"), [(0, None, True, 1), (3, None, True, 4), (3, 2, False, 2)]
)
def test_produce_when_room_waits_and_stops_at_a_failed_delivery(
    full: int, fail_at: int | None, produced: bool, polls: int
) -> None:
    queue = FakeQueue(full, fail_at)
    args, kwargs = ("t", b"v", b"k", 0), {"timestamp": 5}
    assert _produce_when_room(queue.produce, queue.poll, queue.errors, args, kwargs) is produced
    assert queue.produced == ([(args, kwargs)] if produced else [])
    assert queue.polls == polls
