"""Schema values (model/schemas.py): immutable, checked on construction, and stored as plain dicts that come back
equal, as the ledger and the plan files will store them."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_migration.exceptions import ConfigurationError, SchemaError, UnknownSchemaIdError
from kafka_migration.model.schemas import (
    MAX_ID,
    IdMap,
    IdPair,
    Mismatch,
    Outcome,
    PartCounts,
    RecordMismatch,
    RecordPart,
    RegisteredSchema,
    SchemaCounts,
    SchemaFormat,
    SchemaMode,
    SchemaReference,
    SubjectVersion,
)

PROPERTY = settings(derandomize=True, max_examples=100, deadline=None)
IDS = st.integers(0, MAX_ID)


def _through_json(data: dict[str, Any]) -> dict[str, Any]:
    """What a plan file or a ledger JSON column gives back."""
    return json.loads(json.dumps(data))  # type: ignore[no-any-return]


def test_the_format_of_a_registry_answer_is_avro_when_it_names_none() -> None:
    assert SchemaFormat.of(None) is SchemaFormat.AVRO
    assert SchemaFormat.of("") is SchemaFormat.AVRO
    assert SchemaFormat.of("PROTOBUF") is SchemaFormat.PROTOBUF
    assert SchemaFormat.of("json") is SchemaFormat.JSON
    with pytest.raises(ConfigurationError, match=r"'XML' is not one of AVRO, PROTOBUF, JSON"):
        SchemaFormat.of("XML")


def test_the_modes_read_as_the_cli_will_spell_them() -> None:
    assert [SchemaMode(m) for m in ("off", "keep", "translate")] == list(SchemaMode)


def test_a_registered_schema_comes_back_from_its_dict() -> None:
    schema = RegisteredSchema(
        12, SchemaFormat.PROTOBUF, "syntax = 'proto3';", (SchemaReference("other.proto", "other-value", 3),)
    )
    assert RegisteredSchema.from_dict(_through_json(schema.to_dict())) == schema
    assert schema.to_dict()["format"] == "PROTOBUF"
    with pytest.raises(dataclasses.FrozenInstanceError):
        schema.schema_id = 13  # type: ignore[misc]


def test_a_protobuf_source_keeps_its_serialized_descriptor_apart() -> None:
    """A Protobuf schema held as .proto source needs the registry's serialized descriptor, which its canonical form
    reads; one registered as a base64 descriptor, and any Avro or JSON Schema, needs none and is read as it is."""
    source = RegisteredSchema(12, SchemaFormat.PROTOBUF, 'syntax = "proto3";\nmessage A {}\n')
    assert source.needs_descriptor and source.canonical_text == source.text and "descriptor" not in source.to_dict()
    read = dataclasses.replace(source, descriptor="CgFh")
    assert not read.needs_descriptor and read.canonical_text == "CgFh" and read.text == source.text
    assert read.to_dict()["descriptor"] == "CgFh" and RegisteredSchema.from_dict(_through_json(read.to_dict())) == read
    assert RegisteredSchema.from_dict(_through_json(source.to_dict())).descriptor is None
    assert not RegisteredSchema(12, SchemaFormat.PROTOBUF, " CgFhYg== \n").needs_descriptor  # base64, as registered
    assert not RegisteredSchema(12, SchemaFormat.AVRO, '"string"').needs_descriptor
    assert not RegisteredSchema(12, SchemaFormat.JSON, '{"type": "string"}').needs_descriptor
    assert RegisteredSchema(12, SchemaFormat.PROTOBUF, "CgFh!").needs_descriptor  # not base64
    empty = dataclasses.replace(source, descriptor="")  # an empty answer is an answer: read, not to be asked again
    assert empty.canonical_text == "" and not empty.needs_descriptor
    assert RegisteredSchema.from_dict(_through_json(empty.to_dict())) == empty


@pytest.mark.parametrize("bad", [-1, MAX_ID + 1, True, "7", None])
def test_a_schema_id_outside_the_header_s_four_bytes_is_refused(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="is not a schema id"):
        RegisteredSchema(bad, SchemaFormat.AVRO, "{}")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="is not a schema id"):
        IdPair(1, bad, SchemaFormat.AVRO)  # type: ignore[arg-type]


def test_a_subject_version_and_a_reference_come_back_and_need_a_version_from_1() -> None:
    version = SubjectVersion("orders-value", 2, 40)
    assert SubjectVersion.from_dict(_through_json(version.to_dict())) == version
    reference = SchemaReference("com.acme.Money", "money", 1)
    assert SchemaReference.from_dict(_through_json(reference.to_dict())) == reference
    with pytest.raises(ConfigurationError, match="version from 1"):
        SubjectVersion("orders-value", 0, 40)
    with pytest.raises(ConfigurationError, match="version from 1"):
        SchemaReference("com.acme.Money", "", 1)


def test_the_id_map_gives_the_target_id_and_names_an_id_it_does_not_have() -> None:
    ids = IdMap.of({1: 101, 2: 102}, SchemaFormat.AVRO)
    assert ids.target(2) == 102
    assert ids.get(3) is None
    assert 1 in ids and 3 not in ids and len(ids) == 2 and list(ids) == [1, 2]
    with pytest.raises(UnknownSchemaIdError, match=r"^Schema id 3 is not in the id map \(2 source ids mapped\)") as e:
        ids.target(3)
    assert e.value.schema_id == 3
    assert isinstance(e.value, SchemaError)


def test_the_id_map_is_immutable_and_equal_whatever_the_order_it_was_given_in() -> None:
    given_order = {7: 1, 3: 2, 5: 2}  # two source ids may name one target schema
    ids = IdMap.of(given_order, {7: SchemaFormat.AVRO, 3: SchemaFormat.PROTOBUF, 5: SchemaFormat.JSON})
    same = IdMap.of(dict(reversed(given_order.items())), {3: "PROTOBUF", 5: "JSON", 7: "AVRO"})  # type: ignore[dict-item]
    assert ids == same and hash(ids) == hash(same)
    assert [p.source_id for p in ids.pairs] == [3, 5, 7]
    assert ids.format(3) is SchemaFormat.PROTOBUF and ids.format(4) is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        ids.pairs = ()  # type: ignore[misc]
    given_order[7] = 99
    assert ids.target(7) == 1


def test_an_id_map_that_gives_one_source_id_two_targets_is_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"source id 4 is given twice, as 40 \(AVRO\) and 41 \(AVRO\)\."):
        IdMap((IdPair(4, 40, SchemaFormat.AVRO), IdPair(4, 41, SchemaFormat.AVRO)))
    assert len(IdMap((IdPair(4, 40, SchemaFormat.AVRO), IdPair(4, 40, SchemaFormat.AVRO)))) == 1
    with pytest.raises(ConfigurationError, match=r"no format given for source ids \[2\]"):
        IdMap.of({1: 10, 2: 20}, {1: SchemaFormat.AVRO})


def test_the_identity_map_is_keep_mode_s() -> None:
    ids = IdMap.identity({5: SchemaFormat.AVRO, 9: SchemaFormat.PROTOBUF})
    assert [(p.source_id, p.target_id) for p in ids.pairs] == [(5, 5), (9, 9)]


@PROPERTY
@given(st.dictionaries(IDS, st.tuples(IDS, st.sampled_from(SchemaFormat)), max_size=20))
def test_any_id_map_comes_back_from_its_dict(lines: dict[int, tuple[int, SchemaFormat]]) -> None:
    ids = IdMap.of({s: t for s, (t, _) in lines.items()}, {s: f for s, (_, f) in lines.items()})
    back = IdMap.from_dict(_through_json(ids.to_dict()))
    assert back == ids
    assert all(back.target(s) == t and back.format(s) is f for s, (t, f) in lines.items())


def test_counts_tally_keys_and_values_apart_and_add_up_per_partition() -> None:
    outcomes = [
        (RecordPart.KEY, Outcome.WITHOUT_HEADER),
        (RecordPart.VALUE, Outcome.TRANSLATED),
        (RecordPart.KEY, Outcome.WITHOUT_HEADER),
        (RecordPart.VALUE, Outcome.UNCHANGED),
        (RecordPart.VALUE, Outcome.TRANSLATED),
    ]
    counts = SchemaCounts.tally("orders", 3, outcomes)
    assert counts.keys == PartCounts(without_header=2)
    assert counts.values == PartCounts(translated=2, unchanged=1)
    assert (counts + counts).values.total == 6
    assert SchemaCounts.from_dict(_through_json(counts.to_dict())) == counts
    with pytest.raises(ConfigurationError, match=r"orders\[3\] and orders\[4\] cannot be added"):
        counts + SchemaCounts("orders", 4)


def test_a_mismatch_names_its_ids_and_comes_back_from_its_dict() -> None:
    mismatch = RecordMismatch(Mismatch.WRONG_ID, 1, 101, 1)
    assert mismatch.describe() == (
        "the target's schema id is not the mapped one (source id 1, expected 101, target id 1)"
    )
    assert RecordMismatch.from_dict(_through_json(mismatch.to_dict())) == mismatch
    assert all(RecordMismatch(reason, None, None, None).describe() for reason in Mismatch)
