"""Records deleted from an Apache Kafka source before they were copied: named, stopped, never reported verified.

The topic keeps everything until its first run has copied 10 records per partition. Then more
records arrive and some are deleted the two ways Kafka deletes them: on partition 0 by time
(records timestamped two hours ago, rolled into segments of their own by ``segment.ms``, deleted
by the broker's retention thread once ``retention.ms`` is lowered to an hour), on partition 1 by
DeleteRecords. The incremental run stops before writing anything (exit 2), naming each partition
and its lost offsets; with --allow-gaps it copies what is left, counts and reports the loss, and
verifies only the offsets it read. Records deleted after a run was planned fail their partition,
naming the lost offsets, and the next run stops at the gap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.data.group_clients import commit
from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from harness.data.topics import alter_topic, delete_records, log_range, wait_for_log_start
from kafka_migration.exceptions import SourceGapError
from kafka_migration.groups.sync import GroupSyncOptions, sync_groups
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.groups import SAME_RECORD, SYNCED
from kafka_migration.model.offsets import GAP
from tests.runs import copied_and_verified, planned_run, verified_run

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
HOUR_MS = 3_600_000


def _write(bootstrap: str, topic: str, partition: int, offsets: range, timestamp: int | None = None) -> None:
    p = producer(bootstrap)
    for i in offsets:
        ts = {"timestamp": timestamp + i} if timestamp is not None else {}
        send(p, topic, partition, f"k{partition}-{i}".encode(), f"record {i}".encode(), **ts)
    p.flush(15)


def _cli(state: Path, ledger: Ledger, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    return subprocess.run(
        [KAFKA_MIGRATE, "run", *args, "--state-dir", str(state), "--ledger", str(ledger.engine.url)],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
        env=env,
    )


def test_lost_records_stop_the_next_run_and_with_allow_gaps_are_counted_not_verified(  # type: ignore[no-untyped-def]
    clusters, unique: str, tmp_path: Path
) -> None:
    topic = f"ret{unique}"
    old = int(time.time() * 1000) - 2 * HOUR_MS
    # segment.ms by record timestamps: the two-hour-old records and the new ones land in different segments
    create_topic(clusters.source, topic, 2, {"retention.ms": "-1", "segment.ms": "1000"})
    _write(clusters.source, topic, 0, range(0, 10), old)
    _write(clusters.source, topic, 1, range(0, 10))
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    verified_run(clusters.source, clusters.target, topic, ledger)  # checkpoints at 10 and 10

    _write(clusters.source, topic, 0, range(10, 30), old)  # will expire
    _write(clusters.source, topic, 0, range(30, 40))  # a new segment, recent: stays
    _write(clusters.source, topic, 1, range(10, 40))
    written = {p: read_partition(clusters.source, topic, p) for p in (0, 1)}  # offsets 0..39 of each
    alter_topic(clusters.source, topic, {"retention.ms": str(HOUR_MS)})
    delete_records(clusters.source, {(topic, 1): 25})
    assert wait_for_log_start(clusters.source, topic, 0, 30) == 30  # the retention thread deleted 0..29
    assert log_range(clusters.source, topic, 1) == (25, 40)
    runs = len(ledger.runs())

    refused = _cli(tmp_path, ledger, "--source", clusters.source, "--target", clusters.target, "--include", topic)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "error: 1 topic lost records on the source before they were copied; nothing was written" in (refused.stderr)
    assert (
        f"{topic}: offsets left the source (retention or DeleteRecords) before they were copied, in partitions 0–1 "
        "(2 partitions) ([0] 10–29 (20 offsets); [1] 10–24 (15 offsets))" in refused.stderr
    )
    assert "--allow-gaps" in refused.stderr and "Traceback" not in refused.stderr
    assert [log_range(clusters.target, topic, p) for p in (0, 1)] == [(0, 10), (0, 10)]  # nothing written
    assert len(ledger.runs()) == runs  # nor recorded

    accepted = _cli(
        tmp_path, ledger, "--source", clusters.source, "--target", clusters.target, "--include", topic, "--allow-gaps"
    )
    assert accepted.returncode == 0 and "verified" in accepted.stdout, accepted.stdout + accepted.stderr
    for p, start in ((0, 30), (1, 25)):  # the first run's records, then exactly what the source still has
        expected = written[p][:10] + written[p][start:]
        assert without_offsets(read_partition(clusters.target, topic, p)) == without_offsets(expected), p
    (report_path,) = (tmp_path / "reports").glob("*/report.json")
    report = json.loads(report_path.read_text())
    (row,) = report["topics"]
    parts = {p["partition"]: p for p in row["partition_details"]}
    # Only the offsets read were verified: the ranges start where the source starts now, the loss counted apart.
    assert [(parts[p]["source_start"], parts[p]["source_end"], parts[p]["expired_offsets"]) for p in (0, 1)] == [
        (30, 40, 20),
        (25, 40, 15),
    ]
    assert [(parts[p]["status"], parts[p]["source_records"], parts[p]["target_records"]) for p in (0, 1)] == [
        ("verified", 10, 10),
        ("verified", 15, 15),
    ]
    assert report["totals"]["expired_offsets"] == 35 and report["scope"]["allow_gaps"] is True
    assert (
        f"{topic}[0]: 20 offsets expired from the source before they were copied (gap accepted)" in (report["warnings"])
    )

    # A group committed inside the lost range moves to the first record copied after it.
    group = f"ret{unique}-app"
    commit(clusters.source, group, {(topic, 0): 15, (topic, 1): 27})
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    synced = {p.partition: p for p in sync_groups(source, target, ledger, GroupSyncOptions(groups=group)).partitions}
    assert (synced[0].translation, synced[0].target_offset, synced[0].proof) == (GAP, 10, SAME_RECORD)
    assert (synced[1].target_offset, synced[1].proof) == (12, SAME_RECORD)
    assert {p.outcome for p in synced.values()} == {SYNCED}


def test_records_deleted_after_planning_fail_their_partition_and_the_next_run_stops_at_the_gap(  # type: ignore[no-untyped-def]
    clusters, unique: str, tmp_path: Path
) -> None:
    topic = f"ret-late{unique}"
    create_topic(clusters.source, topic, 2)
    for p in (0, 1):
        _write(clusters.source, topic, p, range(0, 20))
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    plan = planned_run(clusters.source, clusters.target, MigrationOptions(include=topic), ledger)
    assert [(p.start, p.end) for p in plan.topic(topic).partitions] == [(0, 20), (0, 20)]

    delete_records(clusters.source, {(topic, 0): 5})  # after planning, before the copy
    outcome = copied_and_verified(plan, clusters.source, clusters.target, ledger)

    assert not outcome.verified
    rows = {r.partition: r for r in ledger.run_segments(plan.run_id)}
    assert rows[1].status == "verified"
    assert rows[0].status == "failed"  # never "verified": neither the copy nor the verification could read it
    error = rows[0].error or ""
    assert "offsets 0–4 (5 offsets) are no longer on the source, whose log now starts at offset 5" in error
    assert "--allow-gaps" in error
    assert ledger.run(plan.run_id).status == "failed"  # type: ignore[union-attr]
    checkpoints = ledger.checkpoints(plan.source.cluster_id, plan.target.cluster_id)
    assert {p for (_t, p, _n) in checkpoints} == {1}  # no checkpoint for the partition that was not verified
    assert log_range(clusters.target, topic, 0) == (0, 0)

    with pytest.raises(
        SourceGapError, match=rf"{topic}: offsets left the source .* in partition 0 \(\[0\] 0–4 \(5 offsets\)\)"
    ):
        planned_run(clusters.source, clusters.target, MigrationOptions(include=topic), ledger)
