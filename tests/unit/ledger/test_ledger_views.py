"""ledger.views, the console's read queries, on both backends (SQLite file and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kafka_migration.groups.rules import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.ledger import Ledger, views
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
    engine = _ledger(ledger_url).engine
    page = views.runs_page(engine, limit=1)
    assert page.total == 2 and [r["run_id"] for r in page.rows] == ["run-b"]
    assert "plan" not in page.rows[0]  # a list does not carry every run's plan
    assert [r["run_id"] for r in views.runs_page(engine, limit=1, offset=1).rows] == ["run-a"]
    assert [r["run_id"] for r in views.runs_page(engine, views.RunFilter(dag_id="cli")).rows] == ["run-b"]
    assert views.runs_page(engine, views.RunFilter(status="verified", topic="copy.orders")).total == 1
    assert views.runs_page(engine, views.RunFilter(topic="payments")).total == 0
    later = datetime.now(UTC) + timedelta(hours=1)
    assert views.runs_page(engine, views.RunFilter(since=later)).total == 0
    assert views.runs_page(engine, views.RunFilter(until=later)).total == 2
    assert views.run_for_dag_run(engine, "kafka_migration", "manual_a")["run_id"] == "run-a"  # type: ignore[index]
    assert views.running_runs(engine) == 0
    assert views.run_facets(engine)["dag_ids"] == ["kafka_migration", None]


def test_pairs_and_checkpoints(ledger_url: str) -> None:
    engine = _ledger(ledger_url).engine
    (pair,) = views.cluster_pairs(engine)
    assert (pair["source_cluster_id"], pair["target_cluster_id"], pair["runs"], pair["run_id"]) == (
        "src-cluster",
        "tgt-cluster",
        2,
        "run-b",
    )
    rows = {r["partition"]: r for r in views.checkpoint_rows(engine, "src-cluster", "tgt-cluster")}
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
    page = views.group_syncs_page(ledger.engine)
    assert page.total == 1 and (page.rows[0]["partitions"], page.rows[0]["not_ok"]) == (2, 1)
    assert views.group_syncs_page(ledger.engine, group_id="other").total == 0
    assert len(views.group_sync_rows(ledger.engine, ["s1"])) == 2 and views.group_sync_rows(ledger.engine, []) == []
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
    assert views.cutovers_page(ledger.engine).total == 1 and views.cutover_row(ledger.engine, "c1") is not None
    assert views.cutover_for_run(ledger.engine, "run-a")["cutover_id"] == "c1"  # type: ignore[index]
    assert views.cutover_for_run(ledger.engine, "run-b") is None
