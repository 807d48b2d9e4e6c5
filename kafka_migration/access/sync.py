"""An access sync end to end: read both clusters' ACL bindings, plan with ``rules``, write with ``admin``
(add-only unless asked to remove this tool's own stale bindings), prove that both clusters decide alike, and
record every binding and what became of it in the ledger.

Bindings that cannot be carried exactly refuse the whole sync before anything is written (exit 2): a partial
copy of a cluster's access control would decide differently without saying so.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, closing
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kafka_migration.access.permissions import check_access_permissions
from kafka_migration.access.probe import DEFAULT_USERS, ProbeReport, ProbeSetup, ledger_rows, probe_users
from kafka_migration.access.quota_sync import QuotaOutcome, QuotaSync
from kafka_migration.access.rules import (
    AclPlan,
    Authorizer,
    DecisionDifference,
    carrier,
    decision_differences,
    plan_bindings,
    selection,
)
from kafka_migration.access.users import UsersPlan, load_passwords, plan_users
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.model.access import (
    AccessAction,
    AccessCheck,
    AccessVerdict,
    AclBinding,
    LoginOutcome,
    Password,
    ScramCredential,
)
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.text import plural, some

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

EXIT_OK, EXIT_DIFFERENT = 0, 1


@dataclass(frozen=True)
class AccessSyncOptions:
    """How a sync carries the source's access control: the topic rename template, the principal map, the
    principals both authorizers treat as super users; ``dry_run`` writes nothing, ``remove_stale`` removes the
    bindings this tool created that the source no longer has; the run it belongs to, the operator's SCRAM
    passwords, how many users are probed live, and where its report goes (none: no report file)."""

    rename: str = "{topic}"
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
    logins: Mapping[str, tuple[str, str | None]]  # user -> (proven | failed | not_provable, why)
    probes: ProbeReport = field(default_factory=ProbeReport)  # the users' live probes (access/probe.py)
    quotas: QuotaOutcome = field(default_factory=QuotaOutcome)  # client quotas (access/quota_sync.py)
    report: Path | None = None  # the sync's report.html (a dry run writes none)

    @property
    def failed_logins(self) -> list[str]:
        return sorted(user for user, (outcome, _) in self.logins.items() if outcome == LoginOutcome.FAILED)

    @property
    def proven(self) -> bool:
        access = not self.differences and not self.plan.conflicts and not any(self.unreadable) and self.quotas.proven
        return access and not self.users.needs_password and not self.failed_logins and self.probes.proven

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.proven else EXIT_DIFFERENT


def _json_file(path: Path, what: str, example: str) -> object:
    """A JSON file's content; a refusal names the file and the line, never its content (it may hold secrets)."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"The {what} {path} cannot be read ({exc}); give a readable JSON file such as {example}."
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigurationError(
            f"The {what} {path} is not valid JSON (line {exc.lineno}): give an object such as {example}."
        ) from None


def load_principal_map(path: str | Path | None) -> dict[str, str]:
    """The optional principal mapping file: one JSON object, ``{"User:old": "User:new", ...}``."""
    if path is None:
        return {}
    where = Path(path)
    return principal_map(_json_file(where, "principal map", PRINCIPAL_MAP_EXAMPLE), f"The principal map {where}")


PRINCIPAL_MAP_EXAMPLE = '{"User:app": "User:app-dc2"}'


def principal_map(data: object, where: str) -> dict[str, str]:
    """A principal map's content (a file's, or a DAG's Param), checked: ``where`` begins the refusal."""
    if not isinstance(data, dict):
        raise ConfigurationError(
            f"{where} holds a JSON {type(data).__name__}; give an object such as {PRINCIPAL_MAP_EXAMPLE}."
        )
    bad = [f"{k!r}: {v!r}" for k, v in data.items() if not isinstance(v, str) or ":" not in k or ":" not in v]
    if bad:
        raise ConfigurationError(
            f"{where} maps {some(bad, most=3)}, not a principal TYPE:NAME to another (User:app to User:app-dc2)."
        )
    return dict(data)


def load_credentials(path: str | Path | None) -> dict[str, Password]:
    """The operator's SCRAM passwords, from a JSON file (see access/users.load_passwords); none without one."""
    if path is None:
        return {}
    where = Path(path)
    return load_passwords(_json_file(where, "credentials file", '{"alice": "..."}'), str(where))


def sync_access(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    sync_id: str,
    options: AccessSyncOptions | None = None,
) -> AccessSyncResult:
    """Plan (and unless ``options.dry_run`` apply) the ACL bindings and SCRAM credentials of ``source`` on
    ``target``, prove (decisions; each user with a password logs in to the target), record, and (not for a dry
    run) write the sync's report into ``options.reports_dir``/<sync_id> with its digest in the ledger. Every
    client it opens is closed when it ends, also when a step fails."""
    with ExitStack() as opened:
        return _sync(source, target, ledger, sync_id, options or AccessSyncOptions(), opened)


def _sync(
    source: ClusterConfig,
    target: ClusterConfig,
    ledger: Ledger,
    sync_id: str,
    options: AccessSyncOptions,
    opened: ExitStack,
) -> AccessSyncResult:
    rename, principals, super_users = options.rename, options.principals, options.super_users
    dry_run, remove_stale, run_id = options.dry_run, options.remove_stale, options.run_id
    # kafka-python's connections, if token/user bindings are read
    src = opened.enter_context(closing(AccessCluster(source)))
    tgt = opened.enter_context(closing(AccessCluster(target)))
    check_access_permissions(src, tgt, dry_run)  # before anything is read or written (exit 2)
    src_id, tgt_id = src.describe().cluster_id, tgt.describe().cluster_id
    read_source, read_target = src.bindings(), tgt.bindings()
    created = ledger.access_bindings_created(src_id, tgt_id)
    plan = plan_bindings(read_source.bindings, read_target.bindings, rename, principals, created, remove_stale)
    passwords = dict(options.passwords or {})
    users = plan_users(src.scram_credentials(), tgt.scram_credentials(), passwords)
    if plan.refused:
        raise ConfigurationError(
            f"{plural(len(plan.refused), 'ACL binding')} of the source cannot be carried to the target exactly, "
            f"nothing was written: {some([r.describe() for r in plan.refused], most=3)}."
        )
    quotas = QuotaSync.read_and_plan(source, target, ledger.access_quotas_set(src_id, tgt_id), principals, remove_stale)
    opened.callback(quotas.close)
    logins: dict[str, tuple[str, str | None]] = {}
    if not dry_run:
        tgt.create(plan.add)
        tgt.delete(plan.remove)
        tgt.upsert_scram(users.add, passwords)
        quotas.apply()
        logins = _log_in(tgt, (*users.add, *users.present), passwords)
        after: tuple[AclBinding, ...] = tgt.bindings().bindings
        logged_in = {u: passwords[u] for u, (outcome, _) in logins.items() if outcome == LoginOutcome.PROVEN}
        mechanisms = {c.user: c.mechanism for c in reversed((*users.add, *users.present))}
        probes = probe_users(
            source,
            target,
            read_source.bindings,
            (src.topic_names(), tgt.topic_names()),
            ProbeSetup(logged_in, mechanisms, rename, principals, most_users=options.probe_users_most),
        )
    else:
        after = tuple(sorted((set(read_target.bindings) | set(plan.add)) - set(plan.remove)))
        probes = ProbeReport()
    actions = selection(read_source.bindings)
    differences = decision_differences(
        Authorizer(read_source.bindings, super_users),
        Authorizer(after, super_users),
        actions,
        carrier(rename, principals),
    )
    added, removed = (
        (AccessAction.WOULD_ADD, AccessAction.WOULD_REMOVE) if dry_run else (AccessAction.ADDED, AccessAction.REMOVED)
    )
    rows = [
        *((b, added, None) for b in plan.add),
        *((b, AccessAction.PRESENT, None) for b in plan.present),
        *((r.binding, AccessAction.REFUSED, r.reason) for r in plan.refused),
        *((b, AccessAction.CONFLICT, "a DENY on the target that the source lacks") for b in plan.conflicts),
        *((b, removed, "created by this tool; the source no longer has it") for b in plan.remove),
    ]
    ledger.record_access_sync(sync_id, run_id, src_id, tgt_id, rows, dry_run=dry_run)
    ledger.record_access_users(
        sync_id,
        [
            *((c, added, *logins.get(c.user, (None, None))) for c in users.add),
            *((c, AccessAction.PRESENT, *logins.get(c.user, (None, None))) for c in users.present),
            *((c, AccessAction.NEEDS_PASSWORD, None, "no password given for it") for c in users.needs_password),
        ],
    )
    ledger.record_access_probes(sync_id, ledger_rows(probes))
    quota_outcome = quotas.prove(dry_run)  # both clusters described again
    quotas.record(ledger, sync_id, run_id, (src_id, tgt_id), dry_run)
    result = AccessSyncResult(
        sync_id,
        dry_run,
        src_id,
        tgt_id,
        plan,
        (read_source.unreadable, read_target.unreadable),
        len(actions),
        tuple(differences),
        users,
        logins,
        probes,
        quota_outcome,
    )
    return _record_verdict(ledger, result, run_id, (source, target), options.reports_dir)


LOGINS_AT_ONCE = 16  # a login is a TLS and SASL handshake, mostly waiting on the broker


def _log_in(
    cluster: AccessCluster, credentials: Collection[ScramCredential], passwords: Mapping[str, Password]
) -> dict[str, tuple[str, str | None]]:
    """Each user given a password logs in to ``cluster`` once (its first credential's mechanism), several users at
    a time: a thousand users log in within seconds, not one after another."""
    first: dict[str, ScramCredential] = {}
    for credential in credentials:
        if credential.user in passwords:
            first.setdefault(credential.user, credential)
    with ThreadPoolExecutor(max_workers=LOGINS_AT_ONCE, thread_name_prefix="access-login") as pool:
        outcomes = pool.map(lambda c: cluster.login(c, passwords[c.user]), first.values())
        return dict(zip(first, outcomes, strict=True))


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
            verdict=AccessVerdict.PROVEN if result.proven else AccessVerdict.DIFFERENT,
            actions_checked=result.actions_checked,
            differences=tuple(d.describe() for d in result.differences),
            unreadable=result.unreadable,
        )
    )
    if result.dry_run or reports_dir is None:
        return result
    files = generate_access_report(ledger, result.sync_id, reports_dir)
    return replace(result, report=files.html)
