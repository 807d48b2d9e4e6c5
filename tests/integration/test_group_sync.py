"""Consumer group offset sync on Apache Kafka, with real consumers, on both ledger backends.

ONE migration (spark-submit is the slow part) copies a few small topics with offset gaps, renamed
to ``src.<topic>``; its evidence is recorded in a SQLite and in a PostgreSQL ledger, and every test
below syncs its own groups through one of them.

The transactional topic ends with a commit marker, and its aborted records are skipped by
read_committed consumers on both clusters: the "inside an aborted range" group's consumer reads
next the first committed record after the range, on the source and on the target alike.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from harness.data.read import read_partition
from harness.data.seed import create_topic, producer, send
from harness.servers.postgres import database_url, optional_databases
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.groups.sync import GroupSyncOptions, sync_groups
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger
from kafka_migration.model.config import ClusterConfig, MigrationOptions
from kafka_migration.model.groups import (
    BOTH_AT_END,
    KEPT_AHEAD,
    NOT_TRANSLATABLE,
    SAME_RECORD,
    SYNCED,
    TARGET_ACTIVE,
    UNCHANGED,
)
from kafka_migration.model.offsets import BEFORE
from kafka_migration.model.state import CommittedOffset
from kafka_migration.run.evidence import record_run
from kafka_migration.run.pipeline import run_migration
from kafka_migration.spark.submit import SparkLauncher
from tests.conftest import IN_CI, missing

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = [sys.executable, "-m", "kafka_migration.cli"]


@dataclass(frozen=True)
class Migrated:
    source: str
    target: str
    prefix: str
    ledgers: dict[str, str]  # backend -> ledger URL, both holding the same verified run

    def topic(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    def config(self, role: str) -> ClusterConfig:
        return ClusterConfig(role, {"bootstrap.servers": self.source if role == "source" else self.target})


def _seed(bootstrap: str, prefix: str) -> None:
    for name, n in (("orders", 3), ("tx", 2), ("late", 1), ("excl", 1)):
        create_topic(bootstrap, f"{prefix}.{name}", n)
    p = producer(bootstrap)
    for i in range(180):  # 60 per partition
        send(p, f"{prefix}.orders", i % 3, f"o{i}".encode(), f"order {i}".encode())
    for i in range(20):  # before the first run of `late`, which starts at latest: never copied
        send(p, f"{prefix}.late", 0, f"l{i}".encode(), b"before")
    for i in range(5):
        send(p, f"{prefix}.excl", 0, None, f"e{i}".encode())
    p.flush(30)
    # tx[p]: records 0..4, commit marker 5, aborted 6..8, abort marker 9, records 10..13, commit marker 14
    tx = producer(bootstrap, **{"transactional.id": f"{prefix}-tx"})
    tx.init_transactions(10)
    for count, commit in ((5, True), (3, False), (4, True)):
        tx.begin_transaction()
        for i in range(count * 2):
            send(tx, f"{prefix}.tx", i % 2, f"t{i}".encode(), f"{'kept' if commit else 'aborted'} {i}".encode())
        if commit:
            tx.commit_transaction(10)
        else:
            tx.flush(10)
            tx.abort_transaction(10)


@pytest.fixture(scope="module")
def migrated(clusters, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Migrated]:  # type: ignore[no-untyped-def]
    prefix = f"gs{uuid.uuid4().hex[:6]}"
    _seed(clusters.source, prefix)
    state_dir = tmp_path_factory.mktemp("group-sync")
    sqlite_url = f"sqlite:///{state_dir / 'ledger.db'}"
    ledger = Ledger.open(sqlite_url)
    source = ClusterConfig("source", {"bootstrap.servers": clusters.source})
    target = ClusterConfig("target", {"bootstrap.servers": clusters.target})
    # Run 1: `late` starts at latest (offset 20): its first 20 records are never copied.
    first = run_migration(
        source,
        target,
        MigrationOptions(include=f"{prefix}\\.late", rename="src.{topic}", start="latest"),
        state_dir,
        ledger,
        launch=SparkLauncher(),
    )
    p = producer(clusters.source)
    for i in range(20):
        send(p, f"{prefix}.late", 0, f"l{i}".encode(), b"after")
    p.flush(10)
    # Run 2: everything else from the start, renamed; `late` continues at its checkpoint.
    second = run_migration(
        source,
        target,
        MigrationOptions(include=f"{prefix}\\..*", exclude=f"{prefix}\\.excl", rename="src.{topic}"),
        state_dir,
        ledger,
        launch=SparkLauncher(),
    )
    assert first.verified and second.verified, second.rows
    # Where a run's time went, from the task rows' stamps (one Spark application copies and verifies).
    timings = second.timings
    assert timings is not None and timings.copy > 0 and timings.verify > 0
    assert timings.plan > 0 and timings.wall >= timings.plan + max(timings.copy, timings.verify)
    assert [(p.origin, p.start) for p in first.plan.topic(f"{prefix}.late").partitions] == [("latest", 20)]
    # Produce after the runs: orders[0] now holds records beyond the verified range.
    for i in range(5):
        send(p, f"{prefix}.orders", 0, b"new", f"after the run {i}".encode())
    p.flush(10)
    ledgers = {"sqlite": sqlite_url}
    # Without a server (outside CI) only the SQLite ledger: a skip here would skip its tests too.
    with optional_databases("km_test", required=IN_CI) as names:
        if names is not None:  # the same evidence, recorded in a PostgreSQL ledger
            pg_url = database_url(names[0])
            pg = Ledger.open(pg_url)
            for outcome in (first, second):
                pg.start_run(outcome.plan, trigger="cli")
                record_run(pg, outcome.evidence, outcome.timings, tmp_path_factory.mktemp("reports"))
            ledgers["postgresql"] = pg_url
        yield Migrated(clusters.source, clusters.target, prefix, ledgers)


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_backend(request: pytest.FixtureRequest, migrated: Migrated) -> str:
    if request.param not in migrated.ledgers:
        missing("PostgreSQL not reachable")
    return request.param


def _commit(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    """Commit like a consumer application does (OffsetCommit), without joining the group."""
    consumer = Consumer(client_settings({"bootstrap.servers": bootstrap, "group.id": group}))
    try:
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def _committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    cluster = GroupCluster(ClusterConfig("target", {"bootstrap.servers": bootstrap}))
    return {k: v.offset for k, v in cluster.committed(group).items()}


def _group_consumer(bootstrap: str, group: str) -> Any:
    return Consumer(
        client_settings(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "error",  # start from the committed offsets, or fail
                "max.poll.interval.ms": 10000,  # a short rebalance timeout: a test's consumer leaves quickly
                "session.timeout.ms": 6000,
            }
        )
    )


def _first_records(bootstrap: str, group: str, topics: list[str], partitions: int) -> dict[tuple[str, int], Any]:
    """Subscribe with the group and poll: the first record of every partition (None: the partition is at its end)."""
    consumer = _group_consumer(bootstrap, group)
    consumer.subscribe(topics)
    first: dict[tuple[str, int], Any] = {}
    deadline = time.monotonic() + 60
    try:
        while len(first) < partitions and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            key = (msg.topic(), msg.partition())
            if msg.error():
                assert msg.error().code() == KafkaError._PARTITION_EOF, msg.error().str()
                first.setdefault(key, None)
                continue
            first.setdefault(key, (msg.key(), msg.value(), msg.headers(), msg.timestamp()[1]))
    finally:
        consumer.close()
    assert len(first) == partitions, f"only {sorted(first)} answered within 60 s"
    return first


def _source_record(bootstrap: str, topic: str, partition: int, offset: int) -> Any:
    records = read_partition(bootstrap, topic, partition, start=offset)
    if not records:
        return None
    r = records[0]
    return (r["key"], r["value"], r["headers"] or None, r["timestamp"])


def test_offsets_translate_exactly_and_a_consumer_continues_on_the_target(
    migrated: Migrated, ledger_backend: str
) -> None:
    m = migrated
    group = f"{m.prefix}-matrix-{ledger_backend}"
    beyond = f"{m.prefix}-beyond-{ledger_backend}"
    committed = {
        (m.topic("orders"), 0): 0,  # the very start
        (m.topic("orders"), 1): 30,  # the middle
        (m.topic("orders"), 2): 60,  # the end of the verified range (60 records)
        (m.topic("tx"), 0): 6,  # just after a commit marker
        (m.topic("tx"), 1): 7,  # inside an aborted range
        (m.topic("late"), 0): 5,  # before the first copied record (the first run started at latest)
        (m.topic("excl"), 0): 2,  # a topic the migration excluded: ignored
    }
    _commit(m.source, group, committed)
    _commit(m.source, beyond, {(m.topic("orders"), 0): 64})  # past the verified end (60)
    ledger = Ledger.open(m.ledgers[ledger_backend])

    result = sync_groups(
        m.config("source"),
        m.config("target"),
        ledger,
        GroupSyncOptions(groups=f"{m.prefix}-(matrix|beyond)-{ledger_backend}"),
    )

    by_key = {(p.group_id, p.source_topic, p.partition): p for p in result.partitions}
    assert result.exit_code == 1 and [p.group_id for p in result.failures()] == [beyond]
    not_done = by_key[beyond, m.topic("orders"), 0]
    assert not_done.outcome == NOT_TRANSLATABLE and "run the migration first" in not_done.reason
    assert _committed(m.target, beyond) == {}  # not touched
    mine = {(t, p): by_key[group, t, p] for (t, p) in committed if (group, t, p) in by_key}
    assert set(mine) == set(committed) - {(m.topic("excl"), 0)}
    assert result.groups[[g.group_id for g in result.groups].index(group)].ignored_topics == (m.topic("excl"),)
    assert all(p.outcome == SYNCED for p in mine.values()), [(p.name(), p.outcome, p.reason) for p in mine.values()]
    assert {k: p.proof for k, p in mine.items() if p.proof != SAME_RECORD} == {(m.topic("orders"), 2): BOTH_AT_END}
    assert all(p.target_topic == "src." + p.source_topic for p in mine.values())  # renamed
    assert mine[m.topic("orders"), 1].target_offset == 30
    assert mine[m.topic("tx"), 0].target_offset == 5  # the commit marker at 5 has no target offset
    late = mine[m.topic("late"), 0]
    assert (late.translation, late.target_offset) == (BEFORE, 0) and "before the first copied record" in late.reason
    assert mine[m.topic("orders"), 0].lag == 65  # 60 + 5 new, none read yet
    on_target = _committed(m.target, group)
    assert on_target == {("src." + p.source_topic, p.partition): p.target_offset for p in mine.values()}

    # A real consumer of the same group on the target reads next exactly what it would have read on the source.
    topics = ["src." + m.topic(n) for n in ("orders", "tx", "late")]
    first = _first_records(m.target, group, topics, partitions=6)
    for (topic, partition), offset in committed.items():
        if topic == m.topic("excl"):
            continue
        start = 20 if topic == m.topic("late") else offset  # `late`: the first copied record
        expected = _source_record(m.source, topic, partition, start)
        assert first["src." + topic, partition] == expected, (topic, partition)
    assert first["src." + m.topic("orders"), 2] is None  # at the end on both sides

    # A second sync changes nothing.
    again = sync_groups(m.config("source"), m.config("target"), ledger, GroupSyncOptions(groups=group))
    assert again.exit_code == 0 and {p.outcome for p in again.partitions} == {UNCHANGED}
    assert _committed(m.target, group) == on_target
    rows = ledger.group_sync_rows(sync_id=result.sync_id)
    assert len(rows) == 7 and {r.outcome for r in rows} == {SYNCED, NOT_TRANSLATABLE}
    assert {s["sync_id"] for s in ledger.group_syncs_page().rows} >= {result.sync_id, again.sync_id}


def _cli(*args: str, ledger: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*KAFKA_MIGRATE, *args, "--ledger", ledger], capture_output=True, text=True, timeout=120, check=False
    )


def test_active_target_group_is_untouched_and_no_rewind_without_allow_rewind(migrated: Migrated) -> None:
    m = migrated
    ledger = m.ledgers["sqlite"]
    active, ahead = f"{m.prefix}-active", f"{m.prefix}-ahead"
    for group in (active, ahead):
        _commit(m.source, group, {(m.topic("orders"), 0): 10, (m.topic("orders"), 1): 10})
    target_orders = "src." + m.topic("orders")
    target = GroupCluster(m.config("target"))
    target.alter_offsets(ahead, {(target_orders, 0): CommittedOffset(50), (target_orders, 1): CommittedOffset(5)})
    consumer = _group_consumer(m.target, active)  # an active member on the target
    consumer.subscribe([target_orders])
    try:
        deadline = time.monotonic() + 60
        while target.states([active])[active][0] != "STABLE" and time.monotonic() < deadline:
            consumer.poll(0.5)
        sync = ["groups", "sync", "--source", m.source, "--target", m.target]
        result = _cli(*sync, "--group", f"{m.prefix}-(active|ahead)", ledger=ledger)
        assert result.returncode == 1, result.stdout + result.stderr
        assert f"group {active} {m.topic('orders')}[0] ({TARGET_ACTIVE})" in result.stdout
        assert "active members on the target" in result.stdout
        assert f"group {ahead} {m.topic('orders')}[0] ({KEPT_AHEAD})" in result.stdout
        assert "--allow-rewind" in result.stdout
        assert _committed(m.target, ahead) == {(target_orders, 0): 50, (target_orders, 1): 10}  # [1] moved on
        assert _committed(m.target, active) == {}
    finally:
        consumer.close()

    dry = _cli(*sync, "--group", ahead, "--allow-rewind", "--dry-run", ledger=ledger)
    assert dry.returncode == 0 and "would_sync" in dry.stdout and "no offset was written" in dry.stdout, dry.stdout
    assert _committed(m.target, ahead)[target_orders, 0] == 50  # a dry run writes nothing
    rewound = _cli(*sync, "--group", ahead, "--allow-rewind", ledger=ledger)
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert _committed(m.target, ahead) == {(target_orders, 0): 10, (target_orders, 1): 10}
    history = _cli("history", ledger=ledger)
    assert "Group syncs:" in history.stdout and history.stdout.count("groups-") >= 2
    rewind_sync, first_sync = (s["sync_id"] for s in Ledger.open(ledger).group_syncs_page().rows[:2])
    shown = _cli("groups", "show", rewind_sync, ledger=ledger)
    assert shown.returncode == 0 and f"Group sync {rewind_sync}" in shown.stdout, shown.stdout + shown.stderr
    assert f"{ahead}  {m.topic('orders')}[0]" in shown.stdout and "moved back from 50" in shown.stdout
    shown = _cli("groups", "show", first_sync, ledger=ledger)
    assert shown.returncode == 1 and TARGET_ACTIVE in shown.stdout and KEPT_AHEAD in shown.stdout


def test_bad_input_exits_2_with_one_line_and_writes_nothing(migrated: Migrated, tmp_path: Path) -> None:
    m = migrated
    ledger = m.ledgers["sqlite"]
    group = f"{m.prefix}-bad"
    _commit(m.source, group, {(m.topic("orders"), 0): 3})
    before = Ledger.open(ledger).group_syncs_page().rows
    Ledger.open(f"sqlite:///{tmp_path / 'empty.db'}").engine.dispose()  # a ledger that exists but holds no runs
    sync = ["groups", "sync", "--source", m.source, "--target", m.target]
    cases = {  # name -> (arguments, ledger, expected message)
        "bad pattern": ([*sync, "--group", "("], ledger, "Param groups) pattern '(' is not a valid"),
        "no group": ([*sync, "--group", f"{m.prefix}-nobody"], ledger, "No consumer group on the source"),
        "empty ledger": (
            [*sync, "--group", group],
            f"sqlite:///{tmp_path / 'empty.db'}",
            "holds no verified migration from cluster",
        ),
        "unreachable": (
            ["groups", "sync", "--source", m.source, "--target", "127.0.0.1:1", "--group", group],
            ledger,
            "No bootstrap broker of the target cluster answers at 127.0.0.1:1",  # run's words, in seconds
        ),
    }
    with ThreadPoolExecutor(len(cases)) as pool:  # independent processes: side by side
        results = dict(zip(cases, pool.map(lambda c: _cli(*c[0], ledger=c[1]), cases.values()), strict=True))
    for name, (_args, _ledger, message) in cases.items():
        result = results[name]
        assert result.returncode == 2, (name, result.stdout, result.stderr)
        assert result.stderr.startswith("error: ") and message in result.stderr, (name, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (name, result.stderr)
        assert result.stdout == "", name
    assert _committed(m.target, group) == {}
    assert Ledger.open(ledger).group_syncs_page().rows == before
    _commit(m.source, f"{m.prefix}-elsewhere", {(m.topic("excl"), 0): 1})
    with pytest.raises(ConfigurationError, match="has committed offsets on a topic migrated"):
        sync_groups(
            m.config("source"),
            m.config("target"),
            Ledger.open(ledger),
            GroupSyncOptions(groups=f"{m.prefix}-elsewhere"),
        )
