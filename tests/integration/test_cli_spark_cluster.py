"""``kafka-migrate run`` on a real Spark standalone cluster with the shipped executor environment.

The master and two workers (one core each) run from the installed pyspark distribution on
127.0.0.1 (harness/servers/spark_cluster.py); the workers have none of the driver's virtualenv in
their environment. The executor environment is built by ``kafka-migrate package-env`` and
shipped with ``--executor-env``; every partition's results name the Python that ran it and
the executor's working directory, so the tests check that the tasks ran the Python unpacked
from the archive, on both executors, and what happened when an executor was lost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from harness.kafka.proxied import ProxiedCluster, proxied_clusters
from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.results import StepResults
from tests.spark_cluster_checks import assert_shipped_python, executor_pythons

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
PARTITIONS = 4
# More than a small slice (SMALL_SLICE_OFFSETS, 5,000) per partition: each partition is a Spark task of its own.
PER_PARTITION = 5_100
RUN_TIMEOUT = 400


def seed(bootstrap: str, topic: str, partitions: int, per_partition: int, **batching: Any) -> None:
    create_topic(bootstrap, topic, partitions)
    p = producer(bootstrap, **batching)
    for i in range(partitions * per_partition):
        send(p, topic, i % partitions, f"k{i}".encode(), f"v{i}".encode() * 8, headers=[("h", str(i).encode())])
    p.flush(30)


def migrate(
    source: str, target: str, topic: str, master: str, archive: Path, state: Path, *extra: str
) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    # spark.cores.max: the cores of both workers (one each), what the driver waits for before its first job.
    command = [
        KAFKA_MIGRATE, "run", "--source", source, "--target", target, "--include", topic,
        "--master", master, "--spark-conf", "spark.cores.max=2", "--executor-env", str(archive),
        "--state-dir", str(state), *extra,
    ]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


def finish(run: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        output, _ = run.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        run.kill()
        output, _ = run.communicate()
        pytest.fail(f"the run did not end within {RUN_TIMEOUT}s:\n{output[-3000:]}")
    return run.returncode, output


def assert_same_records(source: str, target: str, topic: str, partitions: int) -> None:
    """The target read independently of the pipeline: every source record once, in order, nothing more."""
    for partition in range(partitions):
        records = without_offsets(read_partition(source, topic, partition))
        assert without_offsets(read_partition(target, topic, partition)) == records, f"partition {partition}"


def partition_rows(run_dir: Path, step: str) -> list[dict[str, Any]]:
    return [p for t in StepResults.read(run_dir / f"{step}.json").topics.values() for p in t.partitions]


def test_a_run_on_a_standalone_cluster_spreads_over_both_executors_with_the_shipped_environment(
    clusters, spark_standalone, executor_env, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    topic = f"sa{uuid.uuid4().hex[:8]}.orders"
    seed(clusters.source, topic, PARTITIONS, PER_PARTITION)

    # An executor option of the user's own: it must reach the executors beside the driver's (spark/executors.py).
    theirs = "-Dkafka_migration.test.users_option=kept"
    extra = ("--spark-conf", f"spark.executor.extraJavaOptions={theirs}")
    run = migrate(clusters.source, clusters.target, topic, spark_standalone.master_url, executor_env, tmp_path, *extra)
    code, output = finish(run)
    assert code == 0, f"exit {code}\n{output}"
    assert "verified" in output
    assert_same_records(clusters.source, clusters.target, topic, PARTITIONS)

    (run_dir,) = (tmp_path / "runs").iterdir()
    for step in ("copy", "verify"):
        rows = executor_pythons([run_dir / f"{step}.json"])
        assert len(rows) == PARTITIONS
        assert_shipped_python(rows, spark_standalone.work_dirs)
    # One task per partition, on both executors: each worker's executor ran some of this run's partitions.
    workdirs = {Path(p["executor"]["workdir"]) for p in partition_rows(run_dir, "copy")}
    assert {w.parent.parent for w in workdirs} == set(spark_standalone.work_dirs), workdirs
    assert len({w.parent.name for w in workdirs}) == 1  # one application
    # How they started (spark/executors.py, added by the driver; spark/daemon.py): a C1-only JVM (the
    # worker's first stderr line is the executor's command) and this package's Python daemon.
    for workdir in workdirs:
        log = (workdir / "stderr").read_text(errors="replace")
        command = log.splitlines()[0]
        assert "-XX:TieredStopAtLevel=1" in command and theirs in command, command
        assert "[kafka_migration.spark.daemon]" in log


# --- losing an executor mid-copy ------------------------------------------------------------------

LOSS_PARTITIONS = 2
# The source answers 50 ms late each way and hands out 16 KB per fetch: each partition's copy takes seconds.
SLOW_SOURCE = {"fetch.max.bytes": 16384, "message.max.bytes": 16384}


@pytest.fixture(scope="module")
def slow_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ProxiedCluster, ProxiedCluster]]:
    with proxied_clusters("loss-source", "loss-target", directory=tmp_path_factory.mktemp("brokers")) as (src, tgt):
        yield src, tgt


def end_offsets(bootstrap: str, topic: str, partitions: int) -> list[int]:
    admin = AdminClient(client_settings({"bootstrap.servers": bootstrap, "socket.timeout.ms": 2000}))
    try:
        futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)})
        return [futures[TopicPartition(topic, p)].result(5).offset for p in range(partitions)]
    except Exception:
        return [0] * partitions  # not created yet


def test_a_run_survives_losing_an_executor_mid_copy_and_ends_exact(
    slow_pair, spark_standalone, executor_env, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    source, target = slow_pair
    topic = f"loss{uuid.uuid4().hex[:8]}.orders"
    seed(source.bootstrap, topic, LOSS_PARTITIONS, PER_PARTITION, **{"batch.size": 16384, "linger.ms": 5})
    full = end_offsets(source.bootstrap, topic, LOSS_PARTITIONS)
    config = tmp_path / "source.json"
    config.write_text(json.dumps(SLOW_SOURCE))
    source.proxy.set_latency(0.05)
    try:
        run = migrate(
            source.bootstrap, target.bootstrap, topic, spark_standalone.master_url, executor_env,
            tmp_path / "state", "--source-config", str(config),
        )  # fmt: skip
        # Both partitions are being copied (one task per executor: one core each): kill one executor's JVM.
        deadline = time.monotonic() + RUN_TIMEOUT
        while True:
            written = end_offsets(target.bootstrap, topic, LOSS_PARTITIONS)
            if all(0 < w < f for w, f in zip(written, full, strict=True)):
                break
            assert run.poll() is None and time.monotonic() < deadline, f"no copy in progress seen: {written}"
            time.sleep(0.1)
        (lost,) = spark_standalone.executors(0)
        lost.kill()
        code, output = finish(run)
    finally:
        source.proxy.set_latency(0)
    assert code == 0, f"exit {code}\n{output}"
    assert "verified" in output

    assert_same_records(source.bootstrap, target.bootstrap, topic, LOSS_PARTITIONS)  # nothing lost, nothing twice
    (run_dir,) = (tmp_path / "state" / "runs").iterdir()
    copies = partition_rows(run_dir, "copy")
    assert {Path(p["executor"]["workdir"]) for p in copies}.isdisjoint({lost.workdir})  # it ran again elsewhere
    # The task that ran again found what its lost attempt had written and copied only the rest.
    resumed = [p for p in copies if p["resumed_records"]]
    assert resumed, copies
    for p in copies:
        assert p["resumed_records"] + p["records"] == p["end"] - p["start"], p
    assert all(v["match"] for v in partition_rows(run_dir, "verify"))


# --- executors started from a class-data archive (docs/deployment.md) ------------------------------

EXECUTORS_EXIT_TIMEOUT = 60  # they write their archives (~60 MB each) as they exit


def wait_for_no_executors(cluster) -> None:  # type: ignore[no-untyped-def]
    assert cluster.executors_exited(EXECUTORS_EXIT_TIMEOUT), "the executors did not exit after their run"


def test_executors_start_from_a_class_archive_prepared_as_the_deployment_page_says(
    clusters, spark_standalone, executor_env, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """On JDK 17: one run's executors write an archive each at exit, one is kept per node under a fixed name,
    later runs name it in their executors' Java options, and their JVMs map it."""
    first, second = (f"cds{uuid.uuid4().hex[:8]}.orders" for _ in range(2))
    for topic in (first, second):
        seed(clusters.source, topic, 2, 100)
    archives, logs = tmp_path / "class-archive", tmp_path / "cds-logs"
    archives.mkdir()
    logs.mkdir()
    options = "spark.executor.extraJavaOptions="

    writing = f"{options}-XX:ArchiveClassesAtExit={archives}/executor-{{{{EXECUTOR_ID}}}}.jsa"
    run = migrate(clusters.source, clusters.target, first, spark_standalone.master_url, executor_env,
                  tmp_path / "one", "--spark-conf", writing)  # fmt: skip
    code, output = finish(run)
    assert code == 0, f"exit {code}\n{output}"
    wait_for_no_executors(spark_standalone)
    written = sorted(archives.glob("executor-*.jsa"))
    assert len(written) == 2, written  # one per executor: no two JVMs wrote the same file
    os.replace(written[0], archives / "executor.jsa")

    using = f"{options}-XX:SharedArchiveFile={archives}/executor.jsa -Xlog:cds=info:file={logs}/{{{{EXECUTOR_ID}}}}.log"
    run = migrate(clusters.source, clusters.target, second, spark_standalone.master_url, executor_env,
                  tmp_path / "two", "--spark-conf", using)  # fmt: skip
    code, output = finish(run)
    assert code == 0, f"exit {code}\n{output}"
    assert "verified" in output
    assert_same_records(clusters.source, clusters.target, second, 2)
    wait_for_no_executors(spark_standalone)
    cds = sorted(logs.glob("*.log"))
    assert len(cds) == 2, cds
    for log in cds:
        text = log.read_text()
        assert f"Opened archive {archives}/executor.jsa" in text and "Mapped dynamic region" in text, text[-2000:]
        assert "failed to load" not in text, text[-2000:]
