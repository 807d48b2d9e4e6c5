"""The security section of a cluster move's sign-off: what an access sync did with every ACL binding, SCRAM
user and client quota, what the users' live probes answered, and the decision check's verdict, built from the
ledger alone (``km_access_checks`` and the rows recorded beside it under the sync's id).

The section is the content of an access sync's own report (``reports/<sync_id>/report.json``, ``.md`` and
``.html``, deterministic like a run's: its SHA-256 is recorded with the sync) and of the console's access view.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_migration.model.access import (
    AccessAction,
    AccessCheck,
    PatternType,
    RecordedBinding,
    RecordedQuota,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.probes import ProbeOutcome
from kafka_migration.reports.security_render import COLUMNS, render_access_html, render_access_markdown

if TYPE_CHECKING:
    from kafka_migration.ledger import Ledger

REPORT_VERSION = 1
COLUMN_OF = {  # a binding's action, as the counts' column that tallies it
    AccessAction.WOULD_ADD: AccessAction.ADDED,
    AccessAction.WOULD_REMOVE: AccessAction.REMOVED,
    **{column: column for column in COLUMNS},
}
QUOTA_DIFFERENCES = (AccessAction.DIFFERENT, AccessAction.TARGET_ONLY)  # left as they are: the clusters differ there


def _iso(value: Any) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def _counts(bindings: Sequence[RecordedBinding]) -> list[dict[str, Any]]:
    """Per resource type and pattern, how many bindings each action took."""
    tally: dict[tuple[ResourceType, PatternType], Counter[AccessAction]] = {}
    for row in bindings:
        key = (row.binding.resource_type, row.binding.pattern_type)
        tally.setdefault(key, Counter())[COLUMN_OF.get(row.action, row.action)] += 1
    return [
        {"resource_type": kind, "pattern_type": pattern, **{c: tally[(kind, pattern)][c] for c in COLUMNS}}
        for kind, pattern in sorted(tally)
    ]


def _users(rows: Sequence[tuple[ScramCredential, str, str | None, str | None]]) -> list[dict[str, Any]]:
    return [
        {
            "user": c.user,
            "mechanism": c.mechanism,
            "iterations": c.iterations,
            "action": action,
            "login": login,
            "reason": reason,
        }
        for c, action, login, reason in sorted(rows, key=lambda r: (r[0].user, r[0].mechanism))
    ]


def _quota(row: RecordedQuota) -> dict[str, Any]:
    return {
        "entity": row.quota.entity.describe(),
        "key": row.quota.key,
        "value": row.quota.value,
        "target_value": row.target_value,
        "action": row.action,
        "reason": row.reason,
    }


def _probes(outcomes: Sequence[ProbeOutcome]) -> dict[str, Any]:
    mismatches = [
        f"{o.probe.user} {o.probe.kind} {o.probe.resource}: source {o.source}, target {o.target}"
        for o in outcomes
        if not o.matched
    ]
    return {"total": len(outcomes), "matched": len(outcomes) - len(mismatches), "mismatches": mismatches}


def security_section(ledger: Ledger, sync_id: str) -> dict[str, Any] | None:
    """The section of one recorded access sync (None: the ledger has no such sync)."""
    check: AccessCheck | None = ledger.access_check(sync_id)
    if check is None:
        return None
    bindings = ledger.access_sync_rows(sync_id)
    users = _users(ledger.access_user_rows(sync_id))
    quotas = [_quota(q) for q in ledger.access_quota_rows(sync_id)]
    return {
        "sync_id": check.sync_id,
        "run_id": check.run_id,
        "synced_at": _iso(check.synced_at),
        "dry_run": check.dry_run,
        "verdict": check.verdict,
        "source": {"cluster_id": check.source_cluster_id, "bootstrap": check.source_bootstrap},
        "target": {"cluster_id": check.target_cluster_id, "bootstrap": check.target_bootstrap},
        "counts": _counts(bindings),
        "bindings": [
            {
                "action": row.action,
                "binding": row.binding.describe(),
                "resource_type": row.binding.resource_type,
                "pattern_type": row.binding.pattern_type,
                "reason": row.reason,
            }
            for row in sorted(bindings, key=lambda r: (r.action, r.binding))
        ],
        "users": users,
        "needs_password": [u["user"] for u in users if u["action"] == AccessAction.NEEDS_PASSWORD],
        "quotas": quotas,
        "quota_differences": sum(1 for q in quotas if q["action"] in QUOTA_DIFFERENCES),
        "probes": _probes(ledger.access_probe_rows(sync_id)),
        "decision_check": {
            "actions_checked": check.actions_checked,
            "differences": list(check.differences),
            "unreadable": list(check.unreadable),
        },
        "report_sha256": check.report_sha256,
    }


def access_report(section: Mapping[str, Any]) -> dict[str, Any]:
    """An access sync's own report: its section and the verdict a reader signs."""
    verdict = "DRY RUN" if section["dry_run"] else ("PROVEN" if section["verdict"] == "proven" else "NOT PROVEN")
    content = {key: value for key, value in section.items() if key != "report_sha256"}  # the digest is of this
    return {"report_version": REPORT_VERSION, "kind": "access_sync", "verdict": verdict, "security": content}


def generate_access_report(ledger: Ledger, sync_id: str, reports_dir: Path) -> Any:
    """Build the report of an access sync from the ledger, write it, and record its digest there."""
    from kafka_migration.reports.signoff import write_report_files

    section = security_section(ledger, sync_id)
    if section is None:
        from kafka_migration.exceptions import ConfigurationError

        raise ConfigurationError(f"The ledger has no access sync {sync_id!r}; syncs print their id when they end.")
    files = write_report_files(
        access_report(section), Path(reports_dir) / sync_id, render_access_html, render_access_markdown
    )
    ledger.set_access_report_digest(sync_id, files.sha256)
    return files
