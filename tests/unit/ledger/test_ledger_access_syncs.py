"""The ledger's side of an access sync's bindings and users on both backends: every row read back exactly, a sync
recorded again replacing its rows, and the bindings this tool created on a target (the only ones a later sync may
remove), which follow its real syncs, not its dry runs nor another pair's (quotas: test_ledger_access_quotas.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from kafka_migration.ledger import Ledger
from kafka_migration.ledger.schema import access_quotas, access_syncs
from kafka_migration.model.access import (
    AccessAction,
    AclBinding,
    PatternType,
    PermissionType,
    Quota,
    QuotaEntity,
    RecordedBinding,
    ResourceType,
    ScramCredential,
)

WRITE = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW)
READ = AclBinding(ResourceType.TOPIC, "ord", PatternType.PREFIXED, "User:etl", "10.0.0.1", "READ", PermissionType.ALLOW)
DENIED = AclBinding(ResourceType.TOPIC, "audit", PatternType.LITERAL, "User:app", "*", "READ", PermissionType.DENY)


def test_a_syncs_bindings_are_read_back_exactly_in_the_order_recorded(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    rows = [
        (WRITE, AccessAction.ADDED, None),
        (READ, AccessAction.PRESENT, None),
        (DENIED, AccessAction.CONFLICT, "a DENY on the target"),
    ]
    ledger.record_access_sync("s1", "run-1", "src", "tgt", rows)
    recorded = ledger.access_sync_rows("s1")
    assert all(isinstance(r.synced_at, datetime) for r in recorded)
    assert recorded == [
        RecordedBinding("s1", "run-1", recorded[0].synced_at, "src", "tgt", binding, action, reason)
        for binding, action, reason in rows
    ]
    ledger.record_access_sync(
        "s1", None, "src", "tgt", [(READ, AccessAction.PRESENT, None)]
    )  # recorded again: replaced
    assert [(r.run_id, r.binding) for r in ledger.access_sync_rows("s1")] == [(None, READ)]
    assert ledger.access_sync_rows("s2") == []


def test_the_bindings_this_tool_created_follow_its_real_syncs_of_the_pair(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    ledger.record_access_sync(
        "s1", None, "src", "tgt", [(WRITE, AccessAction.ADDED, None), (READ, AccessAction.ADDED, None)]
    )
    ledger.record_access_sync(
        "s2", None, "src", "tgt", [(DENIED, AccessAction.PRESENT, None), (WRITE, AccessAction.PRESENT, None)]
    )
    assert ledger.access_bindings_created("src", "tgt") == {WRITE, READ}
    ledger.record_access_sync("dry", None, "src", "tgt", [(DENIED, AccessAction.ADDED, None)], dry_run=True)
    ledger.record_access_sync("s3", None, "src", "tgt", [(READ, AccessAction.REMOVED, "the source no longer has it")])
    assert ledger.access_bindings_created("src", "tgt") == {WRITE}  # a dry run created nothing
    ledger.record_access_sync("other", None, "src", "elsewhere", [(DENIED, AccessAction.ADDED, None)])
    ledger.record_access_sync("rev", None, "tgt", "src", [(WRITE, AccessAction.REMOVED, None)])
    ledger.record_access_sync(
        "from-other", None, "other", "tgt", [(WRITE, AccessAction.REMOVED, None), (DENIED, AccessAction.ADDED, None)]
    )
    assert ledger.access_bindings_created("src", "tgt") == {WRITE}  # another pair's syncs are theirs
    assert ledger.access_bindings_created("src", "elsewhere") == {DENIED}
    ledger.record_access_sync(
        "s4", None, "src", "tgt", [(READ, AccessAction.ADDED, None)]
    )  # added again after its removal
    assert ledger.access_bindings_created("src", "tgt") == {WRITE, READ}


def test_a_syncs_users_are_read_back_exactly_names_never_secrets(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    rows = [
        (ScramCredential("alice", "SCRAM-SHA-512", 8192), AccessAction.ADDED, "proven", None),
        (ScramCredential("bob", "SCRAM-SHA-256", 4096), "needs_password", None, "no password given for it"),
    ]
    ledger.record_access_users("s1", rows)
    assert ledger.access_user_rows("s1") == rows
    ledger.record_access_users("s1", rows[1:])
    assert ledger.access_user_rows("s1") == rows[1:] and ledger.access_user_rows("s2") == []


def test_a_syncs_records_name_its_run_and_say_whether_it_was_a_dry_run(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    quota = Quota(QuotaEntity.of(user="alice"), "producer_byte_rate", 1024.0)
    ledger.record_access_sync("s1", "run-1", "src", "tgt", [(WRITE, AccessAction.ADDED, None)])
    ledger.record_access_quotas("s1", "run-1", "src", "tgt", [(quota, None, AccessAction.ADDED, None)])
    ledger.record_access_sync("dry", None, "src", "tgt", [(READ, AccessAction.ADDED, None)], dry_run=True)
    bob = Quota(QuotaEntity.of(user="bob"), "producer_byte_rate", 2048.0)
    ledger.record_access_quotas("dry", None, "src", "tgt", [(bob, None, AccessAction.ADDED, None)], dry_run=True)
    ledger.record_access_quotas("other", None, "other", "tgt", [(bob, None, AccessAction.ADDED, None)])
    with ledger.engine.connect() as c:
        for table in (access_syncs, access_quotas):
            query = select(table.c.sync_id, table.c.run_id, table.c.dry_run).where(table.c.sync_id != "other")
            found = c.execute(query.order_by(table.c.id)).all()
            assert [tuple(r) for r in found] == [("s1", "run-1", 0), ("dry", None, 1)]
    assert ledger.access_quotas_set("src", "tgt") == {quota}  # not bob: a dry run's, and another source's


def test_a_syncs_quotas_are_read_back_with_the_sync_and_when(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    quota = Quota(QuotaEntity.of(user="alice"), "producer_byte_rate", 1024.0)
    ledger.record_access_quotas("s1", None, "src", "tgt", [(quota, None, AccessAction.ADDED, None)])
    (row,) = ledger.access_quota_rows("s1")
    assert (row.sync_id, row.source_cluster_id, row.target_cluster_id) == ("s1", "src", "tgt")
    assert isinstance(row.synced_at, datetime)
