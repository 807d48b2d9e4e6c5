"""``kafka-migrate run`` end to end with spark-submit, while the source keeps receiving records."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from harness.data import read_partition, without_offsets
from harness.seed import create_topic, producer, seal_partitions, send
from kafka_migration.plan import MigrationPlan

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def _seed(bootstrap: str, prefix: str) -> None:
    create_topic(bootstrap, f"{prefix}.busy", 3)
    create_topic(bootstrap, f"{prefix}.skewed", 4)
    create_topic(bootstrap, f"{prefix}.empty", 2)
    create_topic(bootstrap, f"{prefix}.tx", 2)
    create_topic(bootstrap, f"{prefix}.excluded", 1)
    p = producer(bootstrap)
    for i in range(3000):
        send(p, f"{prefix}.busy", i % 3, f"k{i}".encode(), b"x" * 150, timestamp=1_600_000_000_000 + i)
    for i in range(500):
        send(p, f"{prefix}.skewed", 0 if i % 25 else 3, None, f"c{i}".encode())
    send(p, f"{prefix}.excluded", 0, b"k", b"v")
    p.flush(30)
    tx = producer(bootstrap, **{"transactional.id": f"{prefix}-tx"})
    tx.init_transactions(10)
    for t in range(3):
        tx.begin_transaction()
        for i in range(10):
            send(tx, f"{prefix}.tx", i % 2, f"t{t}-{i}".encode(), b"paid")
        tx.commit_transaction(10)
    for topic, n in (("busy", 3), ("skewed", 4), ("tx", 2), ("excluded", 1)):
        seal_partitions(bootstrap, f"{prefix}.{topic}", range(n))


def test_cli_copies_exactly_the_planned_ranges_while_the_source_grows(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    prefix = f"cli{unique}"
    _seed(clusters.source, prefix)
    stop = threading.Event()
    appended = [0]

    def keep_producing() -> None:
        p = producer(clusters.source)
        while not stop.is_set():
            send(p, f"{prefix}.busy", appended[0] % 3, b"late", b"after planning")
            appended[0] += 1
            p.poll(0)
            stop.wait(0.01)
        p.flush(10)

    writer = threading.Thread(target=keep_producing, daemon=True)
    writer.start()
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "kafka_migration.cli",
                "run",
                "--source",
                clusters.source,
                "--target",
                clusters.target,
                "--include",
                f"{prefix}\\..*",
                "--exclude",
                f"{prefix}\\.excluded",
                "--state-dir",
                str(tmp_path),
                "--master",
                "local[2]",
            ],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        stop.set()
        writer.join(timeout=20)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verified: every partition matches" in result.stdout
    assert appended[0] > 0

    (plan_path,) = tmp_path.glob("runs/*/plan.json")
    plan = MigrationPlan.read(plan_path)
    assert {t.source_topic for t in plan.topics} == {f"{prefix}.{n}" for n in ("busy", "skewed", "empty", "tx")}
    for topic in plan.topics:
        for part in topic.partitions:
            source = [
                r for r in read_partition(clusters.source, topic.source_topic, part.partition) if r["offset"] < part.end
            ]
            target = read_partition(clusters.target, topic.target_topic, part.partition)
            assert without_offsets(target) == without_offsets(source), (topic.source_topic, part.partition)
    # the source grew past the planned ends during the run; none of that reached the target
    busy = plan.topic(f"{prefix}.busy")
    beyond = sum(
        1
        for part in busy.partitions
        for r in read_partition(clusters.source, busy.source_topic, part.partition)
        if r["offset"] >= part.end
    )
    assert beyond > 0
