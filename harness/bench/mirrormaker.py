"""Scenario 7: MirrorMaker 2 side by side, on the same pair of Apache Kafka clusters and the same data.

MirrorMaker 2 runs in dedicated mode from the harness's jar set, configured as a migration is
(harness/mirrormaker.py: identity replication policy, group offsets synced, intervals lowered,
exactly-once delivery, replication factor 1), with as many tasks as the project's Spark run has
task slots. Every run gets a fresh target cluster; the order of the two tools rotates.

a. moving W records of 200 B in 8 partitions: MM2 from its launch until its source connector has
   committed every partition's last record on the target (read from its offsets topic, read_committed:
   with exactly-once on, offsets and records commit in one transaction; the target's end offsets run
   ahead of the source's by MM2's commit markers, so equal end offsets never come), against the
   whole verified ``kafka-migrate run``, launch to exit. After each MM2 run (not timed) every target
   partition's record count is checked against the source's. Peak RSS of each tool's process tree
   and its CPU seconds (MM2: until caught up).
b. group accuracy (group_positions.py): the bulk topic and three small ones (transactions, a compacted
   topic, a low-traffic topic), a group committed at each position on the source. MM2 runs until it has
   caught up and the groups' offsets on the target have not changed for SETTLE_SECONDS (at most
   GROUPS_WAIT_SECONDS); ours is ``kafka-migrate run`` then ``kafka-migrate groups sync``. Then, per
   position, the target offset each tool left and what a switched consumer re-reads or skips.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import mirrormaker as mm2
from harness.bench import group_positions as gp
from harness.bench.common import RECORD_BYTES, cli_run_command, fmt, load1, median, ratio, say, table_row
from harness.bench.meter import TreeMeter
from harness.bench.whole import find_timings, median_parts
from harness.bench_kafka import end_offsets, seed_topics
from harness.ports import free_port

if TYPE_CHECKING:
    from harness.bench.runner import Session

NAME = "mm2"
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
REPO = Path(__file__).resolve().parents[2]
TARGETS = {
    "mm2.ratio": (">= 1.0", lambda v: v >= 1.0),
    "mm2.ours_not_exact": ("== 0", lambda v: v == 0),
}


# --- pure helpers (tests/unit/test_bench_mirrormaker.py) -----------------------------------------


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


def properties(source: str, target: str, topics: str, rest_port: int = 0) -> dict[str, str]:
    return mm2.migration_properties(
        source,
        target,
        topics=topics,
        groups=re.escape(gp.GROUP_PREFIX) + ".*",
        rest_port=rest_port,
        tasks=task_slots(),
        intervals=INTERVALS,
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


def signed(result: Mapping[str, Any]) -> int | None:
    """A position's outcome as one number: < 0 re-read, > 0 skipped; None without an offset."""
    if result.get("target_offset") is None:
        return None
    return int(result["skips"]) - int(result["rereads"])


def position_cell(results: Sequence[Mapping[str, Any]]) -> str:
    """The table cell of one position and tool over the repetitions: the median outcome, its range when the
    repetitions differ, and the target offset (of the median repetition)."""
    if not results:
        return "-"
    values = [signed(r) for r in results]
    missing = sum(v is None for v in values)
    present = sorted((v, i) for i, v in enumerate(values) if v is not None)
    if not present:
        return gp.describe(results[0])
    _, mid_index = present[(len(present) - 1) // 2]
    text = f"{gp.describe(results[mid_index])} @{results[mid_index]['target_offset']:,}"
    low, high = present[0][0], present[-1][0]
    if low != high:
        text += f" [{_short(low)}..{_short(high)}]"
    if missing:
        text += f", no offset in {missing}/{len(values)}"
    return text


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def _short(value: int) -> str:
    return "0" if value == 0 else (f"-{-value:,}" if value < 0 else f"+{value:,}")


# --- one run of each tool -------------------------------------------------------------------------


def _last_records(logs: Mapping[tuple[str, int], gp.SourceLog], bulk_ends: Mapping[int, int]) -> dict:
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
) -> dict[str, Any]:
    """MM2 from its launch until it has caught up (and, with ``groups``, until their offsets on the target
    settled); its peak RSS and CPU seconds until caught up."""
    maker = mm2.MirrorMaker(run_dir / "mm2", properties(source, target, topics, free_port()), heap_mb=HEAP_MB)
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

    from kafka_migration.clients import client_settings

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


def _launch(command: list[str], log: Path) -> tuple[int, float, float, dict[str, Any], str]:
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
    code, wall, cpu, figures, output = _launch(command, run_dir / "cli.log")
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
        code, wall, cpu, _, output = _launch(sync, run_dir / "groups.log")
        if code != 0:
            raise RuntimeError(f"kafka-migrate groups sync exited {code}:\n{output[-3000:]}")
        sample["groups_sync_seconds"] = wall
    return sample


# --- the scenario ---------------------------------------------------------------------------------


def seed(session: Session) -> None:
    records = session.sizes["mm2_records"]
    say(f"seeding {TOPIC}: {records:,} records of {RECORD_BYTES} B in {PARTITIONS} partitions")
    session.seeding[TOPIC] = round(seed_topics(session.source, {TOPIC: PARTITIONS}, records, rng_seed=19), 2)
    started = time.monotonic()
    ends = {p: end for (_, p), end in end_offsets(session.source, {TOPIC: PARTITIONS}).items()}
    positions = gp.seed(session.source, TOPIC, ends)
    session.seeding["mm2_positions"] = round(time.monotonic() - started, 2)
    session.raw[NAME] = {"bulk_ends": ends, "positions": [vars(p) for p in positions]}
    say(f"  seeded in {session.seeding[TOPIC]:.1f} s; group positions in {session.seeding['mm2_positions']:.1f} s")


def run(session: Session, repeat: int) -> None:
    raw = session.raw[NAME]
    source = session.source
    ends: dict[int, int] = {int(p): e for p, e in raw["bulk_ends"].items()}
    positions = [gp.Position(**p) for p in raw["positions"]]
    logs = {(p.topic, p.partition): gp.source_log(source, p.topic, p.partition) for p in positions}
    bulk_only = {(TOPIC, p): end - 1 for p, end in ends.items()}
    everything = _last_records(logs, ends)
    source_total = sum(ends.values())
    state_dir = session.work / "mm2-cli-state"
    raw["move"] = {tool: [] for tool in TOOLS}
    raw["groups"] = {tool: [] for tool in TOOLS}
    raw["failures"] = []  # MM2 runs that died or never caught up: reported, left out of the medians
    raw["mirrormaker_properties"] = mm2.shown_properties(properties(source, "<target>", topics_pattern(True)))

    say("scenario 7: warm-up, not measured: one CLI run of the low-traffic topic (ledger created)")
    run_ours(source, session.target.fresh(), session.run_dir(), state_dir, re.escape(TOPIC + gp.LOW_TOPIC_SUFFIX))

    for i in range(repeat):
        say(f"scenario 7 (vs MirrorMaker 2, moving {source_total:,} records), repetition {i + 1}/{repeat}")
        for tool in rotation(i):
            target = session.target.fresh()
            if tool == "mirrormaker":
                try:
                    sample = run_mirrormaker(source, target, session.run_dir(), topics_pattern(False), bulk_only)
                except mm2.MirrorMakerFailed as failure:
                    raw["failures"].append({"phase": "move", "repetition": i + 1, "error": str(failure)})
                    say(f"    {LABELS[tool]} FAILED: {failure}")
                    continue
                counts = count_records(target, TOPIC, PARTITIONS)
                target_ends = end_offsets(target, {TOPIC: PARTITIONS})
                sample["records"] = sum(counts.values())
                sample["counts_equal"] = all(counts[p] == ends[p] for p in ends)
                sample["markers_on_target"] = sum(target_ends.values()) - sum(counts.values())
                if not sample["counts_equal"]:
                    raise RuntimeError(f"MirrorMaker 2 caught up but the target holds {counts}, source {ends}")
            else:
                sample = run_ours(source, target, session.run_dir(), state_dir, topics_pattern(False))
                if sample["records"] != source_total:
                    raise RuntimeError(f"kafka-migrate verified {sample['records']:,} records of {source_total:,}")
            raw["move"][tool].append(sample)
            say(
                f"    {LABELS[tool]}: {sample['seconds']:.1f} s, CPU {sample['cpu_seconds']:.1f} s, peak RSS "
                f"{sample['peak_rss_mib']:.0f} MiB (load {sample['load1_at_start']})"
            )

    for i in range(repeat):
        say(f"scenario 7 (vs MirrorMaker 2, group positions), repetition {i + 1}/{repeat}")
        for tool in rotation(i):
            target = session.target.fresh()
            run_dir = session.run_dir()
            if tool == "mirrormaker":
                try:
                    sample = run_mirrormaker(source, target, run_dir, topics_pattern(True), everything, positions)
                except mm2.MirrorMakerFailed as failure:
                    raw["failures"].append({"phase": "groups", "repetition": i + 1, "error": str(failure)})
                    say(f"    {LABELS[tool]} FAILED: {failure}")
                    continue
                offsets = sample.pop("_offsets")
            else:
                sample = run_ours(source, target, run_dir, state_dir, topics_pattern(True), groups=True)
                offsets = mm2.group_offsets(target, [p.group for p in positions])
                sample["group_offsets"] = {g: {f"{t}[{p}]": o for (t, p), o in v.items()} for g, v in offsets.items()}
            sample["positions"] = gp.measure(target, positions, logs, offsets)
            raw["groups"][tool].append(sample)
            say(
                f"    {LABELS[tool]}: "
                + ", ".join(f"{name} {gp.describe(r)}" for name, r in sample["positions"].items())
            )


def _tool_summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "median_seconds": median([s["seconds"] for s in samples]),
        "median_cpu_seconds": median([s["cpu_seconds"] for s in samples]),
        "median_peak_rss_mib": median([s["peak_rss_mib"] for s in samples]),
        "samples": samples,
    }


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    move = raw.get("move") or {}
    if not move.get("ours"):
        return {}
    tools = {tool: _tool_summary(move[tool]) for tool in TOOLS}
    groups: dict[str, Any] = {}
    not_exact = 0
    for position in raw["positions"]:
        name = position["name"]
        entry: dict[str, Any] = {**position, "group": gp.GROUP_PREFIX + name}
        for tool in TOOLS:
            results = [s["positions"][name] for s in raw["groups"][tool]]
            values = [v for v in (signed(r) for r in results) if v is not None]
            entry[tool] = {
                "results": results,
                "median_signed": median(values) if values else None,
                "missing": len(results) - len(values),
                "cell": position_cell(results),
            }
            if tool == "ours":
                not_exact += sum(signed(r) != 0 for r in results)
        groups[name] = entry
    mm2_groups = raw["groups"]["mirrormaker"]
    return {
        NAME: {
            "records": sum(raw["bulk_ends"].values()),
            "partitions": PARTITIONS,
            "mirrormaker": {
                **tools["mirrormaker"],
                "median_first_commit_seconds": median(
                    [s["first_commit_seconds"] for s in move["mirrormaker"] if "first_commit_seconds" in s]
                ),
                "median_markers_on_target": median([s["markers_on_target"] for s in move["mirrormaker"]]),
                "counts_equal": all(s["counts_equal"] for s in move["mirrormaker"]) if move["mirrormaker"] else None,
                "median_groups_last_change_seconds": median([s["groups_last_change_seconds"] for s in mm2_groups]),
            },
            "ours": {
                **tools["ours"],
                "median_parts": median_parts(move["ours"]),
                "median_groups_run_and_sync_seconds": median(
                    [s["seconds"] + s["groups_sync_seconds"] for s in raw["groups"]["ours"]]
                ),
            },
            "ratio": ratio(tools["mirrormaker"]["median_seconds"], tools["ours"]["median_seconds"]),
            "mirrormaker_failures": raw.get("failures", []),
            "ours_not_exact": not_exact,
            "groups": groups,
            "mirrormaker_properties": raw["mirrormaker_properties"],
            "mirrormaker_heap_mb": HEAP_MB,
            "settle_seconds": SETTLE_SECONDS,
            "groups_wait_seconds": GROUPS_WAIT_SECONDS,
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    m, o = s["mirrormaker"], s["ours"]
    n = s["records"]
    lines = [
        table_row(f"7 vs MirrorMaker 2 {n:,}", "MirrorMaker 2 caught up", n, m["median_seconds"], m["median_seconds"]),
        table_row("", "kafka-migrate run verified", n, o["median_seconds"], o["median_seconds"]),
        f"{'':<28} MM2 s / ours s: {fmt(s['ratio'], 2)}x (target >= 1.0); CPU s MM2 {fmt(m['median_cpu_seconds'])}, "
        f"ours {fmt(o['median_cpu_seconds'])}; peak RSS MM2 {fmt(m['median_peak_rss_mib'], 0)} MiB, ours "
        f"{fmt(o['median_peak_rss_mib'], 0)} MiB",
        f"{'':<28} MM2's start-up (launch to its first commit) {fmt(m['median_first_commit_seconds'])} s; ours "
        + ", ".join(f"{k} {v:.1f}" for k, v in o["median_parts"].items() if k != "wall")
        + " s (its own timings)",
        f"{'':<28} MM2's target: counts equal to the source {_yes(m['counts_equal'])}, "
        f"{fmt(m['median_markers_on_target'], 0)} commit markers (exactly-once) in the target partitions",
        *(
            f"{'':<28} MM2 FAILED ({f['phase']}, repetition {f['repetition']}; left out): {f['error'][:200]}"
            for f in s["mirrormaker_failures"]
        ),
        "",
        f"{'7 group position':<32} {'source offset':>26}  {'kafka-migrate':<26} MirrorMaker 2",
    ]
    for entry in s["groups"].values():
        where = f"{entry['topic']}[{entry['partition']}]@{entry['offset']:,}"
        lines.append(f"{entry['what']:<32} {where:>26}  {entry['ours']['cell']:<26} {entry['mirrormaker']['cell']}")
    lines.append(
        f"{'':<38} groups on the target after (median s): MM2 {fmt(m['median_groups_last_change_seconds'])} from its "
        f"launch (last change); ours {fmt(o['median_groups_run_and_sync_seconds'])} (run + groups sync)"
    )
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    if NAME not in summary:
        return []
    s = summary[NAME]
    return [
        "",
        "Scenario 7: MirrorMaker 2 (dedicated mode, same jars, exactly-once on, "
        f"{s['mirrormaker_properties'].get('tasks.max')} tasks, -Xmx{s['mirrormaker_heap_mb']}m) from its launch until "
        "its offsets topic shows every partition's last record committed, vs the whole verified kafka-migrate run, "
        "launch to exit; fresh target per run. Group cells: what a consumer switched to the target meets, from the "
        "offset each tool committed there (@offset): exact, re-reads N or skips N records; [low..high] the range "
        f"over repetitions (- re-read, + skipped). MM2 waited until the groups' target offsets were unchanged for "
        f"{s['settle_seconds']} s (at most {s['groups_wait_seconds']} s after catching up).",
    ]
