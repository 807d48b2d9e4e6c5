"""What a Spark task runs on an executor: the rows of its slices (copy, verify, or both for migrate), stamped
with where and when they ran, and, on the driver, how a migrate job's big slices are followed by a
verification task of their own and collected (``migrate_units``, ``collect_with_followers``).

``spark.jobs`` schedules these as Spark jobs; the functions here are what its tasks call.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any, TypeVar

from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run.windows import SMALL_SLICE_RECORDS

log = logging.getLogger("kafka_migration.spark")
T = TypeVar("T")

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
    big = [task for task in tasks if len(task) == 1 and task[0].end - task[0].start > SMALL_SLICE_RECORDS]
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
