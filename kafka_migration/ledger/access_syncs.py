"""The ledger's access syncs: every ACL binding a sync looked at and what it did with it, and the bindings this
tool created on a target (the only ones a later sync may remove)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine, delete, insert, select

from kafka_migration.ledger.schema import access_syncs, access_users, utc_now
from kafka_migration.model.access import ADDED, REMOVED, AclBinding, RecordedBinding, ScramCredential

_BINDING = ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission")


class AccessSyncRecords:
    """Access syncs, a part of ``Ledger``."""

    engine: Engine

    def record_access_sync(
        self,
        sync_id: str,
        run_id: str | None,
        source_cluster_id: str,
        target_cluster_id: str,
        rows: Sequence[tuple[AclBinding, str, str | None]],
        dry_run: bool = False,
    ) -> None:
        """Store a sync's bindings (binding, action, reason), replacing an earlier record of the same sync id."""
        now = utc_now()
        values = [
            {
                "sync_id": sync_id,
                "run_id": run_id,
                "synced_at": now,
                "source_cluster_id": source_cluster_id,
                "target_cluster_id": target_cluster_id,
                "dry_run": int(dry_run),
                **{name: getattr(binding, name) for name in _BINDING},
                "action": action,
                "reason": reason,
            }
            for binding, action, reason in rows
        ]
        with self.engine.begin() as c:
            c.execute(delete(access_syncs).where(access_syncs.c.sync_id == sync_id))
            if values:
                c.execute(insert(access_syncs), values)

    def record_access_users(
        self, sync_id: str, rows: Sequence[tuple[ScramCredential, str, str | None, str | None]]
    ) -> None:
        """Store a sync's SCRAM credentials (credential, action, login, reason): names, never secrets."""
        values = [
            {
                "sync_id": sync_id,
                "user": c.user,
                "mechanism": c.mechanism,
                "iterations": c.iterations,
                "action": action,
                "login": login,
                "reason": reason,
            }
            for c, action, login, reason in rows
        ]
        with self.engine.begin() as c:
            c.execute(delete(access_users).where(access_users.c.sync_id == sync_id))
            if values:
                c.execute(insert(access_users), values)

    def access_user_rows(self, sync_id: str) -> list[tuple[ScramCredential, str, str | None, str | None]]:
        with self.engine.connect() as c:
            query = select(access_users).where(access_users.c.sync_id == sync_id).order_by(access_users.c.id)
            result = c.execute(query)
            return [(ScramCredential(r.user, r.mechanism, r.iterations), r.action, r.login, r.reason) for r in result]

    def access_sync_rows(self, sync_id: str) -> list[RecordedBinding]:
        with self.engine.connect() as c:
            result = c.execute(
                select(access_syncs).where(access_syncs.c.sync_id == sync_id).order_by(access_syncs.c.id)
            )
            return [_recorded(r._mapping) for r in result]

    def access_bindings_created(self, source_cluster_id: str, target_cluster_id: str) -> set[AclBinding]:
        """The bindings this tool added on the target for this pair and has not removed since (dry runs aside)."""
        created: set[AclBinding] = set()
        with self.engine.connect() as c:
            result = c.execute(
                select(access_syncs)
                .where(
                    access_syncs.c.source_cluster_id == source_cluster_id,
                    access_syncs.c.target_cluster_id == target_cluster_id,
                    access_syncs.c.dry_run == 0,
                    access_syncs.c.action.in_([ADDED, REMOVED]),
                )
                .order_by(access_syncs.c.synced_at, access_syncs.c.id)
            )
            for row in result:
                binding = _binding(row._mapping)
                if row.action == ADDED:
                    created.add(binding)
                else:
                    created.discard(binding)
        return created


def _binding(row: object) -> AclBinding:
    return AclBinding(*(row[name] for name in _BINDING))  # type: ignore[index]


def _recorded(row: object) -> RecordedBinding:
    get = row.__getitem__  # type: ignore[attr-defined]
    return RecordedBinding(
        get("sync_id"),
        get("run_id"),
        get("synced_at"),
        get("source_cluster_id"),
        get("target_cluster_id"),
        _binding(row),
        get("action"),
        get("reason"),
    )
