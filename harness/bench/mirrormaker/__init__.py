"""Scenario 7: MirrorMaker 2 side by side, on the same pair of Apache Kafka clusters and the same data.

MirrorMaker 2 runs in dedicated mode from the harness's jar set, configured as a migration is
(harness/kafka/mirrormaker.py: identity replication policy, group offsets synced, intervals lowered,
exactly-once delivery, replication factor 1), with as many tasks as the project's Spark run has
task slots. Every run gets a fresh target cluster; the order of the two tools rotates.

a. moving W records of 200 B in 8 partitions: MM2 from its launch until its source connector has
   committed every partition's last record on the target (read from its offsets topic, read_committed:
   with exactly-once on, offsets and records commit in one transaction; the target's end offsets run
   ahead of the source's by MM2's commit markers, so equal end offsets never come), against the
   whole verified ``kafka-migrate run``, launch to exit. After each MM2 run (not timed) every target
   partition's record count is checked against the source's. Peak RSS of each tool's process tree
   and its CPU seconds (MM2: until caught up).
b. group accuracy (positions.py): the bulk topic and three small ones (transactions, a compacted
   topic, a low-traffic topic), a group committed at each position on the source. MM2 runs until it has
   caught up and the groups' offsets on the target have not changed for SETTLE_SECONDS (at most
   GROUPS_WAIT_SECONDS); ours is ``kafka-migrate run`` then ``kafka-migrate groups sync``. Then, per
   position, the target offset each tool left and what a switched consumer re-reads or skips.

The package: positions (the small topics, the groups and the counting), tools (one run of each
tool), report (medians, the runner's table, docs/benchmarks.md's Markdown); this module is the
scenario the runner drives (seed, run, summarize, table, notes).
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from harness.bench.common import RECORD_BYTES, say
from harness.bench.mirrormaker import positions as gp
from harness.bench.mirrormaker.report import NAME, notes, summarize, table
from harness.bench.mirrormaker.tools import (
    LABELS,
    PARTITIONS,
    TOOLS,
    TOPIC,
    count_records,
    last_records,
    properties,
    rotation,
    run_mirrormaker,
    run_ours,
    topics_pattern,
)
from harness.bench.seeding import end_offsets, seed_topics
from harness.kafka import mirrormaker as mm2

if TYPE_CHECKING:
    from harness.bench.session import Session

__all__ = ["NAME", "PARTITIONS", "TARGETS", "notes", "run", "seed", "summarize", "table"]

TARGETS = {
    "mm2.ratio": (">= 1.0", lambda v: v >= 1.0),
    "mm2.ours_not_exact": ("== 0", lambda v: v == 0),
}


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
    everything = last_records(logs, ends)
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
