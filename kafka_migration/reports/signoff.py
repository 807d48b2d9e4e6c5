"""The sign-off report of a run, built from the ledger alone.

``report.json`` is complete and deterministic (sorted keys, no generation time), so a
report regenerated from the ledger is byte-identical and its SHA-256, stored in the
ledger, proves a file is the one recorded. ``report.html`` is self-contained (inline
CSS and SVG) for browsers and print; ``report.md`` is for tickets and change boards.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_migration.model.bulk import collector_paused
from kafka_migration.model.groups import GOOD_OUTCOMES
from kafka_migration.model.recorded import RecordedRun, RecordedSegment
from kafka_migration.model.text import plural
from kafka_migration.reports.schemas import schemas_section
from kafka_migration.reports.signoff_render import render_html, render_markdown, shared_job_note

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

__all__ = ["render_html", "render_markdown", "shared_job_note"]  # rendering lives in signoff_render

REPORT_VERSION = 1

VERDICTS = {
    "verified": "VERIFIED",
    "up_to_date": "UP TO DATE",
    "mismatch": "NOT VERIFIED",
    "unverified": "COULD NOT VERIFY",
    "failed": "FAILED",
    "running": "INCOMPLETE",
    "dry_run": "DRY RUN",
    "target_lost": "TARGET LOST VERIFIED RECORDS",
}


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    return str(value)


def _topic_verdict(statuses: Sequence[str]) -> str:
    if not statuses or all(s == "nothing_new" for s in statuses):
        return "up to date"
    if any(s == "failed" for s in statuses):
        return "failed"
    if any(s == "mismatch" for s in statuses):
        return "mismatch"
    if any(s == "unverified" for s in statuses):
        return "could not verify"
    if all(s in ("verified", "nothing_new") for s in statuses):
        return "verified"
    return "incomplete"


def build_report(
    run: RecordedRun,
    segments: Sequence[RecordedSegment],
    group_syncs: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The report's content: scope, per-topic and per-partition evidence, differences, warnings, verdict,
    and the consumer groups synced as part of the run (a section only when there are any)."""
    plan = run.plan or {}
    topic_plans = {t["source_topic"]: t for t in plan.get("topics", [])}
    partition_plans = {
        (t["source_topic"], p["partition"]): p for t in plan.get("topics", []) for p in t.get("partitions", [])
    }
    # Runs before ledger 0006 did not record job_topics: their plan's jobs (Spark applications) stand in.
    plan_jobs = {name: len(job) for job in plan.get("jobs", []) for name in job}
    by_topic: dict[str, list[RecordedSegment]] = {}
    for seg in segments:
        by_topic.setdefault(seg.source_topic, []).append(seg)

    topics = []
    differences = []
    warnings = list(plan.get("warnings", []))
    for name in sorted(set(topic_plans) | set(by_topic)):
        tp = topic_plans.get(name, {})
        rows = sorted(by_topic.get(name, []), key=lambda s: s.partition)
        partitions = []
        for seg in rows:
            pp = partition_plans.get((name, seg.partition), {})
            row = {
                "partition": seg.partition,
                "origin": pp.get("origin"),
                "source_start": seg.source_start,
                "source_end": seg.source_end,
                "target_start": seg.target_start,
                "target_end": seg.target_end,
                "expired_offsets": seg.expired_offsets or 0,
                # Offsets older than the target keeps: not copied, the target would delete them (run/retention.py).
                "aged_offsets": pp.get("aged", 0),
                "copied_records": seg.copied_records,
                "resumed_records": seg.resumed_records,
                "copied_bytes": seg.copied_bytes,
                "source_records": seg.source_records,
                "target_records": seg.target_records,
                "source_checksum": seg.source_checksum,
                "target_checksum": seg.target_checksum,
                "status": seg.status,
                "first_difference": seg.first_difference,
                "first_source_offset": seg.first_source_offset,
                "first_target_offset": seg.first_target_offset,
                "error": seg.error,
                "copy_seconds": seg.copy_seconds,
                "verify_seconds": seg.verify_seconds,
            }
            partitions.append(row)
            if seg.status in ("mismatch", "failed", "unverified"):
                differences.append(
                    {
                        "source_topic": name,
                        "target_topic": seg.target_topic,
                        "partition": seg.partition,
                        "status": seg.status,
                        "first_difference": seg.first_difference or seg.error,
                        "first_source_offset": seg.first_source_offset,
                        "first_target_offset": seg.first_target_offset,
                        "source_records": seg.source_records,
                        "target_records": seg.target_records,
                    }
                )
            if seg.expired_offsets:
                warnings.append(
                    f"{name}[{seg.partition}]: {plural(seg.expired_offsets, 'offset')} expired from the source before "
                    "they were copied (gap accepted)"
                )
        warnings.extend(f"{name}: {w}" for w in tp.get("warnings", []))
        copied = sum(p["copied_records"] or 0 for p in partitions)
        copied_bytes = sum(p["copied_bytes"] or 0 for p in partitions)
        # The topic's own work: the sum of its partitions' task times. A job's or the slowest task's time
        # would give a small topic that shared a Spark job with a big one the big one's time.
        seconds = sum(p["copy_seconds"] or 0.0 for p in partitions)
        recorded = [seg.job_topics for seg in rows if seg.job_topics]
        job_topics = max(recorded) if recorded else plan_jobs.get(name, 1)
        topics.append(
            {
                "source_topic": name,
                "target_topic": tp.get("target_topic") or (rows[0].target_topic if rows else None),
                "created": bool(tp.get("create")),
                "partitions": len(rows) or len(tp.get("partitions", [])),
                "replication_factor": tp.get("replication_factor"),
                "configs_copied": dict(sorted(tp.get("configs", {}).items())),
                "configs_skipped": dict(sorted(tp.get("skipped_configs", {}).items())),
                # How each config was decided (set on the source topic, effective value, pinned, not copied).
                "config_decisions": dict(sorted(tp.get("config_decisions", {}).items())),
                "verdict": _topic_verdict([p["status"] for p in partitions]),
                "records_copied": copied,
                "bytes_copied": copied_bytes,
                "copy_seconds": round(seconds, 3),
                "verify_seconds": round(sum(p["verify_seconds"] or 0.0 for p in partitions), 3),
                "records_per_second": round(copied / seconds, 1) if seconds > 0 else None,
                "job_topics": job_topics,
                "records_verified": sum(p["target_records"] or 0 for p in partitions if p["status"] == "verified"),
                "partition_details": partitions,
            }
        )

    all_parts = [p for t in topics for p in t["partition_details"]]
    options = run.params or plan.get("options", {})
    report = {
        "report_version": REPORT_VERSION,
        "run": {
            "run_id": run.run_id,
            "trigger": run.trigger,
            "dag_id": run.dag_id,
            "dag_run_id": run.dag_run_id,
            "status": run.status,
            "started_at": _iso(run.started_at),
            "ended_at": _iso(run.ended_at),
            "message": run.message,
        },
        "verdict": VERDICTS.get(run.status, run.status.upper()),
        "scope": {
            "source": {"cluster_id": run.source_cluster_id, "bootstrap": run.source_bootstrap},
            "target": {"cluster_id": run.target_cluster_id, "bootstrap": run.target_bootstrap},
            "include": options.get("include"),
            "exclude": options.get("exclude"),
            "rename": options.get("rename"),
            "start": options.get("start"),
            "allow_gaps": options.get("allow_gaps"),
            "accept_target_retention": bool(options.get("accept_target_retention")),
            "accept_target_loss": bool(options.get("accept_target_loss")),
            "dry_run": options.get("dry_run"),
        },
        "totals": {
            "topics": len(topics),
            "partitions": len(all_parts),
            "records_copied": sum(t["records_copied"] for t in topics),
            "bytes_copied": sum(t["bytes_copied"] for t in topics),
            "records_verified": sum(t["records_verified"] for t in topics),
            "partitions_verified": sum(1 for p in all_parts if p["status"] == "verified"),
            "partitions_not_verified": sum(1 for p in all_parts if p["status"] in ("mismatch", "failed", "unverified")),
            "expired_offsets": sum(p["expired_offsets"] for p in all_parts),
        },
        "topics": topics,
        # Where the run's wall time went (seconds; kafka_migration.model.timings); None: not recorded.
        "timings": run.timings.to_dict() if run.timings is not None else None,
        "differences": differences,
        "warnings": warnings,
        "skipped_topics": dict(sorted(plan.get("skipped_topics", {}).items())),
        "disappeared_topics": dict(sorted(plan.get("disappeared_topics", {}).items())),
        # Verified records the target lost since earlier runs (run/losses.py): accepted, or the run's verdict.
        "target_losses": [
            {**loss, "records": max(0, loss["target_end"] - loss["target_start"])}
            for loss in sorted(
                plan.get("target_losses", []), key=lambda x: (x["source_topic"], x["target_topic"], x["partition"])
            )
        ],
    }
    if group_syncs:
        report["consumer_groups"] = consumer_groups_section(group_syncs)
    schemas = schemas_section(plan, segments)
    if schemas is not None:
        report["schemas"] = schemas
    return report


def consumer_groups_section(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per group and partition: source offset, target offset, lag left on the source, outcome and proof."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: (r["group_id"], r["source_topic"], r["partition"])):
        offset = r["source_offset"]
        groups.setdefault(r["group_id"], []).append(
            {
                "source_topic": r["source_topic"],
                "partition": r["partition"],
                "source_offset": offset,
                "target_topic": r.get("target_topic"),
                "target_offset": r.get("target_offset"),
                "previous_target_offset": r.get("previous_target_offset"),
                "lag": r.get("lag"),  # model/groups.lag_left, computed once
                "translation": r.get("translation"),
                "translated_by": r.get("translated_by"),
                "outcome": r["outcome"],
                "proof": r.get("proof"),
                "reason": r.get("reason"),
            }
        )
    return {
        "sync_ids": sorted({r["sync_id"] for r in rows}),
        "synced_at": _iso(max((r["synced_at"] for r in rows if r.get("synced_at")), default=None)),
        "groups": [{"group_id": g, "partitions": parts} for g, parts in groups.items()],
        "partitions": len(rows),
        "partitions_not_synced": sum(1 for r in rows if r["outcome"] not in GOOD_OUTCOMES),
    }


def report_json(report: Mapping[str, Any]) -> bytes:
    return (json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class ReportFiles:
    directory: Path
    json: Path
    html: Path
    markdown: Path
    sha256: str


def write_report(report: Mapping[str, Any], directory: Path) -> ReportFiles:
    return write_report_files(report, directory, render_html, render_markdown)


def write_report_files(
    report: Mapping[str, Any],
    directory: Path,
    html: Callable[[Mapping[str, Any]], str],
    markdown: Callable[[Mapping[str, Any]], str],
) -> ReportFiles:
    """report.json/html/md, each written whole (temporary file, then rename) so a reader never sees half."""
    directory.mkdir(parents=True, exist_ok=True)
    data = report_json(report)
    paths = ReportFiles(
        directory, directory / "report.json", directory / "report.html", directory / "report.md", sha256(data)
    )
    for path, content in (
        (paths.json, data),
        (paths.html, html(report).encode()),
        (paths.markdown, markdown(report).encode()),
    ):
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_bytes(content)
        tmp.replace(path)
    return paths


def verify_report(path: Path, recorded: str | None) -> tuple[bool, str]:
    """Whether a report.json is byte for byte the one whose digest the ledger recorded."""
    digest = sha256(Path(path).read_bytes())
    if recorded is None:
        return False, f"the ledger has no report digest for this run; {path} cannot be vouched for"
    if digest != recorded:
        return False, f"{path} is NOT the recorded report: its digest {digest} differs from the ledger's {recorded}"
    return True, f"{path} is the report the ledger recorded ({digest})"


@collector_paused()
def generate_report(ledger: Ledger, run_id: str, reports_dir: Path) -> ReportFiles:
    """Build the report of ``run_id`` from the ledger, write it, and record its digest there."""
    from kafka_migration.exceptions import ConfigurationError

    run = ledger.run(run_id)
    if run is None:
        raise ConfigurationError(f"The ledger has no run {run_id!r}; list the runs with 'kafka-migrate history'.")
    report = build_report(
        run, ledger.run_segments(run_id), [r.to_dict() for r in ledger.group_sync_rows(run_id=run_id)]
    )
    files = write_report(report, Path(reports_dir) / run_id)
    ledger.set_report_digest(run_id, files.sha256)
    return files
