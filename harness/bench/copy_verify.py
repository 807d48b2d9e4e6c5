"""Scenarios 1 and 3, and the worker memory: copy N records of one 8-partition topic, then verify it.

1. copy: the project (build_plan + create_target_topics + spark.submit.submit_step("copy") with the
   product's default master) against one Python process doing confluent-kafka consume -> produce
   (harness/bench/baselines.py). Steady state = time inside the Spark application
   (StepResults.seconds); with start-up = plan + topics + spark-submit wall time.
3. verify: submit_step("verify") of the project's copy against a plain read loop over both clusters
   (count + checksum per partition).

The peak RSS of the PySpark Python workers is sampled during the project copies, at N and N/2
records, to show whether worker memory grows with the data.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.bench.baselines import baseline_copy, plain_verify
from harness.bench.common import (
    RECORD_BYTES,
    SPARK,
    SparkOutput,
    cluster_configs,
    load1,
    median,
    progress,
    rates,
    ratio,
    say,
    table_row,
)
from harness.bench.meter import WORKER_MARKERS, TreeMeter
from harness.bench.seeding import end_offsets, seed_topics

if TYPE_CHECKING:
    from harness.bench.session import Session
    from kafka_migration.spark.submit import SparkSettings

NAME = "copy"
PARTITIONS = 8
BIG_TOPIC = "bench.copy"
HALF_TOPIC = "bench.half"
TARGETS = {
    "copy.ratio_steady": (">= 1.5", lambda v: v >= 1.5),
    "copy.ratio_with_startup": (">= 1.0", lambda v: v >= 1.0),
    "verify.ratio": (">= 1.0", lambda v: v >= 1.0),
    "memory.growth_ratio": ("<= 1.10", lambda v: v <= 1.10),
}


# --- one run of each kind -----------------------------------------------------------------------


def plan_and_create(source: Any, target: Any, topic: str, run_dir: Path) -> Path:
    """The run's plan of ``topic`` (build_plan with a ledger, as the CLI makes it), written to run_dir/plan.json,
    and its target topic created: the part of a run before its Spark application copies."""
    from kafka_migration.kafka.clients import KafkaCluster
    from kafka_migration.ledger import Ledger
    from kafka_migration.model.config import MigrationOptions
    from kafka_migration.run.planner import build_plan
    from kafka_migration.run.topics import create_target_topics

    ledger = Ledger.open(f"sqlite:///{run_dir / 'ledger.db'}")
    try:
        tgt_cluster = KafkaCluster(target)
        options = MigrationOptions(include=re.escape(topic))
        plan = build_plan(KafkaCluster(source), tgt_cluster, options, ledger=ledger)
        plan_path = run_dir / "plan.json"
        plan.write(plan_path)
        create_target_topics(plan, tgt_cluster)
    finally:
        ledger.engine.dispose()
    return plan_path


def project_copy(
    source: str, target: str, topic: str, run_dir: Path, verbose: bool, settings: SparkSettings | None = None
) -> dict[str, Any]:
    """build_plan + create_target_topics + spark-submit of the copy step, with the worker RSS sampled."""
    from kafka_migration.spark.submit import submit_step

    settings = settings or SPARK.settings
    src_cfg, tgt_cfg = cluster_configs(source, target)
    output = SparkOutput(verbose)
    load = load1()
    started = time.monotonic()
    plan_path = plan_and_create(src_cfg, tgt_cfg, topic, run_dir)
    planned = time.monotonic()
    with TreeMeter(every=0.2, workers=WORKER_MARKERS) as rss:
        results = submit_step("copy", plan_path, run_dir / "copy.json", src_cfg, tgt_cfg, settings, on_line=output)
    done = time.monotonic()
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
        # from the driver's "results written" to spark-submit's exit: Spark stopping (the CLI does not wait)
        "spark_stop_seconds": round(done - output.written_at, 3) if output.written_at else None,
        # copy_partition's own time per partition (what the tasks measured, without Python worker start-up)
        "partition_seconds_sum": round(sum(task_seconds), 3),
        "partition_seconds_max": round(max(task_seconds, default=0.0), 3),
        "executor_pythons": sorted({p["executor"]["python"] for p in outcome.partitions if p.get("executor")}),
        # Executors that ran partitions (host and working directory tell them apart; local mode: one).
        "executors": len({(e["host"], e.get("workdir")) for p in outcome.partitions if (e := p.get("executor"))}),
        "worker_rss_max_single_bytes": rss.worker_max_single,
        "worker_rss_max_total_bytes": rss.worker_max_total,
        "worker_processes_seen": len(rss.worker_pids),
        "rss_samples": rss.samples,
        "load1_at_start": load,
        "plan_path": str(plan_path),
    }


def project_verify(
    source: str, target: str, plan_path: Path, run_dir: Path, verbose: bool, settings: SparkSettings | None = None
) -> dict[str, Any]:
    from kafka_migration.spark.submit import submit_step

    settings = settings or SPARK.settings
    src_cfg, tgt_cfg = cluster_configs(source, target)
    output = SparkOutput(verbose)
    load = load1()
    started = time.monotonic()
    results = submit_step("verify", plan_path, run_dir / "verify.json", src_cfg, tgt_cfg, settings, on_line=output)
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
        "spark_stop_seconds": round(done - output.written_at, 3) if output.written_at else None,
        "load1_at_start": load,
    }


def baseline_copy_run(source: str, target: str, topics: dict[str, int], expected: int) -> dict[str, Any]:
    load = load1()
    result = baseline_copy(source, target, topics)
    if result.records != expected:
        raise RuntimeError(f"baseline copy wrote {result.records} records, expected {expected}")
    return _sample(result, load)


def plain_verify_run(source: str, target: str, topics: dict[str, int], expected: int) -> dict[str, Any]:
    load = load1()
    result, mismatches = plain_verify(source, target, topics)
    if mismatches or result.records != expected:
        raise RuntimeError(f"plain verify: {result.records} records (expected {expected}); {mismatches[:3]}")
    return _sample(result, load)


def _sample(result: Any, load: float) -> dict[str, Any]:
    """One baseline repetition as the results file stores it."""
    return {
        "records": result.records,
        "bytes": result.bytes,
        "seconds": round(result.seconds, 3),
        "wall_seconds": round(result.wall_seconds, 3),
        "load1_at_start": load,
    }


# --- the scenario -------------------------------------------------------------------------------


def seed(session: Session) -> None:
    records = session.sizes["records"]
    say(f"seeding {BIG_TOPIC}: {records:,} records of {RECORD_BYTES} B in {PARTITIONS} partitions")
    session.seeding[BIG_TOPIC] = round(seed_topics(session.source, {BIG_TOPIC: PARTITIONS}, records), 2)
    say(f"  seeded in {session.seeding[BIG_TOPIC]:.1f} s ({records / session.seeding[BIG_TOPIC]:,.0f} records/s)")
    half = session.sizes["half"]
    say(f"seeding {HALF_TOPIC}: {half:,} records (memory comparison)")
    session.seeding[HALF_TOPIC] = round(seed_topics(session.source, {HALF_TOPIC: PARTITIONS}, half, rng_seed=12), 2)
    say(f"  seeded in {session.seeding[HALF_TOPIC]:.1f} s")


def run(session: Session, repeat: int) -> None:
    """Scenarios 1 and 3, and the worker memory at two sizes."""
    source = session.source
    big, half = {BIG_TOPIC: PARTITIONS}, {HALF_TOPIC: PARTITIONS}
    raw = session.raw.setdefault(
        NAME,
        {"copy": {"baseline": [], "project": []}, "verify": {"baseline": [], "project": []}, "memory": {}},
    )
    raw["memory"] = {"full": [], "half": []}
    expected_big = sum(end_offsets(source, big).values())
    expected_half = sum(end_offsets(source, half).values())
    for i in range(repeat):
        say(f"scenario 1+3, repetition {i + 1}/{repeat}")
        tgt = session.target.fresh()
        sample = baseline_copy_run(source, tgt, big, expected_big)
        raw["copy"]["baseline"].append(sample)
        progress("baseline copy", sample)

        tgt = session.target.fresh()
        directory = session.run_dir()
        sample = project_copy(source, tgt, BIG_TOPIC, directory, session.verbose)
        if sample["records"] != expected_big:
            raise RuntimeError(f"project copy wrote {sample['records']} records, expected {expected_big}")
        raw["copy"]["project"].append(sample)
        raw["memory"]["full"].append(sample)
        progress("project copy (steady; in Spark)", sample)

        # Both verifications read the project's copy; which one goes first alternates.
        order: list[tuple[str, Callable[[], dict[str, Any]]]] = [
            ("plain verify", lambda t=tgt: plain_verify_run(source, t, big, expected_big)),
            (
                "project verify (in Spark)",
                lambda t=tgt, d=directory: project_verify(source, t, d / "plan.json", d, session.verbose),
            ),
        ]
        for kind, fn in order if i % 2 == 0 else reversed(order):
            sample = fn()
            raw["verify"]["baseline" if kind.startswith("plain") else "project"].append(sample)
            progress(kind, sample)

        tgt = session.target.fresh()
        sample = project_copy(source, tgt, HALF_TOPIC, session.run_dir(), session.verbose)
        if sample["records"] != expected_half:
            raise RuntimeError(f"project copy wrote {sample['records']} records, expected {expected_half}")
        raw["memory"]["half"].append(sample)
        progress(f"project copy {session.sizes['half']:,} (memory)", sample)


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    base, proj = raw["copy"]["baseline"], raw["copy"]["project"]
    if base:
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
            "ratio_steady": ratio(b_sec, p_sec),
            "ratio_with_startup": ratio(b_wall, p_wall),
            "ratio_steady_per_repetition": [
                ratio(b["seconds"], p["seconds"]) for b, p in zip(base, proj, strict=False)
            ],
        }
    base, proj = raw["verify"]["baseline"], raw["verify"]["project"]
    if base:
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
            "ratio": ratio(b_sec, p_sec),
            "ratio_with_startup": ratio(b_sec, p_wall),
        }
    mem = raw["memory"]
    if mem.get("full") and mem.get("half"):
        full = [s["worker_rss_max_single_bytes"] for s in mem["full"]]
        half = [s["worker_rss_max_single_bytes"] for s in mem["half"]]
        out["memory"] = {
            "records_full": sizes["records"],
            "records_half": sizes["half"],
            "median_peak_worker_rss_full_bytes": median(full),
            "median_peak_worker_rss_half_bytes": median(half),
            "growth_ratio": ratio(median(full), median(half)),
            "samples_full_bytes": full,
            "samples_half_bytes": half,
            "half_runs": mem["half"],
            "note": "peak RSS of one PySpark Python worker process (pyspark.daemon and its forks), sampled every 0.2 s",
        }
    return out


def table(summary: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if "copy" in summary:
        c = summary["copy"]
        name = f"1 copy {c['records']:,} x {RECORD_BYTES} B"
        b, p = c["baseline"], c["project"]
        lines.append(
            table_row(name, "baseline (1 process)", c["records"], b["median_seconds"], b["median_wall_seconds"])
        )
        lines.append(
            table_row(
                "",
                f"project (Spark {SPARK.settings.master})",
                c["records"],
                p["median_seconds"],
                p["median_wall_seconds"],
            )
        )
        lines.append(
            f"{'':<28} ratio project/baseline: steady {c['ratio_steady']:.2f}x (target >= 1.5), with start-up "
            f"{c['ratio_with_startup']:.2f}x (target >= 1.0); Spark start-up+stop median "
            f"{p['median_spark_startup_seconds']:.1f} s, plan+topics {p['median_plan_and_topics_seconds']:.2f} s"
        )
    if "verify" in summary:
        v = summary["verify"]
        name = f"3 verify {v['records']:,}"
        b, p = v["baseline"], v["project"]
        lines.append(table_row(name, "plain read loop", v["records"], b["median_seconds"], b["median_wall_seconds"]))
        lines.append(
            table_row(
                "",
                f"project (Spark {SPARK.settings.master})",
                v["records"],
                p["median_seconds"],
                p["median_wall_seconds"],
            )
        )
        lines.append(
            f"{'':<28} ratio project/baseline: {v['ratio']:.2f}x (target >= 1.0), "
            f"with start-up {v['ratio_with_startup']:.2f}x"
        )
    return lines


def notes(summary: dict[str, Any]) -> list[str]:
    if "memory" not in summary:
        return []
    m = summary["memory"]
    return [
        "",
        f"Peak RSS of one PySpark Python worker during the scenario-1 copy: {m['records_half']:,} records "
        f"{m['median_peak_worker_rss_half_bytes'] / 2**20:,.0f} MiB, {m['records_full']:,} records "
        f"{m['median_peak_worker_rss_full_bytes'] / 2**20:,.0f} MiB: "
        f"growth {m['growth_ratio']:.3f}x (target <= 1.10)",
        f"  samples (MiB): {m['records_half']:,}: {[round(x / 2**20) for x in m['samples_half_bytes']]}, "
        f"{m['records_full']:,}: {[round(x / 2**20) for x in m['samples_full_bytes']]}",
    ]
