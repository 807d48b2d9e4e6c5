"""harness/registry: the tests' schema registry is a real one, and what its Confluent-compatible API does.

Apicurio Registry 3.3 (``make registry``) serves confluent-kafka's SchemaRegistryClient and its Avro, Protobuf
and JSON Schema serializers under ``/apis/ccompat/v7``. The facts a migration that keeps schema ids rests on are
tests here: that API ignores an id asked for on register, also in IMPORT mode (which it stores but does not
enforce), while Apicurio's own export, imported into an empty registry, keeps subjects, versions and ids.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext, SerializationError
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from harness.registry import Registry, dist
from harness.registry.server import CCOMPAT_PATH
from harness.servers.ports import free_port
from tests.conftest import Registries

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
CCOMPAT_JSON = "application/vnd.schemaregistry.v1+json"
# confluent-kafka 2.16's serializers ask ``/associations`` for a topic's subject first (its default ASSOCIATED
# strategy), which Apicurio does not have (404, empty body), then fall back to the topic's name. The tests name
# the subjects' strategy: TopicNameStrategy, ``<topic>-value``.
TOPIC_NAMES = {"subject.name.strategy.type": "TOPIC"}
CLIENT_TIMEOUT = 20  # seconds; a call that gets no answer fails (the client retries it), and never hangs a run

ADDRESS = {
    "type": "record",
    "name": "Address",
    "namespace": "shop",
    "fields": [{"name": "city", "type": "string"}],
}
ADDRESS_V2 = {**ADDRESS, "fields": [*ADDRESS["fields"], {"name": "zip", "type": ["null", "string"], "default": None}]}
ORDER = {
    "type": "record",
    "name": "Order",
    "namespace": "shop",
    "fields": [{"name": "id", "type": "long"}, {"name": "ship_to", "type": "shop.Address"}],
}
LINE = {"type": "record", "name": "Line", "namespace": "shop", "fields": [{"name": "id", "type": "long"}]}
PERSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Person",
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
# Two messages in one file; the second refers to the first. The text form a Confluent registry holds.
ORDERS_PROTO = """syntax = "proto3";
package shop;

message Customer {
  string name = 1;
}

message Order {
  int64 id = 1;
  Customer customer = 2;
}
"""


def _proto_classes() -> tuple[type[Any], type[Any]]:
    """ORDERS_PROTO's Customer and Order as protobuf classes (built from its descriptor: no protoc here)."""
    label = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL
    kinds = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="shop/orders.proto", package="shop", syntax="proto3")
    file.message_type.add(name="Customer").field.add(name="name", number=1, type=kinds.TYPE_STRING, label=label)
    order = file.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=kinds.TYPE_INT64, label=label)
    order.field.add(name="customer", number=2, type=kinds.TYPE_MESSAGE, type_name=".shop.Customer", label=label)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    customer, order_class = (
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"shop.{name}")) for name in ("Customer", "Order")
    )
    return customer, order_class


def _client(url: str, **settings: Any) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": url, "timeout": CLIENT_TIMEOUT, **settings})


def _request(method: str, url: str, body: bytes | None = None, content_type: str = CCOMPAT_JSON) -> tuple[int, bytes]:
    """One HTTP call, its status and body (an error status is an answer, not an exception)."""
    request = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _json(method: str, url: str, body: object | None = None) -> tuple[int, Any]:
    status, answer = _request(method, url, None if body is None else json.dumps(body).encode())
    return status, json.loads(answer) if answer else None


def _root(ccompat_url: str) -> str:
    """The server's root, where Apicurio's own API (``/apis/registry/v3``) is."""
    return ccompat_url.removesuffix(CCOMPAT_PATH)


def _value_of(topic: str) -> SerializationContext:
    return SerializationContext(topic, MessageField.VALUE)


def _header(data: bytes) -> tuple[int, int]:
    """The wire format's magic byte and schema id."""
    return data[0], int.from_bytes(data[1:5], "big")


def _register_order_with_its_address(client: SchemaRegistryClient, topic: str) -> tuple[int, int]:
    """shop.Address in a subject of its own (two versions), and ``<topic>-value``'s shop.Order referring to its
    first version; the ids of the address's first version and of the order."""
    address_subject = f"{topic}-shop.Address"
    address_id = client.register_schema(address_subject, Schema(json.dumps(ADDRESS), "AVRO"))
    client.register_schema(address_subject, Schema(json.dumps(ADDRESS_V2), "AVRO"))
    reference = SchemaReference("shop.Address", address_subject, 1)
    order_id = client.register_schema(f"{topic}-value", Schema(json.dumps(ORDER), "AVRO", [reference]))
    return address_id, order_id


def test_the_session_registries_are_two_empty_apicurio_registries(registries: Registries) -> None:
    if registries.source_registry is None:
        pytest.skip("KAFKA_MIGRATION_TEST_*_REGISTRY name registries the harness did not start")  # noqa: TID251 (not a missing tool)
    for registry in (registries.source_registry, registries.target_registry):
        assert isinstance(registry, Registry)
        status, info = _json("GET", f"{registry.url}/apis/registry/v3/system/info")
        assert status == 200 and info["version"] == dist.registry_version(), info
        assert registry.running() and registry.port != registry.management_port
    assert registries.source != registries.target


def test_avro_with_a_reference_to_a_named_type_of_another_subject(registries: Registries, unique: str) -> None:
    client = _client(registries.source)
    topic = f"avro{unique}"
    _, order_id = _register_order_with_its_address(client, topic)
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema_id == order_id
    assert [(r.name, r.subject, r.version) for r in registered.schema.references] == [
        ("shop.Address", f"{topic}-shop.Address", 1)
    ]
    serializer = AvroSerializer(
        client, registered.schema, conf={**TOPIC_NAMES, "auto.register.schemas": False, "use.latest.version": True}
    )
    context = SerializationContext(topic, MessageField.VALUE)
    order = {"id": 7, "ship_to": {"city": "Lyon"}}
    data = serializer(order, context)
    assert _header(data) == (0, order_id)
    assert AvroDeserializer(_client(registries.source), conf=TOPIC_NAMES)(data, context) == order


def test_protobuf_two_messages_in_one_file(registries: Registries, unique: str) -> None:
    """confluent-kafka's ProtobufSerializer registers the file's descriptor (base64) and writes the message's index
    after the id; Apicurio serves that text back as registered. Its ProtobufDeserializer reads the records without
    a registry (it has the classes); with one it asks for the writer's schema ``?format=serialized``, which
    Apicurio cannot make of a base64 descriptor: HTTP 500 (see Apicurio issue 7066 on base64 descriptors)."""
    customer_class, order_class = _proto_classes()
    client = _client(registries.source)
    topic = f"proto{unique}"
    conf = {**TOPIC_NAMES, "use.deprecated.format": False}
    context = _value_of(topic)
    order = order_class(id=7, customer=customer_class(name="ada"))
    data = ProtobufSerializer(order_class, client, conf)(order, context)
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "PROTOBUF"
    # The second message of the file: a count of one index, index 1 (zig-zag varints 2, 2); then the payload.
    assert _header(data) == (0, registered.schema_id)
    assert data[5:7] == b"\x02\x02" and data[7:] == order.SerializeToString()
    status, body = _json("GET", f"{registries.source}/schemas/ids/{registered.schema_id}")
    assert status == 200 and body["schemaType"] == "PROTOBUF"
    descriptor = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(body["schema"]))
    assert [m.name for m in descriptor.message_type] == ["Customer", "Order"]
    assert ProtobufDeserializer(order_class, conf)(data, context) == order

    customers = _value_of(f"{topic}c")
    first = ProtobufSerializer(customer_class, client, conf)(customer_class(name="bo"), customers)
    assert first[5:6] == b"\x00"  # the first message: the one-byte shorthand
    assert ProtobufDeserializer(customer_class, conf)(first, customers) == customer_class(name="bo")

    serialized = _request("GET", f"{registries.source}/schemas/ids/{registered.schema_id}?format=serialized")
    assert serialized[0] == 500 and b"Syntax error" in serialized[1]
    reader = _client(registries.source, **{"max.retries": 0})  # nothing cached; a 500 is asked again by default
    with pytest.raises(SchemaRegistryError, match="Syntax error"):
        ProtobufDeserializer(order_class, conf, reader)(data, context)


def test_a_protobuf_schema_registered_as_text_is_served_as_raw_bytes_when_serialized(
    registries: Registries, unique: str
) -> None:
    """A ``.proto`` registered as text (as a Confluent registry holds it) comes back as text; asked for it
    ``?format=serialized`` Apicurio answers the descriptor's raw bytes where Confluent's registry answers base64, so
    confluent-kafka's client cannot read records written with it either. A descriptor of more than 127 bytes, or
    with an import, is mangled on the way: a byte above 127 becomes U+FFFD and the file is renamed after its first
    message, its import re-pathed after the imported package. So nothing can prove such a schema on Apicurio
    (tests/integration/test_schema_protobuf.py: the run refuses it)."""
    customer_class, order_class = _proto_classes()
    client = _client(registries.source)
    subject = f"prototext{unique}-value"
    schema_id = client.register_schema(subject, Schema(ORDERS_PROTO, "PROTOBUF"))
    status, body = _json("GET", f"{registries.source}/schemas/ids/{schema_id}")
    assert status == 200 and body["schema"] == ORDERS_PROTO and body["schemaType"] == "PROTOBUF"
    status, body = _json("GET", f"{registries.source}/schemas/ids/{schema_id}?format=serialized")
    assert status == 200
    descriptor = descriptor_pb2.FileDescriptorProto.FromString(body["schema"].encode("latin-1"))  # raw, not base64
    assert [m.name for m in descriptor.message_type] == ["Customer", "Order"]

    order = order_class(id=7, customer=customer_class(name="ada"))
    data = b"\x00" + schema_id.to_bytes(4, "big") + b"\x02\x02" + order.SerializeToString()
    context = _value_of(f"prototext{unique}")
    conf = {**TOPIC_NAMES, "use.deprecated.format": False}
    with pytest.raises(SerializationError):
        ProtobufDeserializer(order_class, conf, _client(registries.source))(data, context)
    assert ProtobufDeserializer(order_class, conf)(data, context) == order

    common = 'syntax = "proto3";\npackage shop.common;\n\nmessage Money {\n  int64 cents = 1;\n}\n'
    client.register_schema(f"prototext{unique}/common.proto", Schema(common, "PROTOBUF"))
    fields = "".join(f"  string a_rather_long_field_name_{i} = {i + 3};\n" for i in range(6))
    larger = ORDERS_PROTO.replace("package shop;\n", f'package shop;\n\nimport "prototext{unique}/common.proto";\n')
    larger = larger.replace("  Customer customer = 2;\n", f"  Customer customer = 2;\n{fields}")
    reference = SchemaReference(f"prototext{unique}/common.proto", f"prototext{unique}/common.proto", 1)
    larger_id = client.register_schema(f"prototext{unique}-larger", Schema(larger, "PROTOBUF", [reference]))
    status, body = _json("GET", f"{registries.source}/schemas/ids/{larger_id}?format=serialized")
    assert status == 200 and "\ufffd" in body["schema"]
    with pytest.raises(ValueError):
        base64.b64decode(body["schema"], validate=True)
    assert body["schema"].startswith("\n\x08Customer\x12\x04shop")  # the file's name: its first message's
    assert f"prototext{unique}/common.proto" not in body["schema"] and "shop/common/common.proto" in body["schema"]


def test_json_schema(registries: Registries, unique: str) -> None:
    client = _client(registries.source)
    topic = f"json{unique}"
    context = SerializationContext(topic, MessageField.VALUE)
    person = {"name": "ada", "age": 36}
    data = JSONSerializer(json.dumps(PERSON), client, conf=TOPIC_NAMES)(person, context)
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "JSON"
    assert _header(data) == (0, registered.schema_id)
    assert json.loads(data[5:]) == person
    reader = JSONDeserializer(None, schema_registry_client=_client(registries.source), conf=TOPIC_NAMES)
    assert reader(data, context) == person


def test_ccompat_ignores_an_id_asked_for_even_in_import_mode(registry_factory) -> None:  # type: ignore[no-untyped-def]
    """Confluent's registry in IMPORT mode registers a schema under the id asked for; Apicurio's
    Confluent-compatible API accepts and reports the mode, then gives the next id of its own and the next version.
    Its modes are stored, not enforced: READONLY still registers."""
    (registry,) = registry_factory("modes")
    url = registry.ccompat_url
    assert _json("GET", f"{url}/mode") == (200, {"mode": "READWRITE"})
    assert _json("PUT", f"{url}/mode", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert _json("GET", f"{url}/mode") == (200, {"mode": "IMPORT"})
    status, body = _json("PUT", f"{url}/mode", {"mode": "SOMETHING"})
    assert (status, body["error_code"]) == (422, 42201)

    asked = {"schema": json.dumps(ADDRESS), "id": 77, "version": 5}
    assert _json("POST", f"{url}/subjects/imported-value/versions", asked) == (200, {"id": 1})
    assert _json("GET", f"{url}/schemas/ids/77") == (404, {"message": "Schema 77 not found.", "error_code": 40403})
    assert _json("GET", f"{url}/subjects/imported-value/versions") == (200, [1])
    assert json.loads(_json("GET", f"{url}/schemas/ids/1")[1]["schema"]) == ADDRESS
    assert _json("PUT", f"{url}/mode/imported-value", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})

    assert _json("PUT", f"{url}/mode", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
    assert _json("POST", f"{url}/subjects/other-value/versions", {"schema": '"string"'}) == (200, {"id": 2})


def test_an_export_imported_into_an_empty_registry_keeps_subjects_versions_and_ids(
    registries: Registries,
    registry_factory,  # type: ignore[no-untyped-def]
    unique: str,
) -> None:
    source = _client(registries.source)
    source.register_schema(f"filler{unique}-value", Schema('"string"', "AVRO"))  # the ids below start past 1
    topic = f"moved{unique}"
    _, order_id = _register_order_with_its_address(source, topic)
    people, lines = _value_of(f"{topic}j"), _value_of(f"{topic}l")
    json_data = JSONSerializer(json.dumps(PERSON), source, conf=TOPIC_NAMES)({"name": "ada"}, people)
    line_data = AvroSerializer(source, json.dumps(LINE), conf=TOPIC_NAMES)({"id": 1}, lines)
    (target_registry,) = registry_factory("import-target")
    target = _client(target_registry.ccompat_url)
    assert target.get_subjects() == []

    status, archive = _request("GET", f"{_root(registries.source)}/apis/registry/v3/admin/export")
    assert status == 200 and archive[:2] == b"PK"  # a zip
    assert _request("POST", f"{target_registry.url}/apis/registry/v3/admin/import", archive, "application/zip") == (
        204,
        b"",
    )

    subjects = source.get_subjects()
    assert sorted(target.get_subjects()) == sorted(subjects)
    for subject in subjects:
        versions = source.get_versions(subject)
        assert target.get_versions(subject) == versions, subject
        for version in versions:
            there, here = source.get_version(subject, version), target.get_version(subject, version)
            assert (here.schema_id, here.schema.schema_str) == (there.schema_id, there.schema.schema_str), subject
            assert here.schema.references == there.schema.references, subject
    assert target.get_version(f"{topic}-value", 1).schema_id == order_id
    assert _json("GET", f"{target_registry.ccompat_url}/schemas/ids/{order_id}")[1]["references"] == [
        {"name": "shop.Address", "subject": f"{topic}-shop.Address", "version": 1}
    ]
    # Records written against the source decode with the target, by the ids in their headers.
    reader = _client(target_registry.ccompat_url)
    assert JSONDeserializer(None, schema_registry_client=reader, conf=TOPIC_NAMES)(json_data, people) == {"name": "ada"}
    assert AvroDeserializer(reader, conf=TOPIC_NAMES)(line_data, lines) == {"id": 1}

    # Only into an empty registry; the mode is not part of the export; new ids continue past the imported ones.
    again = _request("POST", f"{target_registry.url}/apis/registry/v3/admin/import", archive, "application/zip")
    assert again[0] == 409 and json.loads(again[1])["title"] == "Registry is not empty."
    assert _json("GET", f"{target_registry.ccompat_url}/mode") == (200, {"mode": "READWRITE"})
    highest = max(source.get_version(s, v).schema_id for s in subjects for v in source.get_versions(s))
    assert target.register_schema(f"new{unique}-value", Schema('"bytes"', "AVRO")) > highest


def test_make_clusters_registry_up_and_down(tmp_path: Path, registry_app: Path) -> None:
    """``python -m harness.registry up`` (make clusters REGISTRY=1) starts a source and target registry in the
    background with their settings beside the clusters'; ``down`` stops them and removes what up wrote."""
    state = tmp_path / "clusters"
    ports = [free_port(), free_port()]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "harness.registry", *args, "--dir", str(state)]
        return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=200, check=False)

    started = run("up", "--ports", f"{ports[0]},{ports[1]}")
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        for name, port in zip(("source", "target"), ports, strict=True):
            settings = json.loads((state / f"{name}-registry.json").read_text())
            assert settings == {"url": f"http://127.0.0.1:{port}{CCOMPAT_PATH}"}
            assert SchemaRegistryClient({**settings, "timeout": CLIENT_TIMEOUT}).get_subjects() == []
            assert settings["url"] in started.stdout
        assert "already run" in run("up", "--ports", f"{ports[0]},{ports[1]}").stdout
    finally:
        stopped = run("down")
    assert stopped.returncode == 0 and "Stopped the schema registries." in stopped.stdout
    assert not (state / "registry").exists() and not (state / "source-registry.json").exists()
    for port in ports:
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0, f"something still listens on {port}"
