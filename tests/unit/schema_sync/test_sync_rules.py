"""The schema sync's decisions on plain values: conflicts and keep mode refused with subject, version and the way
out; each topic gets the id map of its own subjects; the run's schemas survive the plan file."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kafka_migration.exceptions import SchemaConflictError
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.schema_runs import SchemaRun, SyncedVersion, VersionAction, id_map_of
from kafka_migration.model.schemas import IdMap, RegisteredSchema, SchemaFormat, SchemaMode
from kafka_migration.schema_sync.sync import refuse_conflicts, refuse_unkept, with_schemas
from kafka_migration.schemas.plan import Action, PlannedVersion
from tests.unit.factories import migration_plan, topic_plan

AVRO = '{"type": "string"}'


def planned(subject: str, version: int, source_id: int, action: Action, target_id: int | None) -> PlannedVersion:
    schema = RegisteredSchema(source_id, SchemaFormat.AVRO, AVRO)
    return PlannedVersion(subject, f"dst.{subject}", version, schema, action, target_id)


def test_a_conflict_is_refused_naming_subject_version_and_the_way_out() -> None:
    plans = [planned("a-value", 1, 3, Action.PRESENT, 3), planned("a-value", 2, 5, Action.CONFLICT, 8)]
    with pytest.raises(SchemaConflictError) as caught:
        refuse_conflicts(plans, "http://dst:8081")
    message = str(caught.value)
    assert "subject 'dst.a-value' version 2: the target holds another schema (target id 8)" in message
    assert "source id 5" in message and "nothing was written" in message and "--rename" in message
    assert caught.value.exit_code == 2
    refuse_conflicts(plans[:1], "http://dst:8081")  # none: nothing said


def test_keep_mode_refuses_a_target_without_the_source_ids() -> None:
    kept = planned("a-value", 1, 3, Action.PRESENT, 3)
    refuse_unkept([kept], "http://dst:8081")
    for other in (planned("a-value", 2, 5, Action.REGISTER, None), planned("a-value", 2, 5, Action.PRESENT, 6)):
        with pytest.raises(SchemaConflictError) as caught:
            refuse_unkept([kept, other], "http://dst:8081")
        assert "subject 'dst.a-value' version 2: source id 5" in str(caught.value)
        assert "Apicurio" in str(caught.value) and "--schema-ids translate" in str(caught.value)


def version(subject: str, source_id: int, target_id: int) -> SyncedVersion:
    return SyncedVersion(subject, 1, subject, SchemaFormat.AVRO, source_id, target_id, VersionAction.REGISTERED, 1)


def test_each_topic_gets_the_ids_of_its_own_subjects_and_a_topic_without_any_none() -> None:
    versions = (version("ref", 1, 11), version("a-key", 2, 12), version("a-value", 3, 13), version("b-value", 4, 14))
    run = SchemaRun(SchemaMode.TRANSLATE, "http://s", "http://t", versions, id_map_of(versions))
    plan = with_schemas(migration_plan(topic_plan("a"), topic_plan("b"), topic_plan("raw")), run)
    assert plan.topic("a").id_map == IdMap.of({2: 12, 3: 13}, SchemaFormat.AVRO)
    assert plan.topic("b").id_map == IdMap.of({4: 14}, SchemaFormat.AVRO)
    assert plan.topic("raw").id_map is None
    assert {s.id_map for s in plan.topic("a").slices(include_empty=True)} == {plan.topic("a").id_map}
    again = MigrationPlan.from_dict(json.loads(plan.to_json()))  # what the Spark tasks read
    assert again.to_dict() == plan.to_dict() and again.topic("a").slices(True)[0].id_map == plan.topic("a").id_map
    assert SchemaRun.from_dict(again.schemas or {}) == run


def test_passing_unknown_ids_reaches_the_slices() -> None:
    versions = (version("a-value", 3, 13),)
    run = SchemaRun(SchemaMode.TRANSLATE, "http://s", "http://t", versions, id_map_of(versions))
    strict = with_schemas(migration_plan(topic_plan("a")), run)
    passing = MigrationPlan.from_dict(json.loads(with_schemas(migration_plan(topic_plan("a")), run, True).to_json()))
    assert [s.pass_unknown_ids for s in strict.topic("a").slices(True)] == [False]
    assert [s.pass_unknown_ids for s in passing.topic("a").slices(True)] == [True]
    assert passing.topic("a").id_map == strict.topic("a").id_map


def test_a_dry_run_or_keep_mode_puts_no_map_on_the_topics() -> None:
    versions = (version("a-value", 3, 13),)
    for run in (
        SchemaRun(SchemaMode.TRANSLATE, "http://s", "http://t", versions, id_map_of(versions), dry_run=True),
        SchemaRun(SchemaMode.KEEP, "http://s", "http://t", versions, id_map_of(versions)),
    ):
        plan = with_schemas(migration_plan(topic_plan("a")), run)
        assert plan.topic("a").id_map is None and plan.schemas == run.to_dict()


def test_the_listing_names_every_version_in_order() -> None:
    versions = (
        dataclasses.replace(version("shop.Address", 1, 11), action=VersionAction.PRESENT),
        SyncedVersion("dst.a-value", 1, "a-value", SchemaFormat.JSON, 2, None, VersionAction.TO_REGISTER),
    )
    text = SchemaRun(SchemaMode.TRANSLATE, "http://s", "http://t", versions, id_map_of(versions), True).render()
    assert text.splitlines() == [
        "Schemas (translate ids, http://s -> http://t): 2 subject versions (1 present, 1 to register)",
        "  present      shop.Address v1 (AVRO, source id 1, target id 11)",
        "  to register  dst.a-value v1 <- a-value (JSON, source id 2, target id assigned on register)",
    ]
    assert id_map_of(versions) == IdMap.of({1: 11}, SchemaFormat.AVRO)


def test_a_continuing_topic_keeps_its_earlier_runs_way_with_the_ids() -> None:
    from kafka_migration.schema_sync.guard import refuse_mixed_ids

    plan = migration_plan(topic_plan("a"), topic_plan("b"), topic_plan("new"))
    previous = {("a", "a"): "run-1", ("b", "b"): None}  # a translated by run-1, b copied as it was, new: no checkpoint
    refuse_mixed_ids(plan, previous, {"a", "new"}, SchemaMode.TRANSLATE)  # as before, and a fresh topic either way
    refuse_mixed_ids(plan, previous, {"a"}, SchemaMode.TRANSLATE)
    with pytest.raises(SchemaConflictError) as caught:
        refuse_mixed_ids(plan, previous, {"new"}, SchemaMode.OFF)
    assert "1 topic would mix schema ids on the target; nothing was written" in str(caught.value)
    assert "a -> a: run run-1 translated its schema ids; this run (--schema-ids off) would write the source's" in str(
        caught.value
    )
    with pytest.raises(SchemaConflictError) as caught:
        refuse_mixed_ids(plan, previous, {"a", "b"}, SchemaMode.TRANSLATE)
    assert "b -> b: earlier runs copied its schema ids as they were" in str(caught.value)
    assert "--rename" in str(caught.value) and caught.value.exit_code == 2
