"""model/probes.py: an outcome matches only when both clusters answered alike and said something of the
authorizer, a report is proven only when every probe matched, and how each reads."""

from __future__ import annotations

from kafka_migration.model.probes import Probe, ProbeKind, ProbeOutcome, ProbeReport


def test_a_report_is_proven_only_when_both_clusters_answered_every_probe_alike() -> None:
    probe = Probe("alice", ProbeKind.PRODUCE, "orders")
    same = ProbeOutcome(probe, "alice", "dc1.orders", "allowed", "allowed")
    planted = ProbeOutcome(probe, "alice", "dc1.orders", "allowed", "denied (TOPIC_AUTHORIZATION_FAILED)")
    silent = ProbeOutcome(probe, "alice", "dc1.orders", "inconclusive: x", "inconclusive: x")
    assert ProbeReport((same,)).proven and ProbeReport((same,)).mismatches == []
    assert not ProbeReport((same, planted)).proven and not ProbeReport((silent,)).proven  # no answer proves nothing
    assert ProbeReport((same, planted, silent)).mismatches == [planted, silent]
    assert planted.describe() == (
        "alice: produce to topic orders (dc1.orders on the target): source allowed, target denied "
        "(TOPIC_AUTHORIZATION_FAILED) (DIFFERENT)"
    )
    assert same.describe().endswith("source allowed, target allowed (same)")


def test_each_kind_reads_as_what_the_user_tried() -> None:
    assert [Probe("bob", kind, "billing", "orders").describe() for kind in ProbeKind] == [
        "bob: produce to topic billing",
        "bob: consume topic billing",
        "bob: commit an offset of topic orders for group billing",
        "bob: describe topic billing",
        "bob: start a transaction with transactional id billing",
    ]
    assert Probe("bob", "consume", "orders").kind is ProbeKind.CONSUME  # as the ledger reads it back
