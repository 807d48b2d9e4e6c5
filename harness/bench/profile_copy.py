"""Profile the copy path in one process, without Spark.

Seeds one partition (default 300k records of 200 bytes) on an Apache Kafka source (the bench's brokers),
then:

1. runs ``kafka_migration.run.copy.copy_partition`` under cProfile and prints the top
   functions by cumulative and by total (own) time;
2. times ``copy_partition`` alone against the baseline loop (harness/bench/baselines.py)
   on the same partition, alternating, each into a fresh target topic, single
   process each, and prints the medians;
3. the same for ``kafka_migration.run.verify.verify_partition`` against the plain
   verification loop, on one of those copies.

    python -m harness.bench.profile_copy [--records N] [--repeat N] [--top N]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness.bench.baselines import baseline_copy, plain_verify
from harness.bench.common import start_broker
from harness.bench.seeding import create_topics, end_offsets, seed_topics
from harness.kafka import stop_all

TOPIC = "profile.one"


def _slice(source: str, target: str, target_topic: str, end: int):  # type: ignore[no-untyped-def]
    from kafka_migration.model.plan import PartitionSlice

    return PartitionSlice(source_topic=TOPIC, target_topic=target_topic, partition=0, start=0, end=end, target_start=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="cProfile copy_partition; copy_partition vs the baseline loop")
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--top", type=int, default=18)
    parser.add_argument("--output", type=Path, default=Path(".bench/profile.txt"))
    args = parser.parse_args(argv)

    from kafka_migration.model.config import ClusterPair
    from kafka_migration.run.copy import copy_partition

    report: list[str] = []

    def out(text: str = "") -> None:
        print(text, flush=True)
        report.append(text)

    def top(profiler: cProfile.Profile, what: str) -> None:
        for order in ("cumulative", "tottime"):
            buf = io.StringIO()
            pstats.Stats(profiler, stream=buf).strip_dirs().sort_stats(order).print_stats(args.top)
            out(f"\n--- {what}: top {args.top} by {order} ---")
            out("\n".join(line for line in buf.getvalue().splitlines() if line.strip()))

    log_dir = Path(tempfile.mkdtemp(prefix="kafka-migration-profile-"))
    clusters = [start_broker(name, log_dir) for name in ("profile-source", "profile-target")]
    src, tgt = clusters
    try:
        seconds = seed_topics(src.bootstrap, {TOPIC: 1}, args.records)
        end = end_offsets(src.bootstrap, {TOPIC: 1})[(TOPIC, 0)]
        out(f"seeded {end:,} records in one partition in {seconds:.1f} s")
        pair = ClusterPair.of_settings({"bootstrap.servers": src.bootstrap}, {"bootstrap.servers": tgt.bootstrap})
        names = ["prof.cprofile"] + [f"prof.copy{i}" for i in range(args.repeat)] + ["prof.warm"]
        create_topics(tgt.bootstrap, dict.fromkeys(names, 1))

        # Warm-up (producer creation, imports), not measured.
        copy_partition(_slice(src.bootstrap, tgt.bootstrap, "prof.warm", end), pair)

        profiler = cProfile.Profile()
        started = time.monotonic()
        profiler.enable()
        result = copy_partition(_slice(src.bootstrap, tgt.bootstrap, "prof.cprofile", end), pair)
        profiler.disable()
        out(
            f"copy_partition under cProfile: {result.records:,} records in {time.monotonic() - started:.2f} s "
            "(profiling overhead included)"
        )
        top(profiler, "copy_partition")

        project: list[float] = []
        base: list[float] = []
        for i in range(args.repeat):
            started = time.monotonic()
            result = copy_partition(_slice(src.bootstrap, tgt.bootstrap, f"prof.copy{i}", end), pair)
            project.append(time.monotonic() - started)
            if result.records != end:
                raise RuntimeError(f"copy_partition copied {result.records}, expected {end}")
            loop = baseline_copy(src.bootstrap, tgt.bootstrap, {TOPIC: 1}, rename=f"base{i}.{{topic}}")
            base.append(loop.seconds)
            out(
                f"repetition {i + 1}: copy_partition {project[-1]:.2f} s ({end / project[-1]:,.0f} rec/s), "
                f"baseline loop {loop.seconds:.2f} s ({end / loop.seconds:,.0f} rec/s)"
            )
        p = statistics.median(project)
        b = statistics.median(base)
        out(
            f"\nmedian: copy_partition {p:.2f} s = {end / p:,.0f} rec/s; baseline loop {b:.2f} s = "
            f"{end / b:,.0f} rec/s; "
            f"copy_partition / baseline throughput {b / p:.2f}x"
        )

        from kafka_migration.run.verify import verify_partition

        task = _slice(src.bootstrap, tgt.bootstrap, "prof.copy0", end)
        profiler = cProfile.Profile()
        started = time.monotonic()
        profiler.enable()
        checked = verify_partition(task, pair)
        profiler.disable()
        out(
            f"\nverify_partition under cProfile: {checked.source_records:,} records, match {checked.match}, "
            f"{time.monotonic() - started:.2f} s (profiling overhead included)"
        )
        top(profiler, "verify_partition")
        project = []
        base = []
        for i in range(args.repeat):
            started = time.monotonic()
            checked = verify_partition(task, pair)
            project.append(time.monotonic() - started)
            if not checked.match:
                raise RuntimeError(f"verify_partition: {checked.first_difference}")
            loop, mismatches = plain_verify(src.bootstrap, tgt.bootstrap, {TOPIC: 1}, rename="prof.copy0")
            if mismatches:
                raise RuntimeError(f"plain verify: {mismatches}")
            base.append(loop.seconds)
            out(
                f"repetition {i + 1}: verify_partition {project[-1]:.2f} s ({end / project[-1]:,.0f} rec/s), "
                f"plain verify loop {loop.seconds:.2f} s ({end / loop.seconds:,.0f} rec/s)"
            )
        p = statistics.median(project)
        b = statistics.median(base)
        out(
            f"\nmedian: verify_partition {p:.2f} s = {end / p:,.0f} rec/s; plain verify loop {b:.2f} s = "
            f"{end / b:,.0f} rec/s; verify_partition / plain throughput {b / p:.2f}x"
        )
    finally:
        stop_all(clusters)
    shutil.rmtree(log_dir, ignore_errors=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(report) + "\n")
    print(f"\nwritten to {args.output.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
