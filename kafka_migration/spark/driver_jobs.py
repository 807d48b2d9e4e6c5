"""The Spark jobs a driver runs to copy and verify topics inside one Spark application.

Each big topic is its own Spark job (its own job group, visible in the Spark UI),
with one task per partition slice; small topics share jobs, small slices share tasks.
The application runs several jobs at once, and many small topics share a single
Spark start-up; the driver only ever sees per-partition summaries, never record data.

Steps: ``copy``, ``verify``, and ``migrate`` (both in one application: each task verifies
its slices right after copying them, so CPU-bound verification of one slice runs while
other tasks still wait on the brokers; the verification reads both clusters afresh, as
the verify step does, and uses nothing the copy reported). A migrate job with fewer big
slices than Spark slots (one big partition: nothing else to overlap with) verifies each big
slice in a task of its own that follows the copy as it writes (see ``migrate_units``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from kafka_migration.exceptions import StepStoppedError
from kafka_migration.model.config import ClusterPair, Endpoint
from kafka_migration.model.plan import MigrationPlan, PartitionSlice, TopicPlan
from kafka_migration.model.results import FAILED, MISMATCH, OK, UNVERIFIED, StepResults, TopicOutcome
from kafka_migration.model.text import noun_for, partition_list, per_partition, plural, some
from kafka_migration.run.windows import SMALL_SLICE_RECORDS
from kafka_migration.spark.executor_tasks import VERIFY, _step_rows, _unit_rows, _warm_worker
from kafka_migration.spark.followers import (
    FOLLOW,
    collect_with_followers,
    gave_up_following,
    migrate_units,
    settle_followed,
)

log = logging.getLogger("kafka_migration.spark")
T = TypeVar("T")

STEPS = ("copy", "verify", "migrate")
# The result files a step writes: migrate writes both, so ledger, reports and DAG read them as before.
STEP_RESULTS = {"copy": ("copy",), "verify": ("verify",), "migrate": ("copy", "verify")}
# Topics up to this many offsets share Spark jobs: a job costs ~120 ms of driver time
# however small it is, which dominated copying many small topics (100 topics x 4
# partitions: ~12 s of job overhead per step).
SMALL_TOPIC_OFFSETS = 50_000
BUNDLE_SLICES = 64
# Slices up to this many offsets share a Spark task (run one after another): a task costs
# ~55 ms of slot time in local mode even when it does nothing, more than a small slice's copy.
SMALL_SLICE_OFFSETS = SMALL_SLICE_RECORDS  # and read together, a window at a time (kafka_migration.run.windows)
SLICES_PER_TASK = 16
# A run of thousands of small topics packs more slices in a task (and as many more in a job): each task
# reads a window with one consumer per cluster, and each job costs driver time, so 10,000 one-partition
# topics in tasks of 16 made 625 tasks, 1,900 consumers and 157 jobs. Up to this many slices a task, while
# every slot still gets TASKS_PER_SLOT tasks to balance the run.
MOST_SLICES_PER_TASK = 128
TASKS_PER_SLOT = 4


@dataclass(frozen=True)
class Packing:
    """How small slices share Spark tasks and small topics share jobs in one run."""

    slices_per_task: int = SLICES_PER_TASK
    task_offsets: int = SMALL_SLICE_OFFSETS  # planned offsets of one task of small slices at most
    bundle_slices: int = BUNDLE_SLICES  # slices (tasks' worth) of one job of small topics at most

    @classmethod
    def for_run(cls, small_slices: int, slots: int) -> Packing:
        """The default for a run of up to ``slots x TASKS_PER_SLOT x SLICES_PER_TASK`` small slices; bigger
        tasks (and jobs) beyond, as many as keep TASKS_PER_SLOT tasks per slot, MOST_SLICES_PER_TASK at most."""
        per_task = max(SLICES_PER_TASK, min(MOST_SLICES_PER_TASK, small_slices // max(1, slots * TASKS_PER_SLOT)))
        scale = per_task / SLICES_PER_TASK
        return cls(per_task, int(SMALL_SLICE_OFFSETS * scale), int(BUNDLE_SLICES * scale))


DEFAULT_PACKING = Packing()


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


def group_slices(slices: Sequence[PartitionSlice], packing: Packing | None = None) -> list[list[PartitionSlice]]:
    """Tasks: each big slice alone, consecutive small ones together up to ``packing.task_offsets`` in all."""
    span: Callable[[PartitionSlice], int] = lambda piece: piece.end - piece.start  # noqa: E731
    packing = packing or DEFAULT_PACKING
    return _pack(
        slices, span, lambda piece: span(piece) > SMALL_SLICE_OFFSETS, packing.task_offsets, packing.slices_per_task
    )


def bundle_topics(topics: Sequence[TopicPlan], step: str, packing: Packing | None = None) -> list[list[TopicPlan]]:
    """Each big topic alone (its own job group in the Spark UI); small ones packed up to ``packing.bundle_slices``
    slices."""
    packing = packing or DEFAULT_PACKING
    return _pack(
        topics,
        lambda topic: len(topic.slices(include_empty=step != "copy")),
        lambda topic: topic.offset_span > SMALL_TOPIC_OFFSETS,
        packing.bundle_slices,
        packing.bundle_slices,
    )


def run_packing(topics: Sequence[TopicPlan], step: str, slots: int) -> Packing:
    """``Packing.for_run`` for the small slices of ``topics`` in ``step``."""
    small = sum(
        1
        for topic in topics
        if topic.offset_span <= SMALL_TOPIC_OFFSETS
        for piece in topic.slices(include_empty=step != "copy")
        if piece.end - piece.start <= SMALL_SLICE_OFFSETS
    )
    return Packing.for_run(small, slots)


def run_topics(
    sc: Any,
    step: str,
    topics: Sequence[TopicPlan],
    clusters: ClusterPair,
    progress_address: tuple[str, int] | None = None,
) -> list[TopicOutcome]:
    """One Spark job of the copy or verify step for some topics: a task per partition slice; one outcome per topic."""
    return run_job(sc, step, topics, clusters, {step: progress_address})[step]


def run_job(
    sc: Any,
    step: str,
    topics: Sequence[TopicPlan],
    clusters: ClusterPair,
    progress: Mapping[str, tuple[str, int] | None] | None = None,
    packing: Packing | None = None,
) -> dict[str, list[TopicOutcome]]:
    """One Spark job for some topics: their outcomes for each result of ``step`` ("copy" and/or "verify").

    ``progress``: the driver's progress address for each of those results.
    """
    started = time.monotonic()
    addresses = dict(progress or {})
    slices = [s for topic in topics for s in topic.slices(include_empty=step != "copy")]
    first = topics[0]
    more = f" and {plural(len(topics) - 1, 'more topic')}" if len(topics) > 1 else ""
    sc.setJobGroup(f"{step}:{first.source_topic}{more}", f"{step} {first.source_topic} -> {first.target_topic}{more}")
    tasks: list[Any] = group_slices(slices, packing)
    followed: list[PartitionSlice] = []
    if step == "migrate":
        copy_address, verify_address = addresses.get("copy"), addresses.get("verify")
        tasks = migrate_units(tasks, max(1, int(sc.defaultParallelism)))
        followed = [task[0] for mode, task in tasks if mode == FOLLOW]

        def run(unit: tuple[str, list[PartitionSlice]]) -> list[dict[str, Any]]:
            return _unit_rows(unit, clusters, copy_address, verify_address)

    else:
        if step == "copy":
            from kafka_migration.run.copy import copy_partitions_safely as work
        else:
            from kafka_migration.run.verify import verify_partitions_safely as work
        address = addresses.get(step)

        def run(task: list[PartitionSlice]) -> list[dict[str, Any]]:
            return _step_rows(step, work, task, clusters, address)

    kinds = STEP_RESULTS[step]
    try:
        if followed:
            rows: list[Any] = collect_with_followers(sc, tasks, run, f"{step}:{first.source_topic}{more}")
        else:
            rows = sc.parallelize(tasks, len(tasks)).flatMap(run).collect() if tasks else []
    except Exception as exc:  # a failed task: keep the error on every topic of the job, let other jobs finish
        error = _task_error(exc)
        names = [t.source_topic for t in topics]
        log.error("%s of %s %s failed: %s", step, noun_for(len(names), "topic"), some(names, most=20), error)
        seconds = round(time.monotonic() - started, 3)
        return {
            kind: [
                TopicOutcome(
                    source_topic=t.source_topic,
                    target_topic=t.target_topic,
                    # A verification that did not run proves nothing either way.
                    status=UNVERIFIED if kind == "verify" else FAILED,
                    seconds=seconds,
                    error=error,
                    job_topics=len(topics),
                )
                for t in topics
            ]
            for kind in kinds
        }
    seconds = round(time.monotonic() - started, 3)
    if followed:
        rows = settle_followed(rows, followed, clusters.target)
        again = gave_up_following(rows, followed)
        if again:  # the copies have ended: a plain verification, as the verify step would run it
            names = ", ".join(f"{s.source_topic}[{s.partition}]" for s in again)
            log.info("verifying again after their copy (the follower gave up waiting): %s", names)
            try:
                redone = sc.parallelize([(VERIFY, [s]) for s in again], len(again)).flatMap(run).collect()
            except Exception as exc:  # keep the followers' rows: unverified, never passed
                log.error("verifying followed slices again failed: %s", _task_error(exc))
                redone = []
            keys = {(r["source_topic"], r["partition"]) for r in redone}
            rows = [r for r in rows if r.get("step") != "verify" or (r["source_topic"], r["partition"]) not in keys]
            rows += redone
    by_topic: dict[str, dict[str, list[dict[str, Any]]]] = {k: {t.source_topic: [] for t in topics} for k in kinds}
    for row in rows:
        fields = dict(row if isinstance(row, dict) else asdict(row))
        kind = fields.pop("step", kinds[0])
        by_topic[kind][fields.get("source_topic", first.source_topic)].append(fields)
    outcomes: dict[str, list[TopicOutcome]] = {}
    for kind in kinds:
        kind_seconds = seconds
        if len(kinds) > 1:  # both steps in one job: each step's own span, not the job's time twice
            stamps = [(r["started"], r["ended"]) for rs in by_topic[kind].values() for r in rs if "started" in r]
            if stamps:
                kind_seconds = round(max(e for _, e in stamps) - min(b for b, _ in stamps), 3)
        outcomes[kind] = [
            replace(_outcome(kind, t, by_topic[kind][t.source_topic], kind_seconds), job_topics=len(topics))
            for t in topics
        ]
    return outcomes


def _outcome(step: str, topic: TopicPlan, rows: list[dict[str, Any]], seconds: float) -> TopicOutcome:
    partitions = sorted(rows, key=lambda r: r["partition"])
    status = OK
    error = None
    failed = [p for p in partitions if p.get("error")]
    if step == "copy" and failed:
        status = FAILED
        error = "; ".join(_by_error(failed))
    if step == "verify":
        # A partition that could not be read is unverified, never a mismatch: its records may be fine.
        bad = [p for p in partitions if not p["match"] and not p.get("error")]
        unread = [p for p in partitions if p.get("error")]
        if bad or unread:
            status = MISMATCH if bad else UNVERIFIED
            differences = [
                (
                    p["partition"],
                    f"{p['first_difference']} at source offset {_offset(p['first_source_offset'])} / target offset "
                    f"{_offset(p['first_target_offset'])} (source {plural(p['source_records'], 'record')}, target "
                    f"{p['target_records']:,})",
                )
                for p in bad
            ]
            verb = noun_for(len(bad), "differs", "differ")
            listed = [f"{len(bad):,} of {plural(len(partitions), 'partition')} {verb}: {per_partition(differences)}"]
            listed = listed if bad else []
            error = "; ".join(listed + _by_error(unread, "could not verify: "))
    return TopicOutcome(
        source_topic=topic.source_topic,
        target_topic=topic.target_topic,
        status=status,
        seconds=seconds,
        partitions=partitions,
        error=error,
    )


def _by_error(rows: Sequence[dict[str, Any]], prefix: str = "") -> list[str]:
    """One entry per distinct error, naming its partitions: a cluster that failed eleven partitions the same way
    is one line (``partitions 0–10 (11 partitions): <error>``), not eleven."""
    parts: dict[str, list[int]] = {}
    for row in rows:
        parts.setdefault(str(row["error"]), []).append(row["partition"])
    return [f"{partition_list(found)}: {prefix}{message}" for message, found in parts.items()]


def _offset(value: Any) -> str:
    return "–" if value is None else str(value)


def _task_error(exc: BaseException) -> str:
    """The Python error raised inside an executor, without the JVM stack around it."""
    text = str(exc)
    for marker in ("kafka_migration.exceptions.", "Exception: ", "Error: "):
        lines = [line for line in text.splitlines() if marker in line]
        if lines:
            line = lines[-1]
            return line.split(marker, 1)[1] if marker.startswith("kafka_migration") else line.strip()
    return text.strip().splitlines()[-1] if text.strip() else repr(exc)


def run_copy_or_verify(
    sc: Any,
    step: str,
    plan: MigrationPlan,
    topics: Sequence[TopicPlan],
    clusters: ClusterPair,
    parallel_topics: int = 4,
    on_topic_done: Callable[[TopicOutcome], None] | None = None,
) -> StepResults:
    """The copy or verify step for every topic: ``run_step_jobs`` for a step of one result kind."""
    if step not in STEPS or len(STEP_RESULTS[step]) != 1:
        raise ValueError(f"unknown step {step!r}")
    return run_step_jobs(sc, step, plan, topics, clusters, parallel_topics, on_topic_done)[step]


def run_step_jobs(
    sc: Any,
    step: str,
    plan: MigrationPlan,
    topics: Sequence[TopicPlan],
    clusters: ClusterPair,
    parallel_topics: int = 4,
    on_topic_done: Callable[[TopicOutcome], None] | None = None,
    snapshot: Path | None = None,
    release: Callable[[int], bool] | None = None,
) -> dict[str, StepResults]:
    """Run ``step`` for every topic, several Spark jobs at a time: one per big topic, small ones bundled.

    Returns the results of each kind the step produces ("copy" and/or "verify"). ``snapshot``: where to keep
    the progress snapshot that the console reads while the step runs (progress.SnapshotWriter). ``release``:
    blocks until the first n topics of the plan's run order exist on the target (spark/gate.py), False to stop;
    each job starts once its own topics are released (StepStoppedError when told to stop first).
    """
    if step not in STEPS:
        raise ValueError(f"unknown step {step!r}")
    kinds = STEP_RESULTS[step]
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.monotonic()
    outcomes: dict[str, dict[str, TopicOutcome]] = {kind: {} for kind in kinds}
    lock = threading.Lock()

    from kafka_migration.run.progress import ProgressCollector, SnapshotWriter, topic_done_message

    driver_host = sc.getConf().get("spark.driver.host", "127.0.0.1")
    total = sum(t.offset_span for t in topics)
    collectors = {kind: ProgressCollector(kind, total, host=driver_host, topics=len(topics)) for kind in kinds}

    def one(bundle: list[TopicPlan]) -> None:
        addresses = {kind: collector.address for kind, collector in collectors.items()}
        done = run_job(sc, step, bundle, clusters, addresses, packing)
        for kind in kinds:
            for topic, outcome in zip(bundle, done[kind], strict=True):
                collectors[kind].topic_done(topic.source_topic, outcome.records, outcome.bytes, len(topics))
                with lock:
                    outcomes[kind][topic.source_topic] = outcome
                    done_line = topic_done_message(
                        kind,
                        topic.source_topic,
                        topic.target_topic,
                        outcome.status,
                        outcome.records,
                        outcome.seconds,
                        len(outcomes[kind]),
                        len(topics),
                    )
                    log.info("%s%s", done_line, f": {outcome.error}" if outcome.error else "")
                if on_topic_done is not None:
                    on_topic_done(outcome)

    ordered = plan.run_order(topics)
    position = {t.source_topic: i for i, t in enumerate(plan.run_order())}
    packing = run_packing(ordered, step, max(1, int(sc.defaultParallelism)))
    with ExitStack() as stack:
        for collector in collectors.values():
            stack.enter_context(collector)
        if snapshot is not None:
            stack.enter_context(SnapshotWriter(snapshot, plan.run_id, step, collectors))
        pool = stack.enter_context(
            ThreadPoolExecutor(max_workers=max(1, parallel_topics), thread_name_prefix=f"{step}-topic")
        )
        futures = []
        for bundle in bundle_topics(ordered, step, packing):
            if release is not None and not release(max(position[t.source_topic] for t in bundle) + 1):
                sc.cancelAllJobs()  # the launcher stops this application: end the running jobs now
                raise StepStoppedError(f"{step}: stopped before every target topic was released")
            futures.append(pool.submit(one, bundle))
        for future in futures:
            future.result()
    seconds = round(time.monotonic() - started, 3)
    return {
        kind: StepResults(
            step=kind,
            run_id=plan.run_id,
            jobs=[],
            topics={t.source_topic: outcomes[kind][t.source_topic] for t in topics},
            started_at=started_at,
            seconds=seconds,
        )
        for kind in kinds
    }


def warm_workers(sc: Any, target: Endpoint | None = None) -> None:
    """One tiny task per slot, so the first real tasks find Python workers with their imports done (and, given
    the target, their producer started)."""
    slots = max(1, int(sc.defaultParallelism))
    sc.setJobGroup("warm-up", "start the Python workers")
    sc.parallelize(range(slots), slots).mapPartitions(lambda _: _warm_worker(target)).collect()
