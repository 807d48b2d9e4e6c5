"""access/: ACL bindings read from one Apache Kafka cluster that enforces ACLs, carried to another (rename,
principal mapping), written idempotently, and proven by the authorizer's decisions computed on both clusters.

Each test's principals and resource names are its own (``unique``), and it deletes what it created, so the
session's ACL-enforcing pair stays as tests/integration/test_acls.py expects it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from harness.kafka import ClusterSpec, KafkaCluster, SaslSsl
from kafka_migration.access.acls.rules import Authorizer, carrier, decision_differences, plan_bindings, selection
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.ledger import Ledger
from kafka_migration.model.access import (
    CLUSTER_NAME,
    AccessAction,
    AclBinding,
    Password,
    PatternType,
    PermissionType,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.config import ClusterConfig

pytestmark = pytest.mark.integration

SUPER_USERS = {"User:admin", "User:ANONYMOUS"}  # harness/kafka/security.py: super.users of the pair


def _admin(cluster: KafkaCluster, role: str) -> AccessCluster:
    return AccessCluster(ClusterConfig(role, cluster.client_config()))


def _mine(cluster: AccessCluster, marker: str) -> list[AclBinding]:
    """The cluster's bindings of this test (its principals carry the marker)."""
    read = cluster.bindings()
    assert read.unreadable == 0
    return [b for b in read.bindings if marker in b.principal]


@pytest.fixture
def pair(acl_clusters: list[KafkaCluster], unique: str) -> Iterator[tuple[AccessCluster, AccessCluster, str]]:
    source, target = _admin(acl_clusters[0], "source"), _admin(acl_clusters[1], "target")
    yield source, target, unique
    for cluster in (source, target):
        cluster.delete(_mine(cluster, unique))


def test_every_supported_kind_moves_renamed_and_mapped_and_both_clusters_decide_alike(pair) -> None:  # type: ignore[no-untyped-def]
    source, target, unique = pair
    app, reader = f"User:app-{unique}", f"User:reader-{unique}"
    bindings = [
        AclBinding(
            ResourceType.TOPIC, f"orders-{unique}", PatternType.LITERAL, app, "*", "WRITE", PermissionType.ALLOW
        ),
        AclBinding(
            ResourceType.TOPIC, f"pay-{unique}.", PatternType.PREFIXED, reader, "*", "READ", PermissionType.ALLOW
        ),
        AclBinding(
            ResourceType.TOPIC, f"pay-{unique}.secret", PatternType.LITERAL, reader, "*", "READ", PermissionType.DENY
        ),
        AclBinding(
            ResourceType.GROUP,
            f"billing-{unique}",
            PatternType.LITERAL,
            reader,
            "10.1.2.3",
            "READ",
            PermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.TRANSACTIONAL_ID,
            f"tx-{unique}-",
            PatternType.PREFIXED,
            app,
            "*",
            "WRITE",
            PermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, app, "*", "IDEMPOTENT_WRITE", PermissionType.ALLOW
        ),
        AclBinding(ResourceType.TOPIC, "*", PatternType.LITERAL, reader, "*", "DESCRIBE", PermissionType.ALLOW),
    ]
    source.create(bindings)
    read = _mine(source, unique)
    assert sorted(read) == sorted(bindings)  # every field read back as written

    rename, principals = "dc1.{topic}", {reader: f"User:reader2-{unique}"}
    plan = plan_bindings(read, _mine(target, unique), rename, principals)
    assert len(plan.add) == len(bindings) and plan.refused == () and plan.present == ()
    target.create(plan.add)
    again = plan_bindings(read, _mine(target, unique), rename, principals)
    assert again.add == () and len(again.present) == len(bindings)  # a second sync changes nothing
    target.create(plan.add)  # nor does writing them twice
    assert len(_mine(target, unique)) == len(bindings)

    decide = {side: Authorizer(_mine(side, unique), SUPER_USERS) for side in (source, target)}
    actions = selection(read)
    assert decision_differences(decide[source], decide[target], actions, carrier(rename, principals)) == []

    planted = AclBinding(
        ResourceType.TOPIC, f"dc1.orders-{unique}", PatternType.LITERAL, app, "*", "WRITE", PermissionType.DENY
    )
    target.create([planted])
    found = decision_differences(
        decide[source], Authorizer(_mine(target, unique), SUPER_USERS), actions, carrier(rename, principals)
    )
    assert {(d.source_action.operation, d.target.by) for d in found} == {("WRITE", planted)}


def test_only_what_the_tool_created_is_removed(pair, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """--remove-stale deletes a binding only when the ledger says a sync added it. Beside the tool's stale binding,
    two of someone else's, each differing from it in one respect: the same binding from another host, made on
    the target after the sync; and one that was on the target before the first sync (which found it present),
    that the source dropped too (it differs in the operation only, so that both can be held at once)."""
    source, target, unique = pair
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    ids = (source.describe().cluster_id, target.describe().cluster_id)
    kept = AclBinding(
        ResourceType.TOPIC, f"kept-{unique}", PatternType.LITERAL, f"User:a-{unique}", "*", "READ", PermissionType.ALLOW
    )
    stale = AclBinding(
        ResourceType.TOPIC, f"gone-{unique}", PatternType.LITERAL, f"User:a-{unique}", "*", "READ", PermissionType.ALLOW
    )
    other_host = replace(stale, host="192.0.2.10")
    found_present = replace(stale, operation="WRITE")
    source.create([kept, stale, found_present])
    target.create([found_present])  # made on the target by someone else, before any sync

    first = plan_bindings(_mine(source, unique), _mine(target, unique))
    assert (set(first.add), first.present) == ({kept, stale}, (found_present,))
    target.create(first.add)
    rows = [
        *((b, AccessAction.ADDED, None) for b in first.add),
        *((b, AccessAction.PRESENT, None) for b in first.present),
    ]  # as sync.py
    ledger.record_access_sync("first", None, *ids, rows)
    target.create([other_host])  # made on the target by someone else, after the sync
    source.delete([stale, found_present])

    created = ledger.access_bindings_created(*ids)  # what a sync reads as its own
    plan = plan_bindings(_mine(source, unique), _mine(target, unique), created_before=created, remove_stale=True)
    assert plan.remove == (stale,) and plan.add == ()
    assert target.delete(plan.remove) == 1
    assert set(_mine(target, unique)) == {kept, other_host, found_present}


def test_token_and_user_bindings_are_read_written_and_decided_alike(pair) -> None:  # type: ignore[no-untyped-def]
    """Bindings confluent-kafka cannot name (DELEGATION_TOKEN and USER resources, the token operations) are read,
    created and deleted through kafka-python, mapped, and both clusters decide their actions alike."""
    source, target, unique = pair
    ops, bob = f"User:ops-{unique}", f"User:bob-{unique}"
    bindings = [
        AclBinding(ResourceType.USER, bob, PatternType.LITERAL, ops, "*", "CREATE_TOKENS", PermissionType.ALLOW),
        AclBinding(
            ResourceType.USER,
            f"User:team-{unique}-",
            PatternType.PREFIXED,
            ops,
            "*",
            "DESCRIBE_TOKENS",
            PermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.USER,
            f"User:team-{unique}-x",
            PatternType.LITERAL,
            ops,
            "10.1.2.3",
            "DESCRIBE_TOKENS",
            PermissionType.DENY,
        ),
        AclBinding(
            ResourceType.DELEGATION_TOKEN,
            f"token-{unique}",
            PatternType.LITERAL,
            bob,
            "*",
            "DESCRIBE",
            PermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL, ops, "*", "CREATE_TOKENS", PermissionType.ALLOW
        ),
        AclBinding(
            ResourceType.TOPIC, f"orders-{unique}", PatternType.LITERAL, ops, "*", "READ", PermissionType.ALLOW
        ),  # beside them, through confluent
    ]
    source.create(bindings)
    read = _mine(source, unique)  # asserts that nothing is left unreadable
    assert sorted(read) == sorted(bindings)

    principals = {ops: f"User:ops2-{unique}", bob: f"User:bob2-{unique}"}
    plan = plan_bindings(read, _mine(target, unique), principals=principals)
    assert len(plan.add) == len(bindings) and plan.refused == ()
    assert (
        AclBinding(
            ResourceType.USER,
            f"User:bob2-{unique}",
            PatternType.LITERAL,
            f"User:ops2-{unique}",
            "*",
            "CREATE_TOKENS",
            PermissionType.ALLOW,
        )
        in plan.add
    )
    target.create(plan.add)
    assert sorted(_mine(target, unique)) == sorted(plan.add)
    assert plan_bindings(read, _mine(target, unique), principals=principals).add == ()

    decide = {side: Authorizer(_mine(side, unique), SUPER_USERS) for side in (source, target)}
    actions = selection(read)
    assert {a.resource_type for a in actions} >= {
        ResourceType.USER,
        ResourceType.DELEGATION_TOKEN,
        ResourceType.CLUSTER,
    }
    assert decision_differences(decide[source], decide[target], actions, carrier(principals=principals)) == []

    planted = AclBinding(
        ResourceType.USER,
        f"User:bob2-{unique}",
        PatternType.LITERAL,
        f"User:ops2-{unique}",
        "*",
        "CREATE_TOKENS",
        PermissionType.DENY,
    )
    target.create([planted])
    found = decision_differences(
        decide[source], Authorizer(_mine(target, unique), SUPER_USERS), actions, carrier(principals=principals)
    )
    assert {(d.source_action.operation, d.target.by) for d in found} == {("CREATE_TOKENS", planted)}
    assert target.delete([planted]) == 1  # an exact delete, through kafka-python
    assert planted not in _mine(target, unique)


# -- kafka-migrate access, as a user runs it ----------------------------------------------------------------------


def _cli(*args: str, state_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_migration.cli", "access", *args, "--state-dir", str(state_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_cli_plans_syncs_proves_and_refuses(kafka_factory, test_pki, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A pair of its own (an access sync copies every binding of the source, which the session's pair must
    not get): dry run, sync, a second sync that changes nothing, show, a conflict (exit 1), a refusal (exit 2)."""
    security = SaslSsl(test_pki, acls=True)
    specs = (ClusterSpec("access-src", security), ClusterSpec("access-dst", security))
    source_cluster, target_cluster = kafka_factory(*specs)
    configs = {}
    for name, cluster in (("src", source_cluster), ("dst", target_cluster)):
        configs[name] = tmp_path / f"{name}.json"
        configs[name].write_text(json.dumps(cluster.client_config()))
    (tmp_path / "principals.json").write_text(json.dumps({"User:reader": "User:reader-dc2"}))
    source = _admin(source_cluster, "source")
    carol, dave = ScramCredential("carol", "SCRAM-SHA-512", 4096), ScramCredential("dave", "SCRAM-SHA-512", 8192)
    passwords = {"carol": Password("carol", "carol-s3cret"), "dave": Password("dave", "dave-s3cret")}
    source.upsert_scram([carol, dave], passwords)  # users of the source's own (the operator knows their passwords)
    (tmp_path / "passwords.json").write_text(json.dumps({"carol": "carol-s3cret", "dave": "dave-s3cret"}))
    source.create(
        [
            AclBinding(
                ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW
            ),
            AclBinding(
                ResourceType.TOPIC, "pay.", PatternType.PREFIXED, "User:reader", "*", "READ", PermissionType.ALLOW
            ),
            AclBinding(
                ResourceType.GROUP, "billing", PatternType.LITERAL, "User:reader", "*", "READ", PermissionType.ALLOW
            ),
        ]
    )
    clusters = ["--source-config", str(configs["src"]), "--target-config", str(configs["dst"])]
    common = [*clusters, "--rename", "dc1.{topic}", "--principal-map", str(tmp_path / "principals.json")]
    common += ["--super-user", "User:admin", "--super-user", "User:ANONYMOUS"]
    common += ["--credentials", str(tmp_path / "passwords.json")]

    planned = _cli("sync", *common, "--dry-run", state_dir=tmp_path)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "would add 3 bindings" in planned.stdout
    assert "+ ALLOW User:reader-dc2 READ on TOPIC dc1.pay. (prefixed)" in planned.stdout
    assert _mine(_admin(target_cluster, "target"), "User:") == []  # a dry run writes no binding

    synced = _cli("sync", *common, "--output", "json", state_dir=tmp_path)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    doc = json.loads(synced.stdout)
    assert doc["verdict"] == "proven" and doc["totals"]["add"] == 3 and doc["totals"]["differences"] == 0
    assert doc["totals"]["users_add"] == 2 and doc["logins"] == {  # each user logged in to the target
        "carol": {"outcome": "proven", "reason": None},
        "dave": {"outcome": "proven", "reason": None},
    }
    assert set(_admin(target_cluster, "target").scram_credentials()) >= {carol, dave}
    assert "s3cret" not in synced.stdout + synced.stderr
    report = json.loads(Path(doc["report"]).with_name("report.json").read_text())  # the sync's own sign-off
    assert report["verdict"] == "PROVEN" and report["security"]["decision_check"]["differences"] == []
    assert {u["user"] for u in report["security"]["users"]} >= {"carol", "dave"}
    assert "s3cret" not in "".join(p.read_text() for p in Path(doc["report"]).parent.iterdir())
    assert b"s3cret" not in (tmp_path / "ledger.db").read_bytes()  # the ledger keeps users, never passwords
    again = _cli("sync", *common, state_dir=tmp_path)
    assert again.returncode == 0 and "added 0 bindings, 3 already present" in again.stdout, again.stdout
    shown = _cli("show", doc["sync_id"], state_dir=tmp_path)
    assert shown.returncode == 0 and shown.stdout.count("added        ALLOW ") == 3, shown.stdout
    assert "added        SCRAM SCRAM-SHA-512 user carol, login proven" in shown.stdout
    digest = "sha256:" + hashlib.sha256(Path(doc["report"]).with_name("report.json").read_bytes()).hexdigest()
    assert shown.stdout.rstrip().endswith(f"0 differently; report.json {digest}"), shown.stdout

    planted = AclBinding(
        ResourceType.TOPIC, "dc1.orders", PatternType.LITERAL, "User:intern", "*", "WRITE", PermissionType.DENY
    )
    _admin(target_cluster, "target").create([planted])
    conflict = _cli("sync", *common, state_dir=tmp_path)
    assert conflict.returncode == 1, conflict.stdout + conflict.stderr
    assert f"conflict: {planted.describe()} is on the target only" in conflict.stdout

    erin = ScramCredential("erin", "SCRAM-SHA-512", 4096)
    source.upsert_scram([erin], {"erin": Password("erin", "erin-s3cret")})
    no_password = _cli("sync", *common, state_dir=tmp_path)
    assert no_password.returncode == 1 and "needs a password: erin" in no_password.stdout, no_password.stdout
    # The verdict names each reason and its fix: the password comes with --credentials (issue 50).
    assert (
        "NOT proven: 1 SCRAM user without a password on the target: give the passwords with --credentials FILE"
        in no_password.stdout
    ), no_password.stdout
    assert erin not in _admin(target_cluster, "target").scram_credentials()  # never created without one
    (tmp_path / "typo.json").write_text(json.dumps({"frank": "x"}))
    typo = _cli("sync", *clusters, "--credentials", str(tmp_path / "typo.json"), state_dir=tmp_path)
    assert typo.returncode == 2 and "has no SCRAM credential for: frank" in typo.stderr, typo.stderr

    before = _mine(_admin(target_cluster, "target"), "User:")
    refused = _cli("sync", *clusters, "--rename", "{topic}.copy", state_dir=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "ALLOW User:reader READ on TOPIC pay. (prefixed): rename '{topic}.copy' adds '.copy'" in refused.stderr
    assert _mine(_admin(target_cluster, "target"), "User:") == before  # nothing written
