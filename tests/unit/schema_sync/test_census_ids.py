"""The census's ids resolved on plain values: the subjects behind ids outside the topics' own subjects (looked up
once per id), the refusal of ids the source registry cannot give (the first record, each id, the way out), and
the ids found in a topic's records joining its id map. The registry's answers are on real Apicurio in
tests/integration/test_schema_ids.py."""

from __future__ import annotations

import json

import pytest

from kafka_migration.exceptions import RegistryNotFoundError, UnknownRecordIdsError
from kafka_migration.model.census import Census, CensusNote, PassedId, Sighting
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, VersionAction, id_map_of
from kafka_migration.model.schemas import IdMap, RecordPart, SchemaFormat, SchemaMode, SubjectVersion
from kafka_migration.schema_sync.records import NO_SUBJECT, UNKNOWN, census_note, refuse_unknown, resolve_ids
from kafka_migration.schema_sync.sync import with_schemas
from tests.unit.factories import migration_plan, topic_plan

KEY, VALUE = RecordPart.KEY, RecordPart.VALUE
CENSUS = Census(
    (
        Sighting("orders", 0, VALUE, 3, 0, 10),  # the topic's own subject
        Sighting("orders", 0, VALUE, 7, 4, 2),  # RecordNameStrategy: shop.Other
        Sighting("orders", 1, KEY, 999, 6, 1),  # unknown
        Sighting("orders", 0, KEY, 999, 5, 2),
        Sighting("events", 0, VALUE, 8, 0, 1),  # known, but no subject version holds it any more
        Sighting("events", 0, VALUE, 7, 1, 1),
    ),
    records=17,
    planned=17,
)


class Door:
    """The source registry as ``resolve_ids`` asks it: the subject versions of an id, counting the questions."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def subject_versions_of(self, schema_id: int) -> list[SubjectVersion]:
        self.asked.append(schema_id)
        held = {7: [SubjectVersion("shop.Other", 1, 7), SubjectVersion("shop.Alias", 2, 7)], 8: []}
        if schema_id not in held:
            raise RegistryNotFoundError(f"schema id {schema_id} not found")
        return held[schema_id]


def test_ids_outside_the_topics_subjects_are_resolved_once_each_to_their_subjects_or_why_not() -> None:
    door = Door()
    resolved = resolve_ids(CENSUS, {3}, door)  # type: ignore[arg-type]
    assert door.asked == [7, 8, 999]  # each once, the covered id never
    assert resolved.subjects == ("shop.Alias", "shop.Other") and resolved.ids == {7}
    assert resolved.unknown == {8: NO_SUBJECT, 999: UNKNOWN}
    assert resolve_ids(CENSUS, {3, 7, 8, 999}, door).subjects == ()  # type: ignore[arg-type]


def test_ids_the_source_cannot_give_are_refused_naming_the_first_record_each_id_and_the_way_out() -> None:
    with pytest.raises(UnknownRecordIdsError) as caught:
        refuse_unknown(CENSUS, {999: UNKNOWN, 8: NO_SUBJECT}, "http://src:8081")
    assert caught.value.exit_code == 2
    assert str(caught.value) == (
        "Source events[0] offset 0: its value names schema id 8, which the source registry http://src:8081 cannot "
        "give; nothing was written. 2 schema ids in the run's source records cannot be moved:\n"
        "  - id 8: the source registry holds no subject version of it (deleted?); 1 key or value, the first the "
        "value of events[0] at offset 0\n"
        "  - id 999: unknown to the source registry; 3 keys and values, the first the key of orders[0] at offset 5\n"
        "Let such records pass unchanged (--unknown-schema-ids pass: copied byte for byte, and counted), or, if these "
        "topics hold raw bytes that happen to start with a zero byte, copy them with --schema-ids off."
    )
    refuse_unknown(CENSUS, {}, "http://src:8081")  # none: nothing said


def test_a_long_refusal_lists_twenty_ids_and_counts_the_rest() -> None:
    many = Census(tuple(Sighting("t", 0, VALUE, 100 + i, i) for i in range(25)))
    with pytest.raises(UnknownRecordIdsError) as caught:
        refuse_unknown(many, dict.fromkeys(range(100, 125), UNKNOWN), "http://src")
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("Source t[0] offset 0: its value names schema id 100,")
    assert sum(line.startswith("  - id ") for line in lines) == 20 and "  ... and 5 more" in lines


def test_the_note_says_how_far_the_census_read_what_it_added_and_what_passed() -> None:
    resolved = resolve_ids(CENSUS, {3}, Door())  # type: ignore[arg-type]
    note = census_note(CENSUS, resolved)
    assert note.summary == "17 records read (every planned record): 4 schema ids" and note.complete
    assert note.subjects == ("shop.Alias", "shop.Other")
    assert note.passed == (
        PassedId(8, 1, Sighting("events", 0, VALUE, 8, 0, 1)),
        PassedId(999, 3, Sighting("orders", 0, KEY, 999, 5, 2)),
    )


def _version(subject: str, source_id: int, target_id: int) -> SyncedVersion:
    return SyncedVersion(subject, 1, subject, SchemaFormat.AVRO, source_id, target_id, VersionAction.REGISTERED, 1)


def test_ids_found_in_a_topics_records_join_its_id_map_when_the_run_moved_them() -> None:
    versions = (_version("orders-value", 3, 13), _version("shop.Other", 7, 17), _version("b-value", 4, 14))
    run = SchemaRun(SchemaMode.TRANSLATE, "http://s", "http://t", versions, id_map_of(versions))
    plan = with_schemas(
        migration_plan(topic_plan("orders"), topic_plan("events"), topic_plan("raw")), run, census=CENSUS
    )
    assert plan.topic("orders").id_map == IdMap.of({3: 13, 7: 17}, SchemaFormat.AVRO)  # not 999: not moved
    assert plan.topic("events").id_map == IdMap.of({7: 17}, SchemaFormat.AVRO)  # no subject of its own
    assert plan.topic("raw").id_map is None
    without = with_schemas(migration_plan(topic_plan("orders"), topic_plan("events")), run)
    assert (
        without.topic("orders").id_map == IdMap.of({3: 13}, SchemaFormat.AVRO)
        and without.topic("events").id_map is None
    )


def test_the_listing_marks_the_subjects_found_in_the_records_and_the_ledgers_copy_compares_equal() -> None:
    versions = (_version("orders-value", 3, 13), _version("shop.Other", 7, 17))
    note = CensusNote("2 records read (every planned record): 2 schema ids", ("shop.Other",))
    run = SchemaRun(SchemaMode.TRANSLATE, "http://s", "http://t", versions, id_map_of(versions), census=note)
    lines = run.render().splitlines()
    assert lines[1].endswith("(AVRO, source id 3, target id 13)")
    assert lines[2].endswith("(AVRO, source id 7, target id 17) found in the records")
    assert lines[3:] == [
        "  census of the source records: 2 records read (every planned record): 2 schema ids",
        "  subjects found behind ids in the records: shop.Other",
    ]
    plan = MigrationPlan.from_dict(json.loads(with_schemas(migration_plan(topic_plan("orders")), run).to_json()))
    again = SchemaRun.from_dict(plan.schemas or {})
    assert again.census == note  # the plan file keeps the note
    assert SchemaRun(run.mode, run.source_registry, run.target_registry, versions, run.id_map) == run  # the ledger's


class Ledger:
    def checkpointed_translation(self, source: str, target: str) -> dict[tuple[str, str], str | None]:
        return {}


def test_only_a_sync_asks_for_the_census_so_schema_ids_off_reads_no_record() -> None:
    from kafka_migration.schema_sync.guard import schema_step

    asked: list[MigrationPlan] = []

    def census(plan: MigrationPlan) -> Census:
        asked.append(plan)
        return CENSUS

    plan = migration_plan(topic_plan("orders"))
    assert schema_step(Ledger(), None)(plan, census=census) is plan  # type: ignore[arg-type]
    assert asked == []
    given: list[object] = []
    synced = schema_step(Ledger(), lambda p, previous, taker: given.append(taker) or p)  # type: ignore[arg-type]
    assert synced(plan, census=census) is plan and given == [census]


def test_an_unknown_id_does_not_stop_the_lookup_of_the_ids_after_it() -> None:
    census = Census((Sighting("t", 0, VALUE, 5, 0), Sighting("t", 0, VALUE, 7, 1)))
    resolved = resolve_ids(census, (), Door())  # type: ignore[arg-type]
    assert resolved.unknown == {5: UNKNOWN} and resolved.ids == {7}


def test_exactly_twenty_ids_are_listed_whole_and_one_is_said_in_the_singular() -> None:
    twenty = Census(tuple(Sighting("t", 0, VALUE, 100 + i, i) for i in range(20)))
    with pytest.raises(UnknownRecordIdsError) as caught:
        refuse_unknown(twenty, dict.fromkeys(range(100, 120), UNKNOWN), "http://src")
    assert "more" not in str(caught.value) and "20 schema ids in the run's" in str(caught.value)
    with pytest.raises(UnknownRecordIdsError, match=r" 1 schema id in the run's source records cannot be moved"):
        refuse_unknown(twenty, {100: UNKNOWN}, "http://src")


def test_the_note_of_a_bounded_census_says_it_is_not_complete() -> None:
    bounded = Census(CENSUS.sightings, records=9, planned=17, complete=False)
    assert not census_note(bounded, resolve_ids(bounded, {3}, Door())).complete  # type: ignore[arg-type]
