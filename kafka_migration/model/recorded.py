"""A run and its segments as the ledger recorded them: what every reader of the ledger's runs gets.

The ledger (``ledger/runs.py``, ``ledger/views.py``) reads its rows into these; the CLI, the reports, the
cutover and the console read attributes, not column names. ``to_dict`` gives the row's columns back, with
the values as stored (times as datetimes, the timings as ``RunTimings.to_dict``), for the outputs that
show a row as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from kafka_migration.model.timings import RunTimings


@dataclass(frozen=True)
class RecordedRun:
    """One run (a row of ``km_runs``). ``params``, ``warnings`` and ``plan`` are None in a list's rows (the
    ledger's lists leave them out: a plan is large); reading one run or ``Ledger.runs`` gives them."""

    run_id: str
    trigger: str  # "cli" or "airflow"
    dag_id: str | None
    dag_run_id: str | None
    source_cluster_id: str
    source_bootstrap: str
    target_cluster_id: str
    target_bootstrap: str
    started_at: datetime
    ended_at: datetime | None
    status: str
    topics: int
    records: int
    report_sha256: str | None = None
    message: str | None = None
    timings: RunTimings | None = None  # None: not recorded (before ledger 0006, or a run still running)
    params: dict[str, Any] | None = field(default=None, repr=False)
    warnings: tuple[str, ...] | None = field(default=None, repr=False)
    plan: dict[str, Any] | None = field(default=None, repr=False)  # MigrationPlan.to_dict()

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> RecordedRun:
        """From a row's columns (all, or a list's columns without the plan): a missing column is None."""
        values = {f.name: row.get(f.name) for f in fields(cls)}
        stored = values["timings"]
        values["timings"] = RunTimings.from_dict(stored if isinstance(stored, Mapping) else None)
        if values["warnings"] is not None:
            values["warnings"] = tuple(values["warnings"])
        return cls(**values)

    @property
    def wall_seconds(self) -> float | None:
        """The run's wall time as it recorded it (None: not recorded)."""
        return self.timings.wall if self.timings is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The row's columns (None where a list did not read them), the timings as stored."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["timings"] = self.timings.to_dict() if self.timings is not None else None
        out["warnings"] = list(self.warnings) if self.warnings is not None else None
        return out


@dataclass(frozen=True)
class RecordedSegment:
    """One partition of a run (a row of ``km_segments``): its planned range, what the copy and the verification
    found, and its status (planned, copied, verified, mismatch, unverified, failed, nothing_new)."""

    id: int
    run_id: str
    source_cluster_id: str
    source_topic: str
    partition: int
    target_cluster_id: str
    target_topic: str
    source_start: int
    source_end: int  # excluded: the next offset
    target_start: int
    status: str
    target_end: int | None = None
    expired_offsets: int = 0
    copied_records: int | None = None
    resumed_records: int | None = None
    copied_bytes: int | None = None
    source_records: int | None = None
    target_records: int | None = None
    source_checksum: str | None = None
    target_checksum: str | None = None
    first_difference: str | None = None
    first_source_offset: int | None = None
    first_target_offset: int | None = None
    copy_seconds: float | None = None
    verify_seconds: float | None = None
    error: str | None = None
    job_topics: int | None = None  # topics that shared this topic's Spark job; None: not recorded (before 0006)
    # --schema-ids translate: keys and values by outcome (``SchemaCounts.to_dict``); None: compared as bytes (0012)
    schema_counts: dict[str, Any] | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> RecordedSegment:
        return cls(**{f.name: row[f.name] for f in fields(cls) if f.name in row})

    @property
    def planned_offsets(self) -> int:
        """Offsets the run planned to copy in this partition."""
        return max(0, self.source_end - self.source_start)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
