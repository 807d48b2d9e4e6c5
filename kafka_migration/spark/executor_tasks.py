"""What a Spark task runs on an executor: the rows of its slices (copy, verify, or both for migrate), stamped
with where and when they ran; and what a Python worker imports before its first task (``import_task_modules``,
also preloaded by ``spark/daemon.py``).

Spark pickles these functions by reference, so executors import this module: it stays light, and the
driver-side scheduling lives in ``spark.driver_jobs`` and ``spark.followers``.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any, TypeVar

from kafka_migration.model.config import ClusterPair, Endpoint
from kafka_migration.model.plan import PartitionSlice
from kafka_migration.run.progress import Address

log = logging.getLogger("kafka_migration.spark")
T = TypeVar("T")
# What a task runs on its slices (``*_partitions_safely``): the slices, both clusters, where progress goes.
SliceWork = Callable[[list[PartitionSlice], ClusterPair, Address | None], Sequence[Any]]

# A verification row for a slice whose copy failed: it was not verified (a copy failure is the verdict).
COPY_FAILED = "not verified: the copy of this partition failed"


def executor_identity() -> dict[str, str]:
    """Where a task ran: host and Python, so the results show whether the executors used the shipped
    environment (``spark.pyspark.python``) or some other interpreter, and the executor's working directory,
    which tells executors apart (standalone: <work dir>/<app>/<executor id>; YARN: the container's
    directory; Kubernetes: one pod, one host name)."""
    import socket

    return {"host": socket.gethostname(), "python": sys.executable, "prefix": sys.prefix, "workdir": os.getcwd()}


def _stamped_rows(
    work: SliceWork, task: Sequence[PartitionSlice], clusters: ClusterPair, address: Address | None
) -> list[dict[str, Any]]:
    """Run slices with ``work``; each result as a dict with ``started``/``ended`` epoch seconds (from
    ``run_guarded_all``'s stamps, else laid end to end from each result's seconds)."""
    begun = time.time()
    results = work(list(task), clusters, address)
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


def _step_rows(
    step: str, work: SliceWork, task: Sequence[PartitionSlice], clusters: ClusterPair, address: Address | None
) -> list[dict[str, Any]]:
    """``_task_rows`` with each row marked with the result kind it belongs to ("copy" or "verify")."""
    return [{**row, "step": step} for row in _task_rows(work, task, clusters, address)]


def _task_rows(
    work: SliceWork, task: Sequence[PartitionSlice], clusters: ClusterPair, address: Address | None
) -> list[dict[str, Any]]:
    """Run one Spark task's slices (on an executor); each result as a dict with ``executor`` added."""
    where = executor_identity()
    return [{**row, "executor": where} for row in _stamped_rows(work, task, clusters, address)]


def not_verified_row(piece: PartitionSlice, **extra: Any) -> dict[str, Any]:
    """The verification row of a slice whose copy failed (the failure is its verdict); ``extra``: its
    stamps (and executor), kept from a follower's row or set now."""
    from kafka_migration.run.verify import PartitionVerification

    if "started" not in extra:
        now = round(time.time(), 3)
        extra = {"started": now, "ended": now, **extra}
    return {**asdict(PartitionVerification.failed(piece, COPY_FAILED)), **extra}


def failed_copies(rows: Sequence[dict[str, Any]]) -> set[tuple[str, int]]:
    """(source topic, partition) of the copy rows among ``rows`` that carry an error."""
    return {(r["source_topic"], r["partition"]) for r in rows if r.get("step", "copy") == "copy" and r.get("error")}


def _migrate_rows(
    task: Sequence[PartitionSlice],
    clusters: ClusterPair,
    copy_address: Address | None,
    verify_address: Address | None,
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
    copied = _stamped_rows(copy_partitions_safely, [s for s in slices if s.end > s.start], clusters, copy_address)
    failed = failed_copies(copied)
    verified = _stamped_rows(
        verify_partitions_safely,
        [s for s in slices if (s.source_topic, s.partition) not in failed],
        clusters,
        verify_address,
    )
    skipped = [not_verified_row(s) for s in slices if (s.source_topic, s.partition) in failed]
    return [{**row, "executor": where, "step": "copy"} for row in copied] + [
        {**row, "executor": where, "step": "verify"} for row in verified + skipped
    ]


# How a unit of the migrate job runs its slices: copy then verify them (one task), or only copy a big
# slice while another task verifies it behind the copy ("follow").
MIGRATE, COPY, FOLLOW, VERIFY = "migrate", "copy", "follow", "verify"


def _unit_rows(
    unit: tuple[str, list[PartitionSlice]],
    clusters: ClusterPair,
    copy_address: Address | None,
    verify_address: Address | None,
) -> list[dict[str, Any]]:
    """Run one unit of ``migrate_units`` (on an executor); rows as ``_migrate_rows``'."""
    mode, task = unit
    if mode == COPY:
        from kafka_migration.run.copy import copy_partitions_safely

        return _step_rows("copy", copy_partitions_safely, task, clusters, copy_address)
    if mode in (FOLLOW, VERIFY):
        from kafka_migration.run.verify import verify_partitions_following, verify_partitions_safely

        work = verify_partitions_following if mode == FOLLOW else verify_partitions_safely
        return _step_rows("verify", work, task, clusters, verify_address)
    return _migrate_rows(task, clusters, copy_address, verify_address)


def import_task_modules() -> None:
    """Import what the copy and verify tasks import (also what ``spark/daemon.py`` imports before forking);
    ``kafka.records`` loads confluent-kafka."""
    import kafka_migration.kafka.ranges
    import kafka_migration.kafka.records
    import kafka_migration.run.copy
    import kafka_migration.run.progress
    import kafka_migration.run.verify  # noqa: F401


def _warm_worker(target: Endpoint | None) -> list[int]:
    """Import what the tasks import, in a Python worker Spark keeps for the tasks after it; with the
    target (a step that copies), also start the worker's producer."""
    import_task_modules()
    import kafka_migration.run.copy

    if target is not None:
        kafka_migration.run.copy.warm_producer(target)
    return [os.getpid()]
