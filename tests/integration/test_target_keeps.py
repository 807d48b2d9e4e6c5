"""What a target keeps, on Apache Kafka clusters whose brokers differ: a sign-off stays true.

The source's brokers keep 30 days (``log.retention.hours=720``, a cluster setting: nothing is set on
the topics), the target's keep Kafka's default 7. The harness's brokers run their retention check every
2 s, so a target that would delete copied records does so within seconds of the copy.

- A topic the run creates gets the source's effective retention: 10-day-old records survive the
  target's retention passes after the run verified them.
- An existing target topic that keeps less is refused before anything is written, naming the config,
  both values and the records at risk; accepted, only what it keeps is copied, and the report says so.
- A target whose log start later passed verified records (its retention lowered, DeleteRecords) is
  reported by the next run: exit 1, status target_lost, the ranges, the report's section; accepted
  with --accept-target-loss, later runs do not report it again. Records the source removed too are no loss.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.data.seed import create_topic, producer, send
from harness.data.topics import alter_topic, delete_records, log_range, topic_config, wait_for_log_start
from harness.kafka.node import ClusterSpec, kafka_clusters
from kafka_migration.exceptions import TopicConflictError
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import MigrationOptions
from kafka_migration.run.topic_configs import KEEPS_AS_SOURCE
from tests.runs import planned_run, verified_run

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
DAY_MS = 86_400_000
MONTH_MS = str(30 * DAY_MS)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path) -> Iterator[tuple[str, str]]:
    specs = (ClusterSpec("keep-source", properties={"log.retention.hours": "720"}), ClusterSpec("keep-target"))
    with kafka_clusters(*specs, directory=tmp_path_factory.mktemp("kafka-keep")) as (src, tgt):
        yield src.bootstrap, tgt.bootstrap


def _write(bootstrap: str, topic: str, partitions: int, count: int, age_ms: int = 0) -> None:
    p = producer(bootstrap)
    at = int(time.time() * 1000) - age_ms
    for i in range(count):
        send(p, topic, i % partitions, f"k{i}".encode(), f"record {i}".encode(), timestamp=at + i)
    p.flush(20)


def _ledger(tmp_path: Path) -> Ledger:
    return Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")


def _cli(tmp_path: Path, source: str, target: str, topic: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    command = [
        KAFKA_MIGRATE, "run", "--source", source, "--target", target, "--include", topic,
        "--state-dir", str(tmp_path), "--ledger", f"sqlite:///{tmp_path / 'ledger.db'}", "--master", "local[2]", *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=400, check=False, env=env)


def _retention_passes() -> None:
    """Long enough for the target's retention check (every 2 s here) to have run at least twice."""
    time.sleep(6)


def test_a_created_topic_keeps_what_the_source_keeps_through_the_targets_retention_passes(
    pair: tuple[str, str], unique: str, tmp_path: Path
) -> None:
    source, target = pair
    topic = f"month{unique}"
    create_topic(source, topic, 2)  # nothing set on the topic: 30 days come from the source's brokers
    _write(source, topic, 2, 2000, age_ms=10 * DAY_MS)
    assert topic_config(source, topic)["retention.ms"].value == MONTH_MS
    plan = verified_run(source, target, topic, _ledger(tmp_path))
    (planned,) = plan.topics
    assert planned.configs["retention.ms"] == MONTH_MS
    assert planned.config_decisions["retention.ms"] == KEEPS_AS_SOURCE
    assert [p.aged for p in planned.partitions] == [0, 0]  # 10 days old, kept 30: all of them copied
    assert topic_config(target, topic)["retention.ms"].value == MONTH_MS
    _retention_passes()
    assert [log_range(target, topic, p) for p in (0, 1)] == [(0, 1000), (0, 1000)]  # nothing deleted


def test_an_existing_target_that_keeps_less_is_refused_with_the_records_at_risk_and_can_be_accepted(
    pair: tuple[str, str], unique: str, tmp_path: Path
) -> None:
    source, target = pair
    topic = f"less{unique}"
    create_topic(source, topic, 2)
    create_topic(target, topic, 2)  # the target's defaults: 7 days
    _write(source, topic, 2, 2000, age_ms=10 * DAY_MS)
    _write(source, topic, 2, 10)  # and ten of today
    ledger = _ledger(tmp_path)

    with pytest.raises(TopicConflictError) as refused:
        planned_run(source, target, MigrationOptions(include=topic), ledger)
    message = str(refused.value)
    assert refused.value.exit_code == 2 and "nothing was written" in message
    assert (
        f"target topic '{topic}' keeps less than source topic '{topic}': retention.ms is 7 days on the target "
        "(604800000) but 30 days on the source (2592000000): records older than that are deleted" in message
    )
    assert f"--add-config retention.ms={MONTH_MS}" in message and "--accept-target-retention" in message
    assert (
        f"2,000 records of source topic '{topic}' are older than target topic '{topic}' keeps "
        "(retention.ms=604800000 (7 days)) in partitions 0–1 (2 partitions)" in message
    )
    assert [log_range(target, topic, p) for p in (0, 1)] == [(0, 0), (0, 0)]  # nothing written
    assert ledger.runs() == []

    accepted = _cli(tmp_path, source, target, topic, "--accept-target-retention")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "hold records older than target topic" in accepted.stdout + accepted.stderr
    assert [log_range(target, topic, p) for p in (0, 1)] == [(0, 5), (0, 5)]  # only what it keeps
    (report,) = (tmp_path / "reports").glob("*/report.json")
    data = json.loads(report.read_text())
    assert data["scope"]["accept_target_retention"] is True
    (row,) = data["topics"]
    assert row["config_decisions"]["retention.ms"].startswith("ACCEPTED (--accept-target-retention)")
    assert [p["aged_offsets"] for p in row["partition_details"]] == [1000, 1000]
    _retention_passes()
    assert [log_range(target, topic, p) for p in (0, 1)] == [(0, 5), (0, 5)]  # what was verified is still there


def test_records_the_target_lost_after_a_verified_run_are_reported_by_the_next_run(
    pair: tuple[str, str], unique: str, tmp_path: Path
) -> None:
    source, target = pair
    topic = f"lost{unique}"
    create_topic(source, topic, 2)
    _write(source, topic, 2, 200)
    first = _cli(tmp_path, source, target, topic)
    assert first.returncode == 0, first.stdout + first.stderr
    delete_records(target, {(topic, 0): 40})  # an operator's DeleteRecords on the target: 40 verified records
    delete_records(source, {(topic, 1): 30})  # gone from both: no loss
    delete_records(target, {(topic, 1): 30})

    found = _cli(tmp_path, source, target, topic)
    assert found.returncode == 1, found.stdout + found.stderr
    out = found.stdout + found.stderr
    assert (
        f"TARGET LOST VERIFIED RECORDS: target topic {topic} no longer holds 40 verified records of {topic}: its "
        "log start moved past them in [0] target offsets 0–39 (source 0–39" in out
    )
    assert "nothing new on the source since the last verified run" in out
    assert "NOT verified: the target LOST 40 records that earlier runs verified, in 1 partition" in out
    runs = _ledger(tmp_path).runs()
    assert runs[0].status == "target_lost" and "TARGET LOST" in (runs[0].message or "")
    report = json.loads(next((tmp_path / "reports" / runs[0].run_id).glob("report.json")).read_text())
    assert report["verdict"] == "TARGET LOST VERIFIED RECORDS"
    assert [(x["partition"], x["target_start"], x["target_end"], x["records"]) for x in report["target_losses"]] == [
        (0, 0, 40, 40)
    ]
    assert "Verified records the target lost" in (tmp_path / "reports" / runs[0].run_id / "report.md").read_text()

    accepted = _cli(tmp_path, source, target, topic, "--accept-target-loss")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "accepted (--accept-target-loss)" in accepted.stdout + accepted.stderr
    later = _cli(tmp_path, source, target, topic)
    assert later.returncode == 0 and "TARGET LOST" not in later.stdout + later.stderr, later.stdout + later.stderr


def test_a_lowered_target_retention_that_deleted_verified_records_is_named_with_the_loss(
    pair: tuple[str, str], unique: str, tmp_path: Path
) -> None:
    """The case of the issue as it arises later: someone lowers the target topic's retention after a verified
    run, and the target's retention pass deletes verified records the source keeps for 30 days."""
    source, target = pair
    topic = f"lowered{unique}"
    create_topic(source, topic, 1)
    _write(source, topic, 1, 300, age_ms=10 * DAY_MS)
    ledger = _ledger(tmp_path)
    verified_run(source, target, topic, ledger)
    alter_topic(target, topic, {"retention.ms": str(7 * DAY_MS)})
    assert wait_for_log_start(target, topic, 0, 300) == 300  # the target deleted all 300

    with pytest.raises(TopicConflictError) as refused:
        planned_run(source, target, MigrationOptions(include=topic), ledger)
    message = str(refused.value)
    assert "retention.ms is 7 days on the target (604800000) but 30 days on the source" in message
    assert f"TARGET LOST VERIFIED RECORDS: target topic {topic} no longer holds 300 verified records" in message
