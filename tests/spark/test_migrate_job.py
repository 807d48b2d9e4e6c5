"""The migrate Spark application (spark_jobs/migrate_topics.py): copy and verification in one spark-submit.

One application run covers the results contract (both files, time stamps, job size) and the
independence of its verification: a copier that reports more than it wrote (planted in the
executors through a ``sitecustomize`` module, as a faulty copy would behave) is caught by the
verification in the same application, which re-reads both clusters and trusts nothing the copy
reported. A second, aborted application shows that a driver told not to run leaves nothing behind.
"""

from __future__ import annotations

import time
from pathlib import Path

import psutil
import pytest

from harness.data import read_partition
from harness.seed import create_topic, producer, seal_partitions, send
from kafka_migration.clients import KafkaCluster
from kafka_migration.config import ClusterConfig, MigrationOptions
from kafka_migration.planner import build_plan
from kafka_migration.results import MISMATCH, OK
from kafka_migration.spark.submit import SparkApplication, SparkSettings
from kafka_migration.topics import create_target_topics

pytestmark = [pytest.mark.integration, pytest.mark.spark]

# Imported by every Python process of the application (driver and workers) through PYTHONPATH.
FAULTY_COPIER = '''
import dataclasses
import kafka_migration.copy as copy

_real = copy.copy_partition


def copy_partition(task, source, target, progress=None):
    """For topics named *faulty*: leave the last planned record out, and report it copied all the same."""
    if "faulty" not in task.source_topic or task.end - task.start < 2:
        return _real(task, source, target, progress)
    result = _real(dataclasses.replace(task, end=task.end - 1), source, target, progress)
    return dataclasses.replace(result, end=task.end, records=result.records + 1)


copy.copy_partition = copy_partition
'''


def _seed(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    create_topic(bootstrap, topic, partitions)
    p = producer(bootstrap)
    for i in range(records):
        send(p, topic, i % partitions, f"k{i}".encode(), f"v{i}".encode(), headers=[("n", str(i).encode())])
    p.flush(10)
    seal_partitions(bootstrap, topic, range(partitions))


def _driver_processes(marker: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(marker in part for part in process.info["cmdline"] or []):
            found.append(process)
    return found


def test_migrate_writes_both_results_and_its_verification_catches_a_faulty_copy(  # type: ignore[no-untyped-def]
    clusters, unique, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good, faulty = f"migrate{unique}", f"migrate{unique}faulty"
    _seed(clusters.source, good, 3, 300)
    create_topic(clusters.source, f"{good}empty", 1)  # nothing to copy: verified all the same
    _seed(clusters.source, faulty, 2, 100)
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    plan = build_plan(
        KafkaCluster(source), KafkaCluster(target), MigrationOptions(include=f"migrate{unique}.*"), run_id=unique
    )
    directory = tmp_path / "runs" / unique
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "sitecustomize.py").write_text(FAULTY_COPIER)
    monkeypatch.setenv("PYTHONPATH", str(plugin))
    paths = {"copy": directory / "copy.json", "verify": directory / "verify.json"}

    app = SparkApplication(
        "migrate", directory / "plan.json", paths, source, target, SparkSettings(master="local[2]"), wait=True
    )
    plan.write(directory / "plan.json")  # written while the driver starts, as the CLI does
    create_target_topics(plan, KafkaCluster(target))
    told = time.time()
    app.go()
    results = app.results()
    app.wait()

    assert all(path.exists() for path in paths.values())
    copy, verify = results["copy"], results["verify"]
    assert (copy.step, verify.step) == ("copy", "verify")
    assert copy.driver_started is not None and copy.ready is not None
    assert copy.driver_started <= copy.ready and told <= copy.ready  # ready: Spark up and the plan read
    assert (verify.driver_started, verify.ready) == (copy.driver_started, copy.ready)
    assert set(copy.topics) == set(verify.topics) == {good, f"{good}empty", faulty}
    assert {o.job_topics for o in [*copy.topics.values(), *verify.topics.values()]} == {3}  # small topics: one job

    assert copy.topics[good].status == verify.topics[good].status == OK
    assert verify.topics[f"{good}empty"].status == OK and copy.topics[f"{good}empty"].partitions == []
    for partition in range(3):
        assert len(read_partition(clusters.target, good, partition)) == 101  # 100 + the sealing record
    copied = {p["partition"]: p for p in copy.topics[good].partitions}
    for row in verify.topics[good].partitions:
        assert row["started"] <= row["ended"]
        assert copied[row["partition"]]["ended"] <= row["started"]  # each slice verified after its copy

    # The faulty copier reported every record copied, and the copy step believed it ...
    assert copy.topics[faulty].status == OK
    assert copy.topics[faulty].records == sum(p["end"] - p["start"] for p in copy.topics[faulty].partitions)
    # ... but verification read both clusters itself.
    outcome = verify.topics[faulty]
    assert outcome.status == MISMATCH
    for row in outcome.partitions:
        assert not row["match"] and row["first_difference"] == "record missing on the target"
        assert row["target_records"] == row["source_records"] - 1


def test_a_driver_told_not_to_run_stops_and_writes_nothing(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    directory = tmp_path / "runs" / f"aborted{unique}"
    paths = {"copy": directory / "copy.json", "verify": directory / "verify.json"}
    app = SparkApplication(
        "migrate", directory / "plan.json", paths, source, target, SparkSettings(master="local[1]"), wait=True
    )
    deadline = time.monotonic() + 300
    while not any("waiting for the plan" in line for line in app.tail):  # the driver is up and waits
        assert app.process.poll() is None, "\n".join(app.tail)
        assert time.monotonic() < deadline
        time.sleep(0.2)
    app.abort()
    assert app.process.poll() is not None
    deadline = time.monotonic() + 30
    while _driver_processes(str(directory)) and time.monotonic() < deadline:  # the Python driver follows
        time.sleep(0.2)
    assert _driver_processes(str(directory)) == []
    assert not directory.exists()  # no results, no run directory
