"""access/ client quotas, on a pair of ACL-enforcing Apache Kafka clusters of the test's own (default quotas apply
to every client, the session's pairs must not get them): every entity type with the defaults and ip entities,
every quota key, carried with the principal map, set add-only, proven by describing both clusters again, and only
this tool's own quotas updated or removed. Kafka's own kafka-configs.sh seeds part of the source and reads the
target back, so the product's quota messages are checked against Kafka's tool, not only against themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.kafka import ClusterSpec, KafkaCluster, SaslSsl
from harness.kafka.tools import kafka_configs_sasl
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.kafka.quotas import QuotaCluster
from kafka_migration.model.access import AclBinding, PatternType, PermissionType, Quota, QuotaEntity, ResourceType
from kafka_migration.model.config import ClusterConfig

pytestmark = pytest.mark.integration

MiB = 1024 * 1024


def _configs_tool(cluster: KafkaCluster, tmp_path: Path, *args: str) -> str:
    """kafka-configs.sh against the cluster, as its super user."""
    return kafka_configs_sasl(cluster.client_config(), tmp_path, *args)


def _cli(*args: str, state_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_migration.cli", "access", *args, "--state-dir", str(state_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _quotas(cluster: KafkaCluster, role: str) -> set[Quota]:
    with QuotaCluster(ClusterConfig(role, cluster.client_config())) as quotas:
        return set(quotas.quotas())


def test_quotas_of_every_entity_type_move_mapped_and_only_the_tools_own_change(
    kafka_factory,  # type: ignore[no-untyped-def]
    test_pki,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    security = SaslSsl(test_pki, acls=True)
    source_cluster, target_cluster = kafka_factory(
        ClusterSpec("quota-src", security), ClusterSpec("quota-dst", security)
    )
    configs = {}
    for name, cluster in (("src", source_cluster), ("dst", target_cluster)):
        configs[name] = tmp_path / f"{name}.json"
        configs[name].write_text(json.dumps(cluster.client_config()))
    (tmp_path / "principals.json").write_text(json.dumps({"User:alice": "User:alice-dc2", "User:bob": "User:bob2"}))

    # The source, partly through Kafka's own tool (a user and client id pair, the default ip).
    _configs_tool(
        source_cluster, tmp_path, "--alter", "--entity-type", "users", "--entity-name", "alice", "--entity-type",
        "clients", "--entity-name", "app", "--add-config", f"producer_byte_rate={MiB},consumer_byte_rate={2 * MiB}",
    )  # fmt: skip
    _configs_tool(
        source_cluster, tmp_path, "--alter", "--entity-type", "ips", "--entity-default", "--add-config",
        "connection_creation_rate=1000",
    )  # fmt: skip
    alice, app = QuotaEntity.of(user="alice"), QuotaEntity.of(client_id="app")
    seeded = [
        Quota(alice, "request_percentage", 200.0),
        Quota(alice, "controller_mutation_rate", 12.5),
        Quota(QuotaEntity.of(user=None), "consumer_byte_rate", 100.0 * MiB),
        Quota(app, "controller_mutation_rate", 50.0),
        Quota(QuotaEntity.of(client_id=None), "producer_byte_rate", 100.0 * MiB),
        Quota(QuotaEntity.of(user="alice", client_id=None), "producer_byte_rate", 5.0 * MiB),
        Quota(QuotaEntity.of(user=None, client_id=None), "request_percentage", 400.0),
        Quota(QuotaEntity.of(ip="10.1.2.3"), "connection_creation_rate", 25.0),
        Quota(QuotaEntity.of(user="carl"), "request_percentage", 150.0),
    ]
    with QuotaCluster(ClusterConfig("source", source_cluster.client_config())) as source:
        source.alter(seeded)
    on_source = _quotas(source_cluster, "source")
    assert on_source >= set(seeded)
    assert Quota(QuotaEntity.of(user="alice", client_id="app"), "producer_byte_rate", float(MiB)) in on_source
    assert Quota(QuotaEntity.of(ip=None), "connection_creation_rate", 1000.0) in on_source
    assert len(on_source) == len(seeded) + 3  # nothing else: the harness's clusters start without quotas
    # A binding on a USER resource (ops may create tokens for bob): carried with the map, by kafka-python.
    token_binding = AclBinding(
        ResourceType.USER, "User:bob", PatternType.LITERAL, "User:ops", "*", "CREATE_TOKENS", PermissionType.ALLOW
    )
    AccessCluster(ClusterConfig("source", source_cluster.client_config())).create(
        [
            token_binding,
            AclBinding(
                ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW
            ),
        ]
    )

    clusters = ["--source-config", str(configs["src"]), "--target-config", str(configs["dst"])]
    common = [*clusters, "--principal-map", str(tmp_path / "principals.json"), "--super-user", "User:admin"]
    planned = _cli("sync", *common, "--dry-run", state_dir=tmp_path)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert f"Quotas: would set {len(on_source)} quotas, 0 already present" in planned.stdout, planned.stdout
    assert f"+ quota producer_byte_rate={MiB} for user alice-dc2, client-id app" in planned.stdout
    assert "+ quota connection_creation_rate=1000 for ip <default>" in planned.stdout
    assert _quotas(target_cluster, "target") == set()  # a dry run sets nothing

    synced = _cli("sync", *common, "--output", "json", state_dir=tmp_path)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    doc = json.loads(synced.stdout)
    assert doc["verdict"] == "proven" and doc["totals"]["unreadable_source"] == 0
    assert doc["quotas"]["totals"]["add"] == len(on_source) and doc["quotas"]["totals"]["differences"] == 0
    mapped = {"alice": "alice-dc2"}
    carried = {
        Quota(
            QuotaEntity(tuple((k, mapped.get(n, n) if k == "user" else n) for k, n in q.entity.parts)), q.key, q.value
        )
        for q in on_source
    }
    assert _quotas(target_cluster, "target") == carried
    described = _configs_tool(
        target_cluster, tmp_path, "--describe", "--entity-type", "users", "--entity-name", "alice-dc2",
        "--entity-type", "clients", "--entity-name", "app",
    )  # fmt: skip
    assert f"producer_byte_rate={float(MiB)}" in described and f"consumer_byte_rate={2.0 * MiB}" in described
    described = _configs_tool(target_cluster, tmp_path, "--describe", "--entity-type", "ips", "--entity-default")
    assert "connection_creation_rate=1000.0" in described, described
    target_bindings = AccessCluster(ClusterConfig("target", target_cluster.client_config())).bindings()
    assert (
        AclBinding(
            ResourceType.USER, "User:bob2", PatternType.LITERAL, "User:ops", "*", "CREATE_TOKENS", PermissionType.ALLOW
        )
        in target_bindings.bindings
    )

    again = _cli("sync", *common, state_dir=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"Quotas: set 0 quotas, {len(on_source)} already present, updated 0, removed 0" in again.stdout
    shown = _cli("show", doc["sync_id"], state_dir=tmp_path)
    assert shown.returncode == 0 and shown.stdout.count("added        quota ") == len(on_source), shown.stdout

    # The source changes: alice's share raised, app's mutation rate gone; someone sets a quota on the target.
    with QuotaCluster(ClusterConfig("source", source_cluster.client_config())) as source:
        source.alter([Quota(alice, "request_percentage", 300.0)], remove=[Quota(app, "controller_mutation_rate", 0)])
    _configs_tool(
        target_cluster, tmp_path, "--alter", "--entity-type", "clients", "--entity-name", "theirs", "--add-config",
        f"producer_byte_rate={MiB}",
    )  # fmt: skip
    theirs = Quota(QuotaEntity.of(client_id="theirs"), "producer_byte_rate", float(MiB))
    stale = Quota(app, "controller_mutation_rate", 50.0)
    kept = _cli("sync", *common, state_dir=tmp_path)
    assert kept.returncode == 1, kept.stdout + kept.stderr  # two quotas on the target only
    assert "Quotas: set 0 quotas" in kept.stdout and "updated 1, removed 0" in kept.stdout
    assert f"quota on the target only: {theirs.describe()}; left alone" in kept.stdout
    assert f"quota on the target only: {stale.describe()}; left alone" in kept.stdout
    assert Quota(QuotaEntity.of(user="alice-dc2"), "request_percentage", 300.0) in _quotas(target_cluster, "target")

    removed = _cli("sync", *common, "--remove-stale", state_dir=tmp_path)
    assert removed.returncode == 1 and "removed 1" in removed.stdout, removed.stdout + removed.stderr
    assert f"- quota {stale.describe()}" in removed.stdout
    after = _quotas(target_cluster, "target")
    assert stale not in after and theirs in after  # only the tool's own quota went
    assert "NOT the same quotas: 1 difference: producer_byte_rate for client-id theirs: source none" in removed.stdout

    # Bad input, refused before anything is written (exit 2).
    (tmp_path / "merge.json").write_text(json.dumps({"User:alice": "User:x", "User:carl": "User:x"}))
    merged = _cli("sync", *clusters, "--principal-map", str(tmp_path / "merge.json"), state_dir=tmp_path)
    assert merged.returncode == 2, merged.stdout + merged.stderr
    assert "onto one target user with other values: request_percentage for user x" in merged.stderr
    assert _quotas(target_cluster, "target") == after
