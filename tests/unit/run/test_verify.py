"""kafka_migration.run.verify around the comparison: the verdict's fields, progress, the reads of one slice, of a
window of slices and behind a running copy, and the second read of a target that looked short. The clusters are
in-memory partitions read through a stand-in for the readers (``read_range``, ``ranges.read_all``); the
comparison itself is tested record by record in test_batch_compare.py and test_verify_verdict.py."""

from __future__ import annotations

import itertools
import json
import logging
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kafka_migration.kafka import ranges
from kafka_migration.model.checksums import batch_fields
from kafka_migration.model.config import Endpoint
from kafka_migration.model.offsets import OffsetMapBuilder
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run import verify
from kafka_migration.run.verify import (
    PartitionVerification,
    _Counted,
    _first_difference,
    _verification,
    compare_ranges,
)
from tests.unit.factories import CLUSTERS
from tests.unit.run.test_batch_compare import Msg, batches


def records(start: int, count: int) -> list[Msg]:
    """``count`` records at offsets ``start``, ``start + 1``..."""
    return [Msg(start + i, b"k%d" % i, b"v%d" % i, [("h", b"%d" % i)], 1_700_000 + i) for i in range(count)]


def task(source_start: int, count: int, target_start: int, partition: int = 0) -> PartitionSlice:
    return PartitionSlice("orders", "orders-copy", partition, source_start, source_start + count, target_start)


# --- the verdict's fields --------------------------------------------------------------------------------------


def test_a_slice_that_could_not_be_read_fails_with_its_plan_and_the_reason() -> None:
    failed = PartitionVerification.failed(task(20, 12, 100, partition=3), "source cluster src:9092 timed out")
    assert failed == PartitionVerification(
        source_topic="orders",
        target_topic="orders-copy",
        partition=3,
        source_start=20,
        source_end=32,
        target_start=100,
        target_end=100,
        source_records=0,
        target_records=0,
        source_checksum="",
        target_checksum="",
        match=False,
        first_difference="verification could not read: source cluster src:9092 timed out",
        first_source_offset=None,
        first_target_offset=None,
        seconds=0.0,
        offset_map=[],
        error="source cluster src:9092 timed out",
    )


def test_the_verdict_of_an_exact_copy_carries_the_plan_the_counts_and_the_offset_map() -> None:
    source = records(20, 12)
    target = [m.changed(offset=100 + i + (i >= 5)) for i, m in enumerate(source)]  # a marker at target 105
    found = compare_ranges([source], [target], 100)
    verdict = _verification(task(20, 12, 100, partition=2), found, 1.23456)
    assert (verdict.source_topic, verdict.target_topic, verdict.partition) == ("orders", "orders-copy", 2)
    assert (verdict.source_start, verdict.source_end, verdict.target_start, verdict.target_end) == (20, 32, 100, 113)
    assert (verdict.source_records, verdict.target_records) == (12, 12)
    assert verdict.match and verdict.source_checksum == verdict.target_checksum == found.source.hexdigest()
    assert (verdict.first_difference, verdict.first_source_offset, verdict.first_target_offset) == (None, None, None)
    assert verdict.offset_map == [(20, 100), (25, 106)]
    assert verdict.seconds == 1.235 and verdict.error is None


def test_the_verdict_of_a_differing_copy_names_the_first_pair_and_keeps_no_offset_map() -> None:
    source = records(20, 12)
    target = [m.changed(offset=100 + i) for i, m in enumerate(source)]
    target[7] = target[7].changed(value=b"V7")
    verdict = _verification(task(20, 12, 100), compare_ranges([source], [target], 100), 0.0)
    assert not verdict.match and verdict.source_checksum != verdict.target_checksum
    assert (verdict.first_difference, verdict.first_source_offset, verdict.first_target_offset) == (
        "value differs",
        27,
        107,
    )
    assert verdict.offset_map == []


def test_pairs_equal_in_encoding_but_not_in_form_are_mapped_not_reported() -> None:
    """Headers as a tuple on one side and a list on the other encode alike: the same record. A chunk that differs
    further on is gone through pair by pair; the first pair is not its difference."""
    source = records(0, 3)
    target = [m.changed(offset=10 + m.offset()) for m in source]
    target[0] = target[0].changed(headers=tuple(source[0].headers()))
    target[2] = target[2].changed(key=b"K2")
    mapping = OffsetMapBuilder()
    first = _first_difference(mapping, source, target, batch_fields(source), batch_fields(target))
    assert first == (2, 12, "key differs")
    assert mapping.points == [(0, 10)]


def test_progress_is_told_once_per_thousand_source_records() -> None:
    told: list[tuple[int, int]] = []
    source = records(0, 2_500)
    target = [m.changed(offset=m.offset()) for m in source]
    compare_ranges(batches(source, itertools.repeat(300)), [target], 0, lambda n, size: told.append((n, size)))
    assert [n for n, _ in told] == [1_200, 2_100]  # the first chunk past each thousand
    compare_ranges(batches(source[:999], itertools.repeat(333)), [target[:999]], 0, told.append)  # type: ignore[arg-type]
    assert len(told) == 2  # fewer than a thousand: nothing to tell


# --- the reads ------------------------------------------------------------------------------------------------


class Partition:
    """What a reader hands over for one range of an in-memory partition, and whether it was closed."""

    def __init__(self, found: list[Msg], size: int = 4) -> None:
        self.found = found
        self.size = size
        self.closed = False

    def __iter__(self) -> Iterator[list[Msg]]:
        return batches(self.found, itertools.repeat(self.size))

    def close(self) -> None:
        self.closed = True


class Clusters:
    """In-memory partitions by (role, topic, partition); ``reads`` records each read_range call."""

    def __init__(self, partitions: dict[tuple[str, str, int], list[Msg]]) -> None:
        self.partitions = partitions
        self.reads: list[tuple[str, str, int, int, int | None, Any]] = []
        self.opened: list[Partition] = []
        self.grow: dict[tuple[str, str, int], list[Msg]] = {}  # records a later read finds (a settled leader)

    def held(self, role: str, topic: str, partition: int, start: int, end: int | None) -> list[Msg]:
        found = self.partitions[(role, topic, partition)]
        return [m for m in found if m.offset() >= start and (end is None or m.offset() < end)]

    def read_range(
        self, cluster: Endpoint, topic: str, partition: int, start: int, end: int | None, follow: Any = None
    ) -> Partition:
        self.reads.append((cluster.role, topic, partition, start, end, follow))
        reader = Partition(self.held(cluster.role, topic, partition, start, end))
        self.opened.append(reader)
        key = (cluster.role, topic, partition)
        if key in self.grow:
            self.partitions[key] = self.grow.pop(key)
        return reader

    def read_all(self, cluster: Endpoint, wanted: list[ranges.OffsetRange]) -> list[list[Msg]]:
        return [self.held(cluster.role, r.topic, r.partition, r.start, r.end) for r in wanted]


@pytest.fixture
def copy_of_two(monkeypatch: pytest.MonkeyPatch) -> Clusters:
    """orders[0] source 20-31 copied to orders-copy[0] from 100 (a marker at 105); orders[1] source 0-5 copied
    from 0, then two records more on the target that the copy did not write (and on the source, three records
    appended after planning)."""
    p0 = records(20, 12)
    p1 = records(0, 6)
    clusters = Clusters(
        {
            ("source", "orders", 0): p0,
            ("target", "orders-copy", 0): [m.changed(offset=100 + i + (i >= 5)) for i, m in enumerate(p0)],
            ("source", "orders", 1): p1 + records(6, 3),  # appended after planning: not part of the slice
            ("target", "orders-copy", 1): [m.changed(offset=i) for i, m in enumerate(p1 + records(50, 2))],
        }
    )
    monkeypatch.setattr(verify, "read_range", clusters.read_range)
    monkeypatch.setattr(ranges, "read_all", clusters.read_all)
    return clusters


SLICES = [task(20, 12, 100), task(0, 6, 0, partition=1)]


def judged(found: list[PartitionVerification]) -> list[tuple[int, bool, int, int, int, str | None]]:
    return [(v.partition, v.match, v.source_records, v.target_records, v.target_end, v.first_difference) for v in found]


EXPECTED = [(0, True, 12, 12, 113, None), (1, False, 6, 8, 8, "extra record on the target")]


def test_one_slice_reads_its_source_range_and_its_target_partition_to_the_end(copy_of_two: Clusters) -> None:
    told: list[tuple[int, int]] = []
    found = [verify.verify_partition(s, CLUSTERS, lambda n, b: told.append((n, b))) for s in SLICES]
    assert judged(found) == EXPECTED
    assert found[0].offset_map == [(20, 100), (25, 106)] and found[0].seconds >= 0
    assert [read[:5] for read in copy_of_two.reads] == [
        ("source", "orders", 0, 20, 32),
        ("target", "orders-copy", 0, 100, None),
        ("source", "orders", 1, 0, 6),
        ("target", "orders-copy", 1, 0, None),
    ]
    assert all(read[5] is None for read in copy_of_two.reads)  # not behind a running copy: no waiting
    assert all(reader.closed for reader in copy_of_two.opened)
    assert told == []  # fewer than a thousand records


def test_behind_a_running_copy_the_target_waits_for_as_many_records_as_the_source_range(
    copy_of_two: Clusters,
) -> None:
    found = verify.verify_partitions_following(SLICES, CLUSTERS)
    assert judged(found) == EXPECTED
    follow = copy_of_two.reads[1][5]
    assert callable(follow) and follow(12)  # the source range read (12 records): complete at 12 on the target
    assert not follow(11)


def test_the_source_side_of_a_following_read_counts_its_records_and_its_end() -> None:
    counted = _Counted(iter([records(0, 3), records(3, 2)]))
    assert not counted.target_complete(0)
    seen = iter(counted)
    next(seen)
    assert (counted.records, counted.done) == (3, False)
    assert not counted.target_complete(3)  # the source is not read to its end yet
    list(seen)
    assert (counted.records, counted.done) == (5, True)
    assert counted.target_complete(5) and counted.target_complete(6) and not counted.target_complete(4)


def test_small_slices_are_read_together_and_each_judged_alone(copy_of_two: Clusters) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(5)
        outcome = verify.verify_window(SLICES, CLUSTERS, listener.getsockname())
        told = sorted(json.loads(listener.recv(4096)) for _ in SLICES)
    assert judged(outcome.results) == EXPECTED
    assert copy_of_two.reads == []  # one read of all the source ranges, one of all the target partitions
    sizes = [compare_ranges([found], [found], 0).source.bytes for found in (records(20, 12), records(0, 6))]
    assert told == [["orders\x000", 12, sizes[0]], ["orders\x001", 6, sizes[1]]]  # each slice's final count
    (first_start, first_end), (second_start, second_end) = outcome.stamps
    assert first_start <= first_end == second_start <= second_end


def test_a_task_verifies_its_small_slices_in_a_window(copy_of_two: Clusters) -> None:
    found = verify.verify_partitions_safely(SLICES, CLUSTERS)
    assert judged(found) == EXPECTED
    assert copy_of_two.reads == []  # the window read them; partition 1 is not short but longer: not read again


def test_a_target_that_read_short_is_read_again_and_the_second_read_is_the_verdict(
    copy_of_two: Clusters, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A leader just elected reports a high watermark behind the records it holds: the first read of partition 0
    ends after 10 of its 12 records; read again, it holds all 12."""
    monkeypatch.setattr(verify, "SETTLE_SECONDS", 0.0)
    key = ("target", "orders-copy", 0)
    whole = copy_of_two.partitions[key]
    copy_of_two.partitions[key] = whole[:10]
    copy_of_two.grow[key] = whole
    short_then_whole: Callable[..., Any] = copy_of_two.read_all

    def first_read_short(cluster: Endpoint, wanted: list[ranges.OffsetRange]) -> list[list[Msg]]:
        found = short_then_whole(cluster, wanted)
        if cluster.role == "target":
            copy_of_two.partitions[key] = copy_of_two.grow.pop(key)
        return found

    monkeypatch.setattr(ranges, "read_all", first_read_short)
    with caplog.at_level(logging.WARNING, logger="kafka_migration.run.verify"):
        found = verify.verify_partitions_safely(SLICES, CLUSTERS)
    assert judged(found) == EXPECTED
    assert [read[:5] for read in copy_of_two.reads] == [
        ("source", "orders", 0, 20, 32),
        ("target", "orders-copy", 0, 100, None),
    ]
    assert caplog.messages == [
        "orders-copy[0]: the target read 10 records, the source range 12; read again after 0 s: it matches (the "
        "target's end was behind, e.g. right after a leader change)"
    ]


def test_a_target_really_short_is_short_again_and_said_so(
    copy_of_two: Clusters, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(verify, "SETTLE_SECONDS", 0.0)
    slept: list[float] = []
    monkeypatch.setattr(verify.time, "sleep", slept.append)
    key = ("target", "orders-copy", 0)
    copy_of_two.partitions[key] = copy_of_two.partitions[key][:10]
    with caplog.at_level(logging.WARNING, logger="kafka_migration.run.verify"):
        found = verify.verify_partitions_safely(SLICES, CLUSTERS)
    assert [(v.partition, v.match, v.target_records, v.first_difference) for v in found] == [
        (0, False, 10, "record missing on the target"),
        (1, False, 8, "extra record on the target"),
    ]
    assert slept == [0.0]
    assert caplog.messages[0].endswith("read again after 0 s: still different")


def test_a_slice_alone_goes_the_per_slice_way_and_one_that_cannot_be_read_fails_alone(
    copy_of_two: Clusters, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert judged(verify.verify_partitions_safely(SLICES[:1], CLUSTERS)) == EXPECTED[:1]
    assert len(copy_of_two.reads) == 2  # nothing to share a window with: read alone

    def unreadable(cluster: Endpoint, topic: str, partition: int, *args: Any, **kwargs: Any) -> Partition:
        if partition == 1:
            raise OSError("disk on fire")
        return copy_of_two.read_range(cluster, topic, partition, *args, **kwargs)

    monkeypatch.setattr(verify, "read_range", unreadable)
    (alone,) = verify.verify_partitions_safely(SLICES[1:], CLUSTERS)
    assert (alone.match, alone.error) == (False, "OSError: disk on fire")
    found = verify.verify_partitions_following(SLICES, CLUSTERS)
    assert judged(found)[0] == EXPECTED[0]
    assert (found[1].match, found[1].error is not None, found[1].source_end) == (False, True, 6)
    assert "disk on fire" in str(found[1].first_difference)


def test_an_empty_target_ends_where_the_copy_was_to_start(copy_of_two: Clusters) -> None:
    copy_of_two.partitions[("target", "orders-copy", 0)] = []
    (alone,) = [verify.verify_partition(SLICES[0], CLUSTERS)]
    (windowed, _) = verify.verify_window(SLICES, CLUSTERS).results
    for verdict in (alone, windowed):
        assert (verdict.match, verdict.target_end, verdict.target_records) == (False, 100, 0)
        assert (verdict.first_difference, verdict.first_source_offset) == ("record missing on the target", 20)


def test_a_differing_target_as_long_as_the_source_is_not_read_again(copy_of_two: Clusters) -> None:
    key = ("target", "orders-copy", 0)
    copy_of_two.partitions[key][3] = copy_of_two.partitions[key][3].changed(value=b"other")
    found = verify.verify_partitions_safely(SLICES, CLUSTERS)
    assert (found[0].match, found[0].first_difference) == (False, "value differs")
    assert copy_of_two.reads == []


def test_progress_of_one_slice_and_its_time(copy_of_two: Clusters) -> None:
    big = records(0, 2_100)
    copy_of_two.partitions[("source", "orders", 2)] = big
    copy_of_two.partitions[("target", "orders-copy", 2)] = big
    told: list[int] = []
    verdict = verify.verify_partition(task(0, 2_100, 0, partition=2), CLUSTERS, lambda n, _: told.append(n))
    assert verdict.match and told == [1_000, 2_000]
    assert 0 <= verdict.seconds < 60


def test_a_windows_time_is_shared_by_records_read_and_each_comparisons_own(
    copy_of_two: Clusters, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading both windows took 38 s on this clock; the slices read 24 and 14 records (source and target), and
    their comparisons took 1 s and 2 s."""
    ticks = iter([10.0, 48.0, 100.0, 101.0, 200.0, 202.0])
    monkeypatch.setattr(verify.time, "monotonic", lambda: next(ticks))
    monkeypatch.setattr(verify.time, "time", lambda: 1_000.0)
    outcome = verify.verify_window(SLICES, CLUSTERS)
    assert [v.seconds for v in outcome.results] == [25.0, 16.0]
    assert outcome.stamps == [(1_000.0, 1_025.0), (1_025.0, 1_041.0)]


def listen(work: Callable[[tuple[str, int]], Any], messages: int) -> list[list[Any]]:
    """Run ``work`` with the address of a UDP socket standing in for the driver's; the first ``messages`` told."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.settimeout(5)
        work(listener.getsockname())
        return [json.loads(listener.recv(4096)) for _ in range(messages)]


def test_a_windows_progress_reaches_the_driver(copy_of_two: Clusters) -> None:
    told = listen(lambda address: verify.verify_partitions_safely(SLICES, CLUSTERS, address), 2)
    assert sorted((key, n) for key, n, _ in told) == [("orders\x000", 12), ("orders\x001", 6)]


def test_progress_behind_a_running_copy_reaches_the_driver(copy_of_two: Clusters) -> None:
    big = records(0, 2_100)
    copy_of_two.partitions[("source", "orders", 2)] = big
    copy_of_two.partitions[("target", "orders-copy", 2)] = big
    slices = [task(0, 2_100, 0, partition=2)]
    told = listen(lambda address: verify.verify_partitions_following(slices, CLUSTERS, address), 1)
    assert told[0][:2] == ["orders\x002", 1_000]


def test_a_chunk_with_gaps_on_both_sides_maps_each_change_of_difference() -> None:
    """Both sides span five offsets for four records, with their gaps in other places: not contiguous, so every
    pair is fed to the offset map."""
    source = [m.changed(offset=o) for m, o in zip(records(0, 4), (0, 1, 2, 5), strict=True)]
    target = [m.changed(offset=o) for m, o in zip(source, (10, 13, 14, 15), strict=True)]
    assert compare_ranges([source], [target], 10).offset_map == [(0, 10), (1, 13), (5, 15)]
