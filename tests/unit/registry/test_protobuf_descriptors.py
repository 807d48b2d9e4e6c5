"""The registry door and the proof of a pair on Protobuf schemas held as ``.proto`` source, as Confluent's registry
holds and serves them: the door asks ``format=serialized`` for the descriptor, as confluent-kafka's deserializer
does, and the fingerprint reads it.

Confluent Schema Registry cannot run here (it is not on Maven Central or PyPI, and no image registry is reached), and
the session's Apicurio answers ``format=serialized`` otherwise (raw bytes, mangled: tests/harness/test_registry.py).
So this registry is a local HTTP server that answers the requests the door makes (``GET /schemas/ids/<id>`` and
``GET /subjects/<subject>/versions/<version>``) as Confluent's API documents them: the schema as ``.proto`` source,
and with ``?format=serialized`` the ``FileDescriptorProto`` in base64. It records each request, so the tests see
what the door asked. Against the real Apicurio, tests/integration/test_schema_protobuf.py.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from google.protobuf import descriptor_pb2

from kafka_migration.exceptions import SchemaError, SchemaUnreadableError
from kafka_migration.model.schemas import RegisteredSchema, RegistryConfig, SchemaFormat, SchemaReference
from kafka_migration.registry import RegistryClient, read_catalog
from kafka_migration.schema_sync.sync import fingerprint_by_id, refuse_unreadable
from kafka_migration.schemas.canonical import fingerprint

FIELD = descriptor_pb2.FieldDescriptorProto
MONEY_PROTO = 'syntax = "proto3";\npackage shop.common;\n\nmessage Money {\n  int64 cents = 1;\n}\n'
ORDERS_PROTO = (
    'syntax = "proto3";\npackage shop;\n\nimport "shop/common.proto";\n\n'
    "message OrderKey {\n  string customer = 1;\n}\n\n"
    "message Order {\n  int64 id = 1;\n  shop.common.Money total = 2;\n}\n"
)


def _money(cents_type: int = FIELD.TYPE_INT64) -> descriptor_pb2.FileDescriptorProto:
    f = descriptor_pb2.FileDescriptorProto(name="shop/common.proto", package="shop.common", syntax="proto3")
    f.message_type.add(name="Money").field.add(name="cents", number=1, type=cents_type, label=FIELD.LABEL_OPTIONAL)
    return f


def _orders() -> descriptor_pb2.FileDescriptorProto:
    """ORDERS_PROTO as Confluent's registry serializes it (protoc's descriptor of the source)."""
    f = descriptor_pb2.FileDescriptorProto(
        name="shop/orders.proto", package="shop", syntax="proto3", dependency=["shop/common.proto"]
    )
    key = f.message_type.add(name="OrderKey")
    key.field.add(name="customer", number=1, type=FIELD.TYPE_STRING, label=FIELD.LABEL_OPTIONAL, json_name="customer")
    order = f.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=FIELD.TYPE_INT64, label=FIELD.LABEL_OPTIONAL, json_name="id")
    total = order.field.add(name="total", number=2, type=FIELD.TYPE_MESSAGE, label=FIELD.LABEL_OPTIONAL)
    total.type_name = ".shop.common.Money"
    return f


def _b64(file: descriptor_pb2.FileDescriptorProto) -> str:
    return base64.b64encode(file.SerializeToString()).decode()


class ConfluentLike:
    """Schemas by id, each with its source text, what ``format=serialized`` answers, its subject version and its
    references; the requests it was asked."""

    def __init__(self) -> None:
        self.schemas: dict[int, tuple[str, str, str, int, list[dict[str, Any]]]] = {}
        self.requests: list[str] = []

    def add(self, schema_id: int, text: str, serialized: str, subject: str, references: list[dict[str, Any]]) -> None:
        self.schemas[schema_id] = (text, serialized, subject, 1, references)

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        serialized = query.get("format") == ["serialized"]
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if parts[:2] == ["schemas", "ids"] and len(parts) == 3:
            return self._by_id(int(parts[2]), serialized)
        if parts[0] == "subjects" and len(parts) == 4 and parts[2] == "versions":
            return self._by_version(parts[1], int(parts[3]), serialized)
        if parts == ["subjects"]:
            return 200, sorted({s for _, _, s, _, _ in self.schemas.values()})
        if parts[0] == "subjects" and parts[2:] == ["versions"]:
            return 200, [1]
        return 404, {"error_code": 404, "message": "Not found"}

    def _by_id(self, schema_id: int, serialized: bool) -> tuple[int, Any]:
        if schema_id not in self.schemas:
            return 404, {"error_code": 40403, "message": "Schema not found"}
        text, as_descriptor, _, _, refs = self.schemas[schema_id]
        return 200, {"schema": as_descriptor if serialized else text, "schemaType": "PROTOBUF", "references": refs}

    def _by_version(self, subject: str, version: int, serialized: bool) -> tuple[int, Any]:
        for schema_id, (text, as_descriptor, held, held_version, refs) in self.schemas.items():
            if (held, held_version) == (subject, version):
                return 200, {
                    "subject": subject,
                    "version": version,
                    "id": schema_id,
                    "schema": as_descriptor if serialized else text,
                    "schemaType": "PROTOBUF",
                    "references": refs,
                }
        return 404, {"error_code": 40402, "message": "Version not found"}


@pytest.fixture
def registry() -> Iterator[tuple[ConfluentLike, RegistryConfig]]:
    held = ConfluentLike()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name for it
            split = urlsplit(self.path)
            held.requests.append(self.path)
            status, body = held.answer(split.path, parse_qs(split.query))
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield held, RegistryConfig(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


MONEY_REF = {"name": "shop/common.proto", "subject": "shop/common.proto", "version": 1}


def _hold_orders(held: ConfluentLike, money: descriptor_pb2.FileDescriptorProto | None = None) -> None:
    held.add(1, MONEY_PROTO, _b64(money or _money()), "shop/common.proto", [])
    held.add(2, ORDERS_PROTO, _b64(_orders()), "orders-value", [MONEY_REF])


def test_a_proto_source_is_read_with_its_serialized_descriptor(registry: tuple[ConfluentLike, RegistryConfig]) -> None:
    held, config = registry
    _hold_orders(held)
    with RegistryClient(config) as door:
        schema = door.schema(2)
        found = door.subject_version("shop/common.proto", 1)
    assert (schema.text, schema.descriptor, schema.canonical_text) == (ORDERS_PROTO, _b64(_orders()), _b64(_orders()))
    assert schema.references == (SchemaReference("shop/common.proto", "shop/common.proto", 1),)
    assert (found.schema.text, found.schema.descriptor) == (MONEY_PROTO, _b64(_money()))
    assert held.requests == [
        "/schemas/ids/2",
        "/schemas/ids/2?format=serialized",
        "/subjects/shop%2Fcommon.proto/versions/1?deleted=false",
        "/subjects/shop%2Fcommon.proto/versions/1?deleted=false&format=serialized",
    ]


def test_a_base64_descriptor_is_not_asked_again(registry: tuple[ConfluentLike, RegistryConfig]) -> None:
    """What confluent-kafka's serializer registers, served as registered (Apicurio does): nothing more to ask."""
    held, config = registry
    held.add(7, _b64(_money()), "never asked", "money-value", [])
    with RegistryClient(config) as door:
        schema = door.schema(7)
        found = door.subject_version("money-value", 1)
    assert (schema.descriptor, schema.canonical_text) == (None, _b64(_money()))
    assert found.schema.descriptor is None
    assert all("format" not in r for r in held.requests)


def test_a_proto_source_pair_is_proven_by_its_descriptors(registry: tuple[ConfluentLike, RegistryConfig]) -> None:
    """The fingerprint of a schema held as source, its reference too, is the one of the same descriptors registered
    in base64: the pair a translated run proves (one registry held it as source, the other as confluent-kafka
    registered it)."""
    held, config = registry
    _hold_orders(held)
    with RegistryClient(config) as door:
        by_id = fingerprint_by_id(door, 2)
        catalog = read_catalog(door, ["orders-value"])
    as_registered = fingerprint(SchemaFormat.PROTOBUF, _b64(_orders()), {"shop/common.proto": _b64(_money())})
    assert by_id == as_registered
    assert set(catalog) == {("orders-value", 1), ("shop/common.proto", 1)}
    assert all(s.descriptor is not None for s in catalog.values())
    refuse_unreadable(catalog, config.display_url)  # every version readable: nothing refused


def test_a_reference_read_as_source_counts_by_its_descriptor(registry: tuple[ConfluentLike, RegistryConfig]) -> None:
    """The referenced file's descriptor is part of the form: another Money (cents an int32) gives another
    fingerprint, though the sources of both files are the same texts."""
    held, config = registry
    _hold_orders(held, _money(FIELD.TYPE_INT32))
    with RegistryClient(config) as door:
        other = fingerprint_by_id(door, 2)
    assert other != fingerprint(SchemaFormat.PROTOBUF, _b64(_orders()), {"shop/common.proto": _b64(_money())})


def test_a_registry_whose_serialized_form_is_not_base64_is_refused_before_anything_is_written(
    registry: tuple[ConfluentLike, RegistryConfig],
) -> None:
    """As Apicurio 3.3.3 answers for a .proto registered as text (raw bytes in a JSON string): the door keeps the
    answer, the proof cannot read it, and the sync refuses the version (exit 2) naming subject, version and id."""
    held, config = registry
    held.add(1, MONEY_PROTO, _money().SerializeToString().decode("latin-1"), "shop/common.proto", [])
    with RegistryClient(config) as door:
        with pytest.raises(SchemaError, match="format=serialized"):
            fingerprint_by_id(door, 1)
        catalog = read_catalog(door, ["shop/common.proto"])
    with pytest.raises(SchemaUnreadableError) as refused:
        refuse_unreadable(catalog, config.display_url)
    assert refused.value.exit_code == 2
    assert str(refused.value).startswith(
        f"Subject 'shop/common.proto' version 1 (schema id 1) on the source registry {config.display_url} cannot be "
        "proven on a target; nothing was written. Protobuf schema is not a serialized file descriptor in base64"
    )


def test_an_empty_serialized_answer_is_kept_as_the_answer(registry: tuple[ConfluentLike, RegistryConfig]) -> None:
    """Asked once: an empty descriptor is what the registry gave, refused by the proof, not asked for again."""
    held, config = registry
    held.add(3, MONEY_PROTO, "", "money-value", [])
    with RegistryClient(config) as door:
        assert door.schema(3).descriptor == ""
        assert door.subject_version("money-value", 1).schema.descriptor == ""
        with pytest.raises(SchemaError, match=r"^Protobuf schema is empty: the registry gave no file descriptor"):
            fingerprint_by_id(door, 3)
    assert sum("format=serialized" in r for r in held.requests) == 2  # by id, by version; the proof from the cache


def test_refuse_unreadable_names_the_first_unreadable_version_with_a_reference_missing() -> None:
    """Every version of the catalog is read, in order; the first that gives no form is named."""
    money = RegisteredSchema(1, SchemaFormat.PROTOBUF, _b64(_money()))
    orders = RegisteredSchema(
        2, SchemaFormat.PROTOBUF, _b64(_orders()), (SchemaReference("shop/common.proto", "m", 1),)
    )
    refuse_unreadable({("m", 1): money, ("o", 1): orders}, "http://src")
    with pytest.raises(SchemaUnreadableError, match=r"^Subject 'o' version 1 \(schema id 2\) on the source registry"):
        refuse_unreadable({("o", 1): orders, ("z", 1): money}, "http://src")  # its reference is not in the catalog
    source_only = RegisteredSchema(3, SchemaFormat.PROTOBUF, MONEY_PROTO)
    with pytest.raises(SchemaUnreadableError, match=r"^Subject 'a' version 2 \(schema id 3\)"):
        refuse_unreadable({("m", 1): money, ("b", 1): source_only, ("a", 2): source_only}, "http://src")
