"""The console's access syncs: each sync's verdict in a list, and one sync as its sign-off security section.

A sync is read through the report's own ``security_section`` (``kafka_migration.reports.security``), so the
console and the report files cannot tell it differently. The list is the ledger's decision checks
(``km_access_checks``, one per sync), newest first; its counts are counted in the ledger (``access_sync_tallies``,
grouped by sync) and summed into the section's columns by the section's own mapping, so a line says what the
sync's section says without reading its bindings.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import FileResponse

from kafka_migration.airflow.console.models import MAX_PAGE, AccessSyncDetailView, AccessSyncsPageView
from kafka_migration.ledger import Ledger
from kafka_migration.model.access import AccessCheck
from kafka_migration.reports import MEDIA_TYPES
from kafka_migration.reports.security_render import COLUMNS


def report_files(reports: Path, sync_id: str) -> dict[str, Any]:
    """Where a sync's report files are and which formats exist (a dry run writes none)."""
    directory = reports / sync_id
    return {
        "directory": str(directory),
        "files": [fmt for fmt in MEDIA_TYPES if (directory / f"report.{fmt}").is_file()],
    }


def detail(section: dict[str, Any], reports: Path) -> dict[str, Any]:
    """The security section as the sync page shows it, with where its report files are."""
    return {**section, "report": report_files(reports, section["sync_id"])}


def summary(check: AccessCheck, tally: dict[str, Any]) -> dict[str, Any]:
    """One line of the list: a sync's verdict and its ledger tallies (``Ledger.access_sync_tallies``) summed as its
    security section's counts are, what needs a person's attention counted."""
    from kafka_migration.reports.security import COLUMN_OF, QUOTA_DIFFERENCES

    totals = dict.fromkeys(COLUMNS, 0)
    for action, number in tally["bindings"].items():
        column = COLUMN_OF.get(action, action)
        if column in totals:
            totals[column] += number
    return {
        "sync_id": check.sync_id,
        "run_id": check.run_id,
        "synced_at": check.synced_at.isoformat(timespec="seconds"),
        "dry_run": check.dry_run,
        "verdict": check.verdict,
        "source": {"cluster_id": check.source_cluster_id, "bootstrap": check.source_bootstrap},
        "target": {"cluster_id": check.target_cluster_id, "bootstrap": check.target_bootstrap},
        "totals": totals,
        "needs_password": tally["needs_password"],
        "quota_differences": sum(tally["quotas"].get(action, 0) for action in QUOTA_DIFFERENCES),
        "probe_mismatches": tally["probe_mismatches"],
        "report_sha256": check.report_sha256,
    }


def _section(ledger: Ledger, sync_id: str) -> dict[str, Any] | None:
    from kafka_migration.reports.security import security_section

    return security_section(ledger, sync_id)


def create_access_router(ledger: Callable[[], Ledger], reports_dir: Callable[[], Path]) -> APIRouter:
    """``ledger`` and ``reports_dir`` are called per request (the configuration may change without a restart)."""
    router = APIRouter()

    @router.get("/access-syncs", response_model=AccessSyncsPageView, summary="Access syncs, newest first, paged")
    def access_syncs(limit: int = Query(20, ge=1, le=MAX_PAGE), offset: int = Query(0, ge=0)) -> dict[str, Any]:
        """Each access sync (ACL bindings, SCRAM users, client quotas): its verdict, its clusters, what it added,
        found, removed, refused or found in conflict, the users that need a password, quota differences and the
        live probes the target answered otherwise."""
        read = ledger()
        total, checks = read.access_checks(limit=limit, offset=offset)
        tallies = read.access_sync_tallies([check.sync_id for check in checks])
        syncs = [summary(check, tallies[check.sync_id]) for check in checks]
        return {"total": total, "limit": limit, "offset": offset, "syncs": syncs}

    @router.get(
        "/access-syncs/{sync_id}", response_model=AccessSyncDetailView, summary="An access sync's security section"
    )
    def access_sync(sync_id: str) -> dict[str, Any]:
        """Everything the sign-off report's security section says of one sync."""
        section = _section(ledger(), sync_id)
        if section is None:
            raise HTTPException(
                404,
                f"No access sync {sync_id!r} in the ledger: kafka-migrate access sync (or the "
                "kafka_migration_access DAG) records one; kafka-migrate access show lists the recorded ones.",
            )
        return detail(section, reports_dir())

    @router.get(
        "/access-syncs/{sync_id}/report.{fmt}",
        response_class=FileResponse,
        summary="An access sync's report file (html, json, md)",
    )
    def access_report(sync_id: str, fmt: str) -> FileResponse:
        if fmt not in MEDIA_TYPES:
            raise HTTPException(404, "report formats: html, json, md")
        path = reports_dir() / sync_id / f"report.{fmt}"
        if sync_id in {".", ".."} or "/" in sync_id or "\\" in sync_id or not path.is_file():
            raise HTTPException(
                404,
                f"No report file for access sync {sync_id!r} at {path}: a dry run writes none, and each sync that "
                "writes writes its own.",
            )
        return FileResponse(path, media_type=MEDIA_TYPES[fmt])

    return router
