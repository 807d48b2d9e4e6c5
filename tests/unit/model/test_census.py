"""The census as values: merged per (topic, partition, key or value, id) with the first offset and the records
added up, the first record naming an id found in record order, and its files' round trip."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kafka_migration.model.census import Census, CensusNote, PassedId, Sighting
from kafka_migration.model.schemas import RecordPart

KEY, VALUE = RecordPart.KEY, RecordPart.VALUE


def test_two_censuses_of_one_partition_merge_to_its_first_offset_and_all_its_records() -> None:
    head = Census((Sighting("t", 0, VALUE, 7, 0, 3), Sighting("t", 0, KEY, 7, 1, 1)), 4, 10, True)
    tail = Census((Sighting("t", 0, VALUE, 7, 90, 2), Sighting("t", 1, VALUE, 9, 5, 1)), 3, 10, False)
    merged = head.merge(tail)
    assert merged.sightings == (
        Sighting("t", 0, VALUE, 7, 0, 5),  # the earlier offset, the records of both
        Sighting("t", 0, KEY, 7, 1, 1),  # a key is counted apart from the values
        Sighting("t", 1, VALUE, 9, 5, 1),
    )
    assert (merged.records, merged.planned, merged.complete) == (7, 20, False)
    assert tail.merge(head).sightings == merged.sightings  # the order of the parts does not matter
    assert Census.of([head, tail]) == merged and Census.of([]) == Census()


sighting = st.builds(
    Sighting,
    st.sampled_from(["a", "b"]),
    st.integers(0, 2),
    st.sampled_from(list(RecordPart)),
    st.integers(0, 4),
    st.integers(0, 1000),
    st.integers(1, 5),
)


@given(st.lists(st.lists(sighting, max_size=6), max_size=5))
def test_merging_in_any_grouping_keeps_each_ids_first_offset_and_its_records(parts: list[list[Sighting]]) -> None:
    merged = Census.of(Census(tuple(p)) for p in parts)
    flat = [s for p in parts for s in p]
    assert Census(tuple(flat)) == merged
    for s in merged.sightings:
        same = [f for f in flat if f.key == s.key]
        assert s.offset == min(f.offset for f in same) and s.records == sum(f.records for f in same)
    assert len({s.key for s in merged.sightings}) == len(merged.sightings)
    assert merged.ids() == {s.schema_id for s in flat}


def test_the_first_record_naming_an_id_is_found_in_topic_partition_offset_order_the_key_first() -> None:
    census = Census(
        (
            Sighting("b", 0, VALUE, 5, 0),
            Sighting("a", 1, VALUE, 5, 0),
            Sighting("a", 0, VALUE, 5, 7),
            Sighting("a", 0, KEY, 6, 7),
            Sighting("a", 0, VALUE, 6, 7),
            Sighting("a", 0, VALUE, 8, 2),
        )
    )
    first = census.first_of([6, 5, 99])
    assert list(first) == [6, 5]  # by where they are first met (a[0] offset 7, the key first), 99 not found
    assert first[5] == Sighting("a", 0, VALUE, 5, 7)
    assert first[6] == Sighting("a", 0, KEY, 6, 7)  # at one offset the key comes before the value
    assert first[6].where() == "the key of a[0] at offset 7"
    assert census.ids_of("a") == {5, 6, 8} and census.ids_of("b") == {5} and census.ids_of("c") == frozenset()
    assert census.records_naming(5) == 3


def test_a_census_and_its_note_survive_their_files() -> None:
    census = Census((Sighting("t", 2, KEY, 70000, 12, 4),), 40, 50, False)
    assert Census.from_dict(json.loads(json.dumps(census.to_dict()))) == census
    assert census.describe() == (
        "40 records read (of 50 planned offsets: the first and last records of each partition): 1 schema id"
    )
    assert Census(records=3, planned=3).describe() == "3 records read (every planned record): 0 schema ids"
    note = CensusNote("x", ("shop.Other",), (PassedId(9, 3, Sighting("t", 0, VALUE, 9, 1)),), False)
    assert CensusNote.from_dict(json.loads(json.dumps(note.to_dict()))) == note
    assert note.render() == [
        "  census of the source records: x",
        "  subjects found behind ids in the records: shop.Other",
        "  unknown schema id 9 passed unchanged (--unknown-schema-ids pass): 3 keys and values, first the value of "
        "t[0] at offset 1",
        "  NOT COMPLETE: this dry run read each partition's ends only (--dry-run-census ends); the run reads every "
        "record and may find more ids and subjects: a dry run without that option lists them all",
    ]


def test_a_file_without_the_optional_fields_reads_as_an_empty_complete_census_and_note() -> None:
    # A plan file written before a field existed, or a note with nothing found: the defaults, and one line.
    assert Census.from_dict({}) == Census((), 0, 0, True)
    assert Census.from_dict({"records": 5}) == Census((), 5, 0, True)
    empty = CensusNote.from_dict({})
    assert empty == CensusNote("", (), (), True)
    assert CensusNote.from_dict({"summary": "read"}).render() == ["  census of the source records: read"]
    assert CensusNote("y", (), (), True).render() == ["  census of the source records: y"]
    assert CensusNote("y", ("a", "b"), (), True).render() == [
        "  census of the source records: y",
        "  subjects found behind ids in the records: a, b",
    ]


def test_one_passed_key_or_value_is_said_in_the_singular() -> None:
    note = CensusNote("z", (), (PassedId(4, 1, Sighting("t", 1, KEY, 4, 0)),), True)
    assert note.render()[1] == (
        "  unknown schema id 4 passed unchanged (--unknown-schema-ids pass): 1 key or value, first the key of t[1] "
        "at offset 0"
    )
