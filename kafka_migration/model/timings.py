"""Where a run's wall time went: planning, Spark start-up, copy, verification, bookkeeping.

Pure value types, shared by the pipeline and the DAG (which measure), the ledger (which
stores) and the report (which shows). Copy and verification may overlap (a partition is
verified as soon as its copy is done), so the parts need not add up to the wall time:
``overlap`` says how much of the two ran at the same time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

PARTS = ("plan", "startup", "copy", "verify", "bookkeeping")


@dataclass(frozen=True)
class RunTimings:
    """Seconds of one run. ``wall``: start (CLI start or DAG trigger) to verdict.

    plan: discovery, offsets, target checks, leases, plan file, and topic creation until the first topics could
    be copied (the copy starts while the broker creates the others).
    startup: Spark start-up the run waited for (start-up hidden behind planning is not counted).
    copy: first copy task start to last copy task end; verify: the same for verification tasks.
    overlap: seconds in which copy and verification both ran.
    bookkeeping: ledger writes and reports after the last task.
    """

    wall: float
    plan: float = 0.0
    startup: float = 0.0
    copy: float = 0.0
    verify: float = 0.0
    overlap: float = 0.0
    bookkeeping: float = 0.0

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 3) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RunTimings | None:
        if not data:
            return None
        known = {k: float(v) for k, v in data.items() if k in cls.__dataclass_fields__ and v is not None}
        return cls(**known) if "wall" in known else None


def span(intervals: Iterable[tuple[float, float]]) -> tuple[float, float] | None:
    """(first start, last end) of (start, end) intervals in epoch seconds; None when there are none."""
    items = list(intervals)
    if not items:
        return None
    return min(s for s, _ in items), max(e for _, e in items)


def overlap_seconds(a: tuple[float, float] | None, b: tuple[float, float] | None) -> float:
    """Seconds two spans share."""
    if a is None or b is None:
        return 0.0
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def task_intervals(partitions: Iterable[Mapping[str, Any]]) -> list[tuple[float, float]]:
    """(started, ended) epoch seconds of partition result rows that carry them (written by the Spark tasks)."""
    return [
        (float(p["started"]), float(p["ended"]))
        for p in partitions
        if p.get("started") is not None and p.get("ended") is not None
    ]


def run_timings(
    started: float,
    planned: float,
    spark_ready: float | None,
    copy_tasks: Iterable[tuple[float, float]],
    verify_tasks: Iterable[tuple[float, float]],
    finished: float,
) -> RunTimings:
    """The parts of a run from epoch stamps: run start, plan (and topics) done, Spark ready for work
    (None: unknown), the task intervals of each step, and the end of the bookkeeping.

    startup counts only the Spark start-up the run waited for after planning; bookkeeping is
    the time after the last task ended.
    """
    copy = span(copy_tasks)
    verify = span(verify_tasks)
    last_task = max([e for s in (copy, verify) if s for e in (s[1],)], default=planned)
    startup = max(0.0, spark_ready - planned) if spark_ready is not None else 0.0
    return RunTimings(
        wall=max(0.0, finished - started),
        plan=max(0.0, planned - started),
        startup=startup,
        copy=copy[1] - copy[0] if copy else 0.0,
        verify=verify[1] - verify[0] if verify else 0.0,
        overlap=overlap_seconds(copy, verify),
        bookkeeping=max(0.0, finished - last_task),
    )
