"""The access control ``make clusters KIND=acl`` puts on its source, for practising ``kafka-migrate access sync``
(docs/access.md, "Practise on two local clusters").

Three applications' users, as a shared cluster holds them: ``alice`` produces ``orders`` (idempotently, with
transactions), ``bob`` consumes it in group ``billing``, ``carol`` reads every ``payments.`` topic but
``payments.cards``, in groups ``analytics-...``. Each is a SCRAM-SHA-512 user with ACL bindings (LITERAL and
PREFIXED, ALLOW and a DENY, on topics, groups, transactional ids and the cluster) and client quotas (per user, and
per user and client id). The topics they name are made on the source, with a few records each, for a run to
copy first (the probes of a sync produce to and consume from topics on both clusters).

Their passwords are drawn at random each time and written, readable by the owner only, to one JSON file of
users to passwords: the form ``access sync --credentials`` takes, and what an operator's secrets store holds.
They are sent to the broker through the admin API (only the keys derived from them reach it), never on a command
line, and never printed: a cluster cannot give a password back, so that file is the only copy.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.data.seed import create_topic, producer, send
from harness.kafka.security import write_private
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.kafka.quotas import QuotaCluster
from kafka_migration.model.access import (
    CLUSTER_NAME,
    AclBinding,
    Password,
    PatternType,
    PermissionType,
    Quota,
    QuotaEntity,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.config import ClusterConfig

MiB = 1024 * 1024
MECHANISM = "SCRAM-SHA-512"  # the only mechanism the harness's SASL listener enables (harness/kafka/security.py)
ITERATIONS = 4096
TOPICS = {"orders": (3, 300), "payments.cards": (1, 40), "payments.refunds": (1, 40)}  # partitions, records
USERS = ("alice", "bob", "carol")
BINDINGS = (
    AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.ALLOW),
    AclBinding(
        ResourceType.CLUSTER,
        CLUSTER_NAME,
        PatternType.LITERAL,
        "User:alice",
        "*",
        "IDEMPOTENT_WRITE",
        PermissionType.ALLOW,
    ),
    AclBinding(
        ResourceType.TRANSACTIONAL_ID,
        "orders-tx-",
        PatternType.PREFIXED,
        "User:alice",
        "*",
        "WRITE",
        PermissionType.ALLOW,
    ),
    AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", "*", "READ", PermissionType.ALLOW),
    AclBinding(ResourceType.GROUP, "billing", PatternType.LITERAL, "User:bob", "*", "READ", PermissionType.ALLOW),
    AclBinding(ResourceType.TOPIC, "payments.", PatternType.PREFIXED, "User:carol", "*", "READ", PermissionType.ALLOW),
    AclBinding(
        ResourceType.TOPIC, "payments.cards", PatternType.LITERAL, "User:carol", "*", "READ", PermissionType.DENY
    ),
    AclBinding(ResourceType.GROUP, "analytics-", PatternType.PREFIXED, "User:carol", "*", "READ", PermissionType.ALLOW),
)
QUOTAS = (
    Quota(QuotaEntity.of(user="alice"), "producer_byte_rate", 1.0 * MiB),
    Quota(QuotaEntity.of(user="bob"), "consumer_byte_rate", 2.0 * MiB),
    Quota(QuotaEntity.of(user="bob", client_id="billing"), "request_percentage", 50.0),
    Quota(QuotaEntity.of(user="carol"), "controller_mutation_rate", 10.0),
)
APPLIED_WITHIN = 30.0  # seconds; KRaft applies each change through the metadata log, a moment after it is accepted


@dataclass(frozen=True)
class Seeded:
    users: int
    bindings: int
    quotas: int
    topics: int
    records: int

    def describe(self) -> str:
        return (
            f"{self.users} SCRAM users, {self.bindings} ACL bindings and {self.quotas} client quotas "
            f"(and {self.topics} topics of {self.records} records)"
        )


def write_passwords(path: Path, users: tuple[str, ...] = USERS) -> dict[str, str]:
    """A new random password per user, written to ``path`` (created readable by its owner only, never widened)."""
    passwords = {user: secrets.token_urlsafe(18) for user in users}
    write_private(path, json.dumps(passwords, indent=2) + "\n")
    return passwords


def _until(what: str, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + APPLIED_WITHIN
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"the source did not show its {what} within {APPLIED_WITHIN:.0f} s")
        time.sleep(0.2)


def seed_access(settings: Mapping[str, Any], passwords_file: Path) -> Seeded:
    """Put the topics, users (their passwords new, in ``passwords_file``), bindings and quotas on the cluster that
    ``settings`` reach as its super user, and return once the cluster lists every one of them."""
    config = ClusterConfig("source", dict(settings))
    bootstrap = str(settings["bootstrap.servers"])
    records = producer(bootstrap, settings)
    for topic, (partitions, count) in TOPICS.items():
        create_topic(bootstrap, topic, partitions, settings=settings)
        for i in range(count):
            send(records, topic, -1, f"{topic}-key-{i % 17}".encode(), f"{topic} record {i}".encode())
    if records.flush(30):
        raise TimeoutError("the source did not acknowledge every record within 30 s")
    passwords = write_passwords(passwords_file)
    credentials = [ScramCredential(user, MECHANISM, ITERATIONS) for user in USERS]
    admin = AccessCluster(config)
    try:
        admin.upsert_scram(credentials, {user: Password(user, password) for user, password in passwords.items()})
        admin.create(list(BINDINGS))
        _until("SCRAM users", lambda: set(credentials) <= set(admin.scram_credentials()))
        _until("ACL bindings", lambda: set(BINDINGS) <= set(admin.bindings().bindings))
    finally:
        admin.close()
    with QuotaCluster(config) as quotas:
        quotas.alter(QUOTAS)
        _until("client quotas", lambda: set(QUOTAS) <= set(quotas.quotas()))
    return Seeded(len(USERS), len(BINDINGS), len(QUOTAS), len(TOPICS), sum(n for _, n in TOPICS.values()))
