"""The ledger's side of an access sync's ACL bindings on both backends: the bindings this tool created on a target,
the only ones a later ``--remove-stale`` sync may delete."""

from __future__ import annotations

from kafka_migration.ledger import Ledger
from kafka_migration.model.access import AccessAction, AclBinding, PatternType, PermissionType, ResourceType
from kafka_migration.model.probes import Probe, ProbeKind, ProbeOutcome

ADDED_BY_US = AclBinding(
    ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "READ", PermissionType.ALLOW
)
FOUND_THERE = AclBinding(
    ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW
)
THEIR_DENY = AclBinding(
    ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:intern", "*", "WRITE", PermissionType.DENY
)
DRY = AclBinding(ResourceType.TOPIC, "audit", PatternType.LITERAL, "User:app", "*", "READ", PermissionType.ALLOW)


def test_only_bindings_the_tool_added_are_its_own_not_those_it_found_present(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    rows = [
        (ADDED_BY_US, AccessAction.ADDED, None),
        (FOUND_THERE, AccessAction.PRESENT, None),
        (THEIR_DENY, AccessAction.CONFLICT, "on the target only"),
    ]
    ledger.record_access_sync("s1", None, "src", "tgt", rows)
    ledger.record_access_sync("dry", None, "src", "tgt", [(DRY, AccessAction.WOULD_ADD, None)], dry_run=True)
    assert ledger.access_bindings_created("src", "tgt") == {ADDED_BY_US}
    assert ledger.access_bindings_created("src", "elsewhere") == set()

    # A later sync finds its own binding present: still its own, until a sync removes it.
    ledger.record_access_sync(
        "s2", None, "src", "tgt", [(ADDED_BY_US, AccessAction.PRESENT, None), (FOUND_THERE, AccessAction.PRESENT, None)]
    )
    assert ledger.access_bindings_created("src", "tgt") == {ADDED_BY_US}
    ledger.record_access_sync(
        "s3", None, "src", "tgt", [(ADDED_BY_US, AccessAction.REMOVED, "the source no longer has it")]
    )
    assert ledger.access_bindings_created("src", "tgt") == set()


def test_tallies_count_each_sync_by_action_in_the_database(ledger_url: str) -> None:
    """Three syncs asked, one not: each sync's bindings and quotas by action, its users needing a password (by
    name, once per mechanism, as the report lists them) and its probes answered differently, counted for that sync
    alone; a sync with none of a kind counts none, and the sync not asked adds to nothing."""
    from kafka_migration.model.access import AccessAction, Quota, QuotaEntity, ScramCredential

    ledger = Ledger.open(ledger_url)
    write = AclBinding(
        ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW
    )
    read = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "READ", PermissionType.ALLOW)
    rate = Quota(QuotaEntity.of(user="app"), "producer_byte_rate", 1.0)
    share = Quota(QuotaEntity.of(user="bob"), "request_percentage", 5.0)
    ledger.record_access_sync(
        "s1",
        None,
        "a",
        "b",
        [(write, AccessAction.ADDED, None), (read, AccessAction.ADDED, None), (write, AccessAction.PRESENT, None)],
    )
    ledger.record_access_sync("s2", None, "a", "b", [(write, AccessAction.PRESENT, None)])
    ledger.record_access_sync("s9", None, "a", "b", [(write, AccessAction.PRESENT, None)])  # not asked for
    ledger.record_access_quotas(
        "s1", None, "a", "b", [(rate, None, AccessAction.ADDED, None), (share, 9.0, AccessAction.DIFFERENT, "x")]
    )
    ledger.record_access_quotas("s9", None, "a", "b", [(rate, None, AccessAction.ADDED, None)])
    users = [
        (ScramCredential("zoe", "SCRAM-SHA-256", 4096), AccessAction.NEEDS_PASSWORD, None, None),
        (ScramCredential("Ann", "SCRAM-SHA-512", 4096), AccessAction.NEEDS_PASSWORD, None, None),
        (ScramCredential("Ann", "SCRAM-SHA-256", 4096), AccessAction.NEEDS_PASSWORD, None, None),
        (ScramCredential("bob", "SCRAM-SHA-256", 4096), AccessAction.ADDED, "proven", None),
    ]
    ledger.record_access_users("s1", users)
    ledger.record_access_users(
        "s2", [(ScramCredential("cy", "SCRAM-SHA-512", 4096), AccessAction.NEEDS_PASSWORD, None, None)]
    )
    ledger.record_access_users(
        "s9", [(ScramCredential("al", "SCRAM-SHA-512", 4096), AccessAction.NEEDS_PASSWORD, None, None)]
    )
    probe = Probe("u", ProbeKind.PRODUCE, "orders")
    denied = ProbeOutcome(probe, "u", "orders", "allowed", "denied (TOPIC_AUTHORIZATION_FAILED)")
    alike = ProbeOutcome(probe, "u", "orders", "allowed", "allowed")
    ledger.record_access_probes("s1", [denied, alike, denied])
    ledger.record_access_probes("s2", [alike])
    ledger.record_access_probes("s3", [denied])
    ledger.record_access_probes("s9", [denied, denied])
    tallies = ledger.access_sync_tallies(["s1", "s2", "s3", "none"])
    assert tallies["s1"] == {
        "bindings": {AccessAction.ADDED: 2, AccessAction.PRESENT: 1},
        "quotas": {AccessAction.ADDED: 1, AccessAction.DIFFERENT: 1},
        "needs_password": ["Ann", "Ann", "zoe"],
        "probe_mismatches": 2,
    }
    assert tallies["s2"] == {
        "bindings": {AccessAction.PRESENT: 1},
        "quotas": {},
        "needs_password": ["cy"],
        "probe_mismatches": 0,
    }
    assert tallies["s3"]["probe_mismatches"] == 1 and tallies["none"]["bindings"] == {}
    assert set(tallies) == {"s1", "s2", "s3", "none"}
    assert ledger.access_sync_tallies([]) == {}
