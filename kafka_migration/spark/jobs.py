"""Copy and verify topics inside one Spark application.

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

import argparse
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.plan import MigrationPlan, PartitionSlice, TopicPlan
from kafka_migration.model.results import FAILED, MISMATCH, OK, UNVERIFIED, StepResults, TopicOutcome
from kafka_migration.model.text import noun_for, partition_list, per_partition, plural, some
from kafka_migration.run.progress import snapshot_path
from kafka_migration.run.windows import SMALL_SLICE_RECORDS
from kafka_migration.spark.executors import executor_conf
from kafka_migration.spark.startup import spark_log_level

log = logging.getLogger("kafka_migration.spark")
T = TypeVar("T")

STEPS = ("copy", "verify", "migrate")
# The result files a step writes: migrate writes both, so ledger, reports and DAG read them as before.
STEP_RESULTS = {"copy": ("copy",), "verify": ("verify",), "migrate": ("copy", "verify")}
# A verification row for a slice whose copy failed: it was not verified (a copy failure is the verdict).
COPY_FAILED = "not verified: the copy of this partition failed"


def executor_identity() -> dict[str, str]:
    """Where a task ran: host and Python, so the results show whether the executors used the shipped
    environment (``spark.pyspark.python``) or some other interpreter, and the executor's working directory,
    which tells executors apart (standalone: <work dir>/<app>/<executor id>; YARN: the container's
    directory; Kubernetes: one pod, one host name)."""
    import socket

    return {"host": socket.gethostname(), "python": sys.executable, "prefix": sys.prefix, "workdir": os.getcwd()}


def _stamped_rows(work: Callable[..., Any], task: Sequence[PartitionSlice], *args: Any) -> list[dict[str, Any]]:
    """Run slices with ``work`` (``*_partitions_safely``); each result as a dict with ``started``/``ended``
    epoch seconds (from ``run_guarded_all``'s stamps, else laid end to end from each result's seconds)."""
    begun = time.time()
    results = work(list(task), *args)
    stamps = getattr(results, "stamps", None)
    rows = []
    for i, result in enumerate(results):
        row = asdict(result)
        if stamps is not None and i < len(stamps):
            started, ended = stamps[i]
        else:
            started = begun
            ended = begun = begun + float(row.get("seconds") or 0.0)
        row["started"], row["ended"] = round(started, 3), round(ended, 3)
        rows.append(row)
    return rows


def _step_rows(step: str, work: Callable[..., Any], task: Sequence[PartitionSlice], *args: Any) -> list[dict[str, Any]]:
    """``_task_rows`` with each row marked with the result kind it belongs to ("copy" or "verify")."""
    return [{**row, "step": step} for row in _task_rows(work, task, *args)]


def _task_rows(work: Callable[..., Any], task: Sequence[PartitionSlice], *args: Any) -> list[dict[str, Any]]:
    """Run one Spark task's slices (on an executor); each result as a dict with ``executor`` added."""
    where = executor_identity()
    return [{**row, "executor": where} for row in _stamped_rows(work, task, *args)]


def _not_verified(piece: PartitionSlice, **extra: Any) -> dict[str, Any]:
    """The verification row of a slice whose copy failed (the failure is its verdict); ``extra``: its
    stamps (and executor), kept from a follower's row or set now."""
    from kafka_migration.run.verify import PartitionVerification

    if "started" not in extra:
        now = round(time.time(), 3)
        extra = {"started": now, "ended": now, **extra}
    return {**asdict(PartitionVerification.failed(piece, COPY_FAILED)), **extra}


def _failed_copies(rows: Sequence[dict[str, Any]]) -> set[tuple[str, int]]:
    """(source topic, partition) of the copy rows among ``rows`` that carry an error."""
    return {(r["source_topic"], r["partition"]) for r in rows if r.get("step", "copy") == "copy" and r.get("error")}


def _migrate_rows(
    task: Sequence[PartitionSlice],
    source: Mapping[str, Any],
    target: Mapping[str, Any],
    copy_address: tuple[str, int] | None,
    verify_address: tuple[str, int] | None,
) -> list[dict[str, Any]]:
    """One Spark task of the migrate step: copy its slices, then verify them as the verify step does.

    The verification re-reads both clusters with fresh consumers and uses nothing of the copy's
    results, except that a slice whose copy failed is not verified (the failure is its verdict).
    Each row carries ``step`` ("copy" or "verify").
    """
    from kafka_migration.run.copy import copy_partitions_safely
    from kafka_migration.run.verify import verify_partitions_safely

    where = executor_identity()
    slices = list(task)
    copied = _stamped_rows(copy_partitions_safely, [s for s in slices if s.end > s.start], source, target, copy_address)
    failed = _failed_copies(copied)
    verified = _stamped_rows(
        verify_partitions_safely,
        [s for s in slices if (s.source_topic, s.partition) not in failed],
        source,
        target,
        verify_address,
    )
    skipped = [_not_verified(s) for s in slices if (s.source_topic, s.partition) in failed]
    return [{**row, "executor": where, "step": "copy"} for row in copied] + [
        {**row, "executor": where, "step": "verify"} for row in verified + skipped
    ]


# How a unit of the migrate job runs its slices: copy then verify them (one task), or only copy a big
# slice while another task verifies it behind the copy ("follow").
MIGRATE, COPY, FOLLOW, VERIFY = "migrate", "copy", "follow", "verify"


def migrate_units(tasks: Sequence[list[PartitionSlice]], slots: int) -> list[tuple[str, list[PartitionSlice]]]:
    """The migrate job's Spark tasks, in launch order: when every task plus one follower per big slice fits
    in ``slots`` at once, each big slice is copied by one task and verified by a later one while it is
    copied (its CPU-bound verification on another core); otherwise each task copies, then verifies.

    Spark launches a stage's tasks in index order (TaskSetManager adds its pending tasks in reverse
    so that low indices go first), and the followers come after all copies: a follower never holds
    a slot while its copy waits for one. With fewer slots than planned (busy executors, another job)
    a follower simply starts later and finds more of the target written.
    """
    big = [task for task in tasks if len(task) == 1 and task[0].end - task[0].start > SMALL_SLICE_OFFSETS]
    if not big or len(tasks) + len(big) > slots:
        return [(MIGRATE, list(task)) for task in tasks]
    first = [(COPY if task in big else MIGRATE, list(task)) for task in tasks]
    return first + [(FOLLOW, list(task)) for task in big]


def _unit_rows(
    unit: tuple[str, list[PartitionSlice]],
    source: Mapping[str, Any],
    target: Mapping[str, Any],
    copy_address: tuple[str, int] | None,
    verify_address: tuple[str, int] | None,
) -> list[dict[str, Any]]:
    """Run one unit of ``migrate_units`` (on an executor); rows as ``_migrate_rows``'."""
    mode, task = unit
    if mode == COPY:
        from kafka_migration.run.copy import copy_partitions_safely

        return _step_rows("copy", copy_partitions_safely, task, source, target, copy_address)
    if mode in (FOLLOW, VERIFY):
        from kafka_migration.run.verify import verify_partitions_following, verify_partitions_safely

        work = verify_partitions_following if mode == FOLLOW else verify_partitions_safely
        return _step_rows("verify", work, task, source, target, verify_address)
    return _migrate_rows(task, source, target, copy_address, verify_address)


def settle_followed(
    rows: list[dict[str, Any]], followed: Sequence[PartitionSlice], target: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The rows of a migrate job once every task has ended, with the verdict on each followed slice settled.

    A followed slice whose copy failed is not verified (as ``_migrate_rows`` has it), whatever its
    follower found; the follower's time stamps and executor stay. A follower that matched its slice
    stopped at the high watermark it saw while the copy may still have been writing, so the target's
    end is read again now (one ListOffsets request per followed slice, on the driver): records past
    the verified end are extra records on the target, as a verification after the copy would find.
    """
    from kafka_migration.kafka.reader import end_offset

    slices = {(s.source_topic, s.partition): s for s in followed}
    failed = _failed_copies(rows)
    out = []
    for row in rows:
        key = (row.get("source_topic"), row.get("partition"))
        piece = slices.get(key)
        if row.get("step") != "verify" or piece is None:
            pass
        elif key in failed:
            kept = {k: row[k] for k in ("started", "ended", "executor", "step") if k in row}
            row = _not_verified(piece, **kept)
        elif row.get("match"):
            try:
                end = end_offset(target, piece.target_topic, piece.partition, what="target")
            except Exception as exc:  # the verdict needs this read: without it the slice is unverified
                message = f"could not read the target's end after the copy: {exc}"
                row = {**row, "match": False, "error": message, "first_difference": message, "offset_map": []}
            else:
                if end > row["target_end"]:
                    extra = {"first_source_offset": None, "first_target_offset": row["target_end"], "offset_map": []}
                    row = {**row, **extra, "match": False, "first_difference": "extra record on the target"}
                    row["target_end"] = end
        out.append(row)
    return out


def gave_up_following(rows: list[dict[str, Any]], followed: Sequence[PartitionSlice]) -> list[PartitionSlice]:
    """Followed slices whose copy succeeded but whose follower gave up waiting for records (a copy that
    wrote fewer than the source holds): verified again once the copy has ended, to name what differs."""
    from kafka_migration.kafka.reader import FOLLOW_GAVE_UP

    copied = {(r["source_topic"], r["partition"]) for r in rows if r.get("step") == "copy" and not r.get("error")}
    waited = {
        (r["source_topic"], r["partition"])
        for r in rows
        if r.get("step") == "verify" and FOLLOW_GAVE_UP in (r.get("error") or "")
    }
    return [s for s in followed if (s.source_topic, s.partition) in copied & waited]


def collect_with_followers(
    sc: Any,
    units: Sequence[tuple[str, list[PartitionSlice]]],
    run: Callable[[tuple[str, list[PartitionSlice]]], list[dict[str, Any]]],
    group: str,
) -> list[dict[str, Any]]:
    """The rows of ``migrate_units``' units when some follow a copy: each big slice's copy and its follower
    run as Spark jobs of their own (the other units as one more), from driver threads, all at once
    (``migrate_units`` splits only when every unit has a slot).

    A follower waits for records its copy writes; once that copy has failed, nobody writes them and the
    follower would wait out the stall timeout (socket.timeout.ms) before the failure could be reported.
    So when a copy's job ends in a failed copy, its follower's job is cancelled at once and the slice is
    not verified (a failed copy is the verdict, see ``settle_followed``). A failed Spark job cancels every
    follower and fails the call, as one job's failure did.
    """
    followed = {task[0]: i for i, (mode, task) in enumerate(units) if mode == FOLLOW}
    cancelled: set[int] = set()

    def job(name: str, batch: list[tuple[str, list[PartitionSlice]]], cancellable: bool) -> list[dict[str, Any]]:
        sc.setJobGroup(f"{group}:{name}", f"{group}: {name}", interruptOnCancel=cancellable)
        return sc.parallelize(batch, len(batch)).flatMap(run).collect()

    def cancel(i: int) -> None:
        cancelled.add(i)
        sc.cancelJobGroup(f"{group}:follow{i}")

    rows: list[dict[str, Any]] = []
    others = [unit for unit in units if unit[0] not in (COPY, FOLLOW)]
    with ThreadPoolExecutor(max_workers=len(units), thread_name_prefix="migrate-unit") as pool:
        copies = {
            pool.submit(job, f"copy{followed[task[0]]}", [(mode, task)], False): followed[task[0]]
            for mode, task in units
            if mode == COPY
        }
        rest = [pool.submit(job, "slices", others, False)] if others else []
        follows = {i: pool.submit(job, f"follow{i}", [units[i]], True) for i in followed.values()}
        try:
            for future in [*copies, *rest]:
                found = future.result()
                rows += found
                i = copies.get(future)
                if i is not None and _failed_copies(found):
                    piece = units[i][1][0]
                    log.info("copy of %s[%d] failed: its verification stops", piece.source_topic, piece.partition)
                    cancel(i)
        except BaseException:
            for i in follows:
                cancel(i)
            raise
        for i, future in follows.items():
            try:
                rows += future.result()
            except Exception:
                if i not in cancelled:
                    raise
                rows.append(_not_verified(units[i][1][0], step="verify"))
    return rows


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
SMALL_SLICE_OFFSETS = SMALL_SLICE_RECORDS  # and read together, a window at a time (kafka_migration.run.windows)
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
        lambda topic: len(topic.slices(include_empty=step != "copy")),
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
    """One Spark job of the copy or verify step for some topics: a task per partition slice; one outcome per topic."""
    return run_job(sc, step, topics, source, target, {step: progress_address})[step]


def run_job(
    sc: Any,
    step: str,
    topics: Sequence[TopicPlan],
    source: Mapping[str, Any],
    target: Mapping[str, Any],
    progress: Mapping[str, tuple[str, int] | None] | None = None,
) -> dict[str, list[TopicOutcome]]:
    """One Spark job for some topics: their outcomes for each result of ``step`` ("copy" and/or "verify").

    ``progress``: the driver's progress address for each of those results.
    """
    started = time.monotonic()
    addresses = dict(progress or {})
    slices = [s for topic in topics for s in topic.slices(include_empty=step != "copy")]
    source = dict(source)
    target = dict(target)
    first = topics[0]
    more = f" and {plural(len(topics) - 1, 'more topic')}" if len(topics) > 1 else ""
    sc.setJobGroup(f"{step}:{first.source_topic}{more}", f"{step} {first.source_topic} -> {first.target_topic}{more}")
    tasks: list[Any] = group_slices(slices)
    followed: list[PartitionSlice] = []
    if step == "migrate":
        copy_address, verify_address = addresses.get("copy"), addresses.get("verify")
        tasks = migrate_units(tasks, max(1, int(sc.defaultParallelism)))
        followed = [task[0] for mode, task in tasks if mode == FOLLOW]

        def run(unit: tuple[str, list[PartitionSlice]]) -> list[dict[str, Any]]:
            return _unit_rows(unit, source, target, copy_address, verify_address)

    else:
        if step == "copy":
            from kafka_migration.run.copy import copy_partitions_safely as work
        else:
            from kafka_migration.run.verify import verify_partitions_safely as work
        address = addresses.get(step)

        def run(task: list[PartitionSlice]) -> list[dict[str, Any]]:
            return _step_rows(step, work, task, source, target, address)

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
        rows = settle_followed(rows, followed, target)
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
    """Run the copy or verify step for every topic (see ``run_steps``)."""
    if step not in STEPS or len(STEP_RESULTS[step]) != 1:
        raise ValueError(f"unknown step {step!r}")
    return run_steps(sc, step, plan, topics, source, target, parallel_topics, on_topic_done)[step]


def run_steps(
    sc: Any,
    step: str,
    plan: MigrationPlan,
    topics: Sequence[TopicPlan],
    source: Mapping[str, Any],
    target: Mapping[str, Any],
    parallel_topics: int = 4,
    on_topic_done: Callable[[TopicOutcome], None] | None = None,
    snapshot: Path | None = None,
) -> dict[str, StepResults]:
    """Run ``step`` for every topic, several Spark jobs at a time: one per big topic, small ones bundled.

    Returns the results of each kind the step produces ("copy" and/or "verify"). ``snapshot``: where to keep
    the progress snapshot that the console reads while the step runs (progress.SnapshotWriter).
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
        done = run_job(sc, step, bundle, source, target, addresses)
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

    # Biggest topics first so they do not end up as the long tail.
    ordered = sorted(topics, key=lambda t: -t.offset_span)
    with ExitStack() as stack:
        for collector in collectors.values():
            stack.enter_context(collector)
        if snapshot is not None:
            stack.enter_context(SnapshotWriter(snapshot, plan.run_id, step, collectors))
        pool = stack.enter_context(
            ThreadPoolExecutor(max_workers=max(1, parallel_topics), thread_name_prefix=f"{step}-topic")
        )
        for future in [pool.submit(one, b) for b in bundle_topics(ordered, step)]:
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


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Copy and/or verify the topics of a migration plan with Spark.")
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("--plan", required=True, type=Path, help="plan.json written by the planning step")
    parser.add_argument("--job", action="append", default=[], help="job number(s) from the plan, or 'all'")
    parser.add_argument(
        "--results", required=True, type=Path, help="where to write the results JSON (migrate: the copy results)"
    )
    parser.add_argument("--verify-results", type=Path, help="migrate: where to write the verification results")
    parser.add_argument("--parallel-topics", type=int, default=4)
    parser.add_argument(
        "--wait-for",
        type=Path,
        help="a FIFO the launcher holds open: start Spark, warm the Python workers, then wait for one line on it "
        "('go': read the plan and run; anything else or end of file: stop without writing anything)",
    )
    args = parser.parse_args(argv)
    if args.step == "migrate" and args.verify_results is None:
        parser.error("the migrate step needs --verify-results")
    return args


def select_jobs(plan: MigrationPlan, jobs: Sequence[str]) -> list[int]:
    if not jobs or "all" in jobs:
        return list(range(len(plan.jobs)))
    chosen = sorted({int(j) for spec in jobs for j in str(spec).split(",") if j.strip()})
    for j in chosen:
        if not 0 <= j < len(plan.jobs):
            raise SystemExit(f"job {j} is not in the plan (it has {plural(len(plan.jobs), 'job')})")
    return chosen


GO = "go"
ABORTED = 3  # exit code of a driver told not to run (nothing written)


def import_task_modules() -> None:
    """Import what the copy and verify tasks import (also what ``spark/daemon.py`` imports before forking)."""
    import confluent_kafka  # noqa: F401

    import kafka_migration.kafka.ranges
    import kafka_migration.run.copy
    import kafka_migration.run.progress
    import kafka_migration.run.verify  # noqa: F401


def _warm_worker(target: Mapping[str, Any] | None) -> list[int]:
    """Import what the tasks import, in a Python worker Spark keeps for the tasks after it; with the
    target's settings (a step that copies), also start the worker's producer."""
    import_task_modules()
    import kafka_migration.run.copy

    if target is not None:
        kafka_migration.run.copy.warm_producer(target)
    return [os.getpid()]


def warm_workers(sc: Any, target: Mapping[str, Any] | None = None) -> None:
    """One tiny task per slot, so the first real tasks find Python workers with their imports done."""
    slots = max(1, int(sc.defaultParallelism))
    settings = dict(target) if target is not None else None
    sc.setJobGroup("warm-up", "start the Python workers")
    sc.parallelize(range(slots), slots).mapPartitions(lambda _: _warm_worker(settings)).collect()


def wait_for_go(path: Path) -> bool:
    """Block until the launcher writes one line on the FIFO; True only for 'go'.

    Opened without blocking, so a launcher that is already gone (no writer left) reads as end of file,
    which means stop: a dead CLI never leaves a driver waiting.
    """
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    data = b""
    try:
        while b"\n" not in data:
            select.select([fd], [], [], 1.0)
            try:
                chunk = os.read(fd, 64)
            except BlockingIOError:
                continue  # the launcher is there and has not decided yet
            if not chunk:
                return False
            data += chunk
    finally:
        os.close(fd)
    return data.split(b"\n", 1)[0].strip() == GO.encode()


def _warm_and_wait(
    sc: Any, step: str, channel: Path, driver_started: float, target: Mapping[str, Any] | None = None
) -> bool:
    """Warm the Python workers, then wait for the launcher's word; False (stop) also when anything failed."""
    try:
        context_up = time.time()
        warm_workers(sc, target)
        log.info(
            "%s: Spark is up (context %.1fs, Python workers %.1fs after the driver started); waiting for the plan",
            step,
            context_up - driver_started,
            time.time() - driver_started,
        )
        return wait_for_go(channel)
    except Exception as exc:  # e.g. the launcher stopped the JVM while the workers started
        log.info("%s: could not wait for the plan (%s)", step, exc)
        return False


# Logged once every results file is complete, before Spark stops: the launcher may read them then.
RESULTS_WRITTEN = "results written"


def results_written(line: str) -> bool:
    """Whether a line of the driver's output is its ``RESULTS_WRITTEN`` log line (read by the launchers)."""
    return line.rstrip().endswith(f"{log.name}: {RESULTS_WRITTEN}")


def _write_results(
    results: Mapping[str, StepResults], paths: Mapping[str, Path], jobs: list[int], driver_started: float, ready: float
) -> set[str]:
    """Write each results file (stamped with the driver's start and ready times); the topics not OK."""
    bad: set[str] = set()
    for kind, result in results.items():
        result.jobs = jobs
        result.driver_started = round(driver_started, 3)
        result.ready = round(ready, 3)
        result.write(paths[kind])
        bad |= {name for name, t in result.topics.items() if t.status != OK}
        log.info(
            "%s finished in %.1f s: %s ok, %d not ok; results in %s",
            kind,
            result.seconds,
            plural(sum(1 for t in result.topics.values() if t.status == OK), "topic"),
            sum(1 for t in result.topics.values() if t.status != OK),
            paths[kind],
        )
    log.info(RESULTS_WRITTEN)
    return bad


def with_executor_settings(conf: Any) -> Any:
    """``conf`` (a SparkConf, which holds what the submit and spark-defaults.conf set) with how a cluster's
    executors start (spark/executors.py) under those values."""
    settings = dict(conf.getAll())
    return conf.setAll(list(executor_conf(settings, settings.get("spark.master")).items()))


NUMPY_CONVERTERS = ("NumpyArrayConverter", "NumpyScalarConverter")


def _skip_numpy_conversion() -> None:
    """Unregister PySpark's py4j converters for numpy values: this driver sends the JVM none.

    py4j asks every registered converter about every argument of a JVM call, and these answer the
    first question by importing ``pyspark.testing.utils`` (with pandas and protobuf) to learn
    whether numpy is installed: ~0.5 s of CPU in every driver's start-up, before the SparkContext.
    """
    from py4j import protocol

    converters = getattr(protocol, "INPUT_CONVERTER", None)
    if isinstance(converters, list):
        converters[:] = [c for c in converters if type(c).__name__ not in NUMPY_CONVERTERS]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point behind ``spark_jobs/*.py``: exit 0 when every topic is OK, 1 otherwise (3: told not to run)."""
    driver_started = time.time()
    from kafka_migration.spark.pythonpath import prefer_installed_pyspark

    prefer_installed_pyspark()  # before the first import of pyspark: its compiled modules, not the zip's sources
    from pyspark import SparkConf, SparkContext

    _skip_numpy_conversion()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stdout)
    args = _parse(sys.argv[1:] if argv is None else argv)
    # Waiting for the launcher: the plan is not written yet (run files live in runs/<run id>/).
    run_id = args.plan.parent.name if args.wait_for else MigrationPlan.read(args.plan).run_id
    # Settings file and secret settings (YARN, Kubernetes) are merged here, on the driver; executors
    # get the merged settings with their tasks.
    source = ClusterConfig.from_environment("source", os.environ).settings
    target = ClusterConfig.from_environment("target", os.environ).settings

    # A bare SparkContext: the jobs use RDDs only, and a SparkSession's SQL start-up costs ~3 s per submit.
    conf = (
        SparkConf()
        .setAppName(f"kafka-migration {args.step} {run_id} jobs {','.join(args.job) or 'all'}")
        # A task lost with its executor runs again (spark.task.maxFailures, 4 by default on a cluster; local
        # mode runs each task once): its copy resumes after what the target already holds (copy.reconcile).
        # A speculative second attempt would write beside a running first one: never.
        .set("spark.speculation", "false")
        .set("spark.scheduler.mode", "FAIR")
        .set("spark.ui.showConsoleProgress", "false")
    )
    sc = SparkContext(conf=with_executor_settings(conf))
    try:
        sc.setLogLevel(spark_log_level())  # as the driver's log4j2 configuration says (spark/startup.py)
        if args.wait_for and not _warm_and_wait(
            sc, args.step, args.wait_for, driver_started, target if args.step != "verify" else None
        ):
            # Told not to run, or the launcher is gone: leave at once. Stopping the context could wait on a
            # JVM the launcher is killing; the JVM stops Spark in its own shutdown hook.
            log.info("%s: told not to run; stopping without writing anything", args.step)
            logging.shutdown()
            os._exit(ABORTED)
        plan = MigrationPlan.read(args.plan)
        jobs = select_jobs(plan, args.job)
        topics = [t for j in jobs for t in plan.job_topics(j)]
        ready = time.time()
        log.info(
            "%s: %s, %s, jobs %s of run %s",
            args.step,
            plural(len(topics), "topic"),
            plural(sum(len(t.partitions) for t in topics), "partition"),
            jobs,
            plan.run_id,
        )
        results = run_steps(
            sc,
            args.step,
            plan,
            topics,
            source,
            target,
            parallel_topics=args.parallel_topics,
            snapshot=snapshot_path(args.results),
        )
        paths = {"copy": args.results, "verify": args.verify_results} if args.step == "migrate" else {}
        bad = _write_results(results, paths or {args.step: args.results}, jobs, driver_started, ready)
    finally:
        sc.stop()  # after the results are written: the launcher goes on while Spark stops
    return 0 if not bad else 1
