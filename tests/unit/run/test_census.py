"""The census's reading without a broker: each key's and value's candidate id tallied with its first offset, what a
dry run's bounded census reads, and the driver's answer file. The real reads are in
tests/integration/test_schema_ids.py."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_migration.exceptions import CopyError
from kafka_migration.kafka import ranges
from kafka_migration.kafka.ranges import OffsetRange
from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.config import Endpoint
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.model.schemas import RecordPart
from kafka_migration.run.census import (
    bounded_census,
    bounded_ranges,
    census_of,
    census_slices,
    census_task,
    census_until,
    lead_census,
    read_answer,
    rest_of,
    tally,
    write_answer,
)
from tests.unit.factories import migration_plan, topic_plan
from tests.unit.run.test_batch_compare import Msg

KEY, VALUE = RecordPart.KEY, RecordPart.VALUE
SOURCE = Endpoint("source", {"bootstrap.servers": "nowhere:9092"})


def framed(schema_id: int, payload: bytes = b"p") -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + payload


RECORDS = [
    Msg(10, framed(3), framed(7), None, 0),
    Msg(11, None, framed(7), None, 0),  # no key
    Msg(12, framed(3), None, None, 0),  # a tombstone
    Msg(13, b"\x00\x00\x00\x07", b"", None, 0),  # four bytes: no header; an empty value
    Msg(14, b"raw key", b"\x01" + framed(9)[1:], None, 0),  # first bytes not 0
    Msg(15, framed(0x01020304), framed(8), None, 0),  # an id past three bytes
    Msg(16, framed(7), framed(7), None, 0),  # the value's id in a key: counted as a key's
]


def test_keys_and_values_are_tallied_apart_each_id_at_its_first_offset() -> None:
    keys: dict[bytes, list[int]] = {}
    values: dict[bytes, list[int]] = {}
    tally(RECORDS, keys, values)
    assert {int.from_bytes(h[1:], "big"): v for h, v in keys.items()} == {3: [10, 2], 0x01020304: [15, 1], 7: [16, 1]}
    assert {int.from_bytes(h[1:], "big"): v for h, v in values.items()} == {7: [10, 3], 8: [15, 1]}


def _reads(batches: dict[int, list[list[Msg]]]) -> Any:
    """A stand-in for ``ranges.read_ranges``: each range's batches as given, then done."""

    def read(cluster: Endpoint, wanted: Sequence[OffsetRange], **_: Any) -> Iterator[tuple[int, list[Msg], bool]]:
        assert cluster is SOURCE
        for i, _range in enumerate(wanted):
            for batch in batches.get(i, []):
                yield i, batch, False
            yield i, [], True

    return read


def test_a_census_of_ranges_names_topic_partition_and_part(monkeypatch: pytest.MonkeyPatch) -> None:
    other = Msg(4, None, framed(3), None, 0)
    monkeypatch.setattr(ranges, "read_ranges", _reads({0: [RECORDS[:3], RECORDS[3:]], 1: [[other]]}))
    found = census_of(SOURCE, [OffsetRange("a", 0, 10, 17), OffsetRange("b", 2, 0, 10)])
    assert found.sightings == (
        Sighting("a", 0, KEY, 3, 10, 2),  # record order: at one offset the key first
        Sighting("a", 0, VALUE, 7, 10, 3),
        Sighting("a", 0, KEY, 0x01020304, 15, 1),
        Sighting("a", 0, VALUE, 8, 15, 1),
        Sighting("a", 0, KEY, 7, 16, 1),
        Sighting("b", 2, VALUE, 3, 4, 1),
    )
    assert (found.records, found.planned, found.complete) == (8, 17, True)
    piece = PartitionSlice("a", "x.a", 0, 10, 17, 0)
    assert Census.from_dict(census_task([piece], SOURCE)) == Census(found.sightings[:5], 7, 7, True)


def _slices(*spans: tuple[int, int]) -> list[PartitionSlice]:
    return [PartitionSlice("t", "t", p, start, end, 0) for p, (start, end) in enumerate(spans)]


def test_a_bounded_census_reads_everything_within_its_budget_else_each_partitions_ends() -> None:
    whole, tails = bounded_ranges(_slices((0, 60), (100, 140)), budget=100)
    assert (whole, tails) == ([OffsetRange("t", 0, 0, 60), OffsetRange("t", 1, 100, 140)], [])
    heads, tails = bounded_ranges(_slices((0, 60), (100, 150), (0, 20)), budget=100, edge=1000)
    assert heads == [OffsetRange("t", 0, 0, 16), OffsetRange("t", 1, 100, 116), OffsetRange("t", 2, 0, 16)]
    assert tails == [OffsetRange("t", 0, 44, 60), OffsetRange("t", 1, 134, 150), OffsetRange("t", 2, 16, 20)]
    heads, tails = bounded_ranges(_slices((0, 10_000)), budget=100, edge=30)  # at most ``edge`` at an end
    assert (heads, tails) == ([OffsetRange("t", 0, 0, 30)], [OffsetRange("t", 0, 9970, 10_000)])
    heads, tails = bounded_ranges(_slices(*[(0, 50)] * 300), budget=100)  # at least one record at each end
    assert {r.end - r.start for r in heads + tails} == {1} and len(tails) == 300


def test_a_bounded_census_leaves_no_tail_the_head_covered() -> None:
    # 8 at each end (50 // 6): a partition of 8 offsets, or fewer, far from offset 0, is read whole by its head
    heads, tails = bounded_ranges(_slices((0, 60), (100, 108), (200, 205)), budget=50)
    assert heads == [OffsetRange("t", 0, 0, 8), OffsetRange("t", 1, 100, 108), OffsetRange("t", 2, 200, 205)]
    assert tails == [OffsetRange("t", 0, 52, 60)]


def test_a_header_with_nothing_after_it_is_a_candidate() -> None:
    keys: dict[bytes, list[int]] = {}
    values: dict[bytes, list[int]] = {}
    tally([Msg(3, framed(4, b""), framed(6, b""), None, 0)], keys, values)  # e.g. an Avro record of no fields
    assert keys == {framed(4, b""): [3, 1]} and values == {framed(6, b""): [3, 1]}


def test_a_dry_runs_census_says_whether_it_read_every_planned_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranges, "read_ranges", _reads({0: [[Msg(0, None, framed(5), None, 0)]]}))
    plan = migration_plan(topic_plan("t", (10, 0)))
    found = bounded_census(plan, SOURCE)
    assert found.complete and found.planned == 10 and found.ids() == {5}  # the empty range is not read
    found = bounded_census(plan, SOURCE, budget=4)
    assert found.complete is False and found.planned == 10
    later = rest_of(plan, [OffsetRange("t", 0, 4, 10)])  # the partition's range starts at offset 4
    assert bounded_census(later, SOURCE, budget=2).planned == 6
    assert found.records == 2  # one batch from each read: the heads, then the tails
    assert bounded_census(migration_plan(topic_plan("t", (0,))), SOURCE) == Census()  # nothing to read


def test_the_drivers_answer_is_the_census_or_why_there_is_none(tmp_path: Path) -> None:
    found = Census((Sighting("t", 0, KEY, 1, 0),), 1, 1)
    write_answer(tmp_path / "census.json", found)
    assert read_answer(tmp_path / "census.json") == found
    assert [p.name for p in tmp_path.iterdir()] == ["census.json"]  # no partial file left
    write_answer(tmp_path / "census.json", None, "source t[0]: unreachable")
    with pytest.raises(CopyError) as failed:
        read_answer(tmp_path / "census.json")
    assert str(failed.value) == (
        "The census of the source records failed: source t[0]: unreachable; nothing was written. Check that the "
        "source is reachable and readable, then run again."
    )
    write_answer(tmp_path / "census.json", None)
    with pytest.raises(CopyError, match=r"failed: unknown error; nothing was written"):
        read_answer(tmp_path / "census.json")
    with pytest.raises(CopyError, match="cannot be read"):
        read_answer(tmp_path / "absent.json")


class Closing:
    """A stand-in for ``ranges.read_ranges`` that notes whether the reader was closed (its consumer with it)."""

    def __init__(self, batches: dict[int, list[list[Msg]]]) -> None:
        self.batches, self.closed = batches, False

    def __call__(
        self, cluster: Endpoint, wanted: Sequence[OffsetRange], **_: Any
    ) -> Iterator[tuple[int, list[Msg], bool]]:
        try:
            yield from _reads(self.batches)(cluster, wanted)
        finally:
            self.closed = True


def test_a_census_stopped_early_says_what_is_left_from_where_it_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    reader = Closing({0: [[Msg(10, None, framed(3), None, 0), Msg(11, None, framed(3), None, 0)], [RECORDS[2]]]})
    monkeypatch.setattr(ranges, "read_ranges", reader)
    asked: list[int] = []

    def stop() -> bool:  # the driver comes up after the first batch
        asked.append(1)
        return True

    wanted = [OffsetRange("a", 0, 10, 17), OffsetRange("b", 1, 5, 9)]
    found, left = census_until(SOURCE, wanted, stop)
    assert asked == [1] and reader.closed  # asked once, after the first batch; the reader closed at once
    assert found == Census((Sighting("a", 0, VALUE, 3, 10, 2),), 2, 2, True)  # covered: offsets 10 and 11
    assert left == [OffsetRange("a", 0, 12, 17), OffsetRange("b", 1, 5, 9)]
    assert found.merge(census_of(SOURCE, [])).planned == 2


def test_a_census_that_is_never_stopped_reads_everything_and_leaves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranges, "read_ranges", _reads({0: [RECORDS[:3], RECORDS[3:]], 1: [[RECORDS[0]]]}))
    wanted = [OffsetRange("a", 0, 10, 17), OffsetRange("b", 2, 10, 20), OffsetRange("c", 0, 5, 5)]  # one empty
    found, left = census_until(SOURCE, wanted, lambda: False)
    assert left == [] and (found.records, found.planned) == (8, 17)
    assert found == census_of(SOURCE, wanted)
    # a range whose records end before its end (a gap, compaction) is done all the same: nothing left of it
    monkeypatch.setattr(ranges, "read_ranges", _reads({0: [[Msg(3, None, framed(1), None, 0)]]}))
    assert census_until(SOURCE, [OffsetRange("a", 0, 0, 9)], lambda: False)[1] == []


def test_a_range_read_to_its_end_before_the_stop_leaves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = [Msg(offset, None, framed(3), None, 0) for offset in range(10, 17)]
    monkeypatch.setattr(ranges, "read_ranges", _reads({0: [whole]}))  # its end comes before its done
    found, left = census_until(SOURCE, [OffsetRange("a", 0, 10, 17)], lambda: True)
    assert left == [] and (found.records, found.planned) == (7, 7)


def test_what_is_left_narrows_the_plan_for_the_drivers_census() -> None:
    plan = migration_plan(topic_plan("a", (10, 10, 0)), topic_plan("b", (4,)))
    left = [OffsetRange("a", 1, 7, 10), OffsetRange("b", 0, 0, 4)]
    rest = rest_of(plan, left)
    assert [(s.source_topic, s.partition, s.start, s.end) for s in census_slices(rest)] == [
        ("a", 1, 7, 10),
        ("b", 0, 0, 4),
    ]
    assert [p.end for t in rest.topics for p in t.partitions] == [p.end for t in plan.topics for p in t.partitions]
    assert census_slices(rest_of(plan, [])) == []


def test_the_lead_census_hands_the_rest_to_the_driver_once_it_is_up(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = migration_plan(topic_plan("a", (7,)))
    (piece,) = census_slices(plan)
    batches = {0: [[Msg(piece.start + i, None, framed(3), None, 0)] for i in range(3)]}
    monkeypatch.setattr(ranges, "read_ranges", _reads(batches))
    rests: list[Any] = []
    driver = Census((Sighting("a", 0, VALUE, 9, piece.start + 5, 2),), 2, 5, True)

    def rest(narrowed: Any) -> Census:
        rests.append([(s.start, s.end) for s in census_slices(narrowed)])
        return driver

    found = lead_census(plan, SOURCE, lambda: True, rest)  # up at once: one batch read here
    assert rests == [[(piece.start + 1, piece.end)]]
    assert found.ids() == {3, 9} and (found.records, found.planned, found.complete) == (3, 6, True)
    rests.clear()
    assert lead_census(plan, SOURCE, lambda: False, rest).ids() == {3} and rests == []  # all read here: no driver


def _tally_one_by_one(batch: list[Msg]) -> tuple[dict[bytes, list[int]], dict[bytes, list[int]]]:
    """The census's definition, record by record: each header with its first offset and its records."""
    found: tuple[dict[bytes, list[int]], dict[bytes, list[int]]] = ({}, {})
    for m in batch:
        for part, data in zip(found, (m.key(), m.value()), strict=True):
            if data is not None and len(data) >= 5 and data[0] == 0:
                part.setdefault(data[:5], [m.offset(), 0])[1] += 1
    return found


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.none(),
                st.binary(max_size=3),
                st.sampled_from([3, 7, 0x01020304]).map(framed),
                st.sampled_from([b"raw", b"\x00\x00", b"\x01" + framed(9)[1:]]),
            ),
            min_size=2,
            max_size=2,
        ),
        max_size=8,
    ),
    st.booleans(),
)
def test_a_batchs_tally_is_the_record_by_record_tally(pairs: list[list[bytes | None]], one_id: bool) -> None:
    """Whole columns (one id throughout, none framed) are tallied at C speed, mixed ones record by record: each
    answers as the definition does, also over several batches."""
    records = [Msg(20 + i, k, framed(7) if one_id else v, None, 0) for i, (k, v) in enumerate(pairs)]
    keys: dict[bytes, list[int]] = {}
    values: dict[bytes, list[int]] = {}
    tally(records[:3], keys, values)
    tally(records[3:], keys, values)
    assert (keys, values) == _tally_one_by_one(records)


def test_the_lead_census_reads_in_a_thread_that_steps_back_for_sparks_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a busy host the census and Spark's start-up share the cores: the census's thread (and its consumer's
    threads, which inherit it) runs 10 nice steps lower than the thread that waits for it (at most 19), whose
    priority stays as it was; a daemon, so that an interrupted run does not wait for it at exit."""
    from kafka_migration.run import census

    seen: dict[str, Any] = {}

    def until(source: Endpoint, wanted: Sequence[OffsetRange], stop: Any) -> tuple[Census, list[OffsetRange]]:
        me = threading.current_thread()
        seen.update(thread=me.name, daemon=me.daemon, nice=os.getpriority(os.PRIO_PROCESS, 0), stop=stop())
        return Census((), 10, 10), []

    monkeypatch.setattr(census, "census_until", until)
    plan = migration_plan(topic_plan("orders"))
    answers: list[Any] = []

    def waiter(nice: int) -> None:  # a thread of its own, so that its nice value can be set (and left) here
        os.setpriority(os.PRIO_PROCESS, 0, nice)
        answers.append(lead_census(plan, SOURCE, lambda: False, lambda _: pytest.fail("nothing left")))
        answers.append(os.getpriority(os.PRIO_PROCESS, 0))

    for nice, expected in ((3, 13), (12, 19)):
        answers.clear()
        thread = threading.Thread(target=waiter, args=(nice,))
        thread.start()
        thread.join()
        assert answers == [Census((), 10, 10), nice]
        assert seen == {"thread": "lead-census", "daemon": True, "nice": expected, "stop": False}


def test_a_lead_census_not_allowed_to_step_back_reads_as_it_would(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_migration.run import census

    def refused(*_: Any) -> None:
        raise PermissionError("not allowed")

    monkeypatch.setattr(census.os, "setpriority", refused)
    monkeypatch.setattr(census, "census_until", lambda *_, **__: (Census((), 1, 1), []))
    assert lead_census(migration_plan(topic_plan("orders")), SOURCE, lambda: False, lambda _: Census()) == Census(
        (), 1, 1
    )


def test_whole_columns_are_tallied_at_once_not_record_by_record(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_migration.run import census

    counted: list[tuple[bytes, int, int]] = []
    real = census._count
    monkeypatch.setattr(census, "_count", lambda f, h, o, n: counted.append((h, o, n)) or real(f, h, o, n))
    tally([Msg(100 + i, b"k%d" % i, framed(7, b"v%d" % i), None, 0) for i in range(50)], {}, {})
    assert counted == [(framed(7, b""), 100, 50)]  # one header, its first offset and its records, at once
    counted.clear()
    tally([Msg(5, None, framed(4, b""), None, 0), Msg(6, None, b"raw", None, 0)], {}, {})  # mixed: one by one
    assert counted == [(framed(4, b""), 5, 1)]  # a header with nothing after it is one too


def test_an_interrupted_wait_for_the_lead_census_stops_it_and_its_error_reaches_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kafka_migration.run import census

    stopped = threading.Event()

    def read(stop: Any) -> None:
        while not stop():
            time.sleep(0.001)
        stopped.set()

    def interrupted(self: threading.Thread, timeout: float | None = None) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "join", interrupted)
        with pytest.raises(KeyboardInterrupt):
            census._stepping_back(read)
    assert stopped.wait(5)

    def fails(stop: Any) -> None:
        raise CopyError("the source went away")

    with pytest.raises(CopyError, match="the source went away"):
        census._stepping_back(fails)
