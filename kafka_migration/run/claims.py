"""A run's claim on its target topics: one writer per target topic, through the ledger's leases.

The CLI's pipeline and the Airflow tasks both take the leases before planning reads checkpoints
(``lease_claim``), renew them while they write (``lease_keys``) and release them at the end.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kafka_migration.ledger import Ledger, LedgerError
from kafka_migration.ledger.leases import Holder, LeaseKey
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.run.planner import Claim

log = logging.getLogger(__name__)


def lease_keys(plan: MigrationPlan) -> list[LeaseKey]:
    """The target topics a plan writes, as lease keys."""
    return [
        LeaseKey(plan.source.cluster_id, t.source_topic, plan.target.cluster_id, t.target_topic) for t in plan.topics
    ]


def lease_claim(ledger: Ledger, holder: Holder, ttl: float) -> Claim:
    """The planner's claim: take the leases of every target topic, or raise naming who holds them."""

    def claim(source_cluster_id: str, target_cluster_id: str, pairs: Sequence[tuple[str, str]]) -> list[str]:
        keys = [LeaseKey(source_cluster_id, s, target_cluster_id, t) for s, t in pairs]
        return [takeover.message() for takeover in ledger.leases.acquire(holder, keys, ttl)]

    return claim


def release_leases(ledger: Ledger, run_id: str) -> None:
    """Release at the end, also after failures; an unreachable ledger lets them expire instead."""
    try:
        ledger.leases.release(run_id)
    except LedgerError as exc:
        log.warning("Could not release the leases of run %s (%s); they expire after their time to live.", run_id, exc)
