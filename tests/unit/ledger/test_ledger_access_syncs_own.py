"""The ledger's side of an access sync's ACL bindings on both backends: the bindings this tool created on a target,
the only ones a later ``--remove-stale`` sync may delete."""

from __future__ import annotations

from kafka_migration.ledger import Ledger
from kafka_migration.model.access import (
    ADDED,
    ALLOW,
    CONFLICT,
    DENY,
    LITERAL,
    PRESENT,
    REMOVED,
    TOPIC,
    WOULD_ADD,
    AclBinding,
)

ADDED_BY_US = AclBinding(TOPIC, "orders", LITERAL, "User:app", "*", "READ", ALLOW)
FOUND_THERE = AclBinding(TOPIC, "orders", LITERAL, "User:app", "*", "WRITE", ALLOW)
THEIR_DENY = AclBinding(TOPIC, "orders", LITERAL, "User:intern", "*", "WRITE", DENY)
DRY = AclBinding(TOPIC, "audit", LITERAL, "User:app", "*", "READ", ALLOW)


def test_only_bindings_the_tool_added_are_its_own_not_those_it_found_present(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    rows = [(ADDED_BY_US, ADDED, None), (FOUND_THERE, PRESENT, None), (THEIR_DENY, CONFLICT, "on the target only")]
    ledger.record_access_sync("s1", None, "src", "tgt", rows)
    ledger.record_access_sync("dry", None, "src", "tgt", [(DRY, WOULD_ADD, None)], dry_run=True)
    assert ledger.access_bindings_created("src", "tgt") == {ADDED_BY_US}
    assert ledger.access_bindings_created("src", "elsewhere") == set()

    # A later sync finds its own binding present: still its own, until a sync removes it.
    ledger.record_access_sync("s2", None, "src", "tgt", [(ADDED_BY_US, PRESENT, None), (FOUND_THERE, PRESENT, None)])
    assert ledger.access_bindings_created("src", "tgt") == {ADDED_BY_US}
    ledger.record_access_sync("s3", None, "src", "tgt", [(ADDED_BY_US, REMOVED, "the source no longer has it")])
    assert ledger.access_bindings_created("src", "tgt") == set()
