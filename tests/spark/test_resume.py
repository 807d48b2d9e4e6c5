"""Incremental and resumable runs through the real CLI, Spark and both ledger backends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger
from tests.conftest import LATENCY, SLOW_READS, SMALL_BATCHES, Clusters, ProxiedPair
from tests.unit.ledger.test_leases import wait_until_expired

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def _cli(clusters, topic: str, tmp_path: Path, ledger_url: str, **popen) -> list[str]:  # type: ignore[no-untyped-def]
    return [
        sys.executable, "-m", "kafka_migration.cli", "run",
        "--source", clusters.source, "--target", clusters.target,
        "--include", topic, "--state-dir", str(tmp_path), "--ledger", ledger_url, "--master", "local[2]",
    ]  # fmt: skip


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def _fill(bootstrap: str, topic: str, partitions: int, count: int, tag: str, **settings: object) -> None:
    p = producer(bootstrap, **{"linger.ms": 50, **settings})
    for i in range(count):
        send(p, topic, i % partitions, f"{tag}-{i}".encode(), b"v" * 100, headers=[("i", str(i).encode())])
    p.flush(60)


def _assert_exact_copy(clusters, topic: str, partitions: int) -> None:  # type: ignore[no-untyped-def]
    for partition in range(partitions):
        source = without_offsets(read_partition(clusters.source, topic, partition))
        target = without_offsets(read_partition(clusters.target, topic, partition))
        assert len(target) == len(source), f"partition {partition}: {len(target)} target vs {len(source)} source"
        assert target == source, f"partition {partition} differs"


def _target_size(bootstrap: str, topic: str, partitions: int) -> int:
    admin = AdminClient(client_settings({"bootstrap.servers": bootstrap}))
    try:
        futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(partitions)})
        return sum(f.result(5).offset for f in futures.values())
    except Exception:
        return 0


# The killed copy reads from the session's proxied source, slowed on purpose (tests/conftest.py): 6,000 records
# of 2 partitions, about 30 records a fetch (4 KB) and a round trip of 2 x 50 ms a fetch, so 3,000 / 30 = 100
# fetches a partition: the copy takes 10 s at least, however fast the machine, and the kill, a moment after the
# first records reach the target, lands in its middle.
KILLED_RECORDS = 6_000


def test_killed_copy_resumes_without_loss_or_duplicates(
    proxied: ProxiedPair, unique: str, tmp_path: Path, ledger_url: str
) -> None:
    source, target = proxied
    clusters = Clusters(source.bootstrap, target.bootstrap)
    topic = f"resume{unique}"
    create_topic(clusters.source, topic, 2)
    total = KILLED_RECORDS
    _fill(clusters.source, topic, 2, total, "r", **SMALL_BATCHES)
    slow_reads = tmp_path / "source.json"
    slow_reads.write_text(json.dumps(SLOW_READS))
    source.proxy.set_latency(LATENCY)

    process = subprocess.Popen(
        [
            *_cli(clusters, topic, tmp_path, ledger_url),
            *("--source-config", str(slow_reads)),
            *("--lease-ttl", "3"),  # a killed holder's lease expires soon
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # one process group: CLI, spark-submit, JVM and Python workers
    )
    deadline = time.monotonic() + 240
    try:
        while _target_size(clusters.target, topic, 2) == 0:  # until the copy has written some records
            assert process.poll() is None, "the run ended before its copy wrote anything"
            assert time.monotonic() < deadline, "the copy never started"
            time.sleep(0.1)
    finally:
        ended = process.poll()  # None: still running when killed
        os.killpg(process.pid, signal.SIGKILL)  # the whole Spark job dies mid-copy
        process.wait(timeout=30)
    assert ended is None, f"the copy finished before it was killed (exit code {ended}); slow the source more"
    partial = _target_size(clusters.target, topic, 2)
    assert 0 < partial < total + 2
    ledger = Ledger.open(ledger_url)
    (killed,) = ledger.runs()
    assert killed.status == "running", f"the killed run is {killed.status!r}: it ended before it was killed"
    leases = ledger.leases.held_by(killed.run_id)  # the killed holder could not release its lease
    assert [lease.key.target_topic for lease in leases] == [topic], leases
    wait_until_expired(ledger, killed.run_id)  # nobody renews it: it expires after its time to live

    source.proxy.set_latency(0)  # the rerun reads at full speed
    result = _run(_cli(clusters, topic, tmp_path, ledger_url))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "from resume -> target offset" in result.stdout
    assert f"took over the lease on target topic {topic}" in result.stdout and killed.run_id in result.stdout
    _assert_exact_copy(clusters, topic, 2)
    runs = ledger.runs()
    assert [r.status for r in runs] == ["verified", "running"]  # the killed run never finished
    assert any("took over the lease" in w and killed.run_id in w for w in runs[0].warnings or ())  # recorded
    assert ledger.leases.active() == []


def test_runs_are_incremental_and_never_double(clusters, unique, tmp_path: Path, ledger_url: str) -> None:  # type: ignore[no-untyped-def]
    topic = f"incr{unique}"
    create_topic(clusters.source, topic, 3)
    _fill(clusters.source, topic, 3, 3000, "a")

    first = _run(_cli(clusters, topic, tmp_path, ledger_url))
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    second = _run(_cli(clusters, topic, tmp_path, ledger_url))
    assert second.returncode == 0 and "nothing new on the source" in second.stdout
    _assert_exact_copy(clusters, topic, 3)

    _fill(clusters.source, topic, 3, 900, "b")
    third = _run(_cli(clusters, topic, tmp_path, ledger_url))
    assert third.returncode == 0, third.stdout[-3000:] + third.stderr[-3000:]
    assert "from checkpoint -> target offset" in third.stdout
    assert "900 records copied" in third.stdout  # only the new records
    _assert_exact_copy(clusters, topic, 3)
    statuses = [r.status for r in Ledger.open(ledger_url).runs()]
    assert statuses == ["verified", "up_to_date", "verified"]


def test_foreign_records_on_the_target_stop_that_partition(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"foreign{unique}"
    ledger_url = f"sqlite:///{tmp_path / 'ledger.db'}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 2, 200, "a")
    assert _run(_cli(clusters, topic, tmp_path, ledger_url)).returncode == 0

    intruder = producer(clusters.target)  # another producer writes into partition 1 of the target
    send(intruder, topic, 1, b"intruder", b"not from the source")
    intruder.flush(10)
    before = read_partition(clusters.target, topic, 1)
    _fill(clusters.source, topic, 2, 100, "b")

    result = _run(_cli(clusters, topic, tmp_path, ledger_url))
    assert result.returncode == 3, result.stdout[-3000:]
    assert f"target {topic}[1] offset" in result.stdout and "did not write" in result.stdout
    assert read_partition(clusters.target, topic, 1) == before  # nothing more written there
    _assert_exact_copy_partition_0 = without_offsets(read_partition(clusters.source, topic, 0))
    assert without_offsets(read_partition(clusters.target, topic, 0)) == _assert_exact_copy_partition_0
