"""The ledger's access-sync verdicts (``km_access_checks``): one row per sync, read by the CLI's ``access
show``, the sync's report and the console's list of syncs."""

from __future__ import annotations

from sqlalchemy import Engine, delete, func, insert, select, update

from kafka_migration.ledger.schema import access_checks
from kafka_migration.model.access import AccessCheck, AccessVerdict


class AccessCheckRecords:
    """Access-sync verdicts, a part of ``Ledger`` (through ``AccessSyncRecords``)."""

    engine: Engine

    def record_access_check(self, check: AccessCheck) -> None:
        """Store a sync's verdict, replacing an earlier record of the same sync id."""
        values = {
            "sync_id": check.sync_id,
            "run_id": check.run_id,
            "synced_at": check.synced_at,
            "source_cluster_id": check.source_cluster_id,
            "target_cluster_id": check.target_cluster_id,
            "source_bootstrap": check.source_bootstrap,
            "target_bootstrap": check.target_bootstrap,
            "dry_run": int(check.dry_run),
            "verdict": str(check.verdict),
            "actions_checked": check.actions_checked,
            "differences": list(check.differences),
            "unreadable_source": check.unreadable[0],
            "unreadable_target": check.unreadable[1],
            "report_sha256": check.report_sha256,
        }
        with self.engine.begin() as c:
            c.execute(delete(access_checks).where(access_checks.c.sync_id == check.sync_id))
            c.execute(insert(access_checks), [values])

    def set_access_report_digest(self, sync_id: str, sha256: str) -> None:
        with self.engine.begin() as c:
            c.execute(update(access_checks).where(access_checks.c.sync_id == sync_id).values(report_sha256=sha256))

    def access_check(self, sync_id: str) -> AccessCheck | None:
        with self.engine.connect() as c:
            row = c.execute(select(access_checks).where(access_checks.c.sync_id == sync_id)).first()
        return _check(row) if row is not None else None

    def access_checks(self, limit: int = 50, offset: int = 0) -> tuple[int, list[AccessCheck]]:
        """(how many syncs are recorded, a page of them newest first)."""
        with self.engine.connect() as c:
            total = c.execute(select(func.count()).select_from(access_checks)).scalar_one()
            rows = c.execute(
                select(access_checks)
                .order_by(access_checks.c.synced_at.desc(), access_checks.c.sync_id.desc())
                .limit(limit)
                .offset(offset)
            ).all()
        return int(total), [_check(r) for r in rows]


def _check(row: object) -> AccessCheck:
    r = row._mapping  # type: ignore[attr-defined]
    return AccessCheck(
        sync_id=r["sync_id"],
        run_id=r["run_id"],
        synced_at=r["synced_at"],
        source_cluster_id=r["source_cluster_id"],
        target_cluster_id=r["target_cluster_id"],
        source_bootstrap=r["source_bootstrap"],
        target_bootstrap=r["target_bootstrap"],
        dry_run=bool(r["dry_run"]),
        verdict=AccessVerdict(r["verdict"]),
        actions_checked=int(r["actions_checked"]),
        differences=tuple(r["differences"] or ()),
        unreadable=(int(r["unreadable_source"]), int(r["unreadable_target"])),
        report_sha256=r["report_sha256"],
    )
