"""A consumer group sync's lineage on real brokers: after a verified run, ``groups.sync`` sends START and
COMPLETE with each partition's translated position (source offset -> target offset, proven), valid against the
OpenLineage schemas, the run it belongs to named as its parent, the same positions the ledger recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openlineage.client.serde import Serde

from harness.data.seed import create_topic, producer, send
from kafka_migration.groups.sync import GroupSyncOptions, sync_groups
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.ledger import Ledger
from kafka_migration.lineage import emit
from kafka_migration.lineage.naming import namespace, run_uuid
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.state import CommittedOffset
from kafka_migration.run.pipeline import run_migration
from kafka_migration.spark.submit import SparkLauncher
from tests.unit.lineage.schemas import validate_event

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_a_group_sync_sends_its_translated_positions(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"lineagegroups{unique}"
    create_topic(clusters.source, topic, 2)
    p = producer(clusters.source)
    for i in range(40):
        send(p, topic, i % 2, f"k{i}".encode(), f"v{i}".encode())
    p.flush(10)
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    collector = emit.Collector()
    lineage = emit.Lineage(collector)  # one command's, as the CLI passes it on
    run = run_migration(
        source, target, MigrationOptions(include=topic, rename="copy.{topic}"), tmp_path, ledger,
        launch=SparkLauncher(), lineage=lineage,
    )  # fmt: skip
    assert run.verified, run.rows
    group = f"{topic}-app"
    GroupCluster(source).alter_offsets(group, {(topic, 0): CommittedOffset(7), (topic, 1): CommittedOffset(20)})
    result = sync_groups(source, target, ledger, GroupSyncOptions(groups=group, run_id=run.plan.run_id), lineage)
    assert result.exit_code == 0
    events = [json.loads(Serde.to_json(e)) for e in collector.events]
    for event in events:
        validate_event(event)
    assert [(e["job"]["name"].split("[")[0], e["eventType"]) for e in events] == [
        ("kafka-migrate.run", "START"),
        ("kafka-migrate.run", "COMPLETE"),
        ("kafka-migrate.group_sync", "START"),
        ("kafka-migrate.group_sync", "COMPLETE"),
    ]
    done = events[3]
    assert (
        done["run"]["facets"]["parent"]["run"]["runId"] == run_uuid("run", run.plan.run_id) == events[1]["run"]["runId"]
    )
    assert [(d["namespace"], d["name"]) for d in done["inputs"]] == [(namespace(clusters.source), topic)]
    assert [(d["namespace"], d["name"]) for d in done["outputs"]] == [(namespace(clusters.target), f"copy.{topic}")]
    facet = done["run"]["facets"]["kafkaMigrationPositions"]
    assert (facet["kind"], facet["id"], facet["runId"], facet["outcome"]) == (
        "group_sync", result.sync_id, run.plan.run_id, "completed"
    )  # fmt: skip
    ((g,),) = [facet["groups"]]
    recorded = {r.partition: r for r in ledger.group_sync_rows(sync_id=result.sync_id)}
    assert g["groupId"] == group and len(g["partitions"]) == len(recorded) == 2
    for position in g["partitions"]:
        row = recorded[position["partition"]]
        assert (position["sourceOffset"], position["targetOffset"]) == (row.source_offset, row.target_offset)
        assert (position["outcome"], position["proof"]) == (row.outcome, row.proof)
    assert {p["partition"]: (p["sourceOffset"], p["targetOffset"]) for p in g["partitions"]} == {0: (7, 7), 1: (20, 20)}
