"""``python -m harness.data.app``: the tutorial's stand-in for your applications, on a cluster of ``make clusters``.

    python -m harness.data.app produce --bootstrap 127.0.0.1:19092 --topic orders --records 200
    python -m harness.data.app consume --bootstrap 127.0.0.1:19092 --topic orders --group billing --records 150
    python -m harness.data.app produce ... --registry .clusters/source-registry.json   # Avro values, registered
    python -m harness.data.app consume ... --registry .clusters/target-registry.json   # each value decoded

``produce`` writes records with keys, headers and timestamps (a producer of the topic's); ``consume`` reads that
many records as a member of the group, commits its position and leaves the group cleanly, as an application
that stops for the cutover does. With ``--registry`` (a registry of ``make clusters REGISTRY=1``: its settings
file) the values are Avro, serialized through that registry as confluent-kafka's serializer does (the topic's
schema registered under ``<topic>-value``, each value starting with the registry's id of it), and ``consume``
decodes every value through the registry it is given, failing on the first it cannot.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.data.group_clients import group_consumer
from harness.data.seed import create_topic, producer, send

CONSUME_TIMEOUT = 60.0  # seconds
NEW_TOPIC_PARTITIONS = 3
# Apicurio's Confluent-compatible API has no /associations, which confluent-kafka's serializers ask first by default
# (tests/harness/test_registry.py): the subject is named by the topic, <topic>-value.
TOPIC_NAMES = {"subject.name.strategy.type": "TOPIC"}


def avro_schema(topic: str) -> str:
    """The topic's value schema: a record named after the topic, so that two topics register two schemas."""
    name = re.sub(r"\W", "_", topic).capitalize()
    fields = [
        {"name": "id", "type": "long"},
        {"name": "amount_cents", "type": "long"},
        {"name": "note", "type": "string"},
    ]
    return json.dumps({"type": "record", "name": name, "namespace": "tutorial", "fields": fields})


def _registry(settings_file: Path) -> Any:
    from confluent_kafka.schema_registry import SchemaRegistryClient

    return SchemaRegistryClient({**json.loads(settings_file.read_text()), "timeout": 20.0})


def _serializer(topic: str, registry: Path | None) -> Callable[[int], bytes]:
    """What writes record ``i``'s value: plain text, or an Avro record through the registry."""
    if registry is None:
        return lambda i: f"record {i} of the tutorial".encode()
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    serialize = AvroSerializer(_registry(registry), avro_schema(topic), conf=TOPIC_NAMES)
    context = SerializationContext(topic, MessageField.VALUE)
    return lambda i: serialize({"id": i, "amount_cents": 100 * i + 1, "note": f"record {i} of the tutorial"}, context)


def _ensure_topic(bootstrap: str, topic: str) -> None:
    """Create the topic when the cluster lacks it, as a broker that creates topics on first use would (the practice
    clusters do not)."""
    from confluent_kafka.admin import AdminClient

    if topic not in AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics:
        create_topic(bootstrap, topic, NEW_TOPIC_PARTITIONS)
        print(f"created topic {topic} ({NEW_TOPIC_PARTITIONS} partitions) on {bootstrap}")


def produce(bootstrap: str, topic: str, records: int, registry: Path | None = None) -> int:
    _ensure_topic(bootstrap, topic)
    p = producer(bootstrap)
    value_of = _serializer(topic, registry)
    now = int(time.time() * 1000)
    for i in range(records):
        send(
            p,
            topic,
            -1,  # the partitioner picks, by key
            f"key-{i % 97}".encode(),
            value_of(i),
            timestamp=now + i,
            headers=[("source", b"tutorial")],
        )
    if p.flush(30):
        print(f"error: records to {topic} on {bootstrap} were not delivered within 30 s")
        return 1
    through = f", Avro values through the registry of {registry}" if registry is not None else ""
    print(f"produced {records} records to {topic} on {bootstrap}{through}")
    return 0


def _decoder(topic: str, registry: Path | None) -> Callable[[bytes | None], object] | None:
    if registry is None:
        return None
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    deserialize = AvroDeserializer(_registry(registry), conf=TOPIC_NAMES)
    context = SerializationContext(topic, MessageField.VALUE)
    return lambda value: deserialize(value, context)


def consume(bootstrap: str, topic: str, group: str, records: int, registry: Path | None = None) -> int:
    consumer = group_consumer(bootstrap, group)
    decode = _decoder(topic, registry)
    read = 0
    deadline = time.monotonic() + CONSUME_TIMEOUT
    try:
        consumer.subscribe([topic])
        while read < records and time.monotonic() < deadline:
            for message in consumer.consume(min(500, records - read), 0.5):
                if message.error() is None:
                    if decode is not None:
                        decode(message.value())  # raises on a value the registry cannot decode
                    read += 1
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()  # leaves the group at once: no member lingers until its session timeout
    decoded = f", every value decoded through the registry of {registry}" if registry is not None else ""
    print(f"group {group} read {read} records of {topic}{decoded} and committed its position")
    return 0 if read >= records else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.data.app", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("produce", "consume"):
        command = commands.add_parser(name)
        command.add_argument("--bootstrap", required=True, help="HOST:PORT of the cluster")
        command.add_argument("--topic", required=True)
        command.add_argument("--records", type=int, required=True)
        command.add_argument(
            "--registry",
            type=Path,
            help="a schema registry's settings file (make clusters REGISTRY=1 writes .clusters/source-registry.json "
            "and target-registry.json): Avro values through it",
        )
        if name == "consume":
            command.add_argument("--group", required=True)
    args = parser.parse_args(argv)
    if args.command == "produce":
        return produce(args.bootstrap, args.topic, args.records, args.registry)
    return consume(args.bootstrap, args.topic, args.group, args.records, args.registry)


if __name__ == "__main__":
    sys.exit(main())
