"""Sample data sets for the demo, the tests and the benchmark (and the compose stack's kafka-seed service)."""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

OLD_TIMESTAMP = 946684800000  # 2000-01-01T00:00:00Z
# A topic that holds records from long ago keeps them only if it never deletes by time: Apache Kafka
# deletes records older than retention.ms (7 days by default) at its next retention check.
KEEP_FOREVER = {"retention.ms": "-1"}


def _quiet() -> dict[str, object]:
    from kafka_migration.kafka.settings import client_settings

    return client_settings({})


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int,
    config: Mapping[str, str] | None = None,
    settings: Mapping[str, object] | None = None,
) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap, **(settings or {}), **_quiet()})
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=dict(config or {}))], operation_timeout=10)
    futures[name].result(timeout=15)


class SeedProducer(Producer):
    """A producer whose ``flush`` raises when a broker refused a record: a seeding that lost records
    (a null key into a compacted topic, a record over the size limit) is a broken test, not data."""

    def __init__(self, config: Mapping[str, object]) -> None:
        super().__init__(dict(config))
        self.refused: list[str] = []

    def delivered(self, error: object, message: object) -> None:
        if error is not None:
            self.refused.append(f"{message.topic()}[{message.partition()}]: {error}")  # type: ignore[attr-defined]

    def flush(self, *args: object, **kwargs: object) -> int:
        left = super().flush(*args, **kwargs)
        if self.refused:
            first, count = self.refused[0], len(self.refused)
            self.refused.clear()
            raise KafkaException(f"{count} seeded record(s) were refused; the first: {first}")
        return left


def producer(bootstrap: str, settings: Mapping[str, object] | None = None, **extra: object) -> SeedProducer:
    return SeedProducer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 10,
            "enable.idempotence": True,
            **(settings or {}),
            **_quiet(),
            **extra,
        }
    )


def send(p: Producer, topic: str, partition: int, key: bytes | None, value: bytes | None, **kw: object) -> None:
    if isinstance(p, SeedProducer) and "on_delivery" not in kw and "callback" not in kw:
        kw["on_delivery"] = p.delivered
    while True:
        try:
            p.produce(topic, partition=partition, key=key, value=value, **kw)
            return
        except BufferError:
            p.poll(0.05)


@dataclass(frozen=True)
class SeededTopic:
    name: str
    partitions: int
    config: dict[str, str]


def sample_topics() -> list[SeededTopic]:
    return [
        SeededTopic("orders", 6, {"retention.ms": "604800000", "cleanup.policy": "delete"}),
        SeededTopic("customers", 3, {"cleanup.policy": "compact", "min.insync.replicas": "1"}),
        SeededTopic("events.headers", 2, KEEP_FOREVER),  # explicit timestamps from 2000
        SeededTopic("media.large", 1, {"max.message.bytes": "2097152"}),
        SeededTopic("audit.empty", 3, {}),
        SeededTopic("clicks.skewed", 4, {}),
        SeededTopic("payments.tx", 2, {}),
        SeededTopic("_schemas", 1, {"cleanup.policy": "compact"}),
        SeededTopic("scratch.tmp", 1, {}),
    ]


def seed_sample_dataset(
    bootstrap: str, scale: int = 1, rng_seed: int = 7, settings: Mapping[str, object] | None = None
) -> list[SeededTopic]:
    """Several topics covering what a migration must preserve; ``scale`` multiplies record counts.

    ``settings``: further librdkafka settings for every client (security for a real cluster).
    """
    rng = random.Random(rng_seed)
    topics = sample_topics()
    recent = int(time.time() * 1000) - 3_600_000  # an hour ago: inside the orders topic's 7-day retention
    for topic in topics:
        create_topic(bootstrap, topic.name, topic.partitions, topic.config, settings)
    p = producer(bootstrap, settings)

    for i in range(2000 * scale):  # keyed orders spread over partitions
        send(p, "orders", i % 6, f"order-{i}".encode(), rng.randbytes(rng.randint(20, 400)), timestamp=recent + i)

    # Empty keys, null and empty values (tombstones) stay distinct. A compacted topic takes no null key (Apache
    # Kafka refuses the batch): the null keys are in clicks.skewed.
    for i in range(300 * scale):
        key = [b"", f"cust-{i % 50}".encode()][i % 2]
        value = [None, b"", rng.randbytes(64)][(i // 3) % 3]
        send(p, "customers", i % 3, key, value)

    for i in range(200 * scale):  # repeated header keys, null header values, explicit old timestamps
        headers = [("trace", f"t{i}".encode()), ("trace", None), ("tenant", b""), ("trace", b"again")]
        send(
            p,
            "events.headers",
            i % 2,
            f"e{i}".encode(),
            b"payload",
            headers=headers,
            timestamp=OLD_TIMESTAMP + i * 1000,
        )

    for i in range(4):  # records near 1 MB
        send(p, "media.large", 0, f"blob-{i}".encode(), rng.randbytes(900_000 + i * 10_000))

    for i in range(1500 * scale):  # almost everything in partition 0
        partition = 0 if i % 50 else 1 + (i // 50) % 2
        send(p, "clicks.skewed", partition, None, f"click-{i}".encode())

    send(p, "_schemas", 0, b"schema-1", b'{"type": "string"}')
    send(p, "scratch.tmp", 0, b"tmp", b"not to be copied")
    p.flush(30)

    # committed transactions leave offset gaps
    tx = producer(bootstrap, settings, **{"transactional.id": "seed-payments"})
    tx.init_transactions(10)
    for t in range(5 * scale):
        tx.begin_transaction()
        for i in range(20):
            send(tx, "payments.tx", i % 2, f"pay-{t}-{i}".encode(), f"amount={i}".encode())
        tx.commit_transaction(10)
    return topics


SEED_CONFIG_ENV = "KAFKA_MIGRATION_SEED_CONFIG"


def main(argv: Sequence[str] | None = None) -> int:
    """Seed a running cluster (the docker-compose ``kafka-seed`` service).

    The librdkafka settings, ``bootstrap.servers`` and any secrets included, come as a JSON
    object in ``$KAFKA_MIGRATION_SEED_CONFIG``: never on the command line.
    """
    parser = argparse.ArgumentParser(prog="python -m harness.data.seed", description=main.__doc__)
    parser.add_argument("--scale", type=int, default=1, help="multiplies the record counts")
    parser.add_argument("--if-empty", action="store_true", help="do nothing when a sample topic already exists")
    args = parser.parse_args(argv)
    try:
        settings = json.loads(os.environ[SEED_CONFIG_ENV])
        bootstrap = settings.pop("bootstrap.servers")
    except (KeyError, ValueError, AttributeError, TypeError):
        print(
            f"harness.data.seed: set {SEED_CONFIG_ENV} to a JSON object of librdkafka settings with bootstrap.servers",
            file=sys.stderr,
        )
        return 2
    names = {t.name for t in sample_topics()}
    try:
        if args.if_empty:
            admin = AdminClient({"bootstrap.servers": bootstrap, **settings, **_quiet()})
            existing = sorted(names & set(admin.list_topics(timeout=30).topics))
            if existing:
                print(
                    f"harness.data.seed: {bootstrap} already has sample topics ({', '.join(existing)}); nothing seeded"
                )
                return 0
        topics = seed_sample_dataset(bootstrap, scale=args.scale, settings=settings)
    except KafkaException as exc:
        print(f"harness.data.seed: seeding {bootstrap} failed: {exc}", file=sys.stderr)
        return 1
    print(f"harness.data.seed: seeded {len(topics)} topics on {bootstrap}: {', '.join(t.name for t in topics)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
