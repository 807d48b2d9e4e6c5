"""The census of a run's source records in Spark (run/census.py), before anything is written.

The launcher writes the plan as planned so far (``run.census.REQUEST``) and says ``census`` to the driver waiting
for its plan (spark/gate.py); or, when the driver cannot wait (a cluster deploy mode), or for a dry run or a DAG's
plan task above what they read themselves (run/census_takers.py), submits the ``census`` step as an application of
its own. Either way the driver runs one Spark job whose tasks read the ranges, each partition
whole, and keep only the schema ids of keys and values with their first offsets; the driver merges those (ids,
never records), writes them back (``run.census.ANSWER``) and logs ``CENSUS_WRITTEN``.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kafka_migration.model.census import Census
from kafka_migration.model.config import ClusterPair
from kafka_migration.model.plan import MigrationPlan, PartitionSlice
from kafka_migration.model.text import plural
from kafka_migration.run.census import census_slices, census_task, write_answer
from kafka_migration.spark.driver_jobs import TASKS_PER_SLOT, _task_error

log = logging.getLogger("kafka_migration.spark")

CENSUS_WRITTEN = "census written"


def census_written(line: str) -> bool:
    """Whether a line of the driver's output is its ``CENSUS_WRITTEN`` log line (read by the launcher)."""
    return line.rstrip().endswith(f"{log.name}: {CENSUS_WRITTEN}")


def balanced(slices: Sequence[PartitionSlice], count: int) -> list[list[PartitionSlice]]:
    """``slices`` in at most ``count`` groups of about equal offsets: the biggest first, each to the lightest group.
    A task reads its group with one consumer, so a few big groups cost fewer consumers than many small ones."""
    groups: list[tuple[int, int, list[PartitionSlice]]] = [(0, i, []) for i in range(max(1, min(count, len(slices))))]
    for piece in sorted(slices, key=lambda s: s.end - s.start, reverse=True):
        load, i, group = heapq.heappop(groups)
        group.append(piece)
        heapq.heappush(groups, (load + piece.end - piece.start, i, group))
    return [group for _, _, group in sorted(groups, key=lambda g: g[1]) if group]


def run_census(sc: Any, plan: MigrationPlan, clusters: ClusterPair) -> Census:
    """One Spark job: the census of every range the copy will copy (an empty census when there is none)."""
    slices = census_slices(plan)
    if not slices:
        return Census()
    started = time.monotonic()
    tasks = balanced(slices, max(1, int(sc.defaultParallelism)) * TASKS_PER_SLOT)
    sc.setJobGroup("census", f"census of the schema ids in {plural(len(slices), 'partition')}")
    source = clusters.source
    rows = sc.parallelize(tasks, len(tasks)).map(lambda task: census_task(task, source)).collect()
    found = Census.of(Census.from_dict(row) for row in rows)
    log.info("census in %.1f s: %s", time.monotonic() - started, found.describe())
    return found


def answer_census(sc: Any, request: Path, answer: Path, clusters: ClusterPair) -> None:
    """The census of the plan at ``request``, written to ``answer`` (or why it could not be taken), then said."""
    try:
        write_answer(answer, run_census(sc, MigrationPlan.read(request), clusters))
    except Exception as exc:  # a task's error (the source unreachable...): the launcher refuses the run with it
        error = _task_error(exc)
        log.error("census failed: %s", error)
        write_answer(answer, None, error)
    log.info(CENSUS_WRITTEN)
