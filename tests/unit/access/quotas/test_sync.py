"""access/quotas/sync.py, an access sync's client quotas step by step, on in-memory clusters: read and plan (a
refusal before anything is written), apply and wait until the target shows it, prove (a dry run: the plan
projected), and the rows the ledger records (the planning rules themselves: test_rules.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from sqlalchemy import select

from kafka_migration.access.part import SyncRecord
from kafka_migration.access.quotas import sync as quota_sync
from kafka_migration.access.quotas.rules import QuotaChange, QuotaDifference, QuotaPlan
from kafka_migration.access.quotas.sync import QuotaOutcome, QuotaSync
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.schema import access_quotas
from kafka_migration.model.access import AccessAction, Quota, QuotaEntity


def quota(user: str, value: float, key: str = "producer_byte_rate") -> Quota:
    return Quota(QuotaEntity.of(user=user), key, value)


class Cluster:
    """A cluster's quotas in memory, as QuotaCluster reads and alters them; ``lag`` reads before an alteration
    shows (KRaft applies it through the metadata log)."""

    def __init__(self, held: Iterable[Quota] = (), lag: int = 0) -> None:
        self.held = {q.slot: q for q in held}
        self.pending: dict[Any, Quota | None] = {}
        self.lag = lag
        self.reads = 0
        self.closed = False
        self.altered: list[tuple[list[Quota], list[Quota]]] = []

    def quotas(self) -> tuple[Quota, ...]:
        self.reads += 1
        if self.pending and self.reads > self.lag:
            for slot, q in self.pending.items():
                if q is None:
                    self.held.pop(slot, None)
                else:
                    self.held[slot] = q
            self.pending = {}
        return tuple(sorted(self.held.values()))

    def alter(self, upsert: list[Quota], remove: list[Quota]) -> None:
        self.altered.append((list(upsert), list(remove)))
        self.pending = {**{q.slot: q for q in upsert}, **{q.slot: None for q in remove}}
        self.reads = 0

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Earlier:
    """The ledger as a quota sync reads it: the quotas this tool set on the target before."""

    def __init__(self, quotas: set[Quota]) -> None:
        self.quotas = quotas

    def access_quotas_set(self, source_cluster_id: str, target_cluster_id: str) -> set[Quota]:
        assert (source_cluster_id, target_cluster_id) == ("src-id", "tgt-id")
        return set(self.quotas)


def plan(
    clusters: dict[str, Cluster],
    set_before: set[Quota],
    dry_run: bool = False,
    **options: Any,
) -> QuotaSync:
    sync = SyncRecord("sync-1", "run-1", "src-id", "tgt-id", dry_run)
    pair = (clusters["source"], clusters["target"])
    return QuotaSync.read_and_plan(pair, sync, Earlier(set_before), **options)  # type: ignore[arg-type]


@pytest.fixture
def clusters(monkeypatch: pytest.MonkeyPatch) -> dict[str, Cluster]:
    """The source holds alice 100, bob 200, carol 300; the target bob 250 (set by this tool earlier), carol 999
    (not this tool's), dave 5 (this tool's, the source no longer has it) and erin 7 (not this tool's)."""
    made = {
        "source": Cluster([quota("alice", 100), quota("bob", 200), quota("carol", 300)]),
        "target": Cluster([quota("bob", 250), quota("carol", 999), quota("dave", 5), quota("erin", 7)], lag=2),
    }
    monkeypatch.setattr(quota_sync.time, "sleep", SLEPT.append)
    SLEPT.clear()
    return made


SLEPT: list[float] = []  # the waits between reads of the target, of the test running


SET_BEFORE = {quota("bob", 250), quota("dave", 5)}


def test_a_sync_plans_applies_waits_until_the_target_shows_it_and_proves(clusters: dict[str, Cluster]) -> None:
    sync = plan(clusters, SET_BEFORE, remove_stale=True)
    assert sync.plan == QuotaPlan(
        add=(quota("alice", 100),),
        present=(),
        update=(QuotaChange(quota("bob", 200), 250.0),),
        different=(QuotaChange(quota("carol", 300), 999.0),),
        target_only=(quota("erin", 7),),
        remove=(quota("dave", 5),),
    )
    sync.apply()
    target = clusters["target"]
    assert target.altered == [([quota("alice", 100), quota("bob", 200)], [quota("dave", 5)])]
    assert target.reads == 3  # read until it showed the change (two reads behind)
    assert SLEPT == [0.2, 0.2]
    outcome = sync.prove()
    assert outcome == QuotaOutcome(
        sync.plan,
        3,
        4,  # alice, bob 200, carol 999 and erin: what the clusters hold now, described again
        (
            QuotaDifference(QuotaEntity.of(user="carol"), "producer_byte_rate", 300.0, 999.0),
            QuotaDifference(QuotaEntity.of(user="erin"), "producer_byte_rate", None, 7.0),
        ),
    )
    assert not outcome.proven


def test_stale_quotas_of_this_tool_stay_unless_asked(clusters: dict[str, Cluster]) -> None:
    assert plan(clusters, SET_BEFORE).plan.remove == ()


def test_a_sync_with_nothing_to_change_alters_nothing(clusters: dict[str, Cluster]) -> None:
    clusters["target"].held = dict(clusters["source"].held)
    sync = plan(clusters, set())
    sync.apply()
    assert clusters["target"].altered == [] and clusters["target"].reads == 1
    assert sync.prove() == QuotaOutcome(sync.plan, 3, 3, ())
    assert QuotaOutcome().proven and QuotaOutcome().plan == QuotaPlan((), (), (), (), (), ())


def test_a_target_that_never_shows_the_change_is_waited_for_a_bounded_time(
    clusters: dict[str, Cluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    clusters["target"].lag = 10**9
    clock = iter(range(100))
    monkeypatch.setattr(quota_sync.time, "monotonic", lambda: float(next(clock)))
    plan(clusters, SET_BEFORE).apply()
    assert clusters["target"].reads == quota_sync.SETTLE_SECONDS - 1  # one read a second on this clock


def test_a_dry_run_proves_the_plan_projected_on_the_target_as_read(clusters: dict[str, Cluster]) -> None:
    sync = plan(clusters, SET_BEFORE, dry_run=True, remove_stale=True)
    outcome = sync.prove()
    assert clusters["target"].altered == [] and clusters["target"].reads == 1  # read once, to plan
    assert (outcome.source_count, outcome.target_count) == (3, 4)  # alice, bob 200, carol 999, erin
    assert [d.entity.name("user") for d in outcome.differences] == ["carol", "erin"]


def test_a_plan_that_refuses_writes_nothing(clusters: dict[str, Cluster]) -> None:
    """Two source users mapped onto one target user with other values: refused while planning (the sync then closes
    the clients: test_sync.py)."""
    with pytest.raises(ConfigurationError, match="carries quotas of two source users onto one target user"):
        plan(clusters, set(), principals={"User:alice": "User:x", "User:bob": "User:x"})
    assert clusters["target"].altered == []


def test_the_principal_map_carries_the_source_users(clusters: dict[str, Cluster]) -> None:
    clusters["source"].held = {quota("alice", 100).slot: quota("alice", 100)}
    clusters["target"].held = {}
    sync = plan(clusters, set(), principals={"User:alice": "User:alice2"})
    assert sync.plan.add == (quota("alice2", 100),)
    sync.apply()
    assert sync.prove().proven  # alice on the source is alice2 on the target


@pytest.mark.parametrize("dry_run", [False, True])
def test_every_quota_looked_at_is_recorded_with_what_was_done_and_why(
    clusters: dict[str, Cluster], tmp_path: Any, dry_run: bool
) -> None:
    sync = plan(clusters, {quota("bob", 250), quota("erin", 7)}, dry_run=dry_run, remove_stale=False)
    clusters["target"].held[quota("frank", 1).slot] = quota("frank", 1)  # after planning: not looked at
    added, updated = (
        (AccessAction.WOULD_ADD, AccessAction.WOULD_UPDATE) if dry_run else (AccessAction.ADDED, AccessAction.UPDATED)
    )
    assert sync.ledger_rows() == [
        (quota("alice", 100), None, added, None),
        (quota("bob", 200), 250.0, updated, "set by this tool earlier; the source's value changed"),
        (
            quota("carol", 300),
            999.0,
            AccessAction.DIFFERENT,
            "the target holds another value, not set by this tool: left alone",
        ),
        (quota("dave", 5), 5.0, AccessAction.TARGET_ONLY, "on the target only, not set by this tool: left alone"),
        (
            quota("erin", 7),
            7.0,
            AccessAction.TARGET_ONLY,
            "set by this tool earlier; the source no longer has it: --remove-stale removes it",
        ),
    ]
    ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    sync.record(ledger)
    with ledger.engine.connect() as c:
        found = {tuple(r) for r in c.execute(select(access_quotas.c.run_id, access_quotas.c.dry_run))}
    assert found == {("run-1", int(dry_run))}
    recorded = ledger.access_quota_rows("sync-1")
    assert [(r.quota, r.target_value, r.action, r.reason) for r in recorded] == sync.ledger_rows()
    assert {(r.source_cluster_id, r.target_cluster_id) for r in recorded} == {("src-id", "tgt-id")}
    assert ledger.access_quotas_set("src-id", "tgt-id") == (
        set() if dry_run else {quota("alice", 100), quota("bob", 200)}
    )


def test_what_a_sync_removes_and_keeps_is_recorded(clusters: dict[str, Cluster]) -> None:
    clusters["target"].held[quota("alice", 100).slot] = quota("alice", 100)
    sync = plan(clusters, SET_BEFORE, remove_stale=True)
    rows = {q.entity.name("user"): (action, reason) for q, _, action, reason in sync.ledger_rows()}
    assert rows["alice"] == (AccessAction.PRESENT, None)
    assert rows["dave"] == (AccessAction.REMOVED, "set by this tool; the source no longer has it")
    dry = plan(clusters, SET_BEFORE, dry_run=True, remove_stale=True)
    assert {q.entity.name("user"): action for q, _, action, _ in dry.ledger_rows()}["dave"] == AccessAction.WOULD_REMOVE
