"""access/probes/rules.py: which probes a user's bindings call for, and who the target is asked as. The probes
against real brokers are in tests/integration/test_access_probe.py."""

from __future__ import annotations

from kafka_migration.access.probes.rules import plan_probes, target_user
from kafka_migration.model.access import AclBinding, PatternType, PermissionType, ResourceType
from kafka_migration.model.probes import Probe, ProbeKind


def _b(
    kind: str, name: str, principal: str = "User:alice", pattern: str = PatternType.LITERAL, op: str = "READ"
) -> AclBinding:
    return AclBinding(kind, name, pattern, principal, "*", op, PermissionType.ALLOW)


def test_a_users_probes_follow_its_bindings_and_touch_only_topics_on_both_clusters() -> None:
    bindings = [
        _b(ResourceType.TOPIC, "orders", op="WRITE"),
        _b(ResourceType.TOPIC, "gone"),  # on the source only: described, never produced to
        _b(ResourceType.TOPIC, "pay.", pattern=PatternType.PREFIXED),
        _b(ResourceType.GROUP, "billing"),
        _b(ResourceType.TRANSACTIONAL_ID, "tx-", pattern=PatternType.PREFIXED, op="WRITE"),
        _b(
            ResourceType.TRANSACTIONAL_ID, "live-producer", op="WRITE"
        ),  # a literal id: never initialized (it would fence)
        _b(ResourceType.TOPIC, "audit", principal="User:bob"),
        AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:*", "*", "DESCRIBE", PermissionType.DENY),
    ]
    source = {"orders", "gone", "pay.eu", "audit"}
    target = {"dc1.orders", "dc1.pay.eu", "dc1.audit"}
    probes = plan_probes(bindings, ["alice"], source, target, "dc1.{topic}")
    assert probes == [
        Probe("alice", ProbeKind.DESCRIBE, "gone"),
        Probe("alice", ProbeKind.DESCRIBE, "orders"),
        Probe("alice", ProbeKind.PRODUCE, "orders"),
        Probe("alice", ProbeKind.CONSUME, "orders"),
        Probe("alice", ProbeKind.DESCRIBE, "pay.eu"),
        Probe("alice", ProbeKind.PRODUCE, "pay.eu"),
        Probe("alice", ProbeKind.CONSUME, "pay.eu"),
        Probe("alice", ProbeKind.COMMIT, "billing", "orders"),
        Probe("alice", ProbeKind.TRANSACTION, "tx-km-probe"),
    ]
    assert [p.resource for p in plan_probes(bindings, ["bob"], source, target, "dc1.{topic}")] == [
        "audit",
        "audit",
        "audit",
        "orders",  # User:* bindings count for every user
        "orders",
        "orders",
    ]
    assert len(plan_probes(bindings, ["alice"], source, target, "dc1.{topic}", limit=3)) == 3
    assert {p.resource for p in plan_probes(bindings, ["carol"], source, target)} == {"orders"}  # User:* only
    assert plan_probes(bindings[:-1], ["carol"], source, target) == []  # no binding of hers: nothing to try


def test_a_prefix_with_no_topic_yet_and_a_group_prefix_get_names_no_application_uses() -> None:
    bindings = [
        _b(ResourceType.TOPIC, "new.", pattern=PatternType.PREFIXED),
        _b(ResourceType.GROUP, "app-", pattern=PatternType.PREFIXED),
    ]
    probes = plan_probes(bindings, ["alice"], set(), set())
    assert probes == [
        Probe("alice", ProbeKind.DESCRIBE, "new.km-probe"),
        Probe("alice", ProbeKind.COMMIT, "app-km-probe", "new.km-probe"),
    ]


def test_the_principal_map_names_the_user_the_target_is_asked_as() -> None:
    assert target_user("alice", {"User:alice": "User:alice-dc2"}) == "alice-dc2"
    assert target_user("alice", {"User:bob": "User:bob2"}) == "alice"
    assert target_user("alice", {"User:alice": "Group:ops"}) == "alice"  # not a SCRAM user: asked as itself
