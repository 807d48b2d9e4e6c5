"""``--output json``: what each command prints for scripts, as one JSON document on stdout.

Pure shaping, one builder per command, from the same values the text output is rendered from (a run's
plan and topic summaries, the ledger's rows, a group sync's result). Every document starts with
``"schema": SCHEMA`` and ``"command"``; within one schema version keys are only ever added, never renamed
or removed, and a value keeps its type (docs/cli.md, "Reading the CLI from scripts"). Times are ISO 8601
in UTC; offset ranges are given as numbers (``first`` and ``last``, both included, and ``offsets``, the
count) and in the project's notation (``range``, ``model.text.offset_range``).

No Airflow, Spark or ledger import here: the values come in, a dict goes out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from kafka_migration.model.groups import GOOD_OUTCOMES, GroupSyncResult
from kafka_migration.model.plan import MigrationPlan, PartitionPlan
from kafka_migration.model.recorded import RecordedRun
from kafka_migration.model.text import offset_range
from kafka_migration.reports.signoff import ReportFiles
from kafka_migration.reports.summary import TopicSummary

SCHEMA = 1

# The verdict of a run as JSON gives it (the ledger's run statuses, and the two without a copy).
DRY_RUN = "dry_run"
UP_TO_DATE = "up_to_date"


def document(command: str, **body: Any) -> dict[str, Any]:
    """The frame of every document: its schema version and the command that printed it."""
    return {"schema": SCHEMA, "command": command, **body}


def emit(doc: Mapping[str, Any], stream: IO[str]) -> None:
    """The document, indented, and a newline: the only thing a command writes to stdout with --output json."""
    stream.write(json.dumps(doc, indent=2, default=_plain, ensure_ascii=False) + "\n")
    stream.flush()


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return when(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON: shape it in kafka_migration.cli.output")


def when(value: datetime | None) -> str | None:
    """ISO 8601 with its offset (the ledger's times are aware UTC: ``ledger.schema.UtcDateTime``)."""
    return None if value is None else value.isoformat()


def report_files(files: ReportFiles | None) -> dict[str, Any] | None:
    if files is None:
        return None
    return {"html": str(files.html), "json": str(files.json), "markdown": str(files.markdown), "sha256": files.sha256}


def offsets(start: int, end: int) -> dict[str, Any]:
    """The half-open ``[start, end)`` as JSON: first and last offset (both included; null when empty),
    the count, and the project notation."""
    count = max(0, end - start)
    return {
        "first": start if count else None,
        "last": end - 1 if count else None,
        "offsets": count,
        "range": offset_range(start, end),
    }


def _partition(p: PartitionPlan) -> dict[str, Any]:
    return {"partition": p.partition, **offsets(p.start, p.end), "origin": p.origin, "expired": p.expired}


def plan_topics(plan: MigrationPlan) -> list[dict[str, Any]]:
    """Per topic of a plan: its target, whether it is created, and the offsets each partition copies."""
    return [
        {
            "source_topic": t.source_topic,
            "target_topic": t.target_topic,
            "create": t.create,
            "replication_factor": t.replication_factor,
            "planned_offsets": t.offset_span,
            "partitions": [_partition(p) for p in t.partitions],
        }
        for t in plan.topics
    ]


def _topic(row: TopicSummary) -> dict[str, Any]:
    """A topic's figures of the run table; its partitions come from the plan, with their offset ranges."""
    return {
        "source_topic": row.source_topic,
        "target_topic": row.target_topic,
        "planned_offsets": row.planned_offsets,
        "copied": row.copied,
        "source_records": row.source_records,
        "target_records": row.target_records,
        "verdict": row.verdict,
        "detail": row.detail,
        "seconds": round(row.seconds, 3),
        "job_topics": row.job_topics,
    }


def run_document(
    plan: MigrationPlan,
    verdict: str,
    exit_code: int,
    *,
    rows: Sequence[TopicSummary] = (),
    run_files: Path | None = None,
    report: ReportFiles | None = None,
    timings: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """``run``: the run id and verdict, the report, and per topic the plan and the figures of the table."""
    figures = {r.source_topic: _topic(r) for r in rows}
    topics = [{**t, **figures.get(t["source_topic"], {})} for t in plan_topics(plan)]
    return document(
        "run",
        run_id=plan.run_id,
        verdict=verdict,
        exit_code=exit_code,
        dry_run=verdict == DRY_RUN,
        source={"cluster_id": plan.source.cluster_id, "bootstrap": plan.source.bootstrap},
        target={"cluster_id": plan.target.cluster_id, "bootstrap": plan.target.bootstrap},
        planned_offsets=plan.offset_span,
        copied=sum(r.copied or 0 for r in rows),
        topics=topics,
        skipped_topics=dict(plan.skipped_topics),
        warnings=list(plan.warnings),
        run_files=str(run_files) if run_files else None,
        report=report_files(report),
        timings=dict(timings) if timings is not None else None,
        # --schema-ids: the registries, every subject version and what became of it, the id map; None when off
        schemas=plan.schemas,
    )


def run_row(run: RecordedRun) -> dict[str, Any]:
    """One run of ``history``, as the ledger recorded it."""
    return {
        "run_id": run.run_id,
        "trigger": run.trigger,
        "dag_id": run.dag_id,
        "dag_run_id": run.dag_run_id,
        "started_at": when(run.started_at),
        "ended_at": when(run.ended_at),
        "status": run.status,
        "topics": run.topics,
        "records": run.records,
        "wall_seconds": run.wall_seconds,
        "source_cluster_id": run.source_cluster_id,
        "source_bootstrap": run.source_bootstrap,
        "target_cluster_id": run.target_cluster_id,
        "target_bootstrap": run.target_bootstrap,
        "report_sha256": run.report_sha256,
        "message": run.message,
    }


def sync_summary(row: Mapping[str, Any]) -> dict[str, Any]:
    """One group sync of ``history``, from the ledger's summary row."""
    return {
        "sync_id": row["sync_id"],
        "run_id": row["run_id"],
        "synced_at": when(row["synced_at"]),
        "groups": row["groups"],
        "partitions": row["partitions"],
        "not_synced": row["not_ok"] or 0,
        "source_cluster_id": row["source_cluster_id"],
        "target_cluster_id": row["target_cluster_id"],
    }


def history_document(
    runs: Iterable[RecordedRun],
    syncs: Iterable[Mapping[str, Any]],
    leases: Iterable[Any],
) -> dict[str, Any]:
    """``history``: runs (newest first), group syncs, and the leases of runs writing now."""
    return document(
        "history",
        runs=[run_row(r) for r in runs],
        group_syncs=[sync_summary(s) for s in syncs],
        leases=[
            {
                "target_topic": lease.key.target_topic,
                "target_cluster_id": lease.key.target_cluster_id,
                "run_id": lease.run_id,
                "holder": lease.holder,
                "expires_at": when(lease.expires_at),
                "description": lease.describe(),
            }
            for lease in leases
        ],
    )


def cutover_history_document(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``history --cutovers``: each cutover and its failback."""
    return document(
        "history",
        cutovers=[
            {
                "cutover_id": r["cutover_id"],
                "started_at": when(r["started_at"]),
                "ended_at": when(r.get("ended_at")),
                "status": r["status"],
                "run_id": r["run_id"],
                "groups": list(r["groups"] or []),
                "message": r.get("message"),
                "failback_status": r.get("failback_status"),
                "failback_run_id": r.get("failback_run_id"),
                "source_cluster_id": r["source_cluster_id"],
                "target_cluster_id": r["target_cluster_id"],
                "report_sha256": r.get("report_sha256"),
            }
            for r in rows
        ],
    )


def report_document(run_id: str, files: ReportFiles) -> dict[str, Any]:
    """``report RUN_ID``: the files written and the digest the ledger recorded."""
    return document("report", run_id=run_id, report=report_files(files))


def report_verify_document(path: Path, ok: bool, message: str) -> dict[str, Any]:
    """``report verify FILE``: whether the file is the report the ledger recorded."""
    return document("report verify", file=str(path), ok=ok, message=message)


def _sync_partition(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "source_topic": row["source_topic"],
        "partition": row["partition"],
        "source_offset": row["source_offset"],
        "source_end": row.get("source_end"),
        "lag": row.get("lag"),  # model/groups.lag_left, computed once
        "target_topic": row.get("target_topic"),
        "target_offset": row.get("target_offset"),
        "previous_target_offset": row.get("previous_target_offset"),
        "translation": row.get("translation"),
        "translated_by": row.get("translated_by"),
        "outcome": row["outcome"],
        "ok": row["outcome"] in GOOD_OUTCOMES,
        "proof": row.get("proof"),
        "reason": row.get("reason"),
    }


def _by_group(rows: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["group_id"], []).append(_sync_partition(row))
    return groups


def _counts(groups: Mapping[str, list[dict[str, Any]]]) -> dict[str, int]:
    parts = [p for ps in groups.values() for p in ps]
    return {"groups": len(groups), "partitions": len(parts), "not_synced": sum(1 for p in parts if not p["ok"])}


def group_sync_document(result: GroupSyncResult) -> dict[str, Any]:
    """``groups sync``: per group and partition, where it was, where it is on the target, and the proof.

    A dry run records nothing, so it has no sync id (``sync_id`` null, ``recorded`` false)."""
    found = result.to_dict()
    by_group = _by_group(p.to_dict() for p in result.partitions)
    return document(
        "groups sync",
        sync_id=None if result.dry_run else result.sync_id,
        recorded=not result.dry_run,
        run_id=result.run_id,
        dry_run=result.dry_run,
        verdict=("would_sync" if result.dry_run else "synced") if result.ok else "incomplete",
        exit_code=result.exit_code,
        source_cluster_id=result.source_cluster_id,
        target_cluster_id=result.target_cluster_id,
        allow_rewind=result.allow_rewind,
        totals=_counts(by_group),
        groups=[
            {
                **{k: v for k, v in group.items() if k != "partitions"},
                "partitions": by_group.get(group["group_id"], []),
            }
            for group in found["groups"]
        ],
    )


def group_show_document(sync_id: str, rows: Sequence[Mapping[str, Any]], exit_code: int) -> dict[str, Any]:
    """``groups show``: a recorded sync from the ledger's rows, in the shape of ``groups sync``."""
    first = rows[0]
    by_group = _by_group(rows)
    return document(
        "groups show",
        sync_id=sync_id,
        recorded=True,
        run_id=first["run_id"],
        synced_at=when(first["synced_at"]),
        verdict="synced" if exit_code == 0 else "incomplete",
        exit_code=exit_code,
        source_cluster_id=first["source_cluster_id"],
        target_cluster_id=first["target_cluster_id"],
        totals=_counts(by_group),
        groups=[{"group_id": g, "partitions": parts} for g, parts in by_group.items()],
    )


def final_run(run_id: str | None, verified: bool | None, report: Path | None) -> dict[str, Any] | None:
    """The final run of a cutover or failback, as far as it got."""
    if run_id is None:
        return None
    return {"run_id": run_id, "verified": verified, "report": str(report) if report else None}


@dataclass(frozen=True)
class CutoverEnd:
    """How a cutover or failback ended: its status (completed, refused, failed) and exit code, its message, the
    groups moved, its final run (``final_run``), the cutover report (written also when refused or failed) and the
    command to run next, if any."""

    status: str
    exit_code: int
    message: str
    groups: Sequence[str] = ()
    run: Mapping[str, Any] | None = None
    report: Path | None = None
    next_step: str | None = None


def cutover_document(command: str, cutover_id: str, end: CutoverEnd) -> dict[str, Any]:
    """``cutover`` / ``failback``: the cutover id and how it ended."""
    return document(
        command,
        cutover_id=cutover_id,
        status=end.status,
        exit_code=end.exit_code,
        message=end.message,
        groups=list(end.groups),
        final_run=dict(end.run) if end.run is not None else None,
        report=str(end.report) if end.report else None,
        next_step=end.next_step,
    )
