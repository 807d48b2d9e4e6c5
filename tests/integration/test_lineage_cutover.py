"""A cutover's lineage on a real broker, without Spark: ``finish_cutover`` after a verified final run sends START
and COMPLETE with each partition's ends at the switch (source end -> target end), valid against the schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openlineage.client.serde import Serde

from harness.data.seed import create_topic, producer, send
from kafka_migration.cutover.preflight import Preflight
from kafka_migration.cutover.steps import CutoverRecord, finish_cutover
from kafka_migration.ledger import Ledger
from kafka_migration.lineage import emit
from kafka_migration.lineage.naming import namespace
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.plan import ClusterInfo, MigrationPlan, PartitionPlan, TopicPlan
from kafka_migration.model.results import OK, TopicOutcome
from tests.unit.lineage.schemas import validate_event

pytestmark = pytest.mark.integration


def test_a_completed_cutover_sends_its_ends(clusters, tmp_path: Path, unique: str) -> None:  # type: ignore[no-untyped-def]
    topic = f"lineagecut{unique}"
    create_topic(clusters.source, topic, 1)
    p = producer(clusters.source)
    for i in range(10):
        send(p, topic, 0, f"k{i}".encode(), b"v")
    p.flush(10)
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    source, target = ClusterInfo("source", clusters.source, "src", 1), ClusterInfo("target", clusters.target, "tgt", 1)
    plan = MigrationPlan(
        "run-1", "now", source, target, {},
        (TopicPlan(topic, f"copy.{topic}", (PartitionPlan(0, 0, 10, 0, 0, 10),), 1, {}, {}, True),),
    )  # fmt: skip
    ledger.start_run(plan, trigger="cli")
    copy = TopicOutcome(topic, f"copy.{topic}", OK, 1.0, [{"partition": 0, "records": 10, "resumed_records": 0}])
    verified = {
        "partition": 0, "match": True, "target_end": 10, "source_records": 10, "target_records": 10,
        "source_checksum": "sha256:a", "target_checksum": "sha256:a", "first_difference": None,
        "first_source_offset": None, "first_target_offset": None, "seconds": 1.0, "offset_map": [[0, 0]],
    }  # fmt: skip
    verify = TopicOutcome(topic, f"copy.{topic}", OK, 1.0, [verified])
    ledger.record_topics(plan, [(plan.topics[0], copy, verify, None)])
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
    collector = emit.Collector()
    outcome = finish_cutover(
        ClusterConfig("source", {"bootstrap.servers": clusters.source}),
        ClusterConfig("target", {"bootstrap.servers": clusters.target}),
        ledger,
        "cutover-1",
        Preflight("source", (topic,), {(topic, 0): 10}, ()),
        plan,
        CutoverRecord(tmp_path / "reports", emit.Lineage(collector)),
    )
    assert outcome.ok
    events = [json.loads(Serde.to_json(e)) for e in collector.events]
    for event in events:
        validate_event(event)
    assert [(e["job"]["name"].split("[")[0], e["eventType"]) for e in events] == [
        ("kafka-migrate.cutover", "START"),
        ("kafka-migrate.cutover", "COMPLETE"),
    ]
    done = events[1]
    assert [(d["namespace"], d["name"]) for d in done["inputs"]] == [(namespace(clusters.source), topic)]
    assert [(d["namespace"], d["name"]) for d in done["outputs"]] == [(namespace(clusters.target), f"copy.{topic}")]
    facet = done["run"]["facets"]["kafkaMigrationPositions"]
    assert (facet["kind"], facet["id"], facet["runId"]) == ("cutover", "cutover-1", "run-1")
    assert facet["outcome"] == "completed"
    ends = [{"partition": 0, "sourceEnd": 10, "targetEnd": 10}]
    assert facet["topics"] == [{"sourceTopic": topic, "targetTopic": f"copy.{topic}", "partitions": ends}]
    assert facet["groups"] == []
