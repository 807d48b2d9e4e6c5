"""An access sync end to end, in the steps every part shares (``part.py``): the permissions checked first
(``permissions``), then the ACL bindings (``acls/``), SCRAM users (``users/``) and client quotas (``quotas/``) each
read and planned (a plan that cannot be carried refuses the sync here, exit 2, nothing written), applied (never in
a dry run), proven, with the users' live probes (``probes/``), and recorded; last the verdict and (not for a dry
run) the sync's report, built from the ledger. Every client the sync opens is closed when it ends, also when a step
fails.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_migration.access.acls.rules import AclPlan, DecisionDifference
from kafka_migration.access.acls.sync import AclSync, Carry
from kafka_migration.access.part import AccessPart, Proof, SyncRecord
from kafka_migration.access.permissions import check_access_permissions
from kafka_migration.access.probes.live import DEFAULT_USERS, ProbeSetup, probe_users
from kafka_migration.access.quotas.sync import QuotaOutcome, QuotaSync
from kafka_migration.access.users.rules import UsersPlan
from kafka_migration.access.users.sync import UserSync
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.kafka.quotas import QuotaCluster
from kafka_migration.model.access import AccessCheck, AccessVerdict, LoginOutcome, Password
from kafka_migration.model.config import DEFAULT_RENAME, ClusterConfig
from kafka_migration.model.probes import ProbeReport

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

EXIT_OK, EXIT_DIFFERENT = 0, 1


@dataclass(frozen=True)
class AccessSyncOptions:
    """How a sync carries the source's access control: the topic rename template, the principal map, the
    principals both authorizers treat as super users; ``dry_run`` writes nothing, ``remove_stale`` removes the
    bindings this tool created that the source no longer has; the run it belongs to, the operator's SCRAM
    passwords, how many users are probed live, and where its report goes (none: no report file)."""

    rename: str = DEFAULT_RENAME
    principals: Mapping[str, str] | None = None
    super_users: Collection[str] = ()
    dry_run: bool = False
    remove_stale: bool = False
    run_id: str | None = None
    passwords: Mapping[str, Password] | None = None
    probe_users_most: int = DEFAULT_USERS
    reports_dir: Path | None = None


@dataclass(frozen=True)
class AccessSyncResult:
    """What a sync found, did and proved. ``differences``: actions the clusters decide differently afterwards
    (a dry run: as they would once the plan is applied); none, and no conflict, is the verdict."""

    sync_id: str
    dry_run: bool
    source_cluster_id: str
    target_cluster_id: str
    plan: AclPlan
    unreadable: tuple[int, int]  # bindings each cluster holds that the client cannot name
    actions_checked: int
    differences: tuple[DecisionDifference, ...]
    users: UsersPlan
    logins: Mapping[str, tuple[LoginOutcome, str | None]]  # user -> (outcome, why it failed)
    probes: ProbeReport = field(default_factory=ProbeReport)  # the users' live probes (access/probes/)
    quotas: QuotaOutcome = field(default_factory=QuotaOutcome)  # client quotas (access/quotas/)
    report: Path | None = None  # the sync's report.html (a dry run writes none)

    @property
    def failed_logins(self) -> list[str]:
        return sorted(user for user, (outcome, _) in self.logins.items() if outcome == LoginOutcome.FAILED)

    @property
    def proven(self) -> bool:
        access = not self.differences and not self.plan.conflicts and not any(self.unreadable) and self.quotas.proven
        return access and not self.users.needs_password and not self.failed_logins and self.probes.proven

    @property
    def verdict(self) -> AccessVerdict:
        return AccessVerdict.PROVEN if self.proven else AccessVerdict.DIFFERENT

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.proven else EXIT_DIFFERENT


def sync_access(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    sync_id: str,
    options: AccessSyncOptions | None = None,
) -> AccessSyncResult:
    """Plan (and unless ``options.dry_run`` apply) the ACL bindings, SCRAM credentials and client quotas of
    ``source`` on ``target``, prove (decisions, logins, live probes, quotas), record, and (not for a dry run) write
    the sync's report into ``options.reports_dir``/<sync_id> with its digest in the ledger."""
    options = options or AccessSyncOptions()
    with ExitStack() as opened:  # kafka-python's connections too (quotas; token and user bindings)
        src = opened.enter_context(closing(AccessCluster(source)))
        tgt = opened.enter_context(closing(AccessCluster(target)))
        check_access_permissions(src, tgt, options.dry_run)  # before anything is read or written (exit 2)
        sync = SyncRecord(
            sync_id, options.run_id, src.describe().cluster_id, tgt.describe().cluster_id, options.dry_run
        )
        passwords = dict(options.passwords or {})
        users = UserSync.read_and_plan((src, tgt), sync, passwords)
        carry = Carry(options.rename, options.principals, options.super_users)
        acls = AclSync.read_and_plan((src, tgt), sync, ledger, carry, options.remove_stale)
        quota_clusters = (opened.enter_context(QuotaCluster(source)), opened.enter_context(QuotaCluster(target)))
        quotas = QuotaSync.read_and_plan(quota_clusters, sync, ledger, options.principals, options.remove_stale)
        parts: tuple[AccessPart[Proof], ...] = (acls, users, quotas)
        if not sync.dry_run:
            for part in parts:
                part.apply()
        logins = users.prove()
        probes = ProbeReport()
        if not sync.dry_run:
            setup = ProbeSetup(
                users.logged_in, users.mechanisms, carry.rename, carry.principals, options.probe_users_most
            )
            topics = (src.topic_names(), tgt.topic_names())
            probes = probe_users(source, target, acls.source_bindings, topics, setup)
        decisions = acls.prove()
        quota_outcome = quotas.prove()  # both clusters described again
        for part in parts:
            part.record(ledger)
        ledger.record_access_probes(sync_id, probes.outcomes)
    result = AccessSyncResult(
        sync_id,
        sync.dry_run,
        sync.source_cluster_id,
        sync.target_cluster_id,
        acls.plan,
        acls.unreadable,
        decisions.actions_checked,
        decisions.differences,
        users.plan,
        dict(logins.outcomes),
        probes,
        quota_outcome,
    )
    return _record_verdict(ledger, result, options.run_id, (source, target), options.reports_dir)


def _record_verdict(
    ledger: Ledger,
    result: AccessSyncResult,
    run_id: str | None,
    pair: tuple[ClusterConfig, ClusterConfig],
    reports_dir: Path | None,
) -> AccessSyncResult:
    """The sync's verdict into the ledger beside its rows, then (not for a dry run) its report from the ledger."""
    from kafka_migration.reports.security import generate_access_report

    ledger.record_access_check(
        AccessCheck(
            sync_id=result.sync_id,
            run_id=run_id,
            synced_at=datetime.now(UTC),
            source_cluster_id=result.source_cluster_id,
            target_cluster_id=result.target_cluster_id,
            source_bootstrap=str(pair[0].settings.get("bootstrap.servers", "")),
            target_bootstrap=str(pair[1].settings.get("bootstrap.servers", "")),
            dry_run=result.dry_run,
            verdict=result.verdict,
            actions_checked=result.actions_checked,
            differences=tuple(d.describe() for d in result.differences),
            unreadable=result.unreadable,
        )
    )
    if result.dry_run or reports_dir is None:
        return result
    files = generate_access_report(ledger, result.sync_id, reports_dir)
    return replace(result, report=files.html)
