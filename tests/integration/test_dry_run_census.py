"""A dry run's census of the schema ids above what it reads itself (``--dry-run --schema-ids translate``), on real
brokers, a real registry per cluster (Apicurio) and real spark-submit.

The budget a dry run reads in its own process is set to 4 offsets ($KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS), so that
a dozen records are "above" it. In the middle of one topic a value of a RecordNameStrategy record type, in the middle
of another a key naming an id the source registry does not know. The full census (the default) is a Spark
application of its own: it lists the record type's subject and refuses the unknown id (exit 2, naming topic,
partition and offset), writing nothing. The quick one (``--dry-run-census ends``) reads each partition's ends in
the process and misses both, and its listing says loudly that it is not complete and how to get the full one: what
the full census finds is what an ends-only read would have let through.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from confluent_kafka.schema_registry import Schema
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from harness.data.seed import create_topic, producer, send
from tests.commands import KAFKA_MIGRATE, REPO
from tests.conftest import Clusters, Registries
from tests.integration.test_schema_ids import UNKNOWN_ID, _topics, client

pytestmark = [pytest.mark.integration, pytest.mark.spark]

RECORDS = {"subject.name.strategy.type": "RECORD"}  # RecordNameStrategy: a record's subject is its full name
BUDGET = "4"  # offsets the dry run reads in its own process at most: each topic below holds 12
NOT_COMPLETE = "NOT COMPLETE: this dry run read each partition's ends only (--dry-run-census ends)"
BY_SPARK = "a Spark application of its own reads every one"


def dry_run(clusters: Clusters, registries: Registries, topic: str, state_dir: Path, *extra: str):  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    env.update({"PYTHONPATH": str(REPO), "KAFKA_MIGRATION_CENSUS_LOCAL_RECORDS": BUDGET})
    args = [
        "--source", clusters.source, "--target", clusters.target, "--include", topic, "--rename", "moved.{topic}",
        "--schema-ids", "translate", "--source-registry", registries.source, "--target-registry", registries.target,
        "--master", "local[2]", "--dry-run", *extra, "--state-dir", str(state_dir),
    ]  # fmt: skip
    command = [KAFKA_MIGRATE, "run", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)


def _nothing_written(clusters: Clusters, registries: Registries, topic: str, subjects: set[str], state: Path) -> None:
    assert f"moved.{topic}" not in _topics(clusters.target)
    assert set(client(registries.target).get_subjects()) == subjects
    assert not list(state.glob("runs/*/census*.json"))  # the census's request and answer removed


def test_a_dry_run_above_its_budget_takes_the_full_census_with_spark_and_the_quick_one_says_it_is_not(
    clusters: Clusters, registries: Registries, tmp_path: Path, unique: str
) -> None:
    source = client(registries.source)
    ns = f"mid{unique}"
    middle = {"type": "record", "name": "Middle", "namespace": ns, "fields": [{"name": "n", "type": "int"}]}
    source.register_schema(f"{ns}.Middle", Schema(json.dumps(middle), "AVRO"))
    named = AvroSerializer(source, json.dumps(middle), conf={"auto.register.schemas": False, **RECORDS})
    listed, unknown = f"drya{unique}.events", f"dryb{unique}.events"
    p = producer(clusters.source)
    for topic in (listed, unknown):
        create_topic(clusters.source, topic, 1)
        for i in range(12):
            key, value = f"k{i}".encode(), b"raw bytes, no header"
            if i == 6 and topic == listed:
                value = named({"n": i}, SerializationContext(topic, MessageField.VALUE))
            if i == 6 and topic == unknown:
                key = b"\x00" + UNKNOWN_ID.to_bytes(4, "big") + b"k"
            send(p, topic, 0, key, value)
    p.flush(30)
    subjects = set(client(registries.target).get_subjects())

    full = dry_run(clusters, registries, listed, tmp_path / "full")
    assert full.returncode == 0, full.stdout + full.stderr
    assert BY_SPARK in full.stderr and "census of the source records: 12 records read (every planned record)" in (
        full.stdout
    )
    assert f"subjects found behind ids in the records: {ns}.Middle" in full.stdout, full.stdout
    assert f"{ns}.Middle v1" in full.stdout and NOT_COMPLETE not in full.stdout
    _nothing_written(clusters, registries, listed, subjects, tmp_path / "full")

    quick = dry_run(clusters, registries, listed, tmp_path / "quick", "--dry-run-census", "ends")
    assert quick.returncode == 0, quick.stdout + quick.stderr
    assert BY_SPARK not in quick.stderr and f"{ns}.Middle" not in quick.stdout  # the middle is not read
    assert "4 records read (of 12 planned offsets: the first and last records of each partition)" in quick.stdout
    assert NOT_COMPLETE in quick.stdout and "a dry run without that option lists them all" in quick.stdout

    refused = dry_run(clusters, registries, unknown, tmp_path / "refused")
    where = f"Source {unknown}[0] offset 6: its key names schema id {UNKNOWN_ID}, which the source registry"
    assert refused.returncode == 2 and where in refused.stderr, refused.stdout + refused.stderr
    _nothing_written(clusters, registries, unknown, subjects, tmp_path / "refused")
    missed = dry_run(clusters, registries, unknown, tmp_path / "missed", "--dry-run-census", "ends")
    assert missed.returncode == 0 and NOT_COMPLETE in missed.stdout, missed.stdout + missed.stderr
