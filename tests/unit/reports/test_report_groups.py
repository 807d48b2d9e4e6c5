"""The report's "Consumer groups" section: only for runs that synced groups, from the ledger alone."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_migration.model.groups import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.reports.signoff import generate_report
from tests.unit.reports.test_report import _ledger_with_run


def _sync(run_id: str) -> GroupSyncResult:
    def part(partition: int, outcome: str, target: int | None, reason: str | None) -> PartitionSync:
        return PartitionSync(
            "<app>", "orders", partition, 40, None, 100, "copy.orders", target, None, "within", "run-<1>",
            "write", outcome, reason, "same_record" if target is not None else None,
        )  # fmt: skip

    parts = (part(0, "synced", 39, None), part(1, "not_translatable", None, "beyond the verified copy"))
    group = GroupSync("<app>", "EMPTY", False, "NONE", False, parts)
    return GroupSyncResult(f"{run_id}__groups", run_id, "src-cluster", "tgt-cluster", False, False, (group,))


def test_consumer_groups_section_in_every_format(tmp_path: Path) -> None:
    ledger = _ledger_with_run(tmp_path, {0: True, 1: True})
    without = generate_report(ledger, "run-<1>", tmp_path / "before").json.read_text()
    assert "consumer_groups" not in without  # runs without a group sync keep their report unchanged
    ledger.record_group_sync(_sync("run-<1>"))
    ledger.record_group_sync(_sync("another-run"))  # not this run's: left out

    files = generate_report(ledger, "run-<1>", tmp_path / "reports")

    section = json.loads(files.json.read_text())["consumer_groups"]
    assert section["sync_ids"] == ["run-<1>__groups"]
    assert (section["partitions"], section["partitions_not_synced"]) == (2, 1)
    (group,) = section["groups"]
    first, second = group["partitions"]
    assert (first["source_offset"], first["target_offset"], first["lag"], first["outcome"]) == (40, 39, 60, "synced")
    assert second["outcome"] == "not_translatable" and second["reason"] == "beyond the verified copy"
    markdown = files.markdown.read_text()
    assert (
        "## Consumer groups" in markdown
        and "| `<app>` | `orders[0]` | 40 | `copy.orders[0]` | 39 | 60 | synced" in markdown
    )
    page = files.html.read_text()
    assert "Consumer groups</h2>" in page and "&lt;app&gt;" in page and "<app>" not in page
    assert generate_report(ledger, "run-<1>", tmp_path / "again").json.read_bytes() == files.json.read_bytes()
