"""harness/access_outputs.py without brokers: what it reads of a ledger (access show, the reports built again, the
console's API) comes out the same when read twice, a planted change in the ledger is found, and what differs
between two runs by nature (ids, times, digests, cluster ids) is all it sets aside. The run on two pairs of
brokers is ``python -m harness.access_outputs BEFORE AFTER`` (docs/development.md)."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from harness.access_outputs import differences, dump, ledger_rows, normalized
from kafka_migration.ledger import Ledger
from kafka_migration.model.access import AccessCheck, AclBinding
from tests.conftest import require_module

require_module("airflow")

WRITE = AclBinding("TOPIC", "orders", "LITERAL", "User:app", "*", "WRITE", "ALLOW")


def _ledger(state: Path) -> Path:
    path = state / "ledger.db"
    ledger = Ledger.open(f"sqlite:///{path}")
    ledger.record_access_sync("access-cli-20261127T100000Z-1a2b3c", None, "src-id", "dst-id", [(WRITE, "added", None)])
    ledger.record_access_check(
        AccessCheck(
            sync_id="access-cli-20261127T100000Z-1a2b3c",
            run_id=None,
            synced_at=datetime(2026, 11, 27, 10, 0, tzinfo=UTC),
            source_cluster_id="src-id",
            target_cluster_id="dst-id",
            source_bootstrap="src:9093",
            target_bootstrap="dst:9093",
            dry_run=False,
            verdict="proven",
            actions_checked=8,
            differences=(),
            unreadable=(0, 0),
        )
    )
    return path


def test_a_ledger_read_twice_is_alike_and_a_planted_change_is_found(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    first = dump(path, tmp_path / "reports")
    assert first["sync_ids"] == ["access-cli-20261127T100000Z-1a2b3c"]
    shown = first["show"]["access-cli-20261127T100000Z-1a2b3c text"]
    assert shown["exit"] == 0 and "added        ALLOW User:app WRITE on TOPIC orders" in shown["stdout"]
    assert first["api"]["/api/access-syncs/no-such-sync"]["status"] == 404
    assert '"report_version":1' in first["reports"]["access-cli-20261127T100000Z-1a2b3c"]["json"].replace(" ", "")
    assert differences(first, dump(path, tmp_path / "reports")) == []
    assert ledger_rows(path)["km_access_checks"][0]["report_sha256"] is None  # the dump built its reports elsewhere

    with sqlite3.connect(path) as db:
        db.execute("UPDATE km_access_syncs SET action = 'present'")
    found = differences(first, dump(path, tmp_path / "reports"))
    assert any(line.startswith("/show/access-cli-20261127T100000Z-1a2b3c json/stdout:") for line in found), found
    assert any("/api/access-syncs?limit=100/body" in line for line in found), found


def test_only_what_differs_by_nature_is_set_aside() -> None:
    run = {
        "out": "Access sync access-cli-20261129T121447Z-c857ed: abcID -> xyzID at 2026-11-29T12:14:47+00:00",
        "digest": "ab" * 32,
        "again": "access-cli-20261129T121501Z-0f0f0f, then access-cli-20261129T121447Z-c857ed",
    }
    names = {"abcID": "<source-cluster-id>", "xyzID": "<target-cluster-id>"}
    assert normalized(run, names) == {
        "out": "Access sync <sync-1>: <source-cluster-id> -> <target-cluster-id> at <time>",
        "digest": "<sha256>",
        "again": "<sync-2>, then <sync-1>",
    }
    other = {**run, "out": run["out"].replace("abcID", "defID").replace("c857ed", "999999")}
    other["again"] = other["again"].replace("c857ed", "999999")
    assert differences(normalized(run, names), normalized(other, {**names, "defID": "<source-cluster-id>"})) == []
    changed = {**other, "out": other["out"].replace("Access sync", "Access synced")}
    assert differences(normalized(run, names), normalized(changed, {**names, "defID": "<source-cluster-id>"}))
