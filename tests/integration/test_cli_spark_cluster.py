"""``kafka-migrate run`` on a real Spark standalone cluster with the shipped executor environment.

The master and two workers run from the installed pyspark distribution on 127.0.0.1
(harness/spark_cluster.py); the workers have none of the driver's virtualenv in their
environment. The executor environment is built by ``kafka-migrate package-env`` and
shipped with ``--executor-env``; every partition's results name the Python that ran it,
and the test checks it was the one unpacked from the archive in a worker's directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from harness.data import read_partition, without_offsets
from harness.seed import create_topic, producer, send
from tests.spark_cluster_checks import assert_shipped_python, executor_pythons

pytestmark = [pytest.mark.integration, pytest.mark.spark]

PARTITIONS = 4


def test_cli_migrates_on_a_standalone_cluster_with_the_shipped_environment(
    clusters, spark_standalone, executor_env, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    prefix = f"sa{uuid.uuid4().hex[:8]}"
    topic = f"{prefix}.orders"
    create_topic(clusters.source, topic, PARTITIONS)
    p = producer(clusters.source)
    for i in range(400):
        send(p, topic, i % PARTITIONS, f"k{i}".encode(), f"v{i}".encode() * 3, headers=[("h", str(i).encode())])
    p.flush(30)

    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "kafka-migrate"), "run",
            "--source", clusters.source,
            "--target", clusters.target,
            "--include", f"{prefix}\\..*",
            "--master", spark_standalone.master_url,
            "--executor-env", str(executor_env),
            "--state-dir", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=400, check=False, env=env,
    )  # fmt: skip
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert "verified" in result.stdout

    for partition in range(PARTITIONS):  # the target read independently of the pipeline
        source = without_offsets(read_partition(clusters.source, topic, partition))
        assert len(source) >= 100
        assert without_offsets(read_partition(clusters.target, topic, partition)) == source

    (run_dir,) = (tmp_path / "runs").iterdir()
    for step in ("copy", "verify"):
        rows = executor_pythons([run_dir / f"{step}.json"])
        assert len(rows) == PARTITIONS
        assert_shipped_python(rows, spark_standalone.work_dirs)
    # The run's one application (copy and verification) ran on the cluster: the workers hold its executors'
    # directories.
    assert len({d.parent.name for d in spark_standalone.executor_dirs()}) >= 1
