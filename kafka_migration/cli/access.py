"""``kafka-migrate access``: carry the source's ACL bindings, SCRAM users and client quotas to the target and prove
both decide and limit alike, or show a recorded sync."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kafka_migration.cli.helptext import subcommand
from kafka_migration.cli.options import (
    EXIT_MISMATCH,
    EXIT_OK,
    REPORT_DIR_HELP,
    add_cluster_options,
    add_ledger_options,
    add_output,
    check_clusters,
    json_wanted,
    ledger_url,
    nonempty,
    nonempty_path,
    not_negative,
    open_ledger,
    print_document,
    reports_dir_of,
)
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import DEFAULT_RENAME, ClusterConfig

if TYPE_CHECKING:  # the access sync loads only when one runs: --help stays fast
    from kafka_migration.access.quotas.sync import QuotaOutcome
    from kafka_migration.access.sync import AccessSyncResult

SYNC_CODES = {
    EXIT_OK: "every binding and quota on the target (or, a dry run, planned), both clusters decide every action "
    "alike and hold the same quotas",
    EXIT_MISMATCH: "a difference: an action decided differently, a DENY on the target the source lacks, "
    "bindings the client cannot read, or a quota the clusters hold differently",
}
SYNC_EXAMPLES = [
    "# what a sync would add, keep and remove, and whether both clusters would then decide alike",
    "kafka-migrate access sync --source-config src.json --target-config dst.json --dry-run",
    "# carry the bindings, renamed as the topics were, principals mapped, and prove them",
    "kafka-migrate access sync --source-config src.json --target-config dst.json --rename 'dc1.{topic}' "
    "--principal-map principals.json --super-user User:admin",
]
SHOW_CODES = {EXIT_OK: "the sync added, kept or removed every binding", EXIT_MISMATCH: "it refused or found some"}
SHOW_EXAMPLES = ["kafka-migrate access show access-20261127T160000Z-1a2b3c"]


def add_parser(sub: Any) -> None:
    """The ``access`` subcommand: ``access sync`` and ``access show``."""
    parser = subcommand(
        sub,
        "access",
        "ACL bindings, SCRAM users and client quotas on the target, proven: access sync, access show",
        SYNC_CODES,
        [*SYNC_EXAMPLES[:2], *SHOW_EXAMPLES],
    )
    access_sub = parser.add_subparsers(dest="access_command", required=True, metavar="COMMAND")
    sync = subcommand(
        access_sub,
        "sync",
        "carry every ACL binding, SCRAM user and client quota of the source to the target (add-only), then prove "
        "both clusters decide and limit alike",
        SYNC_CODES,
        SYNC_EXAMPLES,
    )
    add_cluster_options(sync)
    sync.add_argument(
        "--rename", type=nonempty, default=DEFAULT_RENAME, help="the runs' topic rename template (default {topic})"
    )
    sync.add_argument(
        "--principal-map",
        type=nonempty_path,
        help='JSON object mapping source principals to target ones, e.g. {"User:app": "User:app-dc2"}',
    )
    sync.add_argument(
        "--super-user",
        action="append",
        default=[],
        metavar="PRINCIPAL",
        help="a super user of the clusters (super.users), for the decisions; repeat for several",
    )
    sync.add_argument(
        "--credentials",
        type=nonempty_path,
        help='JSON file of SCRAM passwords by user, {"alice": "..."} (a cluster never gives them out); users without '
        "one are listed as needing a password",
    )
    sync.add_argument("--dry-run", action="store_true", help="plan and prove on paper, write no binding or quota")
    sync.add_argument(
        "--probe-users",
        type=not_negative,
        default=20,
        metavar="N",
        help="after writing, the first N users given a password (by name) log in to both clusters and try what "
        "their bindings allow and deny; both must answer alike (default 20, 0: none)",
    )
    sync.add_argument(
        "--remove-stale",
        action="store_true",
        help="also delete bindings and quotas this tool created earlier that the source no longer has (never any "
        "other)",
    )
    add_ledger_options(sync)
    sync.add_argument("--report-dir", type=nonempty_path, help=REPORT_DIR_HELP)
    add_output(sync)
    show = subcommand(access_sub, "show", "what a recorded access sync did, from the ledger", SHOW_CODES, SHOW_EXAMPLES)
    show.add_argument("sync_id", type=nonempty, metavar="SYNC_ID", help="a sync id printed by 'access sync'")
    add_ledger_options(show)
    add_output(show)


def access(args: argparse.Namespace) -> int:
    if args.access_command == "show":
        return _show(args)
    from kafka_migration.access.inputs import load_credentials, load_principal_map
    from kafka_migration.access.sync import AccessSyncOptions, sync_access
    from kafka_migration.kafka.kafka_python import kafka_python_settings
    from kafka_migration.model.config import writable_dir
    from kafka_migration.model.naming import validate_rename_template
    from kafka_migration.run.files import new_run_id

    validate_rename_template(args.rename)
    principals = load_principal_map(args.principal_map)
    passwords = load_credentials(args.credentials)
    bad = [p for p in args.super_user if ":" not in p]
    if bad:
        raise ConfigurationError(f"--super-user {bad[0]!r} is not a principal TYPE:NAME, e.g. User:admin.")
    source = ClusterConfig.build("source", args.source, args.source_config)
    target = ClusterConfig.build("target", args.target, args.target_config)
    for config in (source, target):  # quotas and token/user ACLs go through kafka-python: its settings too
        kafka_python_settings(config, timeout=15.0)
    url = ledger_url(args)
    if not args.dry_run:  # a sync writes its report there: refused before anything is read or written
        writable_dir(reports_dir_of(args), "The report directory (--report-dir)")
    check_clusters(source, target)  # before the ledger is created: an unreachable cluster writes nothing
    from kafka_migration.ledger import Ledger

    result = sync_access(
        source,
        target,
        Ledger.open(url),  # created when absent: access may move before any run
        f"access-{new_run_id()}",
        AccessSyncOptions(
            rename=args.rename,
            principals=principals,
            super_users=set(args.super_user),
            dry_run=args.dry_run,
            remove_stale=args.remove_stale,
            passwords=passwords,
            probe_users_most=args.probe_users,
            reports_dir=reports_dir_of(args),
        ),
    )
    if json_wanted(args):
        print_document(args, _document(result))
        return result.exit_code
    print(_text(result))
    return result.exit_code


def _document(result: AccessSyncResult) -> dict[str, Any]:
    from kafka_migration.cli.output import document

    plan = result.plan
    return document(
        "access sync",
        sync_id=result.sync_id,
        dry_run=result.dry_run,
        source_cluster_id=result.source_cluster_id,
        target_cluster_id=result.target_cluster_id,
        verdict=result.verdict,
        exit_code=result.exit_code,
        report=str(result.report) if result.report else None,
        totals={
            "add": len(plan.add),
            "present": len(plan.present),
            "conflicts": len(plan.conflicts),
            "remove": len(plan.remove),
            "unreadable_source": result.unreadable[0],
            "unreadable_target": result.unreadable[1],
            "actions_checked": result.actions_checked,
            "differences": len(result.differences),
            "users_add": len(result.users.add),
            "users_present": len(result.users.present),
            "users_needing_a_password": len(result.users.users_needing_a_password),
            "logins_failed": len(result.failed_logins),
            "probes": len(result.probes.outcomes),
            "probes_different": len(result.probes.mismatches),
        },
        probes=[
            {"probe": o.probe.describe(), "source": o.source, "target": o.target, "matched": o.matched}
            for o in result.probes.outcomes
        ],
        quotas=_quota_document(result.quotas),
        users_needing_a_password=result.users.users_needing_a_password,
        logins={user: {"outcome": outcome, "reason": why} for user, (outcome, why) in result.logins.items()},
        add=[b.describe() for b in plan.add],
        conflicts=[b.describe() for b in plan.conflicts],
        remove=[b.describe() for b in plan.remove],
        differences=[d.describe() for d in result.differences],
    )


def _text(result: AccessSyncResult) -> str:
    from kafka_migration.model.text import plural, some

    plan = result.plan
    verb = ("would add", "would remove") if result.dry_run else ("added", "removed")
    lines = [
        f"Access sync {result.sync_id}: {result.source_cluster_id} -> {result.target_cluster_id}"
        + (" (dry run: nothing written)" if result.dry_run else ""),
        f"  {verb[0]} {plural(len(plan.add), 'binding')}, {len(plan.present)} already present, {verb[1]} "
        f"{len(plan.remove)}",
    ]
    lines += [f"  + {b.describe()}" for b in plan.add[:20]]
    lines += [f"  - {b.describe()}" for b in plan.remove[:20]]
    for binding in plan.conflicts:
        lines.append(f"  conflict: {binding.describe()} is on the target only; remove it there or add it to the source")
    users = result.users
    user_verb = "would create" if result.dry_run else "created"
    lines.append(
        f"  SCRAM: {user_verb} {plural(len(users.add), 'credential')}, {len(users.present)} already present"
        + (f"; needs a password: {some(users.users_needing_a_password, most=10)}" if users.needs_password else "")
    )
    for user, (outcome, why) in sorted(result.logins.items()):
        lines.append(f"  login as {user} on the target: {outcome}" + (f" ({why})" if why else ""))
    from kafka_migration.reports.access_lines import probe_lines

    lines += probe_lines(result.probes)
    lines += _quota_text(result.quotas, result.dry_run)
    for side, count in zip(("source", "target"), result.unreadable, strict=True):
        if count:
            lines.append(
                f"  {plural(count, 'binding')} on the {side} this client cannot read (DELEGATION_TOKEN or USER "
                "resources, token operations): move them with kafka-acls.sh"
            )
    if result.differences:
        shown = some([d.describe() for d in result.differences], most=5)
        lines.append(
            f"NOT proven: {plural(len(result.differences), 'action')} of {result.actions_checked:,} decided "
            f"differently: {shown}"
        )
    elif result.proven:
        lines.append(
            f"Proven: both clusters decide all {result.actions_checked:,} actions of the bindings alike and hold the "
            f"same {plural(result.quotas.target_count, 'client quota')}."
        )
    else:
        lines.append("NOT proven: " + "; ".join(_unproven(result)) + ".")
    if not result.dry_run:
        lines.append(f"Recorded in the ledger: kafka-migrate access show {result.sync_id}")
    if result.report:
        lines.append(f"Report: {result.report}")
    return "\n".join(lines)


def _unproven(result: AccessSyncResult) -> list[str]:
    """Why a sync whose decisions agree is not proven, each with its way out."""
    from kafka_migration.model.text import plural

    reasons = []
    if result.users.needs_password:
        users = result.users.users_needing_a_password
        reasons.append(
            f"{plural(len(users), 'SCRAM user')} without a password on the target: give the passwords with "
            '--credentials FILE (a JSON object {"user": "password"}; a cluster never gives them out)'
        )
    if result.plan.conflicts:
        reasons.append(f"{plural(len(result.plan.conflicts), 'conflicting binding')} on the target (listed above)")
    if any(result.unreadable):
        reasons.append(
            f"{plural(sum(result.unreadable), 'binding')} this client cannot read (move them with kafka-acls.sh)"
        )
    if result.failed_logins:
        reasons.append(f"{plural(len(result.failed_logins), 'login')} failed on the target (listed above)")
    if not result.probes.proven:
        reasons.append(f"{plural(len(result.probes.mismatches), 'probe')} answered differently (listed above)")
    if not result.quotas.proven:
        reasons.append(f"{plural(len(result.quotas.differences), 'client quota')} differ (listed above)")
    return reasons or ["see the lines above"]


def _show(args: argparse.Namespace) -> int:
    from kafka_migration.model.access import AccessAction, AccessVerdict

    ledger = open_ledger(args)
    rows = ledger.access_sync_rows(args.sync_id)
    quotas = ledger.access_quota_rows(args.sync_id)
    check = ledger.access_check(args.sync_id)  # None: recorded before ledger 0011
    if not rows and not quotas and check is None:
        raise ConfigurationError(f"The ledger has no access sync {args.sync_id!r}; 'access sync' prints the id.")
    probes = ledger.access_probe_rows(args.sync_id)
    different = any(r.action in (AccessAction.CONFLICT, AccessAction.REFUSED) for r in rows) or any(
        not o.matched for o in probes
    )
    different = different or any(q.action in (AccessAction.DIFFERENT, AccessAction.TARGET_ONLY) for q in quotas)
    different = different or (check is not None and check.verdict != AccessVerdict.PROVEN)
    code = EXIT_MISMATCH if different else EXIT_OK
    if json_wanted(args):
        from kafka_migration.cli.output import document, when

        print_document(
            args,
            document(
                "access show",
                sync_id=args.sync_id,
                synced_at=when(check.synced_at if check else (rows or quotas)[0].synced_at),
                exit_code=code,
                verdict=check.verdict if check else None,
                decision_check=None
                if check is None
                else {"actions_checked": check.actions_checked, "differences": list(check.differences)},
                report_sha256=check.report_sha256 if check else None,
                bindings=[{"binding": r.binding.describe(), "action": r.action, "reason": r.reason} for r in rows],
                probes=[{"probe": o.probe.describe(), "source": o.source, "target": o.target} for o in probes],
                quotas=[
                    {
                        "quota": q.quota.describe(),
                        "target_value": q.target_value,
                        "action": q.action,
                        "reason": q.reason,
                    }
                    for q in quotas
                ],
            ),
        )
        return code
    first = check or (rows or quotas)[0]
    print(
        f"Access sync {args.sync_id}, {first.synced_at:%Y-%m-%d %H:%M:%S} UTC, {first.source_cluster_id} -> "
        f"{first.target_cluster_id}"
    )
    for row in rows:
        print(f"  {row.action:<12} {row.binding.describe()}" + (f" ({row.reason})" if row.reason else ""))
    for credential, action, login, reason in ledger.access_user_rows(args.sync_id):
        login_text = f", login {login}" if login else ""
        print(
            f"  {action:<12} SCRAM {credential.mechanism} user {credential.user}{login_text}"
            + (f" ({reason})" if reason else "")
        )
    for outcome in probes:
        print(f"  {'probe':<12} {outcome.describe()}")
    for recorded in quotas:
        before = (
            "" if recorded.target_value in (None, recorded.quota.value) else f", target had {recorded.target_value:g}"
        )
        reason = f" ({recorded.reason})" if recorded.reason else ""
        print(f"  {recorded.action:<12} quota {recorded.quota.describe()}{before}{reason}")
    if check is not None:
        print(
            f"Verdict: {check.verdict}; {check.actions_checked:,} actions decided on both clusters, "
            f"{len(check.differences)} differently"
            + (f"; report.json {check.report_sha256}" if check.report_sha256 else "")
        )
    return code


def _quota_document(outcome: QuotaOutcome) -> dict[str, Any]:
    plan = outcome.plan
    return {
        "totals": {
            "add": len(plan.add),
            "present": len(plan.present),
            "update": len(plan.update),
            "different": len(plan.different),
            "target_only": len(plan.target_only),
            "remove": len(plan.remove),
            "source": outcome.source_count,
            "target": outcome.target_count,
            "differences": len(outcome.differences),
        },
        "add": [q.describe() for q in plan.add],
        "update": [c.describe() for c in plan.update],
        "different": [c.describe() for c in plan.different],
        "target_only": [q.describe() for q in plan.target_only],
        "remove": [q.describe() for q in plan.remove],
        "differences": [d.describe() for d in outcome.differences],
    }


def _quota_text(outcome: QuotaOutcome, dry_run: bool) -> list[str]:
    from kafka_migration.model.text import plural, some

    plan = outcome.plan
    verbs = ("would set", "would update", "would remove") if dry_run else ("set", "updated", "removed")
    lines = [
        f"  Quotas: {verbs[0]} {plural(len(plan.add), 'quota')}, {len(plan.present)} already present, {verbs[1]} "
        f"{len(plan.update)}, {verbs[2]} {len(plan.remove)}"
    ]
    lines += [f"  + quota {q.describe()}" for q in plan.add[:20]]
    lines += [f"  ~ quota {c.describe()}" for c in plan.update[:20]]
    lines += [f"  - quota {q.describe()}" for q in plan.remove[:20]]
    for change in plan.different:
        lines.append(
            f"  quota different: {change.describe()}; not set by this tool, left alone: change it on the target"
        )
    for quota in plan.target_only:
        lines.append(f"  quota on the target only: {quota.describe()}; left alone")
    if outcome.differences:
        shown = some([d.describe() for d in outcome.differences], most=5)
        lines.append(f"  NOT the same quotas: {plural(len(outcome.differences), 'difference')}: {shown}")
    return lines
