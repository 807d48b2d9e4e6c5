"""Canonical forms (schemas/canonical.py): texts two registries may give for one schema share a fingerprint; a
change that reads the bytes differently does not."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka.schema_registry import topic_subject_name_strategy
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from google.protobuf import descriptor_pb2
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_migration.exceptions import SchemaError
from kafka_migration.model.schemas import RegisteredSchema, SchemaFormat, SchemaReference
from kafka_migration.schemas.canonical import canonical_form, fingerprint, schema_fingerprint
from tests.unit.schemas.confluent import FakeRegistry, protobuf_classes, protobuf_file

AVRO, PROTOBUF, JSON = SchemaFormat.AVRO, SchemaFormat.PROTOBUF, SchemaFormat.JSON
PROPERTY = settings(derandomize=True, max_examples=60, deadline=None)

# -- Avro --------------------------------------------------------------------------------------------------------

ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}},
        {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
            {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
        {"name": "previous", "type": ["null", "Status"]},
    ],
}  # fmt: skip
ORDER_SAME = """
{ "fields": [
    {"type": "long", "name": "id", "doc": "the order's number"},
    {"name": "status", "type": {"symbols": ["NEW", "PAID"], "name": "com.acme.Status", "type": "enum",
                                "doc": "where it stands"}},
    {"name": "lines", "default": [], "type": {"items": {"type": "record", "name": "Line", "aliases": ["Item"],
      "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int", "default": 1}]},
      "type": "array"}},
    {"name": "previous", "type": ["null", "com.acme.Status"], "default": null}
  ],
  "doc": "An order, as the shop writes it",
  "name": "com.acme.Order", "type": "record" }
"""


def _changed(edit: Callable[[dict[str, Any]], None]) -> str:
    schema = json.loads(json.dumps(ORDER))
    edit(schema)
    return json.dumps(schema)


def test_avro_texts_that_differ_in_whitespace_attribute_order_docs_and_name_spelling_share_a_fingerprint() -> None:
    assert fingerprint(AVRO, json.dumps(ORDER)) == fingerprint(AVRO, ORDER_SAME)
    assert canonical_form(AVRO, ORDER_SAME).startswith('{"name":"com.acme.Order","type":"record","fields":[')
    assert fingerprint(AVRO, json.dumps(ORDER)).startswith("sha256:")


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s["fields"][0].update(type="int"),  # a changed field type
        lambda s: s["fields"][0].update(name="order_id"),  # a renamed field
        lambda s: s.update(fields=[s["fields"][1], s["fields"][0], *s["fields"][2:]]),  # another binary layout
        lambda s: s["fields"][1]["type"]["symbols"].reverse(),  # enum symbols are written by position
        lambda s: s.update(namespace="com.other"),  # another full name: another type for a reader
        lambda s: s["fields"][3].update(type=["Status", "null"]),  # union branches are written by position
    ],
    ids=["field type", "field name", "field order", "enum symbol order", "namespace", "union order"],
)
def test_an_avro_change_that_reads_the_bytes_differently_changes_the_fingerprint(
    edit: Callable[[dict[str, Any]], None],
) -> None:
    assert fingerprint(AVRO, _changed(edit)) != fingerprint(AVRO, json.dumps(ORDER))


def test_avro_s_parsing_canonical_form_drops_logical_types_as_the_specification_says() -> None:
    """A known limit of the form the issue asks for: a date and an int, a decimal and its bytes, are one form."""
    dated = _changed(lambda s: s["fields"][0].update(type={"type": "int", "logicalType": "date"}))
    assert fingerprint(AVRO, dated) == fingerprint(AVRO, _changed(lambda s: s["fields"][0].update(type="int")))


def _shuffled(value: Any, draw: st.DrawFn) -> Any:
    if isinstance(value, dict):
        keys = draw(st.permutations(sorted(value)))
        return {k: _shuffled(value[k], draw) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, draw) for v in value]
    return value


@PROPERTY
@given(st.data(), st.sampled_from([None, 0, 1, 4]), st.sampled_from([(",", ":"), (", ", ": "), (" ,", " :  ")]))
def test_any_key_order_and_whitespace_of_an_avro_or_json_schema_keeps_its_form(
    data: st.DataObject, indent: int | None, separators: tuple[str, str]
) -> None:
    for fmt in (AVRO, JSON):
        text = json.dumps(_shuffled(ORDER, data.draw), indent=indent, separators=separators)
        assert canonical_form(fmt, text) == canonical_form(fmt, json.dumps(ORDER))


MONEY = {"type": "record", "name": "Money", "namespace": "com.acme", "fields": [{"name": "cents", "type": "CENTS"}]}
CENTS = {"type": "fixed", "name": "com.acme.CENTS", "size": 8}
PRICED = {
    "type": "record",
    "name": "Priced",
    "namespace": "com.acme",
    "fields": [{"name": "price", "type": "Money"}, {"name": "was", "type": ["null", "Money"]}],
}


def test_avro_references_are_defined_where_first_used_as_a_self_contained_schema_would_be() -> None:
    references = {"com.acme.Money": json.dumps(MONEY), "com.acme.CENTS": json.dumps(CENTS)}  # Money needs CENTS
    inline = {**PRICED, "fields": [{"name": "price", "type": {**MONEY, "fields": [{"name": "cents", "type": CENTS}]}},
                                   {"name": "was", "type": ["null", "com.acme.Money"]}]}  # fmt: skip
    assert canonical_form(AVRO, json.dumps(PRICED), references) == canonical_form(AVRO, json.dumps(inline))
    bigger = {"com.acme.Money": json.dumps(MONEY), "com.acme.CENTS": json.dumps({**CENTS, "size": 16})}
    assert fingerprint(AVRO, json.dumps(PRICED), bigger) != fingerprint(AVRO, json.dumps(PRICED), references)


def test_an_avro_schema_whose_references_are_not_all_given_is_refused_by_name() -> None:
    with pytest.raises(SchemaError, match=r"Avro references do not parse: com\.acme\.Money: .*CENTS"):
        canonical_form(AVRO, json.dumps(PRICED), {"com.acme.Money": json.dumps(MONEY)})
    with pytest.raises(SchemaError, match=r"Avro schema does not parse: .*Money"):
        canonical_form(AVRO, json.dumps(PRICED))
    with pytest.raises(SchemaError, match="Avro schema is not JSON"):
        canonical_form(AVRO, "{'type': 'string'}")


def test_a_registered_schema_s_fingerprint_needs_the_text_of_each_reference() -> None:
    priced = RegisteredSchema(3, AVRO, json.dumps(PRICED), (SchemaReference("com.acme.Money", "money", 1),))
    with pytest.raises(SchemaError, match=r"Schema id 3: the text of its references \['com.acme.Money'\] is needed"):
        schema_fingerprint(priced)
    references = {"com.acme.Money": json.dumps(MONEY), "com.acme.CENTS": json.dumps(CENTS)}
    assert schema_fingerprint(priced, references) == fingerprint(AVRO, json.dumps(PRICED), references)


# -- JSON Schema ---------------------------------------------------------------------------------------------------


def test_json_schema_s_form_is_sorted_keys_without_whitespace() -> None:
    text = '{ "type": "object",\n  "properties": {"b": {"type": "string"}, "a": {"type": "integer"}} }'
    assert canonical_form(JSON, text) == '{"properties":{"a":{"type":"integer"},"b":{"type":"string"}},"type":"object"}'
    assert fingerprint(JSON, text) != fingerprint(JSON, text.replace("integer", "number"))
    required = '{"required": ["a", "b"]}'
    assert fingerprint(JSON, required) != fingerprint(JSON, '{"required": ["b", "a"]}')  # arrays keep their order
    with pytest.raises(SchemaError, match=r"gives the keys \['type'\] twice"):
        canonical_form(JSON, '{"type": "string", "type": "integer"}')


def test_json_schema_references_are_part_of_the_form_by_name() -> None:
    text = '{"$ref": "money.json"}'
    money = '{"type": "integer"}'
    assert canonical_form(JSON, text, {"money.json": money}) == (
        '{"references":{"money.json":{"type":"integer"}},"schema":{"$ref":"money.json"}}'
    )
    assert fingerprint(JSON, text, {"money.json": money}) != fingerprint(
        JSON, text, {"money.json": '{"type":"number"}'}
    )


# -- Protobuf ------------------------------------------------------------------------------------------------------


def _text(proto: descriptor_pb2.FileDescriptorProto) -> str:
    """As a registry answers with ``format=serialized``: base64 of the serialized descriptor."""
    return base64.b64encode(proto.SerializeToString()).decode()


def _edited(edit: Callable[[descriptor_pb2.FileDescriptorProto], None]) -> str:
    proto = protobuf_file()
    edit(proto)
    return _text(proto)


def _as_another_registry_serves_it(proto: descriptor_pb2.FileDescriptorProto) -> None:
    """What may differ between two registries' answers for one schema, or a protoc's and a registry's."""
    proto.name = "default"
    proto.syntax = "proto3"
    order = proto.message_type[0]
    order.field.add(name="placed_at", number=3, label=1, type_name="google.protobuf.Timestamp")  # relative, no type
    order.field.add(name="note", number=2, label=1, type_name="Order.Note")  # declared after 3
    proto.dependency.append("google/protobuf/timestamp.proto")
    for field in order.field:
        if field.name in {"order_id", "placed_at"}:
            field.json_name = {"order_id": "orderId", "placed_at": "placedAt"}[field.name]  # as protoc writes them
    proto.source_code_info.location.add(path=[4, 0], span=[1, 0, 10])


def _as_protoc_writes_it(proto: descriptor_pb2.FileDescriptorProto) -> None:
    order = proto.message_type[0]
    order.field.add(name="note", number=2, label=1, type=11, type_name=".acme.Order.Note")
    order.field.add(name="placed_at", number=3, label=1, type=11, type_name=".google.protobuf.Timestamp")
    proto.dependency.append("google/protobuf/timestamp.proto")


def test_protobuf_descriptors_that_differ_only_in_form_share_a_fingerprint() -> None:
    """File name, source info, default json names, relative type names and kinds left out, field declaration
    order: none changes what a message means or how its records decode."""
    assert fingerprint(PROTOBUF, _edited(_as_another_registry_serves_it)) == fingerprint(
        PROTOBUF, _edited(_as_protoc_writes_it)
    )


def test_the_protobuf_form_is_the_descriptor_with_names_resolved() -> None:
    form = canonical_form(PROTOBUF, _edited(_as_another_registry_serves_it))
    assert 'type_name: ".google.protobuf.Timestamp"' in form and "type: TYPE_MESSAGE" in form
    assert "json_name" not in form and "source_code_info" not in form and "default" not in form
    assert form.index('name: "note"') < form.index('name: "placed_at"')  # by field number


def _swap_messages(proto: descriptor_pb2.FileDescriptorProto) -> None:
    first, second = (descriptor_pb2.DescriptorProto.FromString(m.SerializeToString()) for m in proto.message_type[1:])
    del proto.message_type[1:]
    proto.message_type.extend([second, first])


def _add_enum(values: list[str]) -> Callable[[descriptor_pb2.FileDescriptorProto], None]:
    """A proto2 (closed) enum, whose first value is the default whatever its number."""

    def edit(proto: descriptor_pb2.FileDescriptorProto) -> None:
        proto.ClearField("syntax")
        enum = proto.enum_type.add(name="State")
        for name in values:
            enum.value.add(name=name, number={"OPEN": 1, "CLOSED": 2}[name])

    return edit


@pytest.mark.parametrize(
    "edit",
    [
        lambda p: setattr(p.message_type[0].field[0], "type", descriptor_pb2.FieldDescriptorProto.TYPE_INT32),
        lambda p: setattr(p.message_type[0].field[0], "number", 7),
        lambda p: setattr(p.message_type[0].field[0], "json_name", "id"),
        lambda p: setattr(p, "package", "acme.v2"),
        _swap_messages,
        lambda p: p.message_type[0].options.MergeFromString(b"\x80\xb5\x18\x01"),  # a custom option, unknown here
    ],
    ids=["field type", "field number", "custom json name", "package", "message order", "custom option"],
)
def test_a_protobuf_change_that_decodes_differently_changes_the_fingerprint(
    edit: Callable[[descriptor_pb2.FileDescriptorProto], None],
) -> None:
    """Message order counts: a record's message indexes address messages by position."""
    assert fingerprint(PROTOBUF, _edited(edit)) != fingerprint(PROTOBUF, _text(protobuf_file()))


def test_protobuf_enum_values_keep_their_order_the_first_is_the_default() -> None:
    one, other = _edited(_add_enum(["OPEN", "CLOSED"])), _edited(_add_enum(["CLOSED", "OPEN"]))
    assert fingerprint(PROTOBUF, one) != fingerprint(PROTOBUF, other)


def test_confluent_kafka_s_registered_descriptor_has_the_form_of_the_file_it_was_built_from() -> None:
    """What ProtobufSerializer registers (offline, a fake registry client) is the schema we built, in another form."""
    registry, refund = FakeRegistry(), protobuf_classes()["acme.Refund"]
    serializer = ProtobufSerializer(refund, registry, {"subject.name.strategy": topic_subject_name_strategy})
    serializer(refund(), SerializationContext("refunds", MessageField.VALUE))
    (registered,) = registry.schemas.values()
    assert registered.schema_type == "PROTOBUF"
    assert canonical_form(PROTOBUF, registered.schema_str) == canonical_form(PROTOBUF, _text(protobuf_file()))


def _money_file(cents_type: int = descriptor_pb2.FieldDescriptorProto.TYPE_INT64) -> descriptor_pb2.FileDescriptorProto:
    money = descriptor_pb2.FileDescriptorProto(name="ignored.proto", package="acme.money", syntax="proto3")
    money.message_type.add(name="Money").field.add(name="cents", number=1, label=1, type=cents_type)
    return money


def _uses_money(proto: descriptor_pb2.FileDescriptorProto) -> None:
    proto.dependency.append("acme/money.proto")
    proto.message_type[2].field.add(name="total", number=2, label=1, type_name="acme.money.Money")


def test_protobuf_references_are_part_of_the_form_by_import_name() -> None:
    text = _edited(_uses_money)
    form = canonical_form(PROTOBUF, text, {"acme/money.proto": _text(_money_file())})
    assert form.index('name: "acme/money.proto"') < form.index('package: "acme"')
    int32 = _text(_money_file(descriptor_pb2.FieldDescriptorProto.TYPE_INT32))
    assert fingerprint(PROTOBUF, text, {"acme/money.proto": int32}) != fingerprint(
        PROTOBUF, text, {"acme/money.proto": _text(_money_file())}
    )
    timestamp = {"google/protobuf/timestamp.proto": _text(descriptor_pb2.FileDescriptorProto(name="x"))}
    with_timestamp = _edited(_as_protoc_writes_it)
    assert canonical_form(PROTOBUF, with_timestamp, timestamp) == canonical_form(PROTOBUF, with_timestamp)  # built in


def test_a_protobuf_schema_that_cannot_be_built_is_refused_with_what_to_do() -> None:
    with pytest.raises(SchemaError, match=r"imports files that are not given as references: \['acme/money.proto'\]"):
        canonical_form(PROTOBUF, _edited(_uses_money))
    with pytest.raises(SchemaError, match=r"\.proto text has no parser here\. Register the schema as"):
        canonical_form(PROTOBUF, 'syntax = "proto3";\nmessage Order { int64 id = 1; }\n')
    with pytest.raises(SchemaError, match=r"^Protobuf schema is empty"):
        canonical_form(PROTOBUF, " \n")
    with pytest.raises(SchemaError, match=r"^Protobuf reference 'a\.proto' is empty"):
        canonical_form(PROTOBUF, _text(protobuf_file()), {"a.proto": ""})
    with pytest.raises(SchemaError, match="does not build"):
        canonical_form(PROTOBUF, _edited(lambda p: p.message_type[0].field.add(name="x", number=9, type_name="Nope")))
    with pytest.raises(SchemaError, match="is not a file descriptor"):
        canonical_form(PROTOBUF, base64.b64encode(b"\xff\xff\xff").decode())
