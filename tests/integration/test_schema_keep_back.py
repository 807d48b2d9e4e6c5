"""A failback in keep mode proves, on two real registries (Apicurio), every schema id the records to bring back name
(schema_sync/back_keep.py): an id both registries hold for the same schema passes; an id the cutover's source
registry holds for another schema, or does not hold, is refused with exit 2 in one line naming subject, version and
id and the way out; an id the target registry cannot give is refused as a forward run refuses it, or passes
unchanged. No broker: the census is given as a failback's run takes it. ``kafka-migrate failback --schema-ids
keep`` end to end is in tests/integration/test_schema_failback.py, the DAG's in tests/e2e/test_schema_dag.py.

Two empty registries number their schemas alike, so the test places each case by the order it registers in: the
same schema first on both (one id), then a second id the target gives to a new version of the topic's subject and
the source to another subject's schema, then ids only the target has.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

from kafka_migration.exceptions import SchemaConflictError, UnknownRecordIdsError
from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.schema_runs import SchemaRun, VersionAction
from kafka_migration.model.schemas import RecordPart, RegistryConfig, SchemaMode
from kafka_migration.schema_sync.back_keep import keep_back
from kafka_migration.schema_sync.sync import SchemaOptions
from tests.unit.factories import migration_plan, topic_plan

pytestmark = pytest.mark.integration

VALUE, KEY = RecordPart.VALUE, RecordPart.KEY
ORDER = {"type": "record", "name": "Order", "namespace": "shop", "fields": [{"name": "id", "type": "long"}]}
ORDER_V2 = {**ORDER, "fields": [*ORDER["fields"], {"name": "note", "type": "string", "default": ""}]}
ORDER_V3 = {**ORDER, "fields": [*ORDER["fields"], {"name": "total", "type": "long", "default": 0}]}
OTHER = {"type": "record", "name": "Refund", "namespace": "shop", "fields": [{"name": "amount", "type": "long"}]}
UNKNOWN_ID = 987_654


def _avro(schema: dict) -> Schema:  # type: ignore[type-arg]
    return Schema(json.dumps(schema), "AVRO")


def test_each_id_the_records_name_is_proven_on_the_source_registry_or_refused_in_one_line(registry_factory) -> None:  # type: ignore[no-untyped-def]
    source_registry, target_registry = registry_factory("keep-back-source", "keep-back-target")
    source = SchemaRegistryClient({"url": source_registry.ccompat_url, "timeout": 20.0})
    target = SchemaRegistryClient({"url": target_registry.ccompat_url, "timeout": 20.0})
    same = source.register_schema("orders-value", _avro(ORDER))
    assert target.register_schema("orders-value", _avro(ORDER)) == same  # as an export and import leave them
    taken = target.register_schema("orders-value", _avro(ORDER_V2))  # on the target after the cutover
    assert source.register_schema("refunds-value", _avro(OTHER)) == taken  # the source's own next schema
    missing = target.register_schema("orders-value", _avro(ORDER_V3))
    elsewhere = target.register_schema("audit-value", _avro({**OTHER, "name": "Audit"}))
    source_subjects = sorted(source.get_subjects())

    # The failback's direction: it reads the cutover's target and writes its source.
    options = SchemaOptions(
        SchemaMode.KEEP, RegistryConfig(target_registry.ccompat_url), RegistryConfig(source_registry.ccompat_url)
    )
    plan = migration_plan(topic_plan("orders", (20, 20)))
    seen = [
        Sighting("orders", 0, VALUE, same, 0, 4),
        Sighting("orders", 0, VALUE, taken, 4, 2),
        Sighting("orders", 1, VALUE, missing, 3, 3),
        Sighting("orders", 1, VALUE, elsewhere, 9, 1),
        Sighting("orders", 1, KEY, UNKNOWN_ID, 7, 1),
    ]

    proven = keep_back(options, plan, Census(tuple(seen[:1]), 20, 40))
    run = SchemaRun.from_dict(proven.schemas)  # type: ignore[arg-type]
    assert run.mode is SchemaMode.KEEP and run.source_registry == target_registry.ccompat_url
    (version,) = run.versions
    assert (version.source_subject, version.version, version.target_subject, version.target_version) == (
        "orders-value",
        1,
        "orders-value",
        1,
    )
    assert (version.source_id, version.target_id, version.action) == (same, same, VersionAction.PRESENT)
    assert version.fingerprint and run.id_map.target(same) == same
    assert all(t.schema_ids is None for t in proven.topics)  # copied and verified as bytes
    assert run.census is not None and run.census.subjects == ("orders-value",)

    with pytest.raises(SchemaConflictError) as caught:  # another schema under the id on the source
        keep_back(options, plan, Census(tuple(seen[:2]), 20, 40))
    message = str(caught.value)
    assert caught.value.exit_code == 2 and "\n" not in message
    assert message.startswith(
        f"Failback with --schema-ids keep: schema id {taken}, subject 'orders-value' version 2 on the target "
        f"registry {target_registry.ccompat_url} (2 keys and values to bring back name it, the first the value of "
        f"orders[0] at offset 4), names another schema on the source registry {source_registry.ccompat_url} "
        "(subject 'refunds-value' version 1; canonical fingerprints "
    )
    assert message.endswith(
        "Nothing was written. The id is taken on the source registry, so fail back with --schema-ids translate: it "
        "registers the version on the source registry under an id of that registry's own and rewrites the ids of "
        "the records, proven record by record."
    )

    with pytest.raises(SchemaConflictError) as caught:  # ids the source does not hold are named before any proof
        keep_back(options, plan, Census(tuple(seen[:4]), 20, 40))
    message = str(caught.value)
    assert caught.value.exit_code == 2 and "\n" not in message
    assert message.startswith(
        f"Failback with --schema-ids keep: schema id {missing}, subject 'orders-value' version 3 on the target "
        f"registry {target_registry.ccompat_url} (3 keys and values to bring back name it, the first the value of "
        f"orders[1] at offset 3), is not on the source registry {source_registry.ccompat_url} (nor is id "
        f"{elsewhere}); copied back as they are, those records would name an id the source's consumers cannot "
        f"resolve. Nothing was written. Register that version on the source registry under id {missing} "
    )
    assert "or fail back with --schema-ids translate" in message

    everything = Census(tuple([seen[0], seen[4]]), 20, 40)
    with pytest.raises(UnknownRecordIdsError, match=f"names schema id {UNKNOWN_ID}, which the source registry"):
        keep_back(options, plan, everything)
    let_through = keep_back(dataclasses.replace(options, pass_unknown_ids=True), plan, everything)
    note = SchemaRun.from_dict(let_through.schemas).census  # type: ignore[arg-type]
    assert note is not None and [(p.schema_id, p.records) for p in note.passed] == [(UNKNOWN_ID, 1)]
    assert sorted(source.get_subjects()) == source_subjects  # nothing registered on the source
    assert source.get_versions("orders-value") == [1]
