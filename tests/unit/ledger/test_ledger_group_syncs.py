"""The ledger's side of group sync on both backends: verified segments with their offset maps, sync records."""

from __future__ import annotations

from kafka_migration.ledger import Ledger
from kafka_migration.model.groups import SYNCED, GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.model.offsets import translate_position
from tests.unit.ledger.test_ledger import outcomes, plan


def test_verified_segments_feed_the_same_translation_as_translate(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    first = plan("run-1", 0, 100, 0)
    ledger.start_run(first, trigger="cli")
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: False}, gap_at=50))
    second = plan("run-2", 100, 150, 99)
    ledger.start_run(second, trigger="cli")
    ledger.record_topic(second, second.topics[0], *outcomes(second, {0: True, 1: True}))

    segments = ledger.verified_segments("src-cluster", "tgt-cluster")
    assert set(segments) == {("orders", 0, "copy.orders"), ("orders", 1, "copy.orders")}
    assert [s.run_id for s in segments["orders", 0, "copy.orders"]] == ["run-1", "run-2"]
    assert [s.run_id for s in segments["orders", 1, "copy.orders"]] == ["run-2"]  # run-1 did not verify there
    for offset in (0, 10, 50, 51, 99, 100, 120, 150):
        assert (
            translate_position(segments["orders", 0, "copy.orders"], offset).target_offset
            == ledger.translate("orders", 0, offset).target_offset
        ), offset
    assert ledger.verified_segments("src-cluster", "elsewhere") == {}


def _result(sync_id: str, outcomes_: list[str], run_id: str | None = None) -> GroupSyncResult:
    parts = tuple(
        PartitionSync(
            "app", "orders", i, 10, None, 20, "copy.orders", 9, None, "within", "run-1", "write", o, None, "same_record"
        )
        for i, o in enumerate(outcomes_)
    )
    return GroupSyncResult(
        sync_id,
        run_id,
        "src-cluster",
        "tgt-cluster",
        False,
        False,
        (GroupSync("app", "EMPTY", False, "NONE", False, parts),),
    )


def test_group_sync_rows_replace_a_retry_and_summarise(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    ledger.record_group_sync(_result("run-1__groups", [SYNCED, "not_translatable"], run_id="run-1"))
    ledger.record_group_sync(_result("run-1__groups", [SYNCED, SYNCED], run_id="run-1"))  # a retried task
    ledger.record_group_sync(_result("groups-later", ["kept_ahead"]))
    rows = ledger.group_sync_rows(run_id="run-1")
    assert [(r.partition, r.outcome, r.target_offset) for r in rows] == [(0, SYNCED, 9), (1, SYNCED, 9)]
    summary = {s["sync_id"]: s for s in ledger.group_syncs_page().rows}
    assert (summary["run-1__groups"]["partitions"], summary["run-1__groups"]["not_ok"]) == (2, 0)
    assert (summary["groups-later"]["groups"], summary["groups-later"]["not_ok"]) == (1, 1)
    assert summary["groups-later"]["run_id"] is None
