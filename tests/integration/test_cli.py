"""``kafka-migrate run`` as a user runs it: a subprocess, real brokers, real spark-submit.

Spark start-up is the slow part (about 10 s per spark-submit, two per run), so the
module makes ONE full run and the tests below each check one aspect of it. During
that run a background thread keeps producing to one of the topics, so the same run
also shows that records arriving after planning stay on the source.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from harness.data.read import read_partition, without_offsets
from harness.data.seed import KEEP_FOREVER, OLD_TIMESTAMP, create_topic, producer, send
from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.run.topic_configs import AT_TARGET_DEFAULT, SET_ON_TOPIC
from tests.commands import kafka_migrate_run as kafka_migrate

pytestmark = [pytest.mark.integration, pytest.mark.spark]

DEAD = "127.0.0.1:1"


def topic_partitions(bootstrap: str) -> dict[str, int]:
    metadata = AdminClient(client_settings({"bootstrap.servers": bootstrap})).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in metadata.topics.items()}


# -- the one full run --------------------------------------------------------------------------

PARTITIONS = {"orders": 3, "empty": 2, "skewed": 4, "tx": 2, "busy": 3, "excluded": 1, "compacted": 2, "big": 1}
COPIED = ("orders", "empty", "skewed", "tx", "busy", "compacted", "big")
# Topic configs that must land on the target whatever labels the broker puts on them (topic_configs.py).
CONFIGS = {
    "orders": KEEP_FOREVER,  # its records are from 2000
    "compacted": {"cleanup.policy": "compact"},
    "big": {"max.message.bytes": "2097152"},
}


def seed(bootstrap: str, prefix: str) -> None:
    for name, n in PARTITIONS.items():
        create_topic(bootstrap, f"{prefix}.{name}", n, CONFIGS.get(name))
    p = producer(bootstrap)
    for i in range(900):  # null/empty keys and values, tombstones, repeated headers, old timestamps
        key = [None, b"", f"order-{i}".encode()][i % 3]
        value = [None, b"", f"amount={i}".encode() * 4][(i // 3) % 3]
        headers = [("trace", f"t{i}".encode()), ("trace", None), ("tenant", b"")] if i % 5 == 0 else None
        send(p, f"{prefix}.orders", i % 3, key, value, headers=headers, timestamp=OLD_TIMESTAMP + i)
    for i in range(1200):  # nearly everything in partition 0, a little in 3, nothing in 1 and 2
        send(p, f"{prefix}.skewed", 0 if i % 60 else 3, None, f"click-{i}".encode())
    for i in range(300):
        send(p, f"{prefix}.busy", i % 3, f"early-{i}".encode(), b"before the run")
    send(p, f"{prefix}.excluded", 0, b"k", b"must not be copied")
    for i in range(60):  # keyed, with updates of the same keys and tombstones: what compaction is for
        send(p, f"{prefix}.compacted", i % 2, f"user-{i % 7}".encode(), None if i % 11 == 0 else f"v{i}".encode())
    p.flush(30)
    big = producer(bootstrap, **{"message.max.bytes": 2_200_000})
    send(big, f"{prefix}.big", 0, b"blob", b"x" * 1_500_000)  # above Kafka's default limit of 1 MB
    big.flush(30)
    tx = producer(bootstrap, **{"transactional.id": f"{prefix}-tx"})  # commit markers leave offset gaps
    tx.init_transactions(10)
    for t in range(4):
        tx.begin_transaction()
        for i in range(10):
            send(tx, f"{prefix}.tx", i % 2, f"pay-{t}-{i}".encode(), f"{i}".encode())
        tx.commit_transaction(10)  # each partition of tx ends with a commit marker


@dataclass
class Run:
    prefix: str
    result: subprocess.CompletedProcess[str]
    state_dir: Path
    plan: MigrationPlan
    late_records: int
    seconds: float

    def name(self, short: str) -> str:
        return f"{self.prefix}.{short}"


@pytest.fixture(scope="module")
def run(clusters, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:  # type: ignore[no-untyped-def]
    prefix = f"cli{uuid.uuid4().hex[:8]}"
    seed(clusters.source, prefix)
    state_dir = tmp_path_factory.mktemp("cli-state")
    stop = threading.Event()
    late = [0]

    def keep_producing() -> None:
        p = producer(clusters.source)  # batched, as applications write
        while not stop.is_set():
            send(p, f"{prefix}.busy", late[0] % 3, f"late-{late[0]}".encode(), b"during the run")
            late[0] += 1
            p.poll(0)
            stop.wait(0.005)
        p.flush(10)

    writer = threading.Thread(target=keep_producing, daemon=True)
    writer.start()
    started = time.monotonic()
    try:
        result = kafka_migrate(
            "--source", clusters.source,
            "--target", clusters.target,
            "--include", f"{prefix}\\..*",
            "--exclude", f"{prefix}\\.excluded",
            "--master", "local[2]",
            state_dir=state_dir,
        )  # fmt: skip
    finally:
        seconds = time.monotonic() - started
        stop.set()
        writer.join(timeout=20)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    (plan_path,) = state_dir.glob("runs/*/plan.json")
    yield Run(prefix, result, state_dir, MigrationPlan.read(plan_path), late[0], seconds)


def test_run_exits_0_and_reports_verified(run: Run) -> None:
    assert run.result.returncode == 0
    assert f"Migration {run.plan.run_id} verified: every partition matches on count and checksum." in run.result.stdout
    # the summary table: one row per topic, starting with its source topic name
    table = run.result.stdout.split("\nsource topic", 1)[1].split("Run files:")[0]
    for short in COPIED:
        (row,) = [line for line in table.splitlines() if line.startswith(run.name(short) + " ")]
        assert row.split()[-2] == "verified", row
    assert f"{len(COPIED)} topics, " in table and f" {len(COPIED)} verified" in table
    assert "Traceback" not in run.result.stderr


def test_plan_selects_the_included_topics_and_skips_the_excluded_one(run: Run, clusters) -> None:  # type: ignore[no-untyped-def]
    assert {t.source_topic for t in run.plan.topics} == {run.name(s) for s in COPIED}
    assert run.plan.skipped_topics == {run.name("excluded"): "matches the exclude pattern"}
    on_target = topic_partitions(clusters.target)
    assert run.name("excluded") not in on_target
    for short in COPIED:
        assert on_target[run.name(short)] == PARTITIONS[short], short


def test_target_partitions_equal_the_source(run: Run, clusters) -> None:  # type: ignore[no-untyped-def]
    """Read independently of the pipeline: every partition's records, in order, without offsets."""
    for topic in run.plan.topics:
        for part in topic.partitions:
            source = read_partition(clusters.source, topic.source_topic, part.partition)
            target = read_partition(clusters.target, topic.target_topic, part.partition)
            if topic.source_topic not in (run.name("busy"), run.name("tx")):  # nothing else was written during the run
                assert part.end == (source[-1]["offset"] + 1 if source else 0)
            planned = [r for r in source if part.start <= r["offset"] < part.end]
            assert without_offsets(target) == without_offsets(planned), (topic.source_topic, part.partition)
            assert [r["offset"] for r in target] == list(range(len(target)))
    sizes = {
        (short, p): len(read_partition(clusters.target, run.name(short), p))
        for short in ("empty", "skewed", "tx")
        for p in range(PARTITIONS[short])
    }
    assert sizes == {
        ("empty", 0): 0, ("empty", 1): 0,
        ("skewed", 0): 1180, ("skewed", 1): 0, ("skewed", 2): 0, ("skewed", 3): 20,
        ("tx", 0): 20, ("tx", 1): 20,
    }  # fmt: skip
    tx_source = read_partition(clusters.source, run.name("tx"), 0)
    assert tx_source[-1]["offset"] + 1 > len(tx_source), "commit markers should leave gaps in the source"
    tx_plan = run.plan.topic(run.name("tx")).partitions[0]
    assert tx_plan.end == tx_source[-1]["offset"] + 2  # the partition ends with the last commit marker


def test_records_produced_during_the_run_stay_on_the_source(run: Run, clusters) -> None:  # type: ignore[no-untyped-def]
    busy = run.plan.topic(run.name("busy"))
    assert run.late_records > 0
    beyond = 0
    for part in busy.partitions:
        source = read_partition(clusters.source, busy.source_topic, part.partition)
        target = read_partition(clusters.target, busy.target_topic, part.partition)
        planned = [r for r in source if part.start <= r["offset"] < part.end]
        beyond += sum(r["offset"] >= part.end for r in source)
        # exactly the planned range: same records, nothing after the planned end
        assert len(target) == len(planned)
        assert without_offsets(target) == without_offsets(planned)
        late_on_target = {r["key"] for r in target if r["key"].startswith(b"late-")}
        late_beyond = {r["key"] for r in source if r["offset"] >= part.end}
        assert not late_on_target & late_beyond
    # The writer kept going through planning, copy and verification: many records came
    # after the planned end (the run takes several seconds; the writer sends ~100/s).
    assert beyond > 0 and beyond >= run.late_records // 2, (beyond, run.late_records, run.seconds)


def test_compacted_and_large_record_topics_land_with_their_configs(run: Run, clusters) -> None:  # type: ignore[no-untyped-def]
    """Apache Kafka labels a topic's overrides DYNAMIC_TOPIC_CONFIG: copied as set on the topic."""
    admin = AdminClient(client_settings({"bootstrap.servers": clusters.target}))
    resources = [ConfigResource(ResourceType.TOPIC, run.name(short)) for short in CONFIGS]
    on_target = {
        r.name: {k: e.value for k, e in f.result(15).items()} for r, f in admin.describe_configs(resources).items()
    }
    assert on_target[run.name("compacted")]["cleanup.policy"] == "compact"
    assert on_target[run.name("big")]["max.message.bytes"] == "2097152"
    # Each config's decision is reported: in the plan, the printed plan and the report.
    compacted = run.plan.topic(run.name("compacted"))
    assert compacted.config_decisions["cleanup.policy"] == SET_ON_TOPIC
    # Kafka's default max.message.bytes on both sides: the target's brokers give it, so it is not set.
    assert compacted.config_decisions["max.message.bytes"] == AT_TARGET_DEFAULT.format(
        value="max.message.bytes=1048588", broker="message.max.bytes"
    )
    assert "max.message.bytes" not in compacted.configs and compacted.max_message_bytes == 1048588
    assert f"cleanup.policy: {SET_ON_TOPIC}" in run.result.stdout
    (report,) = run.state_dir.glob(f"reports/{run.plan.run_id}/report.json")
    topics = {t["source_topic"]: t for t in json.loads(report.read_text())["topics"]}
    assert topics[run.name("big")]["config_decisions"]["max.message.bytes"] == SET_ON_TOPIC


def test_a_second_run_accepts_its_own_compacted_target_topic(run: Run, clusters) -> None:  # type: ignore[no-untyped-def]
    """Before, the compacted topic landed with the target's default policy and the next run refused it."""
    result = kafka_migrate(
        "--source", clusters.source, "--target", clusters.target,
        "--include", f"{run.prefix}\\.(compacted|big)", "--master", "local[2]",
        state_dir=run.state_dir,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "conflict" not in result.stderr
    assert "nothing new on the source since the last verified run" in result.stdout
    # An up-to-date run records where its time went too (a cutover's final run often is one), and says so.
    assert result.stdout.rstrip().splitlines()[-1].startswith("Wall ")
    newest = max(run.state_dir.glob("reports/*/report.md"), key=lambda p: p.stat().st_mtime)
    assert "No timings were recorded" not in newest.read_text() and "Wall time" in newest.read_text()


# -- runs without Spark -------------------------------------------------------------------------


def test_dry_run_exits_0_and_creates_nothing(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    prefix = f"dry{unique}"
    create_topic(clusters.source, f"{prefix}.a", 2)
    p = producer(clusters.source)
    for i in range(10):
        send(p, f"{prefix}.a", i % 2, b"k", b"v")
    p.flush(10)
    before = topic_partitions(clusters.target)

    result = kafka_migrate(
        "--source", clusters.source, "--target", clusters.target, "--include", f"{prefix}\\..*", "--dry-run",
        state_dir=tmp_path,
    )  # fmt: skip

    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{prefix}.a" in result.stdout  # the plan is shown
    assert "Dry run: nothing was created or copied." in result.stdout
    assert topic_partitions(clusters.target) == before


def test_invalid_regex_exits_2_with_a_clear_message(clusters, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = kafka_migrate(
        "--source", clusters.source, "--target", clusters.target, "--include", "orders(", state_dir=tmp_path
    )
    assert result.returncode == 2
    assert "error: The include pattern 'orders(' is not a valid regular expression" in result.stderr
    assert "Traceback" not in result.stderr


def test_unreachable_source_exits_2_with_a_clear_message(clusters, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    before = topic_partitions(clusters.target)
    started = time.monotonic()
    result = kafka_migrate("--source", DEAD, "--target", clusters.target, state_dir=tmp_path, timeout=60)
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stdout + result.stderr
    # Refused by the reach check before Spark starts (kafka/reach.py); planning's own 30 s bound is not waited for.
    assert f"error: No bootstrap broker of the source cluster answers at {DEAD}" in result.stderr
    assert "Traceback" not in result.stderr and "Spark" not in result.stderr
    assert elapsed < 30 + 5  # the 30 s bound plus interpreter start-up
    assert topic_partitions(clusters.target) == before
