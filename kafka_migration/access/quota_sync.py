"""The client quotas of an access sync: read both clusters and plan (before anything is written), apply
(add-only unless asked to remove this tool's own stale quotas), describe both clusters again and compare (zero
differences is part of the sync's verdict), and record every quota in the ledger.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafka_migration.access.quotas import QuotaDifference, QuotaPlan, plan_quotas, quota_differences
from kafka_migration.kafka.quotas import QuotaCluster
from kafka_migration.model.access import AccessAction, Quota
from kafka_migration.model.config import ClusterConfig

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

CHANGED = "set by this tool earlier; the source's value changed"
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
    """One sync's quotas, step by step (see the module); ``read`` first, ``prove`` last (it closes the clients,
    as ``close`` does when a step in between fails)."""

    def __init__(
        self,
        source: QuotaCluster,
        target: QuotaCluster,
        plan: QuotaPlan,
        read: tuple[tuple[Quota, ...], tuple[Quota, ...]],
        principals: Mapping[str, str] | None,
        set_before: set[Quota],
    ) -> None:
        self.source, self.target, self.plan, self.read, self.principals = source, target, plan, read, principals
        self.set_before = set_before

    @classmethod
    def read_and_plan(
        cls,
        source: ClusterConfig,
        target: ClusterConfig,
        set_before: set[Quota],
        principals: Mapping[str, str] | None = None,
        remove_stale: bool = False,
    ) -> QuotaSync:
        """Both clusters' quotas and the plan; refuses bad settings or a clashing principal map (exit 2) before
        anything is written. ``set_before``: the ledger's ``access_quotas_set`` of the pair."""
        src, tgt = QuotaCluster(source), QuotaCluster(target)
        try:
            read = (src.quotas(), tgt.quotas())
            plan = plan_quotas(read[0], read[1], principals, set_before, remove_stale)
        except BaseException:
            src.close()
            tgt.close()
            raise
        return cls(src, tgt, plan, read, principals, set_before)

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

    def close(self) -> None:
        """Close both clusters' clients (again is harmless)."""
        self.source.close()
        self.target.close()

    def prove(self, dry_run: bool) -> QuotaOutcome:
        """Describe both clusters again (a dry run: project the plan on the target as read) and compare."""
        try:
            if dry_run:
                source, target = list(self.read[0]), self.plan.target_after(self.read[1])
            else:
                source, target = list(self.source.quotas()), list(self.target.quotas())
        finally:
            self.close()
        differences = quota_differences(source, target, self.principals)
        return QuotaOutcome(self.plan, len(source), len(target), tuple(differences))

    def ledger_rows(self, dry_run: bool) -> list[tuple[Quota, float | None, str, str | None]]:
        """The rows of ``Ledger.record_access_quotas``: every quota the sync looked at and what it did with it."""
        plan = self.plan
        added, updated, removed = (
            (AccessAction.WOULD_ADD, AccessAction.WOULD_UPDATE, AccessAction.WOULD_REMOVE)
            if dry_run
            else (AccessAction.ADDED, AccessAction.UPDATED, AccessAction.REMOVED)
        )
        return [
            *((q, None, added, None) for q in plan.add),
            *((q, q.value, AccessAction.PRESENT, None) for q in plan.present),
            *(
                (c.quota, c.target_value, updated, "set by this tool earlier; the source's value changed")
                for c in plan.update
            ),
            *(
                (
                    c.quota,
                    c.target_value,
                    AccessAction.DIFFERENT,
                    "the target holds another value, not set by this tool: left alone",
                )
                for c in plan.different
            ),
            *((q, q.value, AccessAction.TARGET_ONLY, self._why_left(q)) for q in plan.target_only),
            *((q, q.value, removed, "set by this tool; the source no longer has it") for q in plan.remove),
        ]

    def _why_left(self, quota: Quota) -> str:
        if quota in self.set_before:
            return "set by this tool earlier; the source no longer has it: --remove-stale removes it"
        return "on the target only, not set by this tool: left alone"

    def record(
        self, ledger: Ledger, sync_id: str, run_id: str | None, clusters: tuple[str, str], dry_run: bool
    ) -> None:
        ledger.record_access_quotas(sync_id, run_id, clusters[0], clusters[1], self.ledger_rows(dry_run), dry_run)
