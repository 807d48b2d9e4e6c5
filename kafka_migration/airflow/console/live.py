"""A running run's progress per topic and partition: the plan's ranges (ledger) joined with the driver's snapshots.

Pure: the segments and snapshots come in, plain dicts go out. The snapshots count records per partition
(progress datagrams of the Spark tasks); a finished topic counts its whole planned range. Progress is
informational: the verdicts come from the ledger once the run has ended.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from kafka_migration.model.recorded import RecordedSegment

STEPS = ("copy", "verify")
STALE_AFTER = 30.0  # seconds without a new snapshot: the driver may be gone (or Spark is stopping)


def _eta(remaining: int, rate: float) -> float | None:
    return round(remaining / rate, 1) if rate > 0 and remaining > 0 else (0.0 if remaining <= 0 else None)


def progress_by_partition(
    segments: Sequence[RecordedSegment], snapshots: Iterable[Mapping[str, Any]], now: float | None = None
) -> dict[str, Any]:
    """Per partition: planned offsets, copied and verified so far, rate and time left; and the run's totals."""
    now = datetime.now(UTC).timestamp() if now is None else now
    planned = {(s.source_topic, s.partition): s.planned_offsets for s in segments}
    done: dict[str, dict[tuple[str, int], int]] = {step: {} for step in STEPS}
    seconds: dict[str, dict[tuple[str, int], float]] = {step: {} for step in STEPS}
    finished: dict[str, set[str]] = {step: set() for step in STEPS}
    updated = None
    started = None
    snapshot_steps = set()
    for snap in snapshots:
        updated = max(updated or 0.0, float(snap.get("updated") or 0.0))
        started = min(started or float("inf"), float(snap.get("started") or now))
        for step, data in (snap.get("steps") or {}).items():
            if step not in done:
                continue
            snapshot_steps.add(step)
            finished[step] |= set((data.get("done") or {}).keys())
            for topic, partition, records, _size, active in data.get("partitions") or []:
                done[step][(topic, int(partition))] = int(records)
                seconds[step][(topic, int(partition))] = float(active)
    partitions = []
    totals = {step: {"done": 0, "planned": 0, "rate": 0.0, "topics_done": len(finished[step])} for step in STEPS}
    for (topic, partition), span in sorted(planned.items()):
        row: dict[str, Any] = {"topic": topic, "partition": partition, "planned": span}
        for step in STEPS:
            key = (topic, partition)
            count = span if topic in finished[step] else min(done[step].get(key, 0), span)
            active = seconds[step].get(key, 0.0)
            rate = count / active if topic not in finished[step] and active > 0 and count else 0.0
            row[step] = {
                "done": count,
                "rate": round(rate, 1),
                "eta_seconds": None if topic in finished[step] else _eta(span - count, rate),
                "finished": topic in finished[step] or (span > 0 and count >= span),
            }
            totals[step]["done"] += count
            totals[step]["planned"] += span
            totals[step]["rate"] += rate
        partitions.append(row)
    for step in STEPS:
        t = totals[step]
        t["rate"] = round(t["rate"], 1)
        t["eta_seconds"] = _eta(t["planned"] - t["done"], t["rate"])
    return {
        "started": _iso(started) if started not in (None, float("inf")) else None,
        "updated": _iso(updated) if updated else None,
        "age_seconds": round(now - updated, 1) if updated else None,
        "stale": bool(updated) and now - (updated or 0.0) > STALE_AFTER,
        "phase": _phase(snapshot_steps, updated),
        "totals": totals,
        "partitions": partitions,
    }


def _phase(steps: set[str], updated: float | None) -> str:
    """What a person reads: still planning or starting Spark, or copying and verifying."""
    if not updated:
        return "planning or starting Spark"
    return "copying and verifying" if {"copy", "verify"} <= steps else ("copying" if "copy" in steps else "verifying")


def _iso(epoch: float | None) -> str | None:
    """To the millisecond: the console's rate chart divides what was done between two snapshots by the time between
    them (2 s apart)."""
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


def summary(progress: Mapping[str, Any]) -> dict[str, Any]:
    """The few numbers a runs list shows for a running run."""
    totals = progress["totals"]
    return {
        "phase": progress["phase"],
        "stale": progress["stale"],
        "copied": totals["copy"]["done"],
        "verified": totals["verify"]["done"],
        "planned": totals["copy"]["planned"],
        "rate": totals["copy"]["rate"],
        "eta_seconds": totals["copy"]["eta_seconds"],
        "updated": progress["updated"],
    }
