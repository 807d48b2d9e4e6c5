"""The two tools of scenario 7, one run each, on a fresh target: MirrorMaker 2 (harness/kafka/mirrormaker.py)
until it has caught up, and kafka-migrate (``run``, then ``groups sync`` when asked) launch to exit; the
settings the scenario gives MM2; the checks of what MM2 left on the target."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.bench.common import cli_run_command, load1
from harness.bench.meter import TreeMeter
from harness.bench.mirrormaker import positions as gp
from harness.bench.whole.metadata import find_timings
from harness.kafka import mirrormaker as mm2
from harness.servers.ports import free_port

TOPIC = "bench.mm2"
PARTITIONS = 8
TOOLS = ("mirrormaker", "ours")
LABELS = {"mirrormaker": "MirrorMaker 2", "ours": "kafka-migrate"}
SMALL_TOPICS = (gp.TX_TOPIC_SUFFIX, gp.COMPACT_TOPIC_SUFFIX, gp.LOW_TOPIC_SUFFIX)
HEAP_MB = 512  # MM2's JVM; the release script's default is -Xmx2G, too much beside the two brokers here
INTERVALS = mm2.Intervals()
SETTLE_SECONDS = max(5, 3 * max(INTERVALS.emit_checkpoints, INTERVALS.sync_group_offsets))
GROUPS_WAIT_SECONDS = 60
CATCH_UP_TIMEOUT = 900
REPO = Path(__file__).resolve().parents[3]


def rotation(repetition: int) -> tuple[str, ...]:
    return TOOLS if repetition % 2 == 0 else TOOLS[::-1]


def topics_pattern(with_small: bool) -> str:
    """The topics of a run, as one regex without commas (MM2 reads its ``topics`` as a comma list)."""
    if not with_small:
        return re.escape(TOPIC)
    return re.escape(TOPIC) + "(" + "|".join(re.escape(s) for s in SMALL_TOPICS) + ")?"


def task_slots() -> int:
    """MM2's tasks.max: the task slots of the project's default Spark master, local[2 x cores]."""
    from kafka_migration.spark.submit import LOCAL_SLOTS_PER_CORE

    return LOCAL_SLOTS_PER_CORE * len(os.sched_getaffinity(0))


def properties(
    source: str, target: str, topics: str, rest_port: int = 0, replication_factor: int = 1
) -> dict[str, str]:
    return mm2.migration_properties(
        source,
        target,
        mm2.Flow(
            topics=topics,
            groups=re.escape(gp.GROUP_PREFIX) + ".*",
            rest_port=rest_port,
            tasks=task_slots(),
            intervals=INTERVALS,
            replication_factor=replication_factor,
        ),
    )


def settled(history: Sequence[tuple[float, Any]], now: float, quiet: float) -> bool:
    """The last value seen (time, value) has not changed for ``quiet`` seconds."""
    if not history:
        return False
    last = history[-1][1]
    since = history[-1][0]
    for stamp, value in reversed(history):
        if value != last:
            break
        since = stamp
    return now - since >= quiet


# --- one run of each tool -------------------------------------------------------------------------


def last_records(logs: Mapping[tuple[str, int], gp.SourceLog], bulk_ends: Mapping[int, int]) -> dict:
    """Offset of the last readable record of each partition MM2 must copy (-1: none)."""
    last = {(TOPIC, p): end - 1 for p, end in bulk_ends.items()}
    for (topic, partition), log in logs.items():
        if topic != TOPIC:
            last[(topic, partition)] = log.offsets[-1] if len(log) else -1
    return last


def run_mirrormaker(
    source: str,
    target: str,
    run_dir: Path,
    topics: str,
    last_records: Mapping[tuple[str, int], int],
    groups: Sequence[gp.Position] = (),
    replication_factor: int = 1,
) -> dict[str, Any]:
    """MM2 from its launch until it has caught up (and, with ``groups``, until their offsets on the target
    settled); its peak RSS and CPU seconds until caught up. ``replication_factor``: of the topics it creates."""
    settings = properties(source, target, topics, free_port(), replication_factor)
    maker = mm2.MirrorMaker(run_dir / "mm2", settings, heap_mb=HEAP_MB)
    reader = mm2.SourceOffsets(target)
    load = load1()
    sample: dict[str, Any] = {"load1_at_start": load}
    try:
        maker.start()
        with TreeMeter(maker.pid) as meter:
            while not mm2.caught_up(copied := reader.poll(0.1), last_records):
                maker.check_alive()
                if copied and "first_commit_seconds" not in sample:  # its start-up is over
                    sample["first_commit_seconds"] = round(time.monotonic() - (maker.started or 0), 3)
                if time.monotonic() - (maker.started or 0) > CATCH_UP_TIMEOUT:
                    raise mm2.MirrorMakerFailed(f"not caught up {CATCH_UP_TIMEOUT} s after its launch")
            sample["seconds"] = round(time.monotonic() - (maker.started or 0), 3)
            sample["cpu_seconds"] = round(meter.cpu_now(), 2)
            sample.update(meter.figures())
            if groups:
                sample.update(_wait_for_groups(maker, target, groups))
        sample["log_errors"] = maker.errors()  # before the stop, whose closing clients log errors of their own
    finally:
        reader.close()
        maker.stop()
    return sample


def _wait_for_groups(maker: mm2.MirrorMaker, target: str, positions: Sequence[gp.Position]) -> dict[str, Any]:
    """Poll the groups' offsets on the target until every position has one and none changed for
    SETTLE_SECONDS, or GROUPS_WAIT_SECONDS passed."""
    names = [p.group for p in positions]
    began = time.monotonic()
    history: list[tuple[float, Any]] = []
    last_change = began
    while True:
        maker.check_alive()
        now = time.monotonic()
        offsets = mm2.group_offsets(target, names)
        frozen = tuple(sorted((g, tuple(sorted(o.items()))) for g, o in offsets.items()))
        if not history or history[-1][1] != frozen:
            last_change = now
        history.append((now, frozen))
        complete = all((p.topic, p.partition) in offsets.get(p.group, {}) for p in positions)
        if (complete and settled(history, now, SETTLE_SECONDS)) or now - began > GROUPS_WAIT_SECONDS:
            return {
                "group_offsets": {g: {f"{t}[{p}]": o for (t, p), o in v.items()} for g, v in offsets.items()},
                "groups_complete": complete,
                "groups_last_change_seconds": round(last_change - (maker.started or 0), 2),
                "_offsets": offsets,
            }
        time.sleep(0.5)


def count_records(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    """Records a read_committed consumer reads in each partition (markers and aborted records excluded)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    from kafka_migration.kafka.settings import client_settings

    consumer = Consumer(
        client_settings(
            {
                "bootstrap.servers": bootstrap,
                "group.id": "bench-mm2-count",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": 10,
            }
        )
    )
    counts = dict.fromkeys(range(partitions), 0)
    open_partitions = set(counts)
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in counts])
        deadline = time.monotonic() + 300
        while open_partitions and time.monotonic() < deadline:
            for message in consumer.consume(10_000, 0.2):
                error = message.error()
                if error is None:
                    counts[message.partition()] += 1
                elif error.code() == KafkaError._PARTITION_EOF:
                    open_partitions.discard(message.partition())
                else:
                    raise RuntimeError(f"counting {topic}: {error.str()}")
    finally:
        consumer.close()
    if open_partitions:
        raise RuntimeError(f"counting {topic}: partitions {sorted(open_partitions)} not read to the end")
    return counts


def launch_metered(command: list[str], log: Path) -> tuple[int, float, float, dict[str, Any], str]:
    """Run a command to its exit under a TreeMeter: (exit code, wall s, CPU s of its tree, meter figures, output)."""
    env = os.environ.copy()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        with TreeMeter(process.pid) as meter:
            code = process.wait()
    wall = time.monotonic() - started
    return code, round(wall, 3), round(meter.cpu_seconds(), 2), meter.figures(), log.read_text(errors="replace")


def _verified_run(state_dir: Path) -> tuple[int, dict[str, float] | None]:
    """Records the newest run's report says it verified, and the run's parts (its timings, when recorded);
    raises unless the run was verified."""
    import json

    reports = sorted((state_dir / "reports").glob("*/report.json"), key=lambda p: p.stat().st_mtime)
    if not reports:
        raise RuntimeError(f"no report.json under {state_dir / 'reports'}")
    report = json.loads(reports[-1].read_text())
    if report.get("verdict") != "VERIFIED" and report.get("run", {}).get("status") != "verified":
        raise RuntimeError(f"run {report.get('run', {}).get('run_id')} not verified: {report.get('verdict')}")
    return int(report["totals"]["records_verified"]), find_timings(report)


def run_ours(source: str, target: str, run_dir: Path, state_dir: Path, topics: str, groups: bool = False) -> dict:
    """``kafka-migrate run`` launch to exit (and, with ``groups``, ``kafka-migrate groups sync`` after it)."""
    load = load1()
    command = cli_run_command(source, target, topics, state_dir)
    code, wall, cpu, figures, output = launch_metered(command, run_dir / "cli.log")
    if code != 0:
        raise RuntimeError(f"kafka-migrate run exited {code}:\n{output[-3000:]}")
    records, timings = _verified_run(state_dir)
    sample: dict[str, Any] = {
        "seconds": wall,
        "cpu_seconds": cpu,
        **figures,
        "records": records,
        "timings": timings,
        "load1_at_start": load,
    }
    if groups:
        sync = [
            *command[: command.index("run")],
            "groups",
            "sync",
            "--source",
            source,
            "--target",
            target,
            "--group",
            re.escape(gp.GROUP_PREFIX) + ".*",
            "--state-dir",
            str(state_dir),
        ]
        code, wall, cpu, _, output = launch_metered(sync, run_dir / "groups.log")
        if code != 0:
            raise RuntimeError(f"kafka-migrate groups sync exited {code}:\n{output[-3000:]}")
        sample["groups_sync_seconds"] = wall
    return sample
