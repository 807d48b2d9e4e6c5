"""ledger/access_syncs.py: an access sync's live probes recorded with the sync and read back as the outcomes they
were, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import select

from kafka_migration.ledger import Ledger
from kafka_migration.ledger.schema import access_probes
from kafka_migration.model.probes import Probe, ProbeKind, ProbeOutcome, ProbeReport


def test_probe_outcomes_are_recorded_with_the_sync_and_read_back(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    report = ProbeReport(
        (
            ProbeOutcome(
                Probe("alice", ProbeKind.COMMIT, "billing", "orders"), "alice2", "billing", "allowed", "allowed"
            ),
            ProbeOutcome(Probe("alice", ProbeKind.PRODUCE, "orders"), "alice2", "dc1.orders", "allowed", "denied (X)"),
        )
    )
    ledger.record_access_probes("access-1", report.outcomes)
    ledger.record_access_probes("access-1", report.outcomes)  # a sync recorded again replaces its rows
    assert ledger.access_probe_rows("access-1") == list(report.outcomes)
    with ledger.engine.connect() as c:  # the row as the console's tallies count it
        rows = c.execute(select(access_probes.c.probe, access_probes.c.matched).order_by(access_probes.c.id)).all()
    assert [tuple(r) for r in rows] == [("commit", 1), ("produce", 0)]
    assert ledger.access_probe_rows("access-2") == []
