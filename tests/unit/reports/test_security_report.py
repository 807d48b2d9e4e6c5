"""The security section and an access sync's own report, built from a ledger on both backends: counts per resource
type and pattern, every binding's action, users needing a password, quota differences, probe mismatches and the
decision check; the report's digest recorded and byte-identical when built again; no secret anywhere."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from kafka_migration.ledger import Ledger
from kafka_migration.model.access import (
    AccessAction,
    AccessCheck,
    AclBinding,
    PatternType,
    PermissionType,
    Quota,
    QuotaEntity,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.probes import Probe, ProbeKind, ProbeOutcome
from kafka_migration.reports.security import access_report, generate_access_report, security_section
from kafka_migration.reports.security_render import render_access_html, render_access_markdown
from kafka_migration.reports.signoff import report_json, sha256, verify_report

WRITE = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW)
READ = AclBinding(ResourceType.TOPIC, "pay.", PatternType.PREFIXED, "User:reader", "*", "READ", PermissionType.ALLOW)
GROUP_READ = AclBinding(
    ResourceType.GROUP, "billing", PatternType.LITERAL, "User:reader", "*", "READ", PermissionType.ALLOW
)
STALE = AclBinding(ResourceType.TOPIC, "old", PatternType.LITERAL, "User:app", "*", "READ", PermissionType.ALLOW)
PLANTED = AclBinding(
    ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:intern", "*", "WRITE", PermissionType.DENY
)


def _record(ledger: Ledger, sync_id: str = "access-1", differences: tuple[str, ...] = ()) -> None:
    ledger.record_access_sync(
        sync_id,
        None,
        "src-id",
        "dst-id",
        [
            (WRITE, AccessAction.ADDED, None),
            (READ, AccessAction.ADDED, None),
            (GROUP_READ, AccessAction.PRESENT, None),
            (STALE, AccessAction.REMOVED, "ours, gone"),
            (PLANTED, AccessAction.CONFLICT, "a DENY on the target that the source lacks"),
        ],
    )
    ledger.record_access_users(
        sync_id,
        [
            (ScramCredential("carol", "SCRAM-SHA-512", 4096), AccessAction.ADDED, "proven", None),
            (
                ScramCredential("erin", "SCRAM-SHA-512", 4096),
                AccessAction.NEEDS_PASSWORD,
                None,
                "no password given for it",
            ),
        ],
    )
    quota = Quota(QuotaEntity.of(user="carol"), "producer_byte_rate", 1048576.0)
    other = Quota(QuotaEntity.of(ip="10.1.2.3"), "connection_creation_rate", 10.0)
    ledger.record_access_quotas(
        sync_id,
        None,
        "src-id",
        "dst-id",
        [(quota, None, AccessAction.ADDED, None), (other, 5.0, AccessAction.DIFFERENT, "x")],
    )
    ledger.record_access_probes(
        sync_id,
        [
            ProbeOutcome(Probe("carol", ProbeKind.PRODUCE, "orders"), "carol", "orders", "allowed", "allowed"),
            ProbeOutcome(
                Probe("carol", ProbeKind.DESCRIBE, "pay.x"),
                "carol",
                "pay.x",
                "allowed",
                "denied (TOPIC_AUTHORIZATION_FAILED)",
            ),
        ],
    )
    ledger.record_access_check(
        AccessCheck(
            sync_id=sync_id,
            run_id=None,
            synced_at=datetime(2026, 11, 27, 19, 0, tzinfo=UTC),
            source_cluster_id="src-id",
            target_cluster_id="dst-id",
            source_bootstrap="src:9092",
            target_bootstrap="dst:9092",
            dry_run=False,
            verdict="different",
            actions_checked=42,
            differences=differences,
            unreadable=(0, 0),
        )
    )


def test_the_section_counts_names_and_calls_out_what_a_reader_signs(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    _record(ledger, differences=("User:intern WRITE on TOPIC orders from 203.0.113.7: allowed on the source",))
    s = security_section(ledger, "access-1")
    assert (
        s is not None
        and s["verdict"] == "different"
        and s["source"] == {"cluster_id": "src-id", "bootstrap": "src:9092"}
    )
    counts = {(c["resource_type"], c["pattern_type"]): c for c in s["counts"]}
    assert counts[(ResourceType.TOPIC, PatternType.LITERAL)] == {
        "resource_type": ResourceType.TOPIC,
        "pattern_type": PatternType.LITERAL,
        "added": 1,
        "present": 0,
        "removed": 1,
        "refused": 0,
        "conflict": 1,
    }
    assert (
        counts[(ResourceType.TOPIC, PatternType.PREFIXED)]["added"] == 1
        and counts[(ResourceType.GROUP, PatternType.LITERAL)]["present"] == 1
    )
    assert {b["binding"]: b["action"] for b in s["bindings"]}[PLANTED.describe()] == AccessAction.CONFLICT
    assert s["needs_password"] == ["erin"] and s["quota_differences"] == 1
    assert s["probes"] == {
        "total": 2,
        "matched": 1,
        "mismatches": ["carol describe pay.x: source allowed, target denied (TOPIC_AUTHORIZATION_FAILED)"],
    }
    assert s["decision_check"]["actions_checked"] == 42 and len(s["decision_check"]["differences"]) == 1
    assert security_section(ledger, "no-such-sync") is None


def test_the_report_is_written_its_digest_recorded_and_it_renders_every_part(ledger_url: str, tmp_path: Path) -> None:
    ledger = Ledger.open(ledger_url)
    _record(ledger)
    files = generate_access_report(ledger, "access-1", tmp_path)
    check = ledger.access_check("access-1")
    assert check is not None and check.report_sha256 == files.sha256
    assert verify_report(files.json, check.report_sha256)[0]
    again = access_report(security_section(ledger, "access-1") or {})
    assert sha256(report_json(again)) == files.sha256  # built again from the ledger: the same bytes
    report = json.loads(files.json.read_text())
    assert report["verdict"] == "NOT PROVEN" and report["kind"] == "access_sync"
    markdown, html = render_access_markdown(report), render_access_html(report)
    for text in (markdown, html):
        assert "NOT PROVEN" in text and "erin" in text and "connection_creation_rate" in text
        assert "1 of 2 answered alike" in text and "42 actions" in text
    assert "| TOPIC | LITERAL | 1 | 0 | 1 | 0 | 1 |" in markdown
    assert markdown.index("| erin |") < markdown.index("| carol |")  # who needs a password comes first
    total, page = ledger.access_checks()
    assert total == 1 and page[0].sync_id == "access-1" and page[0].report_sha256 == files.sha256
