"""Copy and verify topics inside one Spark application.

Each big topic is its own Spark job (its own job group, visible in the Spark UI),
with one task per partition slice; small topics share jobs, small slices share tasks.
The application runs several jobs at once, and many small topics share a single
Spark start-up; the driver only ever sees per-partition summaries, never record data.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from kafka_migration.config import ClusterConfig
from kafka_migration.plan import MigrationPlan, PartitionSlice, TopicPlan
from kafka_migration.results import FAILED, MISMATCH, OK, UNVERIFIED, StepResults, TopicOutcome

log = logging.getLogger("kafka_migration.spark")
T = TypeVar("T")

STEPS = ("copy", "verify")


def executor_identity() -> dict[str, str]:
    """Where a task ran: host and Python, so the results show whether the executors used the shipped
    environment (``spark.pyspark.python``) or some other interpreter."""
    import socket

    return {"host": socket.gethostname(), "python": sys.executable, "prefix": sys.prefix}


def _task_rows(work: Callable[..., Any], task: Sequence[PartitionSlice], *args: Any) -> list[dict[str, Any]]:
    """Run one Spark task's slices (on an executor); each result as a dict with ``executor`` added."""
    where = executor_identity()
    return [{**asdict(result), "executor": where} for result in work(list(task), *args)]


def _task_error(exc: BaseException) -> str:
    """The Python error raised inside an executor, without the JVM stack around it."""
    text = str(exc)
    for marker in ("kafka_migration.exceptions.", "Exception: ", "Error: "):
        lines = [line for line in text.splitlines() if marker in line]
        if lines:
            line = lines[-1]
            return line.split(marker, 1)[1] if marker.startswith("kafka_migration") else line.strip()
    return text.strip().splitlines()[-1] if text.strip() else repr(exc)


# Topics up to this many offsets share Spark jobs: a job costs ~120 ms of driver time
# however small it is, which dominated copying many small topics (100 topics x 4
# partitions: ~12 s of job overhead per step).
SMALL_TOPIC_OFFSETS = 50_000
BUNDLE_SLICES = 64
# Slices up to this many offsets share a Spark task (run one after another): a task costs
# ~55 ms of slot time in local mode even when it does nothing, more than a small slice's copy.
SMALL_SLICE_OFFSETS = 5_000
SLICES_PER_TASK = 16


def _pack(
    items: Sequence[T], size: Callable[[T], int], big: Callable[[T], bool], budget: int, most: int
) -> list[list[T]]:
    """Big items alone; consecutive small ones together while their sizes fit ``budget`` and ``most`` items."""
    groups: list[list[T]] = []
    current: list[T] = []
    used = 0
    for item in items:
        if big(item):
            groups.append([item])
            continue
        n = size(item)
        if current and (used + n > budget or len(current) >= most):
            groups.append(current)
            current, used = [], 0
        current.append(item)
        used += n
    if current:
        groups.append(current)
    return groups


def group_slices(slices: Sequence[PartitionSlice]) -> list[list[PartitionSlice]]:
    """Tasks: each big slice alone, consecutive small ones together up to SMALL_SLICE_OFFSETS in all."""
    span: Callable[[PartitionSlice], int] = lambda piece: piece.end - piece.start  # noqa: E731
    return _pack(slices, span, lambda piece: span(piece) > SMALL_SLICE_OFFSETS, SMALL_SLICE_OFFSETS, SLICES_PER_TASK)


def bundle_topics(topics: Sequence[TopicPlan], step: str) -> list[list[TopicPlan]]:
    """Each big topic alone (its own job group in the Spark UI); small ones packed up to BUNDLE_SLICES tasks."""
    return _pack(
        topics,
        lambda topic: len(topic.slices(include_empty=step == "verify")),
        lambda topic: topic.offset_span > SMALL_TOPIC_OFFSETS,
        BUNDLE_SLICES,
        BUNDLE_SLICES,
    )


def run_topics(
    sc: Any,
    step: str,
    topics: Sequence[TopicPlan],
    source: Mapping[str, Any],
    target: Mapping[str, Any],
    progress_address: tuple[str, int] | None = None,
) -> list[TopicOutcome]:
    """One Spark job for some topics: a task per partition slice; one outcome per topic."""
    started = time.monotonic()
    slices = [s for topic in topics for s in topic.slices(include_empty=step == "verify")]
    source = dict(source)
    target = dict(target)
    first = topics[0]
    more = f" and {len(topics) - 1} more topics" if len(topics) > 1 else ""
    sc.setJobGroup(f"{step}:{first.source_topic}{more}", f"{step} {first.source_topic} -> {first.target_topic}{more}")
    if step == "copy":
        from kafka_migration.copy import copy_partitions_safely as work
    else:
        from kafka_migration.verify import verify_partitions_safely as work
    try:
        tasks = group_slices(slices)
        rows: list[Any] = (
            sc.parallelize(tasks, len(tasks))
            .flatMap(lambda task: _task_rows(work, task, source, target, progress_address))
            .collect()
            if tasks
            else []
        )
    except Exception as exc:  # a failed task: keep the error on every topic of the job, let other jobs finish
        error = _task_error(exc)
        log.error("%s of topic(s) %s failed: %s", step, ", ".join(t.source_topic for t in topics), error)
        seconds = round(time.monotonic() - started, 3)
        return [
            TopicOutcome(
                source_topic=t.source_topic,
                target_topic=t.target_topic,
                # A verification that did not run proves nothing either way.
                status=UNVERIFIED if step == "verify" else FAILED,
                seconds=seconds,
                error=error,
            )
            for t in topics
        ]
    seconds = round(time.monotonic() - started, 3)
    by_topic: dict[str, list[dict[str, Any]]] = {t.source_topic: [] for t in topics}
    for row in rows:
        fields = row if isinstance(row, dict) else asdict(row)
        by_topic[fields.get("source_topic", first.source_topic)].append(fields)
    return [_outcome(step, t, by_topic[t.source_topic], seconds) for t in topics]


def _outcome(step: str, topic: TopicPlan, rows: list[dict[str, Any]], seconds: float) -> TopicOutcome:
    partitions = sorted(rows, key=lambda r: r["partition"])
    status = OK
    error = None
    failed = [p for p in partitions if p.get("error")]
    if step == "copy" and failed:
        status = FAILED
        error = "; ".join(f"partition {p['partition']}: {p['error']}" for p in failed)
    if step == "verify":
        # A partition that could not be read is unverified, never a mismatch: its records may be fine.
        bad = [p for p in partitions if not p["match"] and not p.get("error")]
        unread = [p for p in partitions if p.get("error")]
        if bad or unread:
            status = MISMATCH if bad else UNVERIFIED
            error = "; ".join(
                [
                    f"partition {p['partition']}: {p['first_difference']} at source offset "
                    f"{p['first_source_offset']} / target offset {p['first_target_offset']} "
                    f"(source {p['source_records']} records, target {p['target_records']})"
                    for p in bad
                ]
                + [f"partition {p['partition']}: could not verify: {p['error']}" for p in unread]
            )
    return TopicOutcome(
        source_topic=topic.source_topic,
        target_topic=topic.target_topic,
        status=status,
        seconds=seconds,
        partitions=partitions,
        error=error,
    )


def run_step(
    sc: Any,
    step: str,
    plan: MigrationPlan,
    topics: Sequence[TopicPlan],
    source: Mapping[str, Any],
    target: Mapping[str, Any],
    parallel_topics: int = 4,
    on_topic_done: Callable[[TopicOutcome], None] | None = None,
) -> StepResults:
    """Run ``step`` for every topic, several Spark jobs at a time: one per big topic, small ones bundled."""
    if step not in STEPS:
        raise ValueError(f"unknown step {step!r}")
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    outcomes: dict[str, TopicOutcome] = {}
    lock = threading.Lock()

    from kafka_migration.progress import ProgressCollector

    driver_host = sc.getConf().get("spark.driver.host", "127.0.0.1")
    collector = ProgressCollector(step, sum(t.offset_span for t in topics), host=driver_host)

    def one(bundle: list[TopicPlan]) -> None:
        for topic, outcome in zip(bundle, run_topics(sc, step, bundle, source, target, collector.address), strict=True):
            collector.topic_done(topic.source_topic, outcome.records, outcome.bytes, len(topics))
            with lock:
                outcomes[topic.source_topic] = outcome
                log.info(
                    "%s %s -> %s: %s, %d records in %.1fs (%d/%d topics done)%s",
                    step,
                    topic.source_topic,
                    topic.target_topic,
                    outcome.status,
                    outcome.records,
                    outcome.seconds,
                    len(outcomes),
                    len(topics),
                    f": {outcome.error}" if outcome.error else "",
                )
            if on_topic_done is not None:
                on_topic_done(outcome)

    # Biggest topics first so they do not end up as the long tail.
    ordered = sorted(topics, key=lambda t: -t.offset_span)
    with (
        collector,
        ThreadPoolExecutor(max_workers=max(1, parallel_topics), thread_name_prefix=f"{step}-topic") as pool,
    ):
        for future in [pool.submit(one, b) for b in bundle_topics(ordered, step)]:
            future.result()
    return StepResults(
        step=step,
        run_id=plan.run_id,
        jobs=[],
        topics={t.source_topic: outcomes[t.source_topic] for t in topics},
        started_at=started_at,
        seconds=round(time.monotonic() - started, 3),
    )


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Copy or verify the topics of a migration plan with Spark.")
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("--plan", required=True, type=Path, help="plan.json written by the planning step")
    parser.add_argument("--job", action="append", default=[], help="job number(s) from the plan, or 'all'")
    parser.add_argument("--results", required=True, type=Path, help="where to write the results JSON")
    parser.add_argument("--parallel-topics", type=int, default=4)
    return parser.parse_args(argv)


def select_jobs(plan: MigrationPlan, jobs: Sequence[str]) -> list[int]:
    if not jobs or "all" in jobs:
        return list(range(len(plan.jobs)))
    chosen = sorted({int(j) for spec in jobs for j in str(spec).split(",") if j.strip()})
    for j in chosen:
        if not 0 <= j < len(plan.jobs):
            raise SystemExit(f"job {j} is not in the plan (it has {len(plan.jobs)} jobs)")
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point behind ``spark_jobs/*.py``: exit 0 when every topic is OK, 1 otherwise."""
    from pyspark import SparkConf, SparkContext

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
    args = _parse(sys.argv[1:] if argv is None else argv)
    plan = MigrationPlan.read(args.plan)
    jobs = select_jobs(plan, args.job)
    topics = [t for j in jobs for t in plan.job_topics(j)]
    # Settings file and secret settings (YARN, Kubernetes) are merged here, on the driver; executors
    # get the merged settings with their tasks.
    source = ClusterConfig.from_environment("source", os.environ).settings
    target = ClusterConfig.from_environment("target", os.environ).settings

    # A bare SparkContext: the jobs use RDDs only, and a SparkSession's SQL start-up costs ~3 s per submit.
    conf = (
        SparkConf()
        .setAppName(f"kafka-migration {args.step} {plan.run_id} jobs {','.join(map(str, jobs))}")
        # A blind task retry would re-send records already written; a failed slice fails the topic.
        .set("spark.task.maxFailures", "1")
        .set("spark.scheduler.mode", "FAIR")
        .set("spark.ui.showConsoleProgress", "false")
    )
    sc = SparkContext(conf=conf)
    sc.setLogLevel("WARN")
    log.info(
        "%s: %d topics, %d partitions, jobs %s of run %s",
        args.step,
        len(topics),
        sum(len(t.partitions) for t in topics),
        jobs,
        plan.run_id,
    )
    try:
        results = run_step(sc, args.step, plan, topics, source, target, parallel_topics=args.parallel_topics)
    finally:
        sc.stop()
    results.jobs = jobs
    results.write(args.results)
    bad = [t for t in results.topics.values() if t.status != OK]
    log.info(
        "%s finished in %.1fs: %d topics ok, %d not ok; results in %s",
        args.step,
        results.seconds,
        len(results.topics) - len(bad),
        len(bad),
        args.results,
    )
    return 0 if not bad else 1
