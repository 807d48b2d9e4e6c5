"""access/quotas/sync.py: a sync's quotas are proven by describing both clusters again after writing, so a quota
the target did not keep is a difference, whatever the plan meant to write."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kafka_migration.access.part import SyncRecord
from kafka_migration.access.quotas.rules import QuotaDifference, plan_quotas
from kafka_migration.access.quotas.sync import QuotaSync
from kafka_migration.model.access import Quota, QuotaEntity

ALICE = QuotaEntity.of(user="alice")
RATE = Quota(ALICE, "producer_byte_rate", 1024.0)
SHARE = Quota(QuotaEntity.of(client_id="app"), "request_percentage", 12.5)


class _Cluster:
    """A cluster's quotas as its brokers describe them; ``keeps``: what a write leaves there (all when None)."""

    def __init__(self, held: Iterable[Quota], keeps: set[Quota] | None = None) -> None:
        self.held = set(held)
        self.keeps = keeps
        self.described = 0

    def quotas(self) -> tuple[Quota, ...]:
        self.described += 1
        return tuple(sorted(self.held))

    def alter(self, upsert: Sequence[Quota] = (), remove: Iterable[Quota] = ()) -> None:
        self.held = (self.held - set(remove)) | {q for q in upsert if self.keeps is None or q in self.keeps}

    def close(self) -> None:
        pass


def _sync(source: _Cluster, target: _Cluster, dry_run: bool = False) -> QuotaSync:
    read = (source.quotas(), target.quotas())
    sync = SyncRecord("sync-1", None, "src-id", "tgt-id", dry_run)
    return QuotaSync((source, target), read, plan_quotas(*read), None, set(), sync)  # type: ignore[arg-type]


def test_a_quota_the_target_did_not_keep_is_a_difference_not_proven() -> None:
    source, target = _Cluster([RATE, SHARE]), _Cluster([], keeps={SHARE})  # the target drops RATE
    sync = _sync(source, target)
    assert sync.plan.add == (RATE, SHARE)
    target.alter(sync.plan.add)  # what apply writes (without waiting for it to show)
    outcome = sync.prove()
    assert outcome.differences == (QuotaDifference(ALICE, "producer_byte_rate", 1024.0, None),)
    assert not outcome.proven and (outcome.source_count, outcome.target_count) == (2, 1)
    assert (source.described, target.described) == (2, 2)  # read for the plan, and again for the proof


def test_a_target_that_kept_everything_is_proven_and_a_dry_run_projects_the_plan() -> None:
    source, target = _Cluster([RATE, SHARE]), _Cluster([])
    sync = _sync(source, target)
    target.alter(sync.plan.add)
    assert sync.prove().proven
    untouched = _Cluster([])
    assert _sync(_Cluster([RATE]), untouched, dry_run=True).prove().proven  # the plan projected on what was read
    assert untouched.held == set() and untouched.described == 1  # a dry run writes nothing and reads once
