"""The kafka_migration DAG (dag.test) on a real Spark standalone cluster with the shipped executor environment.

``spark_default`` points at the standalone master (host ``spark://127.0.0.1``, its port) and
the Airflow Variable ``kafka_migration_executor_env`` names the archive built by
``kafka-migrate package-env``, as a deployment would configure them. Each partition's
results name the Python that ran it: the one unpacked from the archive on a worker.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from tests.spark_cluster_checks import assert_shipped_python, executor_pythons

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

PARTITIONS = 2


def test_dag_migrates_on_a_standalone_cluster_with_the_shipped_environment(
    migration_dag, clusters, kafka_connections, spark_standalone, executor_env, unique, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    prefix = f"dagsa{unique}"
    topic = f"{prefix}.events"
    create_topic(clusters.source, topic, PARTITIONS)
    p = producer(clusters.source)
    for i in range(300):
        send(p, topic, i % PARTITIONS, None if i % 9 == 0 else f"k{i}".encode(), f"event {i}".encode())
    p.flush(30)

    monkeypatch.setenv(
        "AIRFLOW_CONN_SPARK_DEFAULT",
        json.dumps({"conn_type": "spark", "host": f"spark://{spark_standalone.host}", "port": spark_standalone.port}),
    )
    monkeypatch.setenv("AIRFLOW_VAR_KAFKA_MIGRATION_EXECUTOR_ENV", str(executor_env))
    run = migration_dag.test(run_conf={"include": f"{prefix}\\..*", "rename": "sa.{topic}"})
    assert str(run.state) == "success"

    for partition in range(PARTITIONS):  # the target read independently of the pipeline
        source = without_offsets(read_partition(clusters.source, topic, partition))
        assert len(source) >= 150
        assert without_offsets(read_partition(clusters.target, f"sa.{topic}", partition)) == source

    state_dir = Path(os.environ["KAFKA_MIGRATION_STATE_DIR"])
    (plan,) = [path for path in state_dir.glob("runs/*/plan.json") if topic in path.read_text()]
    for step in ("copy", "verify"):
        files = sorted(plan.parent.glob(f"{step}-job*.json"))
        rows = executor_pythons(files)
        assert len(rows) == PARTITIONS
        assert_shipped_python(rows, spark_standalone.work_dirs)
