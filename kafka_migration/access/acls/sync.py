"""The ACL bindings of an access sync (an ``AccessPart``, see ``access/part.py``): both clusters' bindings read and
planned with ``rules``; the missing ones created on the target and this tool's stale ones deleted (only when
asked); the proof that both clusters' authorizers decide every action the source's bindings speak of alike; a
ledger row per binding.

A binding that cannot be carried exactly refuses the whole sync before anything is written (exit 2): a partial copy
of a cluster's access control would decide differently without saying so.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_migration.access.acls.rules import (
    AclPlan,
    Authorizer,
    DecisionDifference,
    carrier,
    decision_differences,
    plan_bindings,
    selection,
)
from kafka_migration.access.part import SyncRecord
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.access import AccessCluster, ReadBindings
from kafka_migration.model.access import AccessAction, AclBinding
from kafka_migration.model.config import DEFAULT_RENAME
from kafka_migration.model.text import plural, some

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

CONFLICT_REASON = "a DENY on the target that the source lacks"
STALE_REASON = "created by this tool; the source no longer has it"


@dataclass(frozen=True)
class Carry:
    """How the bindings are carried and judged: the topic rename template, the principal map, and the principals
    both authorizers treat as super users."""

    rename: str = DEFAULT_RENAME
    principals: Mapping[str, str] | None = None
    super_users: Collection[str] = ()


@dataclass(frozen=True)
class DecisionProof:
    """The decision check: how many actions both authorizers were asked, and those they decide differently."""

    actions_checked: int
    differences: tuple[DecisionDifference, ...]

    @property
    def proven(self) -> bool:
        return not self.differences


class AclSync:
    """One sync's ACL bindings, step by step (see the module)."""

    def __init__(
        self,
        target: AccessCluster,
        read: tuple[ReadBindings, ReadBindings],
        plan: AclPlan,
        carry: Carry,
        sync: SyncRecord,
    ) -> None:
        self.target, self.read, self.plan, self.carry, self.sync = target, read, plan, carry, sync

    @classmethod
    def read_and_plan(
        cls,
        clusters: tuple[AccessCluster, AccessCluster],
        sync: SyncRecord,
        ledger: Ledger,
        carry: Carry,
        remove_stale: bool,
    ) -> AclSync:
        """Both clusters' bindings and the plan (only the bindings the ledger says this tool created on the target
        may be removed, and only with ``remove_stale``); refuses (exit 2) a binding that cannot be carried
        exactly."""
        read = (clusters[0].bindings(), clusters[1].bindings())
        created = ledger.access_bindings_created(sync.source_cluster_id, sync.target_cluster_id)
        plan = plan_bindings(read[0].bindings, read[1].bindings, carry.rename, carry.principals, created, remove_stale)
        if plan.refused:
            raise ConfigurationError(
                f"{plural(len(plan.refused), 'ACL binding')} of the source cannot be carried to the target exactly, "
                f"nothing was written: {some([r.describe() for r in plan.refused], most=3)}."
            )
        return cls(clusters[1], read, plan, carry, sync)

    @property
    def source_bindings(self) -> tuple[AclBinding, ...]:
        return self.read[0].bindings

    @property
    def unreadable(self) -> tuple[int, int]:
        """The bindings each cluster holds that the client cannot name."""
        return self.read[0].unreadable, self.read[1].unreadable

    def apply(self) -> None:
        self.target.create(self.plan.add)
        self.target.delete(self.plan.remove)

    def prove(self) -> DecisionProof:
        """Every action of the source's bindings decided on both clusters: the target's bindings read again (a dry
        run: as the plan would leave them)."""
        if self.sync.dry_run:
            plan = self.plan
            after = tuple(sorted((set(self.read[1].bindings) | set(plan.add)) - set(plan.remove)))
        else:
            after = self.target.bindings().bindings
        actions = selection(self.source_bindings)
        differences = decision_differences(
            Authorizer(self.source_bindings, self.carry.super_users),
            Authorizer(after, self.carry.super_users),
            actions,
            carrier(self.carry.rename, self.carry.principals),
        )
        return DecisionProof(len(actions), tuple(differences))

    def record(self, ledger: Ledger) -> None:
        """Each binding and what the sync did with it (none refused: a refused one refuses the sync first)."""
        plan, sync = self.plan, self.sync
        added, _, removed = AccessAction.written(sync.dry_run)
        rows = [
            *((b, added, None) for b in plan.add),
            *((b, AccessAction.PRESENT, None) for b in plan.present),
            *((b, AccessAction.CONFLICT, CONFLICT_REASON) for b in plan.conflicts),
            *((b, removed, STALE_REASON) for b in plan.remove),
        ]
        ids = (sync.source_cluster_id, sync.target_cluster_id)
        ledger.record_access_sync(sync.sync_id, sync.run_id, *ids, rows, dry_run=sync.dry_run)
