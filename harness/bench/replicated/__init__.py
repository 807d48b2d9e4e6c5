"""Scenario 9: on replicated clusters, as production runs them (three brokers, replication factor 3,
min.insync.replicas=2, acks=all), the whole verified run against MirrorMaker 2 and against the ceiling.

A source and a target of three KRaft nodes each (harness/kafka/replicated.py, production JVM flags, a modest
heap) are started once for the scenario; the source holds W records of 200 B in 8 partitions on 3 replicas.
Per repetition, in an order that rotates, each on a target cleaned first (every topic but Kafka's own
deleted, MM2's internal ones too, and gone from the metadata; not timed):

a. ours: the whole verified ``kafka-migrate run``, launch to exit, every record verified (its report);
b. MirrorMaker 2 (harness/kafka/mirrormaker.py, replication factor 3 for every topic it creates) from its launch
   until its offsets topic shows every partition's last record committed; then the target's records counted
   (not timed);
c. the ceiling: Apache Kafka's kafka-consumer-perf-test reading the W records from the source, then its
   kafka-producer-perf-test writing W records of 200 B with acks=all (ours's batching and compression) into
   an RF-3 topic of the target, each launch to exit; the ceiling is the slower of the two, as if one piped
   into the other at no cost.

Also recorded: the replicas of each target topic (our copy creates its topic with the source topic's
replication factor, capped by the target's broker count: a warm-up topic of replication factor 2 on the
source shows which), and the producer settings of our copy (acks=all).

The package: tools (the clean target, replica checks, the perf tools), report (medians, table, notes);
this module is the scenario the runner drives (seed, run, summarize, table, notes).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from typing import TYPE_CHECKING, Any

from harness.bench.common import RECORD_BYTES, say
from harness.bench.mirrormaker.tools import count_records, run_mirrormaker, run_ours
from harness.bench.replicated.report import NAME, notes, summarize, table
from harness.bench.replicated.tools import (
    LABELS,
    PARTITIONS,
    REPLICATION_FACTOR,
    TOPIC,
    clean_target,
    counts_equal,
    delete_groups,
    end_offsets,
    replicas,
    rotation,
    run_ceiling,
)
from harness.bench.seeding import seed_topics
from harness.kafka import mirrormaker as mm2

if TYPE_CHECKING:
    from harness.bench.session import Session

__all__ = ["NAME", "PARTITIONS", "TARGETS", "notes", "run", "seed", "summarize", "table"]

TARGETS = {
    "replicated.mm2_ratio": (">= 1.0", lambda v: v >= 1.0),
    "replicated.ours_replication_factor": ("== 3", lambda v: v == 3),
}
HEAP_MB = 384  # each of the six broker JVMs: about 3 GB of heap in all beside Spark and MM2 on two cores
WARMUP_TOPIC = "bench.replicated.warmup"
WARMUP_REPLICATION_FACTOR = 2  # below the target's default (3): which one our copy's topic gets shows
PERF_GROUP_PREFIX = "bench-replicated-perf-"


def seed(session: Session) -> None:
    from harness.kafka.replicated import ReplicatedOptions, replicated_clusters

    say("scenario 9: starting a replicated source and target (3 nodes each, RF 3, min.insync.replicas=2)")
    started = time.monotonic()
    clusters = replicated_clusters(
        "bench-rsource",
        "bench-rtarget",
        directory=session.work / "replicated",
        options=ReplicatedOptions(heap_mb=HEAP_MB, fast_start=False),
    )
    source, target = session.resources.enter_context(clusters)
    session.clusters[NAME] = (source, target)
    start_seconds = round(time.monotonic() - started, 2)
    records = session.sizes["replicated_records"]
    say(f"  started in {start_seconds:.1f} s; seeding {TOPIC}: {records:,} records of {RECORD_BYTES} B, RF 3")
    seconds = seed_topics(source.bootstrap, {TOPIC: PARTITIONS}, records, rng_seed=23, replication_factor=3)
    session.seeding[TOPIC] = round(seconds, 2)
    seed_topics(source.bootstrap, {WARMUP_TOPIC: 1}, 1_000, rng_seed=24, replication_factor=WARMUP_REPLICATION_FACTOR)
    session.raw[NAME] = {
        "cluster_start_seconds": start_seconds,
        "ends": end_offsets(source.bootstrap, TOPIC, PARTITIONS),
        "source_replicas": replicas(source.bootstrap, TOPIC),
        "heap_mb": HEAP_MB,
    }
    say(f"  seeded in {seconds:.1f} s")


def _warm_up(source: str, target: str, session: Session) -> dict[str, Any]:
    """One CLI run of the small warm-up topic, not measured: the ledger of the state directory every measured
    run starts from a copy of, and the replication factor our copy gives a topic of RF 2 on the source."""
    template = session.work / "replicated-state"
    say(f"scenario 9: warm-up, not measured: one CLI run of {WARMUP_TOPIC} (RF {WARMUP_REPLICATION_FACTOR})")
    run_ours(source, target, session.run_dir(), template, re.escape(WARMUP_TOPIC))
    return {
        "source": replicas(source, WARMUP_TOPIC)["replication_factor_max"],
        "target": replicas(target, WARMUP_TOPIC)["replication_factor_max"],
    }


def _producer_settings() -> dict[str, Any]:
    """What our copy's producer is given whatever the user sets (kafka_migration's producer_settings)."""
    from kafka_migration.kafka.settings import producer_settings

    settings = producer_settings({}, 1)
    return {key: settings[key] for key in ("acks", "enable.idempotence", "linger.ms", "compression.type")}


def run(session: Session, repeat: int) -> None:
    source_cluster, target_cluster = session.clusters[NAME]
    source, target = source_cluster.bootstrap, target_cluster.bootstrap
    raw = session.raw[NAME]
    session.target.stop()  # the one-node target of the other scenarios idles meanwhile: its JVM is not needed
    ends: dict[int, int] = {int(p): e for p, e in raw["ends"].items()}
    total = sum(ends.values())
    last_records = {(TOPIC, p): end - 1 for p, end in ends.items()}
    raw["samples"] = {tool: [] for tool in LABELS}
    raw["failures"] = []
    raw["cleanup_seconds"] = []
    raw["ours_producer"] = _producer_settings()
    raw["warmup_replication_factor"] = _warm_up(source, target, session)
    raw["load_at_start"] = [round(x, 2) for x in os.getloadavg()]

    for i in range(repeat):
        say(f"scenario 9 (replicated, {total:,} records), repetition {i + 1}/{repeat}")
        for tool in rotation(i):
            began = time.monotonic()
            clean_target(target)
            raw["cleanup_seconds"].append(round(time.monotonic() - began, 2))
            run_dir = session.run_dir()
            if tool == "ours":
                state_dir = session.work / f"replicated-state-{i}"
                shutil.copytree(session.work / "replicated-state", state_dir)
                sample = run_ours(source, target, run_dir, state_dir, re.escape(TOPIC))
                if sample["records"] != total:
                    raise RuntimeError(f"kafka-migrate verified {sample['records']:,} records of {total:,}")
                sample["replicas"] = replicas(target, TOPIC)
            elif tool == "mirrormaker":
                try:
                    sample = run_mirrormaker(
                        source, target, run_dir, re.escape(TOPIC), last_records, replication_factor=REPLICATION_FACTOR
                    )
                except mm2.MirrorMakerFailed as failure:
                    raw["failures"].append({"repetition": i + 1, "error": str(failure)})
                    say(f"    {LABELS[tool]} FAILED: {failure}")
                    continue
                counts = count_records(target, TOPIC, PARTITIONS)
                sample["records"] = sum(counts.values())
                sample["counts_equal"] = counts_equal(counts, ends)
                if not sample["counts_equal"]:
                    raise RuntimeError(f"MirrorMaker 2 caught up but the target holds {counts}, source {ends}")
                sample["replicas"] = replicas(target, TOPIC)
            else:
                sample = run_ceiling(source, target, run_dir, total, RECORD_BYTES, f"{i}")
                delete_groups(source, PERF_GROUP_PREFIX)
            raw["samples"][tool].append(sample)
            say(
                f"    {LABELS[tool]}: {sample['seconds']:.1f} s"
                + (
                    f" (consumer {sample['consumer']['seconds']:.1f} s, producer {sample['producer']['seconds']:.1f} s)"
                    if tool == "ceiling"
                    else f", CPU {sample['cpu_seconds']:.1f} s, peak RSS {sample['peak_rss_mib']:.0f} MiB"
                )
                + f" (load {sample['load1_at_start']})"
            )
    clean_target(target)
