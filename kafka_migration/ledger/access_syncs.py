"""The ledger's access syncs: every ACL binding and client quota a sync looked at and what it did with it, the
bindings this tool created on a target (the only ones a later sync may remove) and the quotas it set there (the
only ones a later sync may change or remove).

The access vocabulary (``model.access``'s enums) is stored as its text and read back as its members."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, Table, delete, func, insert, select

from kafka_migration.ledger.access_checks import AccessCheckRecords
from kafka_migration.ledger.schema import access_probes, access_quotas, access_syncs, access_users, utc_now
from kafka_migration.model.access import (
    AccessAction,
    AclBinding,
    LoginOutcome,
    Quota,
    QuotaEntity,
    RecordedBinding,
    RecordedQuota,
    ScramCredential,
    ScramMechanism,
)
from kafka_migration.model.probes import Probe, ProbeKind, ProbeOutcome

_BINDING = ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission")


class AccessQuotaRecords:
    """Access syncs' client quotas, a part of ``Ledger``."""

    engine: Engine

    def record_access_quotas(
        self,
        sync_id: str,
        run_id: str | None,
        source_cluster_id: str,
        target_cluster_id: str,
        rows: Sequence[tuple[Quota, float | None, str, str | None]],
        dry_run: bool = False,
    ) -> None:
        """Store a sync's quotas (quota, the target's value before, action, reason), replacing an earlier record of
        the same sync id."""
        now = utc_now()
        values = [
            {
                "sync_id": sync_id,
                "run_id": run_id,
                "synced_at": now,
                "source_cluster_id": source_cluster_id,
                "target_cluster_id": target_cluster_id,
                "dry_run": int(dry_run),
                "entity": json.dumps([[str(kind), name] for kind, name in quota.entity.parts]),
                "quota_key": str(quota.key),
                "value": quota.value,
                "target_value": target_value,
                "action": str(action),
                "reason": reason,
            }
            for quota, target_value, action, reason in rows
        ]
        _replace_rows(self.engine, access_quotas, sync_id, values)

    def access_quota_rows(self, sync_id: str) -> list[RecordedQuota]:
        with self.engine.connect() as c:
            query = select(access_quotas).where(access_quotas.c.sync_id == sync_id).order_by(access_quotas.c.id)
            return [
                RecordedQuota(
                    r.sync_id,
                    r.synced_at,
                    r.source_cluster_id,
                    r.target_cluster_id,
                    _quota(r),
                    r.target_value,
                    AccessAction(r.action),
                    r.reason,
                )
                for r in c.execute(query)
            ]

    def access_quotas_set(self, source_cluster_id: str, target_cluster_id: str) -> set[Quota]:
        """The quotas (entity, key, value) this tool set on the target for this pair and has not removed or
        replaced since (dry runs aside)."""
        ours: dict[tuple[QuotaEntity, str], Quota] = {}
        with self.engine.connect() as c:
            result = c.execute(
                select(access_quotas)
                .where(
                    access_quotas.c.source_cluster_id == source_cluster_id,
                    access_quotas.c.target_cluster_id == target_cluster_id,
                    access_quotas.c.dry_run == 0,
                    access_quotas.c.action.in_(_texts(AccessAction.ADDED, AccessAction.UPDATED, AccessAction.REMOVED)),
                )
                .order_by(access_quotas.c.synced_at, access_quotas.c.id)
            )
            for row in result:
                quota = _quota(row)
                if row.action == AccessAction.REMOVED:
                    ours.pop(quota.slot, None)
                else:
                    ours[quota.slot] = quota
        return set(ours.values())


class AccessSyncRecords(AccessQuotaRecords, AccessCheckRecords):
    """Access syncs, a part of ``Ledger`` (their quotas: ``AccessQuotaRecords``; their verdicts:
    ``AccessCheckRecords``)."""

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
                **{name: str(getattr(binding, name)) for name in _BINDING},
                "action": str(action),
                "reason": reason,
            }
            for binding, action, reason in rows
        ]
        _replace_rows(self.engine, access_syncs, sync_id, values)

    def record_access_users(
        self, sync_id: str, rows: Sequence[tuple[ScramCredential, str, str | None, str | None]]
    ) -> None:
        """Store a sync's SCRAM credentials (credential, action, login, reason): names, never secrets."""
        values = [
            {
                "sync_id": sync_id,
                "user": c.user,
                "mechanism": str(c.mechanism),
                "iterations": c.iterations,
                "action": str(action),
                "login": None if login is None else str(login),
                "reason": reason,
            }
            for c, action, login, reason in rows
        ]
        _replace_rows(self.engine, access_users, sync_id, values)

    def record_access_probes(self, sync_id: str, outcomes: Sequence[ProbeOutcome]) -> None:
        """Store a sync's live probes, each with both answers and whether they matched: outcomes, never secrets."""
        values = [
            {
                "sync_id": sync_id,
                "user": o.probe.user,
                "target_user": o.target_user,
                "probe": str(o.probe.kind),
                "resource": o.probe.resource,
                "target_resource": o.target_resource,
                "topic": o.probe.topic,
                "source_outcome": str(o.source),
                "target_outcome": str(o.target),
                "matched": int(o.matched),
            }
            for o in outcomes
        ]
        _replace_rows(self.engine, access_probes, sync_id, values)

    def access_probe_rows(self, sync_id: str) -> list[ProbeOutcome]:
        """A sync's live probes as recorded, in the order they were."""
        with self.engine.connect() as c:
            query = select(access_probes).where(access_probes.c.sync_id == sync_id).order_by(access_probes.c.id)
            return [
                ProbeOutcome(
                    Probe(r.user, ProbeKind(r.probe), r.resource, r.topic),
                    r.target_user,
                    r.target_resource,
                    r.source_outcome,
                    r.target_outcome,
                )
                for r in c.execute(query)
            ]

    def access_user_rows(self, sync_id: str) -> list[tuple[ScramCredential, str, str | None, str | None]]:
        with self.engine.connect() as c:
            query = select(access_users).where(access_users.c.sync_id == sync_id).order_by(access_users.c.id)
            result = c.execute(query)
            return [
                (
                    ScramCredential(r.user, ScramMechanism(r.mechanism), r.iterations),
                    AccessAction(r.action),
                    None if r.login is None else LoginOutcome(r.login),
                    r.reason,
                )
                for r in result
            ]

    def access_sync_rows(self, sync_id: str) -> list[RecordedBinding]:
        with self.engine.connect() as c:
            result = c.execute(
                select(access_syncs).where(access_syncs.c.sync_id == sync_id).order_by(access_syncs.c.id)
            )
            return [_recorded(r._mapping) for r in result]

    def access_sync_tallies(self, sync_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What a list of syncs shows, counted in the database in four grouped queries whatever the number of
        bindings: per sync, its bindings and its quotas by action, the SCRAM users it left needing a password (by
        user, then mechanism) and how many live probes the target answered otherwise than the source."""
        tallies: dict[str, dict[str, Any]] = {
            sync_id: {"bindings": {}, "quotas": {}, "needs_password": [], "probe_mismatches": 0} for sync_id in sync_ids
        }
        if not sync_ids:
            return tallies
        with self.engine.connect() as c:
            for table, key in ((access_syncs, "bindings"), (access_quotas, "quotas")):
                by_action = (
                    select(table.c.sync_id, table.c.action, func.count())
                    .where(table.c.sync_id.in_(sync_ids))
                    .group_by(table.c.sync_id, table.c.action)
                )
                for sync_id, action, number in c.execute(by_action):
                    tallies[sync_id][key][AccessAction(action)] = int(number)
            needing = select(access_users.c.sync_id, access_users.c.user).where(
                access_users.c.sync_id.in_(sync_ids), access_users.c.action == str(AccessAction.NEEDS_PASSWORD)
            )
            for sync_id, user in sorted(tuple(row) for row in c.execute(needing)):  # a user once per mechanism
                tallies[sync_id]["needs_password"].append(user)
            mismatched = (
                select(access_probes.c.sync_id, func.count())
                .where(access_probes.c.sync_id.in_(sync_ids), access_probes.c.matched == 0)
                .group_by(access_probes.c.sync_id)
            )
            for sync_id, number in c.execute(mismatched):
                tallies[sync_id]["probe_mismatches"] = int(number)
        return tallies

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
                    access_syncs.c.action.in_(_texts(AccessAction.ADDED, AccessAction.REMOVED)),
                )
                .order_by(access_syncs.c.synced_at, access_syncs.c.id)
            )
            for row in result:
                binding = _binding(row._mapping)
                if row.action == AccessAction.ADDED:
                    created.add(binding)
                else:
                    created.discard(binding)
        return created


def _texts(*actions: AccessAction) -> list[str]:
    return [str(action) for action in actions]


def _replace_rows(engine: Engine, table: Table, sync_id: str, values: Sequence[Mapping[str, Any]]) -> None:
    """A sync's rows of ``table``, replacing an earlier record of the same sync id (a retried sync), in one
    transaction."""
    with engine.begin() as c:
        c.execute(delete(table).where(table.c.sync_id == sync_id))
        if values:
            c.execute(insert(table), list(values))


def _quota(row: object) -> Quota:
    entity = QuotaEntity(tuple((kind, name) for kind, name in json.loads(row.entity)))  # type: ignore[attr-defined]
    return Quota(entity, row.quota_key, float(row.value))  # type: ignore[attr-defined]


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
        AccessAction(get("action")),
        get("reason"),
    )
