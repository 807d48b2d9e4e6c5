"""The client quotas of an access sync (an ``AccessPart``, see ``access/part.py``): both clusters read and planned
with ``rules`` (before anything is written), applied (add-only unless asked to remove this tool's own stale quotas),
both clusters described again and compared (zero differences is part of the sync's verdict), and every quota
recorded in the ledger.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafka_migration.access.part import SyncRecord
from kafka_migration.access.quotas.rules import QuotaDifference, QuotaPlan, plan_quotas, quota_differences
from kafka_migration.kafka.quotas import QuotaCluster
from kafka_migration.model.access import AccessAction, Quota

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

CHANGED_REASON = "set by this tool earlier; the source's value changed"
DIFFERENT_REASON = "the target holds another value, not set by this tool: left alone"
STALE_REASON = "set by this tool; the source no longer has it"
SETTLE_SECONDS = 10.0  # KRaft applies a quota through the metadata log: a broker shows it a moment later


@dataclass(frozen=True)
class QuotaOutcome:
    """What a sync did with the quotas and what both clusters held afterwards (a dry run: would hold)."""

    plan: QuotaPlan = field(default_factory=lambda: QuotaPlan((), (), (), (), (), ()))
    source_count: int = 0
    target_count: int = 0
    differences: tuple[QuotaDifference, ...] = ()

    @property
    def proven(self) -> bool:
        return not self.differences


class QuotaSync:
    """One sync's quotas, step by step (see the module). Both clusters' clients are the caller's to close."""

    def __init__(
        self,
        clusters: tuple[QuotaCluster, QuotaCluster],
        read: tuple[tuple[Quota, ...], tuple[Quota, ...]],
        plan: QuotaPlan,
        principals: Mapping[str, str] | None,
        set_before: set[Quota],
        sync: SyncRecord,
    ) -> None:
        self.source, self.target = clusters
        self.read, self.plan, self.principals, self.set_before, self.sync = read, plan, principals, set_before, sync

    @classmethod
    def read_and_plan(
        cls,
        clusters: tuple[QuotaCluster, QuotaCluster],
        sync: SyncRecord,
        ledger: Ledger,
        principals: Mapping[str, str] | None = None,
        remove_stale: bool = False,
    ) -> QuotaSync:
        """Both clusters' quotas and the plan (only the values the ledger says this tool set may change or go);
        refuses bad settings or a clashing principal map (exit 2) before anything is written."""
        set_before = ledger.access_quotas_set(sync.source_cluster_id, sync.target_cluster_id)
        read = (clusters[0].quotas(), clusters[1].quotas())
        plan = plan_quotas(read[0], read[1], principals, set_before, remove_stale)
        return cls(clusters, read, plan, principals, set_before, sync)

    def apply(self) -> None:
        """Set the missing and this tool's changed quotas, remove this tool's stale ones, and wait (a few
        seconds at most) until the target's broker shows them."""
        upsert = [*self.plan.add, *(c.quota for c in self.plan.update)]
        if not upsert and not self.plan.remove:
            return
        self.target.alter(upsert, self.plan.remove)
        expected = {q.slot: q.value for q in upsert}
        gone = {q.slot for q in self.plan.remove}
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            now = {q.slot: q.value for q in self.target.quotas()}
            if all(now.get(s) == v for s, v in expected.items()) and not gone & set(now):
                return
            time.sleep(0.2)

    def prove(self) -> QuotaOutcome:
        """Describe both clusters again (a dry run: project the plan on the target as read) and compare."""
        if self.sync.dry_run:
            source, target = list(self.read[0]), self.plan.target_after(self.read[1])
        else:
            source, target = list(self.source.quotas()), list(self.target.quotas())
        differences = quota_differences(source, target, self.principals)
        return QuotaOutcome(self.plan, len(source), len(target), tuple(differences))

    def ledger_rows(self) -> list[tuple[Quota, float | None, AccessAction, str | None]]:
        """The rows of ``Ledger.record_access_quotas``: every quota the sync looked at and what it did with it."""
        plan = self.plan
        added, updated, removed = AccessAction.written(self.sync.dry_run)
        return [
            *((q, None, added, None) for q in plan.add),
            *((q, q.value, AccessAction.PRESENT, None) for q in plan.present),
            *((c.quota, c.target_value, updated, CHANGED_REASON) for c in plan.update),
            *((c.quota, c.target_value, AccessAction.DIFFERENT, DIFFERENT_REASON) for c in plan.different),
            *((q, q.value, AccessAction.TARGET_ONLY, self._why_left(q)) for q in plan.target_only),
            *((q, q.value, removed, STALE_REASON) for q in plan.remove),
        ]

    def _why_left(self, quota: Quota) -> str:
        if quota in self.set_before:
            return "set by this tool earlier; the source no longer has it: --remove-stale removes it"
        return "on the target only, not set by this tool: left alone"

    def record(self, ledger: Ledger) -> None:
        sync = self.sync
        ids = (sync.source_cluster_id, sync.target_cluster_id)
        ledger.record_access_quotas(sync.sync_id, sync.run_id, *ids, self.ledger_rows(), sync.dry_run)
