"""The census a translated run takes before writing, read by the launcher while Spark starts and by the driver from
where the launcher stopped (run/census.lead_census, spark/submit.SparkApplication.up): on a real broker with a real
waiting driver, the two halves make the census one whole read finds, and the driver did read its half."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.data.seed import create_topic, producer, send
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.kafka.ranges import OffsetRange
from kafka_migration.model.config import ClusterConfig, ClusterPair, MigrationOptions
from kafka_migration.run.census import census_of, census_slices, lead_census
from kafka_migration.run.planner import build_plan
from kafka_migration.spark.submit import SparkApplication, SparkSettings
from tests.conftest import Clusters

pytestmark = [pytest.mark.integration, pytest.mark.spark]

PER_PARTITION = 2500  # more than one consume() batch (kafka/reader.BATCH): the launcher reads only the first


def framed(schema_id: int, payload: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + payload


def test_the_launcher_reads_until_the_driver_is_up_and_the_driver_reads_the_rest(
    clusters: Clusters, unique: str, tmp_path: Path
) -> None:
    topic = f"lead{unique}"
    create_topic(clusters.source, topic, 3)
    p = producer(clusters.source)
    for i in range(PER_PARTITION):
        send(p, topic, 0, framed(40 + i % 2, b"k"), framed(50, b"v"))  # keys of two ids, values of one
        send(p, topic, 1, b"raw", framed(51 if i < PER_PARTITION - 1 else 52, b"v"))  # a new id at the very end
        send(p, topic, 2, None, None)  # no header at all
    p.flush(30)
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    plan = build_plan(KafkaCluster(source), KafkaCluster(target), MigrationOptions(include=topic), run_id=unique)
    directory = tmp_path / "runs" / unique
    paths = {"copy": directory / "copy.json", "verify": directory / "verify.json"}
    app = SparkApplication(
        "migrate", directory / "plan.json", paths, source, target, SparkSettings(master="local[2]"), wait=True
    )
    try:
        deadline = time.monotonic() + 300
        while not app.up():  # the driver's "Spark is up ... waiting for the plan"
            assert app.process.poll() is None, "\n".join(app.tail)
            assert time.monotonic() < deadline
            time.sleep(0.2)
        asked: list[bool] = []

        def up() -> bool:
            asked.append(app.up())
            return asked[-1]

        endpoint = ClusterPair.of(source, target).source
        found = lead_census(plan, endpoint, up, app.census)
        assert asked == [True]  # one batch read here, then the driver's turn
        assert any("census in" in line for line in app.tail), "\n".join(app.tail)  # the driver read the rest
        whole = census_of(
            endpoint, [OffsetRange(s.source_topic, s.partition, s.start, s.end) for s in census_slices(plan)]
        )
        assert found == whole
        assert found.records == 3 * PER_PARTITION and found.planned == 3 * PER_PARTITION and found.complete
        assert found.ids() == {40, 41, 50, 51, 52}
        assert {s.schema_id: s.offset for s in found.sightings if s.partition == 1} == {51: 0, 52: PER_PARTITION - 1}
    finally:
        app.abort()
