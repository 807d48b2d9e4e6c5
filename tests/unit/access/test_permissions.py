"""access/permissions.py: what a sync needs of each cluster (as kafka/acls.py declares it), and which of it the
granted operations leave out. The refusals on ACL-enforcing brokers are in tests/integration/test_access_probe.py."""

from __future__ import annotations

from kafka_migration.access.permissions import lacking, needed
from kafka_migration.kafka.acls import ACCESS_SYNC_READS, ACCESS_SYNC_WRITES


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
    assert needed("target", dry_run=False) == ACCESS_SYNC_READS + ACCESS_SYNC_WRITES  # declared once
