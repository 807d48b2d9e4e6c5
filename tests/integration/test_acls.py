"""Least privilege on Apache Kafka clusters that enforce ACLs (StandardAuthorizer), natively over SASL_SSL/SCRAM.

The principal ``migrator`` gets, on each cluster, exactly the ACLs that docs/security.md lists as
needed: its "ACLs needed" tables are read here, so the page and the test cannot drift apart. The
super user ``admin`` only seeds the source and grants. The module's fixture then:

1. grants everything but Write on the target topics: the run creates the target topics and stops
   before copying (exit 2, naming Write): Kafka tells what a principal may do on a topic only once
   the topic exists;
2. grants Write too: a whole run (plan, create with configs, copy and verify in Spark, the ledger)
   and a group sync with proof succeed as ``migrator``;
3. writes more records, a new source topic and new group positions.

Each test then removes one listed ACL: the next run (or group sync) exits 2 before writing anything,
with one line naming the cluster, the operation, the resource and the kafka-acls command to add it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, ResourceType

from harness.data.group_clients import commit
from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from harness.kafka import KafkaCluster
from harness.kafka.acls import Acl, grant, revoke, revoke_all
from kafka_migration.kafka.acls import allows
from kafka_migration.kafka.clients import KafkaCluster as Cluster
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.kafka.permissions import cluster_operations
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterConfig

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
SECURITY_PAGE = Path(__file__).resolve().parents[2] / "docs" / "security.md"
PRINCIPAL = "User:migrator"


def needed_acls() -> list[tuple[str, str, str]]:
    """(cluster, resource kind, operation) for every ACL docs/security.md lists as needed."""
    text = SECURITY_PAGE.read_text()
    section = text[text.index("## ACLs needed") :]
    section = section[: section.index("\n## ", 3)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] not in ("source", "target"):
            continue
        kind = cells[1].split(":")[0].strip().lower()
        assert kind in ("topic", "group", "cluster"), f"docs/security.md: unknown resource {cells[1]!r}"
        for operation in (o.strip() for o in cells[2].split(",")):
            rows.append((cells[0], kind, operation))
    assert rows, "docs/security.md lists no ACLs"
    return rows


NEEDED = needed_acls()


@dataclass
class Setup:
    prefix: str
    source: KafkaCluster
    target: KafkaCluster
    directory: Path
    ledger: str
    acls: dict[tuple[str, str, str], list[Acl]]  # (cluster, kind, operation) -> the bindings on that cluster
    target_ends: dict[int, int]
    target_offsets: dict[tuple[str, int], int]
    runs: int

    @property
    def topics(self) -> list[str]:
        return [f"{self.prefix}.orders", f"{self.prefix}.later"]

    @property
    def group(self) -> str:
        return f"{self.prefix}-app"

    def cluster(self, role: str) -> KafkaCluster:
        return self.source if role == "source" else self.target

    def grant(self, *keys: tuple[str, str, str]) -> None:
        for role in ("source", "target"):
            grant(self.cluster(role).client_config(), [a for k in keys if k[0] == role for a in self.acls[k]])

    def revoke(self, *keys: tuple[str, str, str]) -> None:
        for role in ("source", "target"):
            revoke(self.cluster(role).client_config(), [a for k in keys if k[0] == role for a in self.acls[k]])

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
        configs = ["--source-config", str(self.directory / "source.json")]
        configs += ["--target-config", str(self.directory / "target.json")]
        return subprocess.run(
            [KAFKA_MIGRATE, *args, *configs, "--ledger", self.ledger],
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
            env=env,
        )

    def run(self) -> subprocess.CompletedProcess[str]:
        state = ["--state-dir", str(self.directory / "state"), "--master", "local[2]"]
        return self.cli("run", "--include", f"{re.escape(self.prefix)}\\..*", *state)

    def sync(self) -> subprocess.CompletedProcess[str]:
        return self.cli("groups", "sync", "--group", self.group)


def _acls(prefix: str) -> dict[tuple[str, str, str], list[Acl]]:
    names = {"topic": [f"{prefix}.orders", f"{prefix}.later"], "group": [f"{prefix}-app"], "cluster": ["cluster"]}
    return {(role, kind, op): [Acl(PRINCIPAL, op, kind, name) for name in names[kind]] for role, kind, op in NEEDED}


def _seed(settings: dict[str, object], topic: str, start: int, count: int) -> None:
    p = producer(str(settings["bootstrap.servers"]), {k: v for k, v in settings.items() if k != "bootstrap.servers"})
    for i in range(start, start + count):
        send(p, topic, i % 2, f"k{i}".encode(), f"v{i}".encode(), headers=[("n", str(i).encode())])
    p.flush(30)


def _ends(cluster: KafkaCluster, topic: str) -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(client_settings({**cluster.client_config(), "group.id": "acl-test-ends"}))
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=15)[1] for p in range(2)}
    finally:
        consumer.close()


def _group_offsets(cluster: KafkaCluster, group: str) -> dict[tuple[str, int], int]:
    found = GroupCluster(ClusterConfig("target", cluster.client_config())).committed(group)
    return {key: value.offset for key, value in found.items()}


def _topics(cluster: KafkaCluster) -> set[str]:
    return set(AdminClient(client_settings(cluster.client_config())).list_topics(timeout=15).topics)


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The refusal: exit 2 and one error line, the last one (a refusal after planning follows the plan's
    progress bars, still at 0)."""
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert errors == lines[-1:] and "Traceback" not in result.stderr, result.stderr
    return errors[0]


@pytest.fixture(scope="module")
def setup(acl_clusters: list[KafkaCluster], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    source, target = acl_clusters
    prefix = f"acl{uuid.uuid4().hex[:6]}"
    directory = tmp_path_factory.mktemp("acls")
    for cluster, name in ((source, "source"), (target, "target")):
        revoke_all(cluster.client_config(), PRINCIPAL)
        (directory / f"{name}.json").write_text(json.dumps(cluster.client_config("migrator")))
    ledger = f"sqlite:///{directory / 'ledger.db'}"
    s = Setup(prefix, source, target, directory, ledger, _acls(prefix), {}, {}, 0)
    orders = s.topics[0]
    admin = source.client_config()
    create_topic(source.bootstrap, orders, 2, {"retention.ms": "86400000"}, settings=admin)
    _seed(admin, orders, 0, 40)
    commit(source.bootstrap, s.group, {(orders, 0): 5, (orders, 1): 7}, admin)

    # 1. Without Write on the target topics: created (Create was granted), then refused before any copy.
    write = ("target", "topic", "Write")
    assert write in s.acls, "docs/security.md must list Write on the target topics"
    s.grant(*(k for k in s.acls if k != write))
    line = _one_line(s.run())
    assert f"The target cluster {target.bootstrap} does not allow {PRINCIPAL}: Write on topic {orders}" in line
    assert f"--operation Write --topic {orders}" in line and "were created, empty; nothing was copied" in line
    assert orders in _topics(target) and _ends(target, orders) == {0: 0, 1: 0}

    # 2. Exactly the listed ACLs: a whole run and a group sync.
    s.grant(write)
    done = s.run()
    assert done.returncode == 0 and "verified" in done.stdout, done.stdout + done.stderr
    for p in range(2):
        copied = read_partition(target.bootstrap, orders, p, settings=target.client_config())
        original = read_partition(source.bootstrap, orders, p, settings=admin)
        assert without_offsets(copied) == without_offsets(original) and len(original) == 20
    target_admin = AdminClient(client_settings(target.client_config()))
    (described,) = target_admin.describe_configs([ConfigResource(ResourceType.TOPIC, orders)]).values()
    entries = described.result(20)
    assert entries["retention.ms"].value == "86400000"  # the topic's config travelled
    # The migrator may not read the target brokers' configs (optional, not in the tables): so the created topic
    # has what the compatibility check compares and the timestamps the copy keeps set on it, not left to defaults.
    pinned = {n: e.value for n, e in entries.items() if int(e.source) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
    assert pinned == {
        "retention.ms": "86400000",
        "cleanup.policy": "delete",
        "max.message.bytes": "1048588",
        "message.timestamp.type": "CreateTime",
        "retention.bytes": "-1",  # what the topic keeps: the target brokers' default is not known, so set
    }
    synced = s.sync()
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert _group_offsets(target, s.group) == {(orders, 0): 5, (orders, 1): 7}

    # 3. More to do for the next run and sync: new records, a new source topic, new group positions.
    _seed(admin, orders, 40, 10)
    create_topic(source.bootstrap, s.topics[1], 2, settings=admin)
    _seed(admin, s.topics[1], 0, 6)
    commit(source.bootstrap, s.group, {(orders, 0): 9, (orders, 1): 11}, admin)
    s.target_ends = _ends(target, orders)
    s.target_offsets = _group_offsets(target, s.group)
    s.runs = len(Ledger.open(ledger).runs())
    yield s
    for cluster in (source, target):
        revoke_all(cluster.client_config(), PRINCIPAL)


@pytest.mark.parametrize("acl", NEEDED, ids=["-".join(k) for k in NEEDED])
def test_each_listed_acl_is_needed_and_its_absence_is_named_before_writing(
    setup: Setup, acl: tuple[str, str, str]
) -> None:
    role, kind, operation = acl
    names = [a.name for a in setup.acls[acl]]
    setup.revoke(acl)
    try:
        line = _one_line(setup.sync() if kind == "group" else setup.run())
    finally:
        setup.grant(acl)
    cluster = setup.cluster(role)
    if (role, kind, operation) == ("source", "topic", "Read"):
        # Without Read (which implies Describe) the source lists no such topic at all.
        assert "No topic on the source cluster" in line and f"{PRINCIPAL} sees only the topics it may Describe" in line
        assert "--operation Read --topic <topic>" in line
    elif (role, kind, operation) == ("source", "group", "Describe"):
        assert "No consumer group on the source cluster matches" in line
        assert "--operation Describe --group <group>" in line
    else:
        assert f"The {role} cluster {cluster.bootstrap} does not allow {PRINCIPAL}: {operation} on {kind}" in line
        if (role, kind) == ("target", "topic"):  # Create for the topic still to create, the rest where it exists
            names = [setup.topics[1] if operation == "Create" else setup.topics[0]]
        assert all(name in line for name in names), line
        assert f"--allow-principal {PRINCIPAL} --operation {operation}" in line and "Nothing was written." in line
    # Nothing was written: no record, no new topic, no group offset, no run in the ledger.
    assert _ends(setup.target, setup.topics[0]) == setup.target_ends
    assert setup.topics[1] not in _topics(setup.target)
    assert _group_offsets(setup.target, setup.group) == setup.target_offsets
    assert len(Ledger.open(setup.ledger).runs()) == setup.runs


def test_create_is_checked_per_topic_unless_the_principal_may_create_on_the_cluster(setup: Setup) -> None:
    """A run skips its validate_only CreateTopics (one per 500 topics) where Create on the Cluster allows every
    topic: the super user may, the migrator (Create on its topics only) may not, so its runs still ask."""
    target = setup.target
    admin = Cluster(ClusterConfig("target", target.client_config()))
    migrator = Cluster(ClusterConfig("target", target.client_config("migrator")))
    admin_ops, migrator_ops = cluster_operations(admin), cluster_operations(migrator)
    assert admin_ops is not None and allows(admin_ops, "Create")
    # Nothing granted on the Cluster: librdkafka gives an empty list of operations as none (None): asked per topic.
    assert migrator_ops is None or not allows(migrator_ops, "Create")
