"""The door to a schema registry (kafka_migration.registry) against the session's real registries (Apicurio)."""

from __future__ import annotations

import json
import time

import pytest

from kafka_migration.exceptions import RegistryNotFoundError, RegistryUnreachableError
from kafka_migration.model.schemas import RegisteredSchema, RegistryConfig, SchemaFormat, SchemaReference
from kafka_migration.registry import RegistryClient, read_catalog
from kafka_migration.schemas.plan import Action, plan_subjects, subject_names
from tests.conftest import Registries

pytestmark = pytest.mark.integration

ADDRESS = {"type": "record", "name": "Address", "namespace": "shop", "fields": [{"name": "city", "type": "string"}]}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "ship_to", "type": "shop.Address"}],
}


def _avro(text: object, *references: SchemaReference) -> RegisteredSchema:
    return RegisteredSchema(1, SchemaFormat.AVRO, json.dumps(text), references)  # the id is the registry's to give


def test_register_read_back_and_look_up_avro_with_a_reference(registries: Registries, unique: str) -> None:
    with RegistryClient(RegistryConfig(registries.source)) as door:
        address_id = door.register(f"a{unique}-shop.Address", _avro(ADDRESS))
        reference = SchemaReference("shop.Address", f"a{unique}-shop.Address", 1)
        order = _avro(ORDER, reference)
        order_id = door.register(f"a{unique}-value", order)
        assert {f"a{unique}-shop.Address", f"a{unique}-value"} <= set(door.subjects())
        assert door.versions(f"a{unique}-value") == [1]
        found = door.subject_version(f"a{unique}-value", 1)
        assert (found.version.schema_id, found.schema.references) == (order_id, (reference,))
        assert door.schema(address_id).format is SchemaFormat.AVRO
        looked = door.lookup(f"a{unique}-value", order)
        assert looked is not None and looked.version.version == 1 and looked.version.schema_id == order_id
        assert door.lookup(f"a{unique}-shop.Address", _avro({**ADDRESS, "name": "Other"})) is None
        assert door.register(f"a{unique}-value", order) == order_id  # again: the same id, no new version
        assert door.compatibility()
        assert door.mode()


def test_json_schema(registries: Registries, unique: str) -> None:
    text = json.dumps({"type": "object", "properties": {"id": {"type": "integer"}}})
    with RegistryClient(RegistryConfig(registries.target)) as door:
        schema_id = door.register(f"j{unique}-value", RegisteredSchema(1, SchemaFormat.JSON, text))
        assert door.schema(schema_id).format is SchemaFormat.JSON


def test_the_subject_versions_of_an_id_whatever_strategy_named_them(registries: Registries, unique: str) -> None:
    """What the census's lookup asks (schema_sync/records.py): every subject version holding an id, and 404 for an
    id the registry does not know."""
    from kafka_migration.model.schemas import SubjectVersion

    other = {**ADDRESS, "name": f"Other{unique}"}
    with RegistryClient(RegistryConfig(registries.source)) as door:
        schema_id = door.register(f"shop.Other{unique}", _avro(other))  # RecordNameStrategy's subject
        assert door.register(f"o{unique}-value", _avro(other)) == schema_id  # the same schema, another subject
        assert door.subject_versions_of(schema_id) == [
            SubjectVersion(f"o{unique}-value", 1, schema_id),
            SubjectVersion(f"shop.Other{unique}", 1, schema_id),
        ]
        with pytest.raises(RegistryNotFoundError, match="list the subject versions of schema id 987654"):
            door.subject_versions_of(987_654)


def test_not_found_names_the_registry_and_the_request(registries: Registries, unique: str) -> None:
    with RegistryClient(RegistryConfig(registries.source)) as door, pytest.raises(RegistryNotFoundError) as caught:
        door.versions(f"missing{unique}-value")
    assert registries.source in str(caught.value) and f"missing{unique}-value" in str(caught.value)


def test_an_unreachable_registry_is_refused_quickly_and_no_secret_is_quoted() -> None:
    config = RegistryConfig("http://127.0.0.1:9", basic_auth="alice:s3cret-pw")
    started = time.monotonic()
    with RegistryClient(config, timeout=2) as door, pytest.raises(RegistryUnreachableError) as caught:
        door.subjects()
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert "s3cret-pw" not in message and "127.0.0.1:9" in message and "list subjects" in message
    assert caught.value.exit_code == 2 and caught.value.__cause__ is None
    assert "s3cret-pw" not in repr(config) and "s3cret-pw" not in repr(door)


def test_read_both_registries_and_plan(registries: Registries, unique: str) -> None:
    topic = f"p{unique}"
    with (
        RegistryClient(RegistryConfig(registries.source)) as src,
        RegistryClient(RegistryConfig(registries.target)) as tgt,
    ):
        src.register(f"{topic}-shop.Address", _avro(ADDRESS))
        order = _avro(ORDER, SchemaReference("shop.Address", f"{topic}-shop.Address", 1))
        src.register(f"{topic}-value", order)
        tgt.register(f"{topic}-shop.Address", _avro(ADDRESS))
        subjects = list(subject_names([topic], "{topic}"))
        source = read_catalog(src, subjects)
        target = read_catalog(tgt, sorted({subject for subject, _ in source}))  # no rename: the same subjects
        plan = plan_subjects([topic], "{topic}", source, target)
    assert [(p.target_subject, p.action) for p in plan] == [
        (f"{topic}-shop.Address", Action.PRESENT),
        (f"{topic}-value", Action.REGISTER),
    ]
