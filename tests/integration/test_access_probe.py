"""access/probes/, access/permissions.py and kafka/sessions.py on ACL-enforcing Apache Kafka (SASL_SSL/SCRAM,
StandardAuthorizer).

A migrated user logs in to both clusters after a sync and tries what its bindings allow and deny; both answer
alike, the probes leave no record and no committed offset behind, and a difference planted on the target (a
DENY, a missing WRITE) is found and named. A principal without the permissions a sync needs is refused before
anything is read or written, naming the cluster and the permission.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from harness.data.seed import create_topic
from harness.kafka import ClusterSpec, KafkaCluster, SaslSsl
from harness.kafka.acls import Acl, grant, revoke
from kafka_migration.access.probes.live import ProbeSetup, probe_users
from kafka_migration.access.sync import AccessSyncOptions, sync_access
from kafka_migration.exceptions import AuthorizationError
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.kafka.sessions import ALLOWED
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger
from kafka_migration.model.access import (
    AclBinding,
    Password,
    PatternType,
    PermissionType,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.probes import ProbeKind

pytestmark = pytest.mark.integration

SUPER_USERS = {"User:admin", "User:ANONYMOUS"}
RENAME = "dc1.{topic}"
ALICE = ScramCredential("alice", "SCRAM-SHA-512", 4096)
SECRET = "alice-pr0be-s3cret"
DENIED = "denied (TOPIC_AUTHORIZATION_FAILED)"
BINDINGS = [
    AclBinding(
        ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.ALLOW
    ),  # produces orders, cannot read it
    AclBinding(
        ResourceType.TOPIC, "events", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW
    ),  # reads events, cannot write it
    AclBinding(ResourceType.GROUP, "billing", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW),
    AclBinding(
        ResourceType.TRANSACTIONAL_ID, "tx-", PatternType.PREFIXED, "User:alice", "*", "WRITE", PermissionType.ALLOW
    ),
]


def _config(cluster: KafkaCluster, role: str) -> ClusterConfig:
    return ClusterConfig(role, cluster.client_config())


def _ends(cluster: KafkaCluster, topics: list[str]) -> dict[str, tuple[int, int]]:
    admin = AccessCluster(_config(cluster, "x"))
    return {t: v for (t, _), v in admin.log_ends(topics).items()}


def _groups(cluster: KafkaCluster) -> set[str]:
    admin = AdminClient(client_settings(cluster.client_config()))
    return {g.group_id for g in admin.list_consumer_groups(request_timeout=15).result(20).valid}


@pytest.fixture
def pair(kafka_factory, test_pki):  # type: ignore[no-untyped-def]
    """A pair of its own (a sync copies every binding of the source): user alice on the source, its bindings,
    and the topics on both clusters (on the target as a run would have created them, renamed)."""
    security = SaslSsl(test_pki, acls=True)
    source, target = kafka_factory(ClusterSpec("probe-src", security), ClusterSpec("probe-dst", security))
    for topic in ("orders", "events"):
        create_topic(source.bootstrap, topic, 1, settings=source.client_config())
        create_topic(target.bootstrap, RENAME.format(topic=topic), 1, settings=target.client_config())
    admin = AccessCluster(_config(source, "source"))
    admin.upsert_scram([ALICE], {"alice": Password("alice", SECRET)})
    admin.create(BINDINGS)
    return source, target


def test_a_synced_user_is_answered_alike_and_a_planted_difference_is_found(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source, target = pair
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    src, tgt = _config(source, "source"), _config(target, "target")
    passwords = {"alice": Password("alice", SECRET)}
    before = (_ends(source, ["orders", "events"]), _ends(target, ["dc1.orders", "dc1.events"]))

    options = AccessSyncOptions(rename=RENAME, super_users=SUPER_USERS, passwords=passwords)
    result = sync_access(src, tgt, ledger, "access-probe-1", options)
    outcomes = {(o.probe.kind, o.probe.resource): o for o in result.probes.outcomes}
    assert result.proven and result.probes.proven, [o.describe() for o in result.probes.outcomes]
    assert {k: (o.source, o.target) for k, o in outcomes.items()} == {
        ("describe", "events"): (ALLOWED, ALLOWED),
        ("produce", "events"): (DENIED, DENIED),  # READ only: the broker refuses the produce
        ("consume", "events"): (ALLOWED, ALLOWED),
        ("describe", "orders"): (ALLOWED, ALLOWED),  # WRITE implies DESCRIBE
        ("produce", "orders"): (ALLOWED, ALLOWED),
        ("consume", "orders"): (DENIED, DENIED),
        ("commit", "billing"): (ALLOWED, ALLOWED),
        ("transaction", "tx-km-probe"): (ALLOWED, ALLOWED),
    }
    assert outcomes["produce", "orders"].target_resource == "dc1.orders"
    # Nothing the migration copies or counts: no record appended, no offset committed, on either cluster.
    assert (_ends(source, ["orders", "events"]), _ends(target, ["dc1.orders", "dc1.events"])) == before
    assert "billing" not in _groups(source) | _groups(target)
    rows = ledger.access_probe_rows("access-probe-1")
    assert rows == list(result.probes.outcomes) and all(o.matched for o in rows)
    assert SECRET.encode() not in (tmp_path / "ledger.db").read_bytes()

    topics = (["orders", "events"], ["dc1.orders", "dc1.events"])
    target_admin = AccessCluster(tgt)
    planted = AclBinding(
        ResourceType.TOPIC, "dc1.events", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.DENY
    )
    target_admin.create([planted])  # a DENY on the target only
    missing = AclBinding(
        ResourceType.TOPIC, "dc1.orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.ALLOW
    )
    assert target_admin.delete([missing]) == 1  # a WRITE the target lost
    report = probe_users(src, tgt, BINDINGS, topics, ProbeSetup(passwords, {"alice": ALICE.mechanism}, RENAME))
    found = {(o.probe.kind, o.probe.resource): (o.source, o.target) for o in report.mismatches}
    assert found == {
        (ProbeKind.PRODUCE, "orders"): (ALLOWED, DENIED),
        (ProbeKind.CONSUME, "events"): (ALLOWED, DENIED),
        ("describe", "orders"): (ALLOWED, DENIED),  # without WRITE nothing gives alice DESCRIBE on it
        ("commit", "billing"): (ALLOWED, DENIED),  # its offset is of topic events, which alice may not READ there
    }
    assert not report.proven

    again = sync_access(src, tgt, ledger, "access-probe-2", options)
    assert not again.proven and again.plan.conflicts == (planted,)  # the WRITE is re-added, the DENY stays
    assert {(o.probe.kind, o.probe.resource) for o in again.probes.mismatches} == {
        (ProbeKind.CONSUME, "events"),
        ("commit", "billing"),
    }
    assert [o.matched for o in ledger.access_probe_rows("access-probe-2")].count(False) == 2


def _cli(*args: str, state_dir: Path, command: str = "sync") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_migration.cli", "access", command, *args, "--state-dir", str(state_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_cli_prints_and_records_the_probes(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source, target = pair
    files = {}
    for name, content in (
        ("src", source.client_config()),
        ("dst", target.client_config()),
        ("passwords", {"alice": SECRET}),
    ):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(content))
    common = ["--source-config", str(files["src"]), "--target-config", str(files["dst"]), "--rename", RENAME]
    common += ["--super-user", "User:admin", "--credentials", str(files["passwords"])]
    synced = _cli(*common, state_dir=tmp_path)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert "live probes: 8 probes of 1 user, 8 answered alike by both clusters" in synced.stdout
    assert SECRET not in synced.stdout + synced.stderr

    AccessCluster(_config(target, "target")).create(
        [
            AclBinding(
                ResourceType.TOPIC, "dc1.orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.DENY
            )
        ]
    )
    different = _cli(*common, state_dir=tmp_path)
    assert different.returncode == 1, different.stdout + different.stderr
    assert (
        "probe DIFFERENT: alice: produce to topic orders (dc1.orders on the target): source allowed, target "
        f"{DENIED} (DIFFERENT)" in different.stdout
    )
    (sync_id,) = re.findall(r"kafka-migrate access show (\S+)", different.stdout)
    shown = _cli(sync_id, state_dir=tmp_path, command="show")
    assert shown.returncode == 1, shown.stdout + shown.stderr  # as the sync: the conflict, the probe
    assert shown.stdout.count("  probe        alice: ") == 8, shown.stdout
    planted = "produce to topic orders (dc1.orders on the target): source allowed, target"
    assert f"probe        alice: {planted} {DENIED} (DIFFERENT)" in shown.stdout
    skipped = _cli(*common, "--probe-users", "0", state_dir=tmp_path)
    assert "live probes" not in skipped.stdout and skipped.returncode == 1  # the conflict is still named


def test_a_principal_without_the_permissions_a_sync_needs_is_refused_before_anything_is_read(
    acl_clusters: list[KafkaCluster], tmp_path: Path
) -> None:
    """The session pair's MIGRATOR: nothing is read or written before the refusal, so the pair stays as it is."""
    source, target = acl_clusters
    src = ClusterConfig("source", source.client_config("migrator"))
    tgt = ClusterConfig("target", target.client_config("migrator"))
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    with pytest.raises(AuthorizationError) as refused:
        sync_access(src, tgt, ledger, "access-refused")
    assert str(refused.value).startswith(f"The source cluster {source.bootstrap} does not allow User:migrator")
    assert "Describe on the cluster (to read its ACL bindings and SCRAM users)" in str(refused.value)
    assert "DescribeConfigs on the cluster (to read its client quotas)" in str(refused.value)
    assert "--operation Describe --operation DescribeConfigs --cluster" in str(refused.value)

    readable = [Acl("User:migrator", op, "cluster", "") for op in ("Describe", "DescribeConfigs")]
    grant(source.client_config(), readable)
    grant(target.client_config(), readable)
    try:
        with pytest.raises(AuthorizationError) as refused:
            sync_access(src, tgt, ledger, "access-refused")
        message = str(refused.value)
        assert message.startswith(f"The target cluster {target.bootstrap} does not allow User:migrator")
        assert "Alter on the cluster (to create and delete ACL bindings and SCRAM credentials)" in message
        assert "AlterConfigs on the cluster (to set client quotas)" in message and "Describe on" not in message
        assert ledger.access_sync_rows("access-refused") == []  # nothing recorded, nothing written

        config = tmp_path / "src.json", tmp_path / "dst.json"
        config[0].write_text(json.dumps(source.client_config("migrator")))
        config[1].write_text(json.dumps(target.client_config("migrator")))
        clusters = ["--source-config", str(config[0]), "--target-config", str(config[1])]
        cli = _cli(*clusters, state_dir=tmp_path)
        assert cli.returncode == 2 and "The target cluster" in cli.stderr, cli.stdout + cli.stderr
        assert "Alter on the cluster" in cli.stderr
        planned = _cli(*clusters, "--dry-run", state_dir=tmp_path)  # a dry run writes nothing: reading suffices
        assert planned.returncode in (0, 1) and "does not allow" not in planned.stderr, planned.stderr
    finally:
        revoke(source.client_config(), readable)
        revoke(target.client_config(), readable)
