"""The ledger's side of an access sync's client quotas on both backends: every quota a sync looked at, read back
exactly (the default entity's null name, fractional values), and the quotas this tool set on a target, which a later
sync alone may change or remove."""

from __future__ import annotations

from kafka_migration.ledger import Ledger
from kafka_migration.model.access import AccessAction, Quota, QuotaEntity

ALICE_DEFAULT_CLIENT = QuotaEntity.of(user="alice", client_id=None)
IP = QuotaEntity.of(ip="10.1.2.3")


def test_quotas_are_recorded_exactly_and_the_tools_own_follow_its_syncs(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    rate, share = Quota(ALICE_DEFAULT_CLIENT, "producer_byte_rate", 1024.0), Quota(IP, "request_percentage", 12.5)
    ledger.record_access_quotas(
        "s1",
        "run-1",
        "src",
        "tgt",
        [(rate, None, AccessAction.ADDED, None), (share, 50.0, AccessAction.DIFFERENT, "not ours")],
    )
    recorded = ledger.access_quota_rows("s1")
    assert [(r.quota, r.target_value, r.action, r.reason) for r in recorded] == [
        (rate, None, AccessAction.ADDED, None),
        (share, 50.0, AccessAction.DIFFERENT, "not ours"),
    ]
    assert recorded[0].source_cluster_id == "src" and recorded[0].target_cluster_id == "tgt"
    assert ledger.access_quotas_set("src", "tgt") == {rate}
    assert ledger.access_quotas_set("src", "elsewhere") == set()

    raised = Quota(ALICE_DEFAULT_CLIENT, "producer_byte_rate", 4096.0)
    ledger.record_access_quotas("s2", None, "src", "tgt", [(raised, 1024.0, AccessAction.UPDATED, "changed")])
    ledger.record_access_quotas("dry", None, "src", "tgt", [(share, None, AccessAction.WOULD_ADD, None)], dry_run=True)
    assert ledger.access_quotas_set("src", "tgt") == {raised}  # a dry run set nothing
    ledger.record_access_quotas(
        "s3",
        None,
        "src",
        "tgt",
        [(raised, 4096.0, AccessAction.REMOVED, "gone"), (share, 12.5, AccessAction.PRESENT, None)],
    )
    assert ledger.access_quotas_set("src", "tgt") == set()
    ledger.record_access_quotas("s3", None, "src", "tgt", [])  # recording a sync again replaces its rows
    assert ledger.access_quota_rows("s3") == [] and ledger.access_quotas_set("src", "tgt") == {raised}
