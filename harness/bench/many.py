"""Scenario 2: T topics x 4 partitions x 1,000 records, the whole run.

The project's pipeline.run_migration (plan, topics, copy, verify, ledger), as ``kafka-migrate run``
does it, against the baseline doing the same in one process (create topics, copy loop, plain
verify loop).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.bench.baselines import baseline_copy, plain_verify
from harness.bench.common import (
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
from harness.bench.seeding import seed_topics

if TYPE_CHECKING:
    from harness.bench.session import Session

NAME = "many"
PARTITIONS = 4
RECORDS = 1000
PREFIX = "many.t"
TARGETS = {"many_topics.wall_seconds": ("< 10", lambda v: v < 10)}  # issue 12 (issue 3 asked for < 240)


def topics(count: int) -> dict[str, int]:
    return {f"{PREFIX}{i:03d}": PARTITIONS for i in range(count)}


def project_whole_run(source: str, target: str, include: str, run_dir: Path, verbose: bool) -> dict[str, Any]:
    """run/pipeline.run_migration: plan, target topics, copy, verify, ledger; as ``kafka-migrate run`` does."""
    from kafka_migration.ledger import Ledger
    from kafka_migration.model.config import MigrationOptions
    from kafka_migration.model.results import StepResults
    from kafka_migration.run.pipeline import run_migration
    from kafka_migration.spark.submit import SparkLauncher

    src_cfg, tgt_cfg = cluster_configs(source, target)
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
        launch=SparkLauncher(SPARK.settings, output),
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


def baseline_whole_run(source: str, target: str, selected: dict[str, int]) -> dict[str, Any]:
    load = load1()
    started = time.monotonic()
    copy = baseline_copy(source, target, selected)
    verify, mismatches = plain_verify(source, target, selected)
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


def seed(session: Session) -> None:
    many = topics(session.sizes["topics"])
    say(f"seeding {len(many)} topics x {PARTITIONS} partitions x {RECORDS:,} records")
    session.seeding["many"] = round(seed_topics(session.source, many, RECORDS, rng_seed=13), 2)
    say(f"  seeded in {session.seeding['many']:.1f} s")


def run(session: Session, repeat: int) -> None:
    many = topics(session.sizes["topics"])
    raw = session.raw.setdefault(NAME, {"baseline": [], "project": []})
    for i in range(repeat):
        say(f"scenario 2, repetition {i + 1}/{repeat}")
        tgt = session.target.fresh()
        sample = baseline_whole_run(session.source, tgt, many)
        raw["baseline"].append(sample)
        progress("baseline whole run", sample, "wall_seconds")

        tgt = session.target.fresh()
        sample = project_whole_run(session.source, tgt, re.escape(PREFIX) + ".*", session.run_dir(), session.verbose)
        raw["project"].append(sample)
        progress("project whole run (run_migration)", sample, "wall_seconds")


def summarize(raw: dict[str, Any], sizes: dict[str, int]) -> dict[str, Any]:
    base, proj = raw["baseline"], raw["project"]
    if not base:
        return {}
    records = base[0]["records"]
    b_wall = median([s["wall_seconds"] for s in base])
    p_wall = median([s["wall_seconds"] for s in proj])
    return {
        "many_topics": {
            "topics": sizes["topics"],
            "partitions_per_topic": PARTITIONS,
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
            "ratio": ratio(b_wall, p_wall),
        }
    }


def table(summary: dict[str, Any]) -> list[str]:
    if "many_topics" not in summary:
        return []
    m = summary["many_topics"]
    name = f"2 {m['topics']} topics x {PARTITIONS} x {RECORDS:,}"
    b, p = m["baseline"]["median_wall_seconds"], m["project"]["median_wall_seconds"]
    return [
        table_row(name, "baseline whole run", m["records"], b, b),
        table_row("", "project run_migration", m["records"], p, p),
        f"{'':<28} ratio project/baseline: {m['ratio']:.2f}x; project whole run {m['wall_seconds']:.1f} s "
        f"(target < 10 s; in Spark: copy {m['project']['median_copy_seconds_in_spark']:.1f} s, verify "
        f"{m['project']['median_verify_seconds_in_spark']:.1f} s)",
    ]


def notes(summary: dict[str, Any]) -> list[str]:
    return []
