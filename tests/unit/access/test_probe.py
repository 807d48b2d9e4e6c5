"""access/probe.py: which probes a user's bindings call for, how a broker's answer reads as an outcome, what
makes a probe report unproven, and its rows in the ledger (both backends). The probes against real brokers are
in tests/integration/test_access_probe.py."""

from __future__ import annotations

from kafka_migration.access.permissions import lacking, needed
from kafka_migration.access.probe import (
    COMMIT,
    CONSUME,
    DESCRIBE,
    PRODUCE,
    TRANSACTION,
    Probe,
    ProbeOutcome,
    ProbeReport,
    ledger_rows,
    outcome_from_row,
    plan_probes,
    render_probes,
    target_user,
    verdict,
)
from kafka_migration.kafka.sessions import ALLOWED
from kafka_migration.ledger import Ledger
from kafka_migration.model.access import AclBinding, PatternType, PermissionType, ResourceType


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
        Probe("alice", DESCRIBE, "gone"),
        Probe("alice", DESCRIBE, "orders"),
        Probe("alice", PRODUCE, "orders"),
        Probe("alice", CONSUME, "orders"),
        Probe("alice", DESCRIBE, "pay.eu"),
        Probe("alice", PRODUCE, "pay.eu"),
        Probe("alice", CONSUME, "pay.eu"),
        Probe("alice", COMMIT, "billing", "orders"),
        Probe("alice", TRANSACTION, "tx-km-probe"),
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
    assert probes == [Probe("alice", DESCRIBE, "new.km-probe"), Probe("alice", COMMIT, "app-km-probe", "new.km-probe")]


def test_a_report_is_proven_only_when_both_clusters_answered_every_probe_alike() -> None:
    probe = Probe("alice", PRODUCE, "orders")
    same = ProbeOutcome(probe, "alice", "dc1.orders", ALLOWED, ALLOWED)
    planted = ProbeOutcome(probe, "alice", "dc1.orders", ALLOWED, "denied (TOPIC_AUTHORIZATION_FAILED)")
    silent = ProbeOutcome(probe, "alice", "dc1.orders", "inconclusive: x", "inconclusive: x")
    assert ProbeReport((same,)).proven and verdict(ProbeReport((same,))) is None
    assert not ProbeReport((same, planted)).proven and not ProbeReport((silent,)).proven  # no answer proves nothing
    line = verdict(ProbeReport((same, planted)))
    assert line is not None and "alice: produce to topic orders (dc1.orders on the target): source allowed" in line
    rendered = "\n".join(render_probes(ProbeReport((same, planted))))
    assert "2 probes of 1 user, 1 answered alike" in rendered and "probe DIFFERENT: alice: produce" in rendered


def test_the_principal_map_names_the_user_the_target_is_asked_as() -> None:
    assert target_user("alice", {"User:alice": "User:alice-dc2"}) == "alice-dc2"
    assert target_user("alice", {"User:bob": "User:bob2"}) == "alice"
    assert target_user("alice", {"User:alice": "Group:ops"}) == "alice"  # not a SCRAM user: asked as itself


def test_probe_outcomes_are_recorded_with_the_sync_and_read_back(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    report = ProbeReport(
        (
            ProbeOutcome(Probe("alice", COMMIT, "billing", "orders"), "alice2", "billing", ALLOWED, ALLOWED),
            ProbeOutcome(Probe("alice", PRODUCE, "orders"), "alice2", "dc1.orders", ALLOWED, "denied (X)"),
        )
    )
    ledger.record_access_probes("access-1", ledger_rows(report))
    ledger.record_access_probes("access-1", ledger_rows(report))  # a sync recorded again replaces its rows
    assert [outcome_from_row(r) for r in ledger.access_probe_rows("access-1")] == list(report.outcomes)
    assert ledger.access_probe_rows("access-2") == []


def test_a_sync_needs_to_read_the_source_and_to_write_the_target_unless_a_dry_run() -> None:
    assert [p.operation for p in needed("source", dry_run=False)] == ["Describe", "DescribeConfigs"]
    assert [p.operation for p in needed("target", dry_run=True)] == ["Describe", "DescribeConfigs"]
    target = needed("target", dry_run=False)
    assert [p.operation for p in target] == ["Describe", "DescribeConfigs", "Alter", "AlterConfigs"]
    assert [p.operation for p in lacking(frozenset({"Alter", "AlterConfigs"}), target)] == []  # implied
    assert [p.operation for p in lacking(frozenset({"Describe"}), target)] == [
        "DescribeConfigs",
        "Alter",
        "AlterConfigs",
    ]
    assert lacking(frozenset({"All"}), target) == [] and lacking(None, target) == []
