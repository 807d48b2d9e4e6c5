"""A failback's schema rules on plain values (schema_sync/back.py): it treats the ids as the runs before the cutover
did (translate after translated runs; keep, or translate, after kept ones; never the ids unproven after kept ones),
and its registries are the cutover's swapped. The translation back itself runs on real registries in
tests/integration/test_schema_failback.py."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import RegistryNotFoundError, SchemaConflictError
from kafka_migration.model.census import Census, Sighting
from kafka_migration.model.schemas import (
    RecordPart,
    RegisteredSchema,
    RegistryConfig,
    SchemaFormat,
    SchemaMode,
    SubjectVersion,
)
from kafka_migration.schema_sync.back import ForwardIds, refuse_failback_mode, reversed_options
from kafka_migration.schema_sync.back_keep import prove_kept
from kafka_migration.schema_sync.sync import SchemaOptions

TRANSLATED = ForwardIds(translated={("orders", "moved.orders"): "run-7"})
KEPT = ForwardIds(kept={("orders", "orders"): "run-8", ("events", "events"): "run-8"})
NEITHER = ForwardIds()


def test_a_failback_after_translated_runs_must_translate() -> None:
    for mode in (SchemaMode.OFF, SchemaMode.KEEP):
        with pytest.raises(SchemaConflictError) as caught:
            refuse_failback_mode(TRANSLATED, mode)
        message = str(caught.value)
        assert "translated the schema ids of 1 topic (orders -> moved.orders (run run-7))" in message
        assert "Fail back with --schema-ids translate" in message and caught.value.exit_code == 2
    refuse_failback_mode(TRANSLATED, SchemaMode.TRANSLATE)  # as the runs did: nothing said
    both = ForwardIds(TRANSLATED.translated, KEPT.kept)  # some topics translated, others kept: translate
    refuse_failback_mode(both, SchemaMode.TRANSLATE)
    with pytest.raises(SchemaConflictError, match="translated the schema ids of 1 topic"):
        refuse_failback_mode(both, SchemaMode.KEEP)


def test_a_failback_after_kept_runs_keeps_or_translates_but_never_copies_the_ids_unproven() -> None:
    with pytest.raises(SchemaConflictError) as caught:
        refuse_failback_mode(KEPT, SchemaMode.OFF)
    message = str(caught.value)
    assert message.startswith(
        "The runs before the cutover kept the schema ids of 2 topics (events -> events (run run-8), orders -> orders "
        "(run run-8)): "
    )
    assert "Fail back with --schema-ids keep and the cutover's two registries" in message
    assert caught.value.exit_code == 2 and "\n" not in message
    refuse_failback_mode(KEPT, SchemaMode.KEEP)
    refuse_failback_mode(KEPT, SchemaMode.TRANSLATE)  # the way out when the source cannot take a target id


def test_a_failback_after_runs_without_schema_ids_does_not_translate_and_may_prove() -> None:
    refuse_failback_mode(NEITHER, SchemaMode.OFF)
    refuse_failback_mode(NEITHER, SchemaMode.KEEP)  # the same bytes, each id proven
    with pytest.raises(SchemaConflictError, match="already name the source registry's ids: fail back without"):
        refuse_failback_mode(NEITHER, SchemaMode.TRANSLATE)


def test_the_failbacks_registries_are_the_cutovers_swapped() -> None:
    options = SchemaOptions(
        SchemaMode.TRANSLATE,
        RegistryConfig("http://src:8081"),
        RegistryConfig("http://dst:8081", basic_auth="u:p"),
        True,
    )
    back = reversed_options(options)
    assert (back.source, back.target) == (options.target, options.source)
    assert back.mode is SchemaMode.TRANSLATE and back.pass_unknown_ids


class Doors:
    """The two registries as a keep failback's proof asks them before any fingerprint: the target registry (the
    failback's source) gives each id's schema; the source registry holds none of them."""

    def schema(self, schema_id: int) -> RegisteredSchema:
        return RegisteredSchema(schema_id, SchemaFormat.AVRO, '"string"')

    def subject_versions_of(self, schema_id: int) -> list[SubjectVersion]:
        raise RegistryNotFoundError(f"schema id {schema_id} not found")


def test_a_keep_failback_names_the_first_id_the_source_lacks_and_counts_the_others() -> None:
    ids = range(101, 109)
    census = Census(tuple(Sighting("orders", 0, RecordPart.VALUE, i, i, 1) for i in ids), 8, 8)
    holders = {i: (SubjectVersion("orders-value", i - 100, i),) for i in ids}
    with pytest.raises(SchemaConflictError) as caught:
        prove_kept(census, holders, (Doors(), Doors()), ("http://dst", "http://src"))  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(
        "Failback with --schema-ids keep: schema id 101, subject 'orders-value' version 1 on the target registry "
        "http://dst (1 key or value to bring back names it, the first the value of orders[0] at offset 101), is not "
        "on the source registry http://src (nor are ids 102, 103, 104, 105, 106 and 2 more); "
    )
    with pytest.raises(SchemaConflictError, match=r"http://src \(nor is id 102\); "):
        prove_kept(census, {i: holders[i] for i in (101, 102)}, (Doors(), Doors()), ("http://dst", "http://src"))  # type: ignore[arg-type]
