"""The ledger's times are aware UTC as every reader gets them, on SQLite (which keeps no time zone) and on
PostgreSQL (which answers in the session's time zone): ``ledger.schema.UtcDateTime``. The readers (reports, the
CLI's JSON, the console) print them as they come, with no fix-up of their own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from sqlalchemy import DateTime

from kafka_migration.groups.rules import GroupSync, GroupSyncResult, PartitionSync
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.leases import Holder, LeaseKey
from kafka_migration.ledger.schema import UtcDateTime, metadata
from kafka_migration.model.access import AccessCheck
from tests.unit.ledger.test_ledger import outcomes, plan

CEST = timezone(timedelta(hours=2))


def _utc(value: object) -> bool:
    return isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() == timedelta(0)


def test_every_time_column_is_kept_as_utc() -> None:
    times = [(t.name, c.name, c.type) for t in metadata.tables.values() for c in t.columns]
    assert [(t, c) for t, c, kind in times if isinstance(kind, DateTime)] == []  # a bare DateTime would come back naive
    assert len([kind for _, _, kind in times if isinstance(kind, UtcDateTime)]) == 15  # started_at, synced_at...


def _check(synced_at: datetime) -> AccessCheck:
    return AccessCheck("sync-a", None, synced_at, "src", "dst", "s:1", "t:1", False, "proven", 1, (), (0, 0), None)


def test_every_reader_gets_aware_utc(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    p = plan("run-1", 0, 100, 0)
    ledger.start_run(p, trigger="cli")
    ledger.record_topic(p, p.topics[0], *outcomes(p, {0: True, 1: True}))
    ledger.finish_run("run-1", "verified", 200)
    part = PartitionSync("g", "orders", 0, 10, None, 10, "copy.orders", 10, None, "within", "run-1", "write", "synced")
    group = GroupSync("g", "EMPTY", False, "NONE", False, (part,))
    ledger.record_group_sync(GroupSyncResult("sync-1", "run-1", "src", "dst", False, False, (group,)))
    ledger.start_cutover(
        "c1",
        {
            "trigger": "cli",
            "params": {},
            "source_cluster_id": "src",
            "source_bootstrap": "s:1",
            "target_cluster_id": "dst",
            "target_bootstrap": "t:1",
        },
    )
    ledger.update_cutover("c1", finished=True, status="completed")
    key = LeaseKey("src", "orders", "dst", "copy.orders")
    ledger.leases.acquire(Holder("run-1", "cli", "test"), [key], ttl=600)

    run = ledger.run("run-1")
    assert run is not None and _utc(run.started_at) and _utc(run.ended_at)
    (listed,) = ledger.runs_page().rows
    assert _utc(listed.started_at) and _utc(listed.ended_at)
    assert all(_utc(row.synced_at) for row in ledger.group_sync_rows(run_id="run-1"))
    cutover = ledger.cutover("c1")
    assert cutover is not None and _utc(cutover["started_at"]) and _utc(cutover["ended_at"])
    (lease,) = ledger.leases.held_by("run-1")
    assert _utc(lease.acquired_at) and _utc(lease.renewed_at) and _utc(lease.expires_at)
    assert lease.expires_at - lease.acquired_at == timedelta(seconds=600)
    (pair,) = ledger.cluster_pairs()
    assert _utc(pair["last_started_at"])  # an aggregate (max) of a time column too


def test_a_time_given_in_another_zone_is_kept_as_the_same_instant(ledger_url: str) -> None:
    """SQLite stored the wall time of an aware datetime and dropped its zone: 12:05+02:00 came back as 12:05."""
    ledger = Ledger.open(ledger_url)
    ledger.record_access_check(_check(datetime(2026, 11, 27, 12, 5, tzinfo=CEST)))
    check = ledger.access_check("sync-a")
    assert check is not None and check.synced_at == datetime(2026, 11, 27, 10, 5, tzinfo=UTC)
    assert check.synced_at.isoformat() == "2026-11-27T10:05:00+00:00"


def test_a_postgresql_session_in_another_zone_still_reads_utc(ledger_url: str) -> None:
    """PostgreSQL answers a TIMESTAMP WITH TIME ZONE in the session's zone (+05:30 here); readers still get UTC.
    On SQLite the URL is used as it is."""
    if ledger_url.startswith("postgresql"):
        ledger_url += ("&" if "?" in ledger_url else "?") + "options=-c%20TimeZone%3DAsia/Kolkata"
    ledger = Ledger.open(ledger_url)
    ledger.record_access_check(_check(datetime(2026, 11, 27, 10, 5, tzinfo=UTC)))
    check = ledger.access_check("sync-a")
    assert check is not None and check.synced_at.isoformat() == "2026-11-27T10:05:00+00:00"
