"""The console's access syncs on their own: FastAPI's TestClient on the plugin's app factory, a real ledger (SQLite
file) holding syncs as ``access sync`` records them, each sync read through the report's security section; the
response models check every field; the report files are served from the reports directory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event, text

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
from tests.conftest import require_module

require_module("airflow")
from fastapi.testclient import TestClient  # noqa: E402  (after the module check)

from kafka_migration.airflow.console.clusters import Clusters  # noqa: E402
from kafka_migration.airflow.console.models import AccessSyncDetailView, AccessSyncView  # noqa: E402
from kafka_migration.airflow.webapp import create_app  # noqa: E402

WRITE = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW)
READ = AclBinding(ResourceType.TOPIC, "pay.", PatternType.PREFIXED, "User:reader", "*", "READ", PermissionType.ALLOW)
GROUP_READ = AclBinding(
    ResourceType.GROUP, "billing", PatternType.LITERAL, "User:reader", "*", "READ", PermissionType.ALLOW
)
PLANTED = AclBinding(
    ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:intern", "*", "WRITE", PermissionType.DENY
)


def _check(sync_id: str, minute: int, verdict: str = "proven", dry_run: bool = False, **kw: object) -> AccessCheck:
    return AccessCheck(
        sync_id=sync_id,
        run_id=None,
        synced_at=datetime(2026, 11, 27, 10, minute, tzinfo=UTC),
        source_cluster_id="src-id",
        target_cluster_id="dst-id",
        source_bootstrap="src-1:9093,src-2:9093",
        target_bootstrap="dst-1:9093",
        dry_run=dry_run,
        verdict=verdict,
        actions_checked=kw.get("actions_checked", 12),  # type: ignore[arg-type]
        differences=kw.get("differences", ()),  # type: ignore[arg-type]
        unreadable=(0, 0),
        report_sha256=kw.get("report_sha256"),  # type: ignore[arg-type]
    )


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    """Three syncs: a dry run, a sync that wrote (a user needs a password, a quota differs, a probe mismatched,
    a conflict), and a later one that found everything present."""
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    ledger.record_access_sync("dry", None, "src-id", "dst-id", [(WRITE, AccessAction.WOULD_ADD, None)], dry_run=True)
    ledger.record_access_check(_check("dry", 0, dry_run=True))

    conflict = "a DENY on the target that the source lacks"
    rows = [
        (WRITE, AccessAction.ADDED, None),
        (READ, AccessAction.ADDED, None),
        (GROUP_READ, AccessAction.PRESENT, None),
        (PLANTED, AccessAction.CONFLICT, conflict),
    ]
    ledger.record_access_sync("wrote", None, "src-id", "dst-id", rows)
    ledger.record_access_users(
        "wrote",
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
    quota = Quota(QuotaEntity.of(user="app"), "producer_byte_rate", 1024.0)
    ledger.record_access_quotas(
        "wrote", None, "src-id", "dst-id", [(quota, 2048.0, AccessAction.DIFFERENT, "not set by us")]
    )
    produce = Probe("carol", ProbeKind.PRODUCE, "orders")
    ledger.record_access_probes(
        "wrote",
        [
            ProbeOutcome(produce, "carol", "orders", "allowed", "denied (TOPIC_AUTHORIZATION_FAILED)"),
            ProbeOutcome(Probe("carol", ProbeKind.DESCRIBE, "orders"), "carol", "orders", "allowed", "allowed"),
        ],
    )
    difference = "User:intern WRITE on TOPIC orders: source ALLOWED, target DENIED"
    ledger.record_access_check(
        _check("wrote", 5, verdict="different", differences=(difference,), report_sha256="ab" * 32)
    )

    ledger.record_access_sync(
        "again", None, "src-id", "dst-id", [(WRITE, AccessAction.PRESENT, None), (READ, AccessAction.PRESENT, None)]
    )
    ledger.record_access_check(_check("again", 9))
    return ledger


@pytest.fixture
def client(ledger: Ledger, tmp_path: Path) -> TestClient:
    clusters = Clusters(connections=lambda: (), opener=lambda conn_id, role, timeout: None)
    app = create_app(
        lambda: f"sqlite:///{tmp_path / 'ledger.db'}",
        lambda: tmp_path / "reports",
        state_dir=lambda: tmp_path / "state",
        clusters=clusters,
        bundle_dir=tmp_path / "dist",
    )
    return TestClient(app)


def test_access_syncs_newest_first_with_their_verdicts_counts_and_what_needs_attention(client: TestClient) -> None:
    page = client.get("/api/access-syncs").json()
    assert page["total"] == 3 and [s["sync_id"] for s in page["syncs"]] == ["again", "wrote", "dry"]
    again, wrote, dry = page["syncs"]
    assert AccessSyncView.model_validate(wrote).model_dump() == wrote  # exactly the model's fields
    assert wrote["verdict"] == "different" and not wrote["dry_run"]
    assert wrote["source"] == {"cluster_id": "src-id", "bootstrap": "src-1:9093,src-2:9093"}
    assert wrote["target"] == {"cluster_id": "dst-id", "bootstrap": "dst-1:9093"}
    assert wrote["totals"] == {"added": 2, "present": 1, "removed": 0, "refused": 0, "conflict": 1}
    assert wrote["needs_password"] == ["erin"] and wrote["quota_differences"] == 1
    assert wrote["probe_mismatches"] == 1 and wrote["report_sha256"] == "ab" * 32
    assert wrote["synced_at"] == "2026-11-27T10:05:00+00:00"  # UTC said, also from SQLite
    assert again["totals"]["present"] == 2 and again["verdict"] == "proven" and again["needs_password"] == []
    assert dry["dry_run"] and dry["totals"]["added"] == 1  # a dry run's would_add counts as added

    second = client.get("/api/access-syncs", params={"limit": 1, "offset": 1}).json()
    assert second["total"] == 3 and [s["sync_id"] for s in second["syncs"]] == ["wrote"]
    assert client.get("/api/access-syncs", params={"limit": 0}).status_code == 422


def test_an_access_sync_is_its_security_section(client: TestClient, tmp_path: Path) -> None:
    sync = client.get("/api/access-syncs/wrote").json()
    assert AccessSyncDetailView.model_validate(sync).model_dump() == sync
    assert sync["verdict"] == "different"
    assert sync["decision_check"] == {
        "actions_checked": 12,
        "differences": ["User:intern WRITE on TOPIC orders: source ALLOWED, target DENIED"],
        "unreadable": [0, 0],
    }
    counts = {(c["resource_type"], c["pattern_type"]): c for c in sync["counts"]}
    assert (
        counts[(ResourceType.TOPIC, PatternType.PREFIXED)]["added"] == 1
        and counts[(ResourceType.TOPIC, PatternType.LITERAL)]["conflict"] == 1
    )
    assert counts[(ResourceType.GROUP, PatternType.LITERAL)]["present"] == 1
    actions = {b["binding"]: b["action"] for b in sync["bindings"]}
    assert actions[WRITE.describe()] == AccessAction.ADDED and actions[PLANTED.describe()] == AccessAction.CONFLICT
    assert sync["needs_password"] == ["erin"]
    assert [(u["user"], u["action"], u["login"]) for u in sync["users"]] == [
        ("carol", AccessAction.ADDED, "proven"),
        ("erin", AccessAction.NEEDS_PASSWORD, None),
    ]
    assert [(q["key"], q["value"], q["target_value"], q["action"]) for q in sync["quotas"]] == [
        ("producer_byte_rate", 1024.0, 2048.0, AccessAction.DIFFERENT)
    ]
    assert sync["probes"]["total"] == 2 and sync["probes"]["matched"] == 1
    assert len(sync["probes"]["mismatches"]) == 1 and "produce" in sync["probes"]["mismatches"][0]
    assert sync["report"] == {"directory": str(tmp_path / "reports" / "wrote"), "files": []}


def test_an_unknown_sync_is_a_clear_404(client: TestClient) -> None:
    missing = client.get("/api/access-syncs/nope")
    assert missing.status_code == 404
    assert "No access sync 'nope' in the ledger" in missing.json()["detail"]
    assert "kafka-migrate access sync" in missing.json()["detail"]


def test_the_report_files_are_listed_and_served(client: TestClient, tmp_path: Path) -> None:
    directory = tmp_path / "reports" / "wrote"
    directory.mkdir(parents=True)
    (directory / "report.html").write_text("<h1>NOT PROVEN</h1>", encoding="utf-8")
    (directory / "report.json").write_text('{"verdict": "NOT PROVEN"}', encoding="utf-8")
    assert client.get("/api/access-syncs/wrote").json()["report"]["files"] == ["html", "json"]
    html = client.get("/api/access-syncs/wrote/report.html")
    assert (
        html.status_code == 200 and "NOT PROVEN" in html.text and html.headers["content-type"].startswith("text/html")
    )
    assert client.get("/api/access-syncs/wrote/report.json").json() == {"verdict": "NOT PROVEN"}
    absent = client.get("/api/access-syncs/dry/report.html")
    assert absent.status_code == 404 and "a dry run writes none" in absent.json()["detail"]
    assert client.get("/api/access-syncs/wrote/report.exe").status_code == 404
    assert client.get("/api/access-syncs/../report.html").status_code == 404


def test_openapi_documents_the_access_routes(client: TestClient) -> None:
    paths = set(client.get("/openapi.json").json()["paths"])
    assert {
        "/api/access-syncs",
        "/api/access-syncs/{sync_id}",
        "/api/access-syncs/{sync_id}/report.{fmt}",
    } <= paths


def test_the_list_says_what_each_sync_s_section_says(client: TestClient) -> None:
    """The list counts in the ledger; each line says what the sync's page (its report's security section) says."""
    listed = client.get("/api/access-syncs").json()["syncs"]
    assert [s["sync_id"] for s in listed] == ["again", "wrote", "dry"]
    for line in listed:
        section = client.get(f"/api/access-syncs/{line['sync_id']}").json()
        totals = {name: sum(c[name] for c in section["counts"]) for name in line["totals"]}
        assert line["totals"] == totals
        assert line["needs_password"] == section["needs_password"]
        assert line["quota_differences"] == section["quota_differences"]
        assert line["probe_mismatches"] == len(section["probes"]["mismatches"])
        same = ("sync_id", "synced_at", "dry_run", "verdict", "source", "target", "report_sha256")
        assert {k: line[k] for k in same} == {k: section[k] for k in same}


@contextmanager
def statements() -> Iterator[list[str]]:
    """The SQL statements every engine runs meanwhile."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(" ".join(statement.split()))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def test_a_page_of_syncs_is_counted_in_sql_not_built_binding_by_binding(tmp_path: Path) -> None:
    """20 syncs of 10,000 bindings each: the page asks the ledger a few grouped queries, as many for 20 syncs as for
    one, and reads no binding row one by one (the list used to build each sync's whole section to count it)."""
    url = f"sqlite:///{tmp_path / 'big.db'}"
    ledger = Ledger.open(url)
    many = [
        (
            AclBinding(
                ResourceType.TOPIC, f"t{i}", PatternType.LITERAL, "User:app", "*", "WRITE", PermissionType.ALLOW
            ),
            AccessAction.ADDED,
            None,
        )
        for i in range(10_000)
    ]
    ledger.record_access_sync("sync-00", None, "src-id", "dst-id", many)
    columns = "run_id, synced_at, source_cluster_id, target_cluster_id, dry_run, resource_type, resource_name, "
    columns += "pattern_type, principal, host, operation, permission, action, reason"
    with ledger.engine.begin() as c:  # the same 10,000 bindings for 19 more syncs, copied inside the database
        for n in range(1, 20):
            c.execute(
                text(
                    f"INSERT INTO km_access_syncs (sync_id, {columns}) SELECT :sync_id, {columns} "
                    "FROM km_access_syncs WHERE sync_id = 'sync-00'"
                ),
                {"sync_id": f"sync-{n:02d}"},
            )
    for n in range(20):
        ledger.record_access_check(_check(f"sync-{n:02d}", n))
    ledger.record_access_users(
        "sync-07", [(ScramCredential("erin", "SCRAM-SHA-512", 4096), AccessAction.NEEDS_PASSWORD, None, "")]
    )
    clusters = Clusters(connections=lambda: (), opener=lambda conn_id, role, timeout: None)
    app = create_app(lambda: url, lambda: tmp_path / "reports", state_dir=lambda: tmp_path, clusters=clusters)
    client = TestClient(app)
    assert client.get("/api/access-syncs", params={"limit": 1}).status_code == 200  # the app's engine is opened

    with statements() as for_one:
        client.get("/api/access-syncs", params={"limit": 1})
    with statements() as for_twenty:
        page = client.get("/api/access-syncs").json()
    assert len(page["syncs"]) == 20
    assert all(s["totals"] == {**dict.fromkeys(s["totals"], 0), "added": 10_000} for s in page["syncs"])
    assert [s["needs_password"] for s in page["syncs"] if s["needs_password"]] == [["erin"]]
    assert len(for_twenty) == len(for_one) <= 8, for_twenty
    bindings = [q for q in for_twenty if "km_access_syncs" in q]
    assert bindings and all("GROUP BY" in q for q in bindings), bindings
