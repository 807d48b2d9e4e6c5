"""reports/access_lines.py: the live probes' lines the CLI prints and the DAG logs: a total, each mismatch named,
the rest counted; nothing when nothing was probed."""

from __future__ import annotations

from kafka_migration.model.probes import Probe, ProbeKind, ProbeOutcome, ProbeReport
from kafka_migration.reports.access_lines import probe_lines


def test_a_total_then_each_mismatch_then_how_many_more() -> None:
    probe = Probe("alice", ProbeKind.PRODUCE, "orders")
    same = ProbeOutcome(probe, "alice", "dc1.orders", "allowed", "allowed")
    planted = [
        ProbeOutcome(Probe("bob", ProbeKind.CONSUME, f"t{n}"), "bob", f"x.t{n}", "allowed", "no") for n in range(3)
    ]
    assert probe_lines(ProbeReport()) == []
    assert probe_lines(ProbeReport((same,))) == ["  live probes: 1 probe of 1 user, 1 answered alike by both clusters"]
    assert probe_lines(ProbeReport((same, *planted)), most=2) == [
        "  live probes: 4 probes of 2 users, 1 answered alike by both clusters",
        "  probe DIFFERENT: bob: consume topic t0 (x.t0 on the target): source allowed, target no (DIFFERENT)",
        "  probe DIFFERENT: bob: consume topic t1 (x.t1 on the target): source allowed, target no (DIFFERENT)",
        "  ... and 1 more (kafka-migrate access show)",
    ]
