"""How a migrate job's big slices are verified while they are copied, on the driver: which Spark tasks the
job runs (``migrate_units``: a copy task, and a follower task that verifies behind it), how their jobs run
and are collected (``collect_with_followers``), and the verdict on each followed slice once all have ended.

``spark.driver_jobs`` calls these for the migrate step; what each task runs is ``spark.executor_tasks``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafka_migration.model.config import Endpoint
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run.windows import SMALL_SLICE_RECORDS
from kafka_migration.spark.executor_tasks import COPY, FOLLOW, MIGRATE, failed_copies, not_verified_row

log = logging.getLogger("kafka_migration.spark")


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


def settle_followed(
    rows: list[dict[str, Any]], followed: Sequence[PartitionSlice], target: Endpoint
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
    failed = failed_copies(rows)
    out = []
    for row in rows:
        key = (row.get("source_topic"), row.get("partition"))
        piece = slices.get(key)
        if row.get("step") != "verify" or piece is None:
            pass
        elif key in failed:
            kept = {k: row[k] for k in ("started", "ended", "executor", "step") if k in row}
            row = not_verified_row(piece, **kept)
        elif row.get("match"):
            try:
                end = end_offset(target, piece.target_topic, piece.partition)
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
                if i is not None and failed_copies(found):
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
                rows.append(not_verified_row(units[i][1][0], step="verify"))
    return rows
