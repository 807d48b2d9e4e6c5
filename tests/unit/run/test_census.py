"""The census's reading without a broker: each key's and value's candidate id tallied with its first offset, what a
dry run's bounded census reads, and the driver's answer file. The real reads are in
tests/integration/test_schema_ids.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

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
    census_task,
    read_answer,
    tally,
    whole_census,
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


def test_a_dry_runs_census_says_whether_it_read_every_planned_record(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranges, "read_ranges", _reads({0: [[Msg(0, None, framed(5), None, 0)]]}))
    plan = migration_plan(topic_plan("t", (10, 0)))
    found = bounded_census(plan, SOURCE)
    assert found.complete and found.planned == 10 and found.ids() == {5}  # the empty range is not read
    found = bounded_census(plan, SOURCE, budget=4)
    assert not found.complete and found.planned == 10
    assert found.records == 2  # one batch from each read: the heads, then the tails
    assert bounded_census(migration_plan(topic_plan("t", (0,))), SOURCE) == Census()  # nothing to read


def test_a_whole_census_reads_every_range_the_plan_copies_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The failback DAG's census in keep mode: each non-empty range of the plan whole, however many offsets (a
    proof, not a sample), and complete."""
    asked: list[list[OffsetRange]] = []
    read = _reads({0: [[Msg(0, framed(5), None, None, 0)]], 1: [[Msg(7, None, framed(6), None, 0)]]})

    def recording(cluster: Endpoint, wanted: Sequence[OffsetRange], **kw: Any) -> Any:
        asked.append(list(wanted))
        return read(cluster, wanted, **kw)

    monkeypatch.setattr(ranges, "read_ranges", recording)
    plan = migration_plan(topic_plan("t", (300_000, 0, 12)))
    found = whole_census(plan, SOURCE)
    assert asked == [[OffsetRange("t", 0, 0, 300_000), OffsetRange("t", 2, 0, 12)]]
    assert found.complete and found.planned == 300_012 and found.records == 2
    assert found.sightings == (Sighting("t", 0, KEY, 5, 0, 1), Sighting("t", 2, VALUE, 6, 7, 1))
    assert whole_census(migration_plan(topic_plan("t", (0,))), SOURCE) == Census() and len(asked) == 1


def test_the_drivers_answer_is_the_census_or_why_there_is_none(tmp_path: Path) -> None:
    found = Census((Sighting("t", 0, KEY, 1, 0),), 1, 1)
    write_answer(tmp_path / "census.json", found)
    assert read_answer(tmp_path / "census.json") == found
    assert [p.name for p in tmp_path.iterdir()] == ["census.json"]  # no partial file left
    write_answer(tmp_path / "census.json", None, "source t[0]: unreachable")
    with pytest.raises(CopyError, match=r"census of the source records failed: source t\[0\]: unreachable; nothing"):
        read_answer(tmp_path / "census.json")
    with pytest.raises(CopyError, match="cannot be read"):
        read_answer(tmp_path / "absent.json")
