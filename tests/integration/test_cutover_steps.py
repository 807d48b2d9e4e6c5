"""finish_cutover on a real broker, without Spark: records written during the final run fail the cutover."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.data.seed import create_topic, producer, send
from kafka_migration.cutover.preflight import Preflight
from kafka_migration.cutover.steps import CutoverRecord, finish_cutover
from kafka_migration.exceptions import MigrationError
from kafka_migration.ledger import Ledger
from kafka_migration.lineage.emit import OFF
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.plan import ClusterInfo, MigrationPlan, PartitionPlan, TopicPlan

pytestmark = pytest.mark.integration


def test_a_source_written_during_the_final_run_fails_the_cutover(clusters, tmp_path: Path, unique: str) -> None:  # type: ignore[no-untyped-def]
    topic = f"late{unique}"
    create_topic(clusters.source, topic, 1)
    p = producer(clusters.source)
    for i in range(11):  # ends at 11: one more than the pre-flight saw
        send(p, topic, 0, f"k{i}".encode(), b"v")
    p.flush(10)
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    source, target = ClusterInfo("source", clusters.source, "src", 1), ClusterInfo("target", clusters.target, "tgt", 1)
    run = MigrationPlan(
        "run-1",
        "now",
        source,
        target,
        {},
        (TopicPlan(topic, topic, (PartitionPlan(0, 0, 10, 0, 0, 10),), 1, {}, {}, True),),
    )
    ledger.start_run(run, trigger="cli")
    ledger.finish_run("run-1", "verified", 10)
    ledger.start_cutover(
        "cutover-1",
        {
            "trigger": "cli",
            "params": {"quiet_seconds": 0},
            "source_cluster_id": "src",
            "source_bootstrap": clusters.source,
            "target_cluster_id": "tgt",
            "target_bootstrap": clusters.target,
        },
    )
    checked = Preflight("source", (topic,), {(topic, 0): 10}, ())
    with pytest.raises(
        MigrationError,
        match=rf"source topic {topic} was written to during the cutover, in partition 0 \(\[0\] 10 -> 11\)",
    ):
        finish_cutover(
            ClusterConfig("source", {"bootstrap.servers": clusters.source}),
            ClusterConfig("target", {"bootstrap.servers": clusters.target}),
            ledger,
            "cutover-1",
            checked,
            run,
            CutoverRecord(tmp_path / "reports", OFF),
        )
    row = ledger.cutover("cutover-1")
    assert row["status"] == "failed" and row["topics"] == [] and "written to during the cutover" in row["message"]
    markdown = (tmp_path / "reports" / "cutover-1" / "report.md").read_text()
    assert "CUTOVER FAILED" in markdown and "do NOT switch: the cutover did not complete" in markdown
