"""The verify Spark application (spark_jobs/verify_topics.py through spark-submit) on real brokers."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.data.read import read_partition
from harness.data.seed import KEEP_FOREVER, create_topic, producer, send
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.results import MISMATCH, OK
from kafka_migration.run.planner import build_plan
from kafka_migration.spark.submit import SparkSettings, submit_step

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_verify_job_finds_a_corrupted_target_record_at_its_offset(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"verify{unique}"
    create_topic(clusters.source, topic, 2, KEEP_FOREVER)  # timestamps from 1970
    p = producer(clusters.source)
    for i in range(400):
        send(p, topic, i % 2, f"k{i}".encode(), f"v{i}".encode(), headers=[("n", str(i).encode())], timestamp=1000 + i)
    p.flush(10)

    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    plan = build_plan(KafkaCluster(source), KafkaCluster(target), MigrationOptions(include=topic), run_id=f"t{unique}")
    plan_path = tmp_path / "plan.json"
    plan.write(plan_path)

    # Write the target by hand, as a faulty copier would: partition 0 intact, partition 1
    # with the value of its 123rd record changed.
    create_topic(clusters.target, topic, 2, KEEP_FOREVER)
    w = producer(clusters.target)
    for partition in range(2):
        for record in read_partition(clusters.source, topic, partition):
            value = record["value"]
            if partition == 1 and record["offset"] == 123:
                value = b"corrupted"
            send(w, topic, partition, record["key"], value, headers=record["headers"], timestamp=record["timestamp"])
    w.flush(10)

    results = submit_step(
        "verify", plan_path, tmp_path / "verify.json", source, target, SparkSettings(master="local[2]")
    )

    outcome = results.topics[topic]
    assert outcome.status == MISMATCH
    by_partition = {p["partition"]: p for p in outcome.partitions}
    assert by_partition[0]["match"] and by_partition[0]["source_checksum"] == by_partition[0]["target_checksum"]
    bad = by_partition[1]
    assert not bad["match"]
    assert bad["first_source_offset"] == 123 and bad["first_target_offset"] == 123
    assert bad["first_difference"] == "value differs"
    assert bad["source_records"] == bad["target_records"] == 200
    assert bad["source_checksum"] != bad["target_checksum"]
    assert "[1] value differs at source offset 123" in outcome.error
    assert results.topics[topic].status != OK
