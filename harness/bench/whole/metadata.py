"""Scenario 5's reading of a run's records: the run's parts (RunTimings) from its report or ledger row, and
from Airflow's metadata (a DAG run's row and its task instances) when the run was triggered and when its
verdict was complete, and where the time outside its tasks went. Pure: tests/harness/test_bench_whole.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

TIMING_PARTS = ("wall", "plan", "startup", "copy", "verify", "overlap", "bookkeeping")


def find_timings(report: Any) -> dict[str, float] | None:
    """The run's parts (RunTimings.to_dict) from a report.json or a ledger row: a ``timings`` mapping with
    a ``wall`` entry, at the top or one level down (e.g. under ``run``); None when the run has none."""
    if not isinstance(report, dict):
        return None
    candidates = [report.get("timings")] + [v.get("timings") for v in report.values() if isinstance(v, dict)]
    for found in candidates:
        if isinstance(found, str):
            try:
                found = json.loads(found)
            except ValueError:
                continue
        if isinstance(found, dict) and found.get("wall") is not None:
            return {k: float(found[k]) for k in TIMING_PARTS if found.get(k) is not None}
    return None


def parse_db_time(value: Any) -> float | None:
    """Epoch seconds of a timestamp as Airflow's SQLite metadata DB stores it (UTC, naive or with offset)."""
    if value in (None, ""):
        return None
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def trigger_time(run: dict[str, Any]) -> float | None:
    stamps = (parse_db_time(run.get(k)) for k in ("queued_at", "created_at", "start_date"))
    return next((t for t in stamps if t is not None), None)


def trigger_to_summary(run: dict[str, Any]) -> float | None:
    """Seconds from a DAG run's trigger to the end of its summary task (or of a per-topic result beside it
    that ended later: ``summary_end``), from its metadata DB row.

    The trigger is ``queued_at`` (set when a run is triggered through the API or UI), else ``created_at``
    (the row's creation: ``dags test`` queues nothing and sets start_date to the logical date, i.e. the
    command's launch, before it parses the DAG folder twice), else ``start_date``.
    """
    begin, end = trigger_time(run), parse_db_time(run.get("summary_end"))
    if begin is None or end is None:
        return None
    return round(end - begin, 3)


def summary_end(tasks: list[dict[str, Any]]) -> Any:
    """When the run's verdict was complete: the end of its summary task, or of a per-topic result task that
    ran beside it and ended later (the latest end of any task); None while the summary has not ended."""
    if not any(t["task_id"] == "summary" and t.get("end_date") for t in tasks):
        return None
    return max((t["end_date"] for t in tasks if t.get("end_date")), key=lambda v: parse_db_time(v) or 0.0)


def airflow_overhead(run: dict[str, Any]) -> dict[str, Any]:
    """Where a DAG run's trigger-to-summary time went outside its tasks: before the first task started,
    and between tasks (no task running); and each task id's summed run time. From the run's ``tasks``
    rows (task_id, start_date, end_date) as last_run returns them."""
    begin, end = trigger_time(run), parse_db_time(run.get("summary_end"))
    intervals = []
    per_task: dict[str, float] = {}
    for task in run.get("tasks") or ():
        start, stop = parse_db_time(task.get("start_date")), parse_db_time(task.get("end_date"))
        if start is None or stop is None:
            continue
        intervals.append((start, stop))
        per_task[task["task_id"]] = round(per_task.get(task["task_id"], 0.0) + stop - start, 3)
    if begin is None or end is None or not intervals:
        return {"task_seconds": per_task}
    intervals.sort()
    busy, cursor = 0.0, intervals[0][0]
    for start, stop in intervals:  # union of the task intervals up to the summary's end
        start, stop = max(start, cursor), min(stop, end)
        if stop > start:
            busy += stop - start
            cursor = stop
    return {
        "before_first_task": round(intervals[0][0] - begin, 3),
        "between_tasks": round(end - intervals[0][0] - busy, 3),
        "task_seconds": per_task,
    }
