"""confluent-kafka's own serializers and deserializers, offline, as the reference for the wire format.

``FakeRegistry`` answers only the calls they make of a ``SchemaRegistryClient``, from memory. It stands in where a
live registry adds nothing to the question asked (where the id, the message indexes and the payload sit in the
bytes, and whether a rewritten record reads back); whether a real registry resolves two ids to the same schema is
for the tests against the registry harness (Apicurio), which come with it.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka.schema_registry import RegisteredSchema, Schema
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


class FakeRegistry:
    """Schemas by id, given out from ``first_id`` up: ids far from 1, with four different bytes, so that a record
    that put them in the wrong order or place shows it. Registering the same schema again gives its id back."""

    def __init__(self, first_id: int = 0x01020304) -> None:
        self.next_id = first_id
        self.schemas: dict[int, Schema] = {}
        self.versions: dict[str, list[int]] = {}

    def config(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    def add(self, schema_id: int, schema: Schema, subject: str = "added") -> None:
        """Hold ``schema`` under a chosen id: a target registry after a translation."""
        self.schemas[schema_id] = schema
        self.versions.setdefault(subject, []).append(schema_id)

    def _id_of(self, schema: Schema) -> int | None:
        return next((i for i, s in self.schemas.items() if s.schema_str == schema.schema_str), None)

    def register_schema_full_response(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False
    ) -> RegisteredSchema:
        schema_id = self._id_of(schema)
        if schema_id is None:
            schema_id, self.next_id = self.next_id, self.next_id + 0x01010101
            self.schemas[schema_id] = schema
        versions = self.versions.setdefault(subject_name, [])
        if schema_id not in versions:
            versions.append(schema_id)
        return RegisteredSchema(
            subject=subject_name, version=versions.index(schema_id) + 1, schema_id=schema_id, guid=None, schema=schema
        )

    def register_schema(self, subject_name: str, schema: Schema, normalize_schemas: bool = False) -> int:
        return self.register_schema_full_response(subject_name, schema, normalize_schemas).schema_id  # type: ignore[return-value]

    def lookup_schema(
        self, subject_name: str, schema: Schema, normalize_schemas: bool = False, deleted: bool = False
    ) -> RegisteredSchema:
        return self.register_schema_full_response(subject_name, schema)

    def get_schema(self, schema_id: int, subject_name: str | None = None, fmt: str | None = None) -> Schema:
        return self.schemas[schema_id]


def protobuf_file() -> descriptor_pb2.FileDescriptorProto:
    """One .proto file of several messages, two of them nested, so that the message indexes are more than [0]:
    Order [0], Order.Line [0, 0], Order.Line.Detail [0, 0, 0], Order.Note [0, 1], Customer [1], Refund [2]."""
    f = descriptor_pb2.FileDescriptorProto(name="acme/orders.proto", package="acme", syntax="proto3")
    string, int64 = descriptor_pb2.FieldDescriptorProto.TYPE_STRING, descriptor_pb2.FieldDescriptorProto.TYPE_INT64
    optional = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    order = f.message_type.add(name="Order")
    order.field.add(name="order_id", number=1, label=optional, type=int64)
    line = order.nested_type.add(name="Line")
    line.field.add(name="sku", number=1, label=optional, type=string)
    line.nested_type.add(name="Detail").field.add(name="text", number=1, label=optional, type=string)
    order.nested_type.add(name="Note").field.add(name="text", number=1, label=optional, type=string)
    f.message_type.add(name="Customer").field.add(name="name", number=1, label=optional, type=string)
    f.message_type.add(name="Refund").field.add(name="amount", number=1, label=optional, type=int64)
    return f


def protobuf_classes() -> dict[str, type]:
    """Message classes of ``protobuf_file`` by full name, built at run time (no protoc here), in a pool of their own."""
    pool = descriptor_pool.DescriptorPool()
    proto = protobuf_file()
    pool.Add(proto)
    classes = {}

    def collect(descriptor: Any) -> None:
        classes[descriptor.full_name] = message_factory.GetMessageClass(descriptor)
        for nested in descriptor.nested_types:
            collect(nested)

    for descriptor in pool.FindFileByName(proto.name).message_types_by_name.values():
        collect(descriptor)
    return classes
