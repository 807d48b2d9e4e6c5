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

from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.results import FAILED, MISMATCH, OK, UNVERIFIED
from kafka_migration.run.planner import build_plan
from kafka_migration.run.topics import create_target_topics
from kafka_migration.spark.driver_jobs import SMALL_SLICE_OFFSETS
from kafka_migration.spark.executor_tasks import COPY_FAILED
from kafka_migration.spark.submit import SparkApplication, SparkSettings

pytestmark = [pytest.mark.integration, pytest.mark.spark]

# Imported by every Python process of the application (driver and workers) through PYTHONPATH.
FAULTY_COPIER = '''
import dataclasses
import kafka_migration.run.copy as copy

_real = copy.copy_partition


def copy_partition(task, clusters, progress=None):
    """For topics named *faulty*: leave the last planned record out, and report it copied all the same."""
    if "faulty" not in task.source_topic or task.end - task.start < 2:
        return _real(task, clusters, progress)
    result = _real(dataclasses.replace(task, end=task.end - 1), clusters, progress)
    return dataclasses.replace(result, end=task.end, records=result.records + 1)


copy.copy_partition = copy_partition

_real_window = copy.copy_window


def copy_window(window, clusters, progress_address=None):
    """The same for small slices copied together."""
    short = [
        dataclasses.replace(t, end=t.end - 1) if "faulty" in t.source_topic and t.end - t.start >= 2 else t
        for t in window
    ]
    outcome = _real_window(short, clusters, progress_address)
    results = [
        r if r is None or s is t else dataclasses.replace(r, end=t.end, records=r.records + 1)
        for r, s, t in zip(outcome.results, short, window)
    ]
    return dataclasses.replace(outcome, results=results)


copy.copy_window = copy_window
'''


# For topics named *followed*: note which process copied and which verified (and how), so a test can
# tell that the copy and its following verification ran as two tasks at once. For topics named
# *copyfails*: copy half the range, then fail, as a copy cut off from the target would (and note
# how it was verified). For *droplast*: the faulty copier of FAULTY_COPIER, on a big slice.
SPLIT_PROBE = """
import dataclasses
import os

import kafka_migration.run.copy as copy
import kafka_migration.run.verify as verify
from kafka_migration.exceptions import CopyError

_copy, _verify = copy.copy_partition, verify.verify_partition


def _note(line):
    with open(os.environ["SPLIT_PROBE_LOG"], "a") as out:
        out.write(line + "\\n")


def copy_partition(task, clusters, progress=None):
    if "droplast" in task.source_topic:  # leaves the last record out and reports it copied all the same
        result = _copy(dataclasses.replace(task, end=task.end - 1), clusters, progress)
        return dataclasses.replace(result, end=task.end, records=result.records + 1)
    if "copyfails" in task.source_topic:
        _copy(dataclasses.replace(task, end=(task.start + task.end) // 2), clusters, progress)
        raise CopyError("planted: the copy stopped halfway")
    if "followed" in task.source_topic:
        _note(f"copy {os.getpid()}")
    return _copy(task, clusters, progress)


def verify_partition(task, clusters, progress=None, **how):
    if any(name in task.source_topic for name in ("followed", "copyfails", "droplast")):
        _note(f"verify {os.getpid()} following={how.get('following', False)}")
    if "copyfails" not in task.source_topic:
        return _verify(task, clusters, progress, **how)
    try:
        return _verify(task, clusters, progress, **how)
    finally:
        _note("verification ran to its end")


copy.copy_partition = copy_partition
verify.verify_partition = verify_partition
"""


def _seed(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    create_topic(bootstrap, topic, partitions)
    p = producer(bootstrap)
    for i in range(records):
        send(p, topic, i % partitions, f"k{i}".encode(), f"v{i}".encode(), headers=[("n", str(i).encode())])
    p.flush(10)


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
        assert len(read_partition(clusters.target, good, partition)) == 100
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


def _run_migrate(clusters, unique: str, tmp_path: Path, name: str, target_settings: dict[str, str]):  # type: ignore[no-untyped-def]
    """One migrate application (local[2]) over one topic of one big partition, with SPLIT_PROBE planted."""
    topic = f"{name}{unique}"
    _seed(clusters.source, topic, 1, SMALL_SLICE_OFFSETS + 1000)  # one big slice
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target, **target_settings})
    plan = build_plan(KafkaCluster(source), KafkaCluster(target), MigrationOptions(include=topic), run_id=unique)
    directory = tmp_path / "runs" / unique
    plan.write(directory / "plan.json")
    create_target_topics(plan, KafkaCluster(target))
    paths = {"copy": directory / "copy.json", "verify": directory / "verify.json"}
    app = SparkApplication("migrate", directory / "plan.json", paths, source, target, SparkSettings(master="local[2]"))
    return topic, app.wait()


@pytest.fixture
def split_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    plugin = tmp_path / "probe"
    plugin.mkdir()
    (plugin / "sitecustomize.py").write_text(SPLIT_PROBE)
    monkeypatch.setenv("PYTHONPATH", str(plugin))
    monkeypatch.setenv("SPLIT_PROBE_LOG", str(tmp_path / "probe.log"))
    return tmp_path / "probe.log"


def test_one_big_partition_is_verified_by_a_second_task_behind_its_copy(  # type: ignore[no-untyped-def]
    clusters, unique, tmp_path: Path, split_probe: Path
) -> None:
    topic, results = _run_migrate(clusters, unique, tmp_path, "followed", {})
    copy, verify = results["copy"], results["verify"]
    assert copy.topics[topic].status == verify.topics[topic].status == OK
    (copied,) = copy.topics[topic].partitions
    (verified,) = verify.topics[topic].partitions
    assert copied["records"] == verified["source_records"] == verified["target_records"] == SMALL_SLICE_OFFSETS + 1000
    assert copied["started"] <= copied["ended"] and verified["started"] <= verified["ended"]
    # Two Python workers at once: the copy in one, the following verification in the other.
    notes = sorted(split_probe.read_text().splitlines())
    assert len(notes) == 2 and notes[0].startswith("copy ") and notes[1].endswith(" following=True")
    assert notes[0].split()[1] != notes[1].split()[1]


def test_a_failed_copy_ends_its_following_verification_as_not_verified(  # type: ignore[no-untyped-def]
    clusters, unique, tmp_path: Path, split_probe: Path
) -> None:
    # The follower would wait for records the copy never writes until socket.timeout.ms (60 s) passed;
    # once the copy has failed, the driver cancels it instead.
    topic, results = _run_migrate(clusters, unique, tmp_path, "copyfails", {})
    copy, verify = results["copy"], results["verify"]
    assert copy.topics[topic].status == FAILED and "planted" in (copy.topics[topic].error or "")
    assert verify.topics[topic].status == UNVERIFIED
    (row,) = verify.topics[topic].partitions
    assert row["error"] == COPY_FAILED and not row["match"]
    notes = split_probe.read_text().splitlines() if split_probe.exists() else []
    assert "verification ran to its end" not in notes  # stopped where it waited (if it had started at all)


def test_a_copy_that_drops_a_record_is_caught_behind_the_copy_too(  # type: ignore[no-untyped-def]
    clusters, unique, tmp_path: Path, split_probe: Path
) -> None:
    # The follower waits for the record the copier never writes, gives up after socket.timeout.ms, and the
    # slice is verified again once the copy has ended: the missing record is named, as without a follower.
    topic, results = _run_migrate(clusters, unique, tmp_path, "droplast", {"socket.timeout.ms": "3000"})
    assert results["copy"].topics[topic].status == OK  # the copier believed itself
    outcome = results["verify"].topics[topic]
    assert outcome.status == MISMATCH
    (row,) = outcome.partitions
    assert row["first_difference"] == "record missing on the target"
    assert row["target_records"] == row["source_records"] - 1
    # First the follower, then a plain verification after the copy, and that one again after a pause: a target that
    # reads short is read once more (verify.SETTLE_SECONDS), and is short again.
    assert [line.split()[-1] for line in split_probe.read_text().splitlines()] == [
        "following=True",
        "following=False",
        "following=False",
    ]
