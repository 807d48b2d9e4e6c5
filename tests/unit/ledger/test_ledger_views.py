"""The ledger's read API (ledger/views.py, a part of Ledger) on both backends (SQLite file and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_migration.groups.rules import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.views import RunFilter
from kafka_migration.model.groups import SyncedPartition
from tests.unit.ledger.test_ledger import outcomes, plan


def _ledger(url: str) -> Ledger:
    ledger = Ledger.open(url)
    first = plan("run-a", 0, 100, 0)
    ledger.start_run(first, trigger="airflow", dag_id="kafka_migration", dag_run_id="manual_a")
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: True}))
    ledger.finish_run("run-a", "verified", 200)
    second = plan("run-b", 100, 150, 100)
    ledger.start_run(second, trigger="cli")
    ledger.record_topic(second, second.topics[0], *outcomes(second, {0: True, 1: False}))
    ledger.finish_run("run-b", "mismatch", 100)
    return ledger


def test_runs_page_filters_pages_and_counts(ledger_url: str) -> None:
    ledger = _ledger(ledger_url)
    page = ledger.runs_page(limit=1)
    assert page.total == 2 and [r.run_id for r in page.rows] == ["run-b"]
    assert page.rows[0].plan is None and page.rows[0].params is None  # a list does not carry every run's plan
    assert page.rows[0].trigger == "cli" and page.rows[0].records == 100
    assert [r.run_id for r in ledger.runs_page(limit=1, offset=1).rows] == ["run-a"]
    assert [r.run_id for r in ledger.runs_page(RunFilter(dag_id="cli")).rows] == ["run-b"]
    assert ledger.runs_page(RunFilter(status="verified", topic="copy.orders")).total == 1
    assert ledger.runs_page(RunFilter(topic="payments")).total == 0
    later = datetime.now(UTC) + timedelta(hours=1)
    assert ledger.runs_page(RunFilter(since=later)).total == 0
    assert ledger.runs_page(RunFilter(until=later)).total == 2
    found = ledger.run_for_dag_run("kafka_migration", "manual_a")
    assert found is not None and (found.run_id, found.dag_run_id) == ("run-a", "manual_a")
    assert ledger.run_for_dag_run("kafka_migration", "manual_b") is None
    assert ledger.running_runs() == 0
    assert ledger.run_facets()["dag_ids"] == ["kafka_migration", None]


def test_pairs_and_checkpoints(ledger_url: str) -> None:
    ledger = _ledger(ledger_url)
    (pair,) = ledger.cluster_pairs()
    assert (pair["source_cluster_id"], pair["target_cluster_id"], pair["runs"], pair["run_id"]) == (
        "src-cluster",
        "tgt-cluster",
        2,
        "run-b",
    )
    rows = {r["partition"]: r for r in ledger.checkpoint_rows("src-cluster", "tgt-cluster")}
    assert (rows[0]["source_offset"], rows[0]["run_id"], rows[0]["run_status"]) == (150, "run-b", "mismatch")
    assert (rows[1]["source_offset"], rows[1]["run_id"], rows[1]["dag_id"]) == (100, "run-a", "kafka_migration")


def test_group_syncs_and_cutovers(ledger_url: str) -> None:
    ledger = _ledger(ledger_url)
    parts = tuple(
        PartitionSync("app", "orders", p, 10, 20, 25, "copy.orders", 9, None, "within", "run-a", "write", o, None, None)
        for p, o in enumerate(["synced", "not_proven"])
    )
    ledger.record_group_sync(
        GroupSyncResult(
            "s1",
            "run-a",
            "src-cluster",
            "tgt-cluster",
            False,
            False,
            (GroupSync("app", "EMPTY", False, "NONE", False, parts),),
        )
    )
    page = ledger.group_syncs_page()
    assert page.total == 1 and (page.rows[0]["partitions"], page.rows[0]["not_ok"]) == (2, 1)
    assert ledger.group_syncs_page(group_id="other").total == 0
    rows = ledger.group_sync_rows(sync_ids=["s1"])
    assert len(rows) == 2 and ledger.group_sync_rows(sync_ids=[]) == []
    assert all(isinstance(r, SyncedPartition) for r in rows)  # the model's type, its lag computed there
    assert [(r.partition, r.lag, r.ok, r.run_id) for r in rows] == [(0, 15, True, "run-a"), (1, 15, False, "run-a")]
    assert rows == ledger.group_sync_rows(run_id="run-a") == ledger.group_sync_rows(sync_id="s1")
    values = {
        "trigger": "cli",
        "params": {},
        "source_cluster_id": "src-cluster",
        "source_bootstrap": "s:9092",
        "target_cluster_id": "tgt-cluster",
        "target_bootstrap": "t:9092",
    }
    ledger.start_cutover("c1", values)
    ledger.update_cutover("c1", run_id="run-a")
    assert ledger.cutovers_page().total == 1 and ledger.cutover("c1") is not None
    assert ledger.cutover_for_run("run-a")["cutover_id"] == "c1"  # type: ignore[index]
    assert ledger.cutover_for_run("run-b") is None


def test_not_migrated_yet_run_after_run(ledger_url: str) -> None:
    """Per run, its planned ranges summed (what it found not migrated yet) and those it did not verify (left)."""
    ledger = _ledger(ledger_url)
    ledger.start_run(plan("run-c", 150, 160, 150), trigger="cli")  # running
    rows = ledger.lag_history()
    assert [(r["run_id"], r["planned"], r["at_start"], r["after"]) for r in rows] == [
        ("run-a", 2, 200, 0),
        ("run-b", 2, 100, 50),  # partition 1's 100-149 did not verify
        ("run-c", 2, 20, 20),  # nothing verified yet
    ]
    assert [r["run_id"] for r in ledger.lag_history(limit=1)] == ["run-c"]  # the newest, per pair


def test_cluster_bootstraps_from_runs_cutovers_and_access_syncs(ledger_url: str) -> None:
    ledger = _ledger(ledger_url)
    values = {"trigger": "cli", "params": {}, "source_cluster_id": "src-cluster", "source_bootstrap": "s2:9092"}
    ledger.start_cutover("c", {**values, "target_cluster_id": "dr", "target_bootstrap": "dr:9092"})
    assert ledger.cluster_bootstraps() == {
        "dr": ["dr:9092"],
        "src-cluster": ["s2:9092", "s:9092"],
        "tgt-cluster": ["t:9092"],
    }
