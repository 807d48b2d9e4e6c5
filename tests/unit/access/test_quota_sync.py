"""access/quota_sync.py, an access sync's client quotas step by step, on in-memory clusters: read and plan (the
clients closed when planning refuses), apply and wait until the target shows it, prove (a dry run: the plan
projected), and the rows the ledger records (the planning rules themselves: test_quotas.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from sqlalchemy import select

from kafka_migration.access import quota_sync
from kafka_migration.access.quota_sync import QuotaOutcome, QuotaSync
from kafka_migration.access.quotas import QuotaChange, QuotaDifference, QuotaPlan
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.schema import access_quotas
from kafka_migration.model.access import AccessAction, Quota, QuotaEntity
from kafka_migration.model.config import ClusterConfig

SOURCE = ClusterConfig("source", {"bootstrap.servers": "src:9092"})
TARGET = ClusterConfig("target", {"bootstrap.servers": "tgt:9092"})


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


@pytest.fixture
def clusters(monkeypatch: pytest.MonkeyPatch) -> dict[str, Cluster]:
    """The source holds alice 100, bob 200, carol 300; the target bob 250 (set by this tool earlier), carol 999
    (not this tool's), dave 5 (this tool's, the source no longer has it) and erin 7 (not this tool's)."""
    made = {
        "source": Cluster([quota("alice", 100), quota("bob", 200), quota("carol", 300)]),
        "target": Cluster([quota("bob", 250), quota("carol", 999), quota("dave", 5), quota("erin", 7)], lag=2),
    }
    monkeypatch.setattr(quota_sync, "QuotaCluster", lambda config: made[config.role])
    monkeypatch.setattr(quota_sync.time, "sleep", SLEPT.append)
    SLEPT.clear()
    return made


SLEPT: list[float] = []  # the waits between reads of the target, of the test running


SET_BEFORE = {quota("bob", 250), quota("dave", 5)}


def test_a_sync_plans_applies_waits_until_the_target_shows_it_and_proves(clusters: dict[str, Cluster]) -> None:
    sync = QuotaSync.read_and_plan(SOURCE, TARGET, SET_BEFORE, remove_stale=True)
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
    outcome = sync.prove(dry_run=False)
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
    assert clusters["source"].closed and target.closed


def test_stale_quotas_of_this_tool_stay_unless_asked(clusters: dict[str, Cluster]) -> None:
    assert QuotaSync.read_and_plan(SOURCE, TARGET, SET_BEFORE).plan.remove == ()


def test_a_sync_with_nothing_to_change_alters_nothing(clusters: dict[str, Cluster]) -> None:
    clusters["target"].held = dict(clusters["source"].held)
    sync = QuotaSync.read_and_plan(SOURCE, TARGET, set())
    sync.apply()
    assert clusters["target"].altered == [] and clusters["target"].reads == 1
    assert sync.prove(dry_run=False) == QuotaOutcome(sync.plan, 3, 3, ())
    assert QuotaOutcome().proven and QuotaOutcome().plan == QuotaPlan((), (), (), (), (), ())


def test_a_target_that_never_shows_the_change_is_waited_for_a_bounded_time(
    clusters: dict[str, Cluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    clusters["target"].lag = 10**9
    clock = iter(range(100))
    monkeypatch.setattr(quota_sync.time, "monotonic", lambda: float(next(clock)))
    QuotaSync.read_and_plan(SOURCE, TARGET, SET_BEFORE).apply()
    assert clusters["target"].reads == quota_sync.SETTLE_SECONDS - 1  # one read a second on this clock


def test_a_dry_run_proves_the_plan_projected_on_the_target_as_read(clusters: dict[str, Cluster]) -> None:
    sync = QuotaSync.read_and_plan(SOURCE, TARGET, SET_BEFORE, remove_stale=True)
    outcome = sync.prove(dry_run=True)
    assert clusters["target"].altered == [] and clusters["target"].reads == 1  # read once, to plan
    assert (outcome.source_count, outcome.target_count) == (3, 4)  # alice, bob 200, carol 999, erin
    assert [d.entity.name("user") for d in outcome.differences] == ["carol", "erin"]


def test_the_clients_are_closed_when_planning_refuses(
    clusters: dict[str, Cluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: Any) -> QuotaPlan:
        raise ConfigurationError("the principal map sends two users to one")

    monkeypatch.setattr(quota_sync, "plan_quotas", refuse)
    with pytest.raises(ConfigurationError, match="two users to one"):
        QuotaSync.read_and_plan(SOURCE, TARGET, set())
    assert clusters["source"].closed and clusters["target"].closed


def test_the_principal_map_carries_the_source_users(clusters: dict[str, Cluster]) -> None:
    clusters["source"].held = {quota("alice", 100).slot: quota("alice", 100)}
    clusters["target"].held = {}
    sync = QuotaSync.read_and_plan(SOURCE, TARGET, set(), principals={"User:alice": "User:alice2"})
    assert sync.plan.add == (quota("alice2", 100),)
    sync.apply()
    assert sync.prove(dry_run=False).proven  # alice on the source is alice2 on the target


@pytest.mark.parametrize("dry_run", [False, True])
def test_every_quota_looked_at_is_recorded_with_what_was_done_and_why(
    clusters: dict[str, Cluster], tmp_path: Any, dry_run: bool
) -> None:
    sync = QuotaSync.read_and_plan(SOURCE, TARGET, {quota("bob", 250), quota("erin", 7)}, remove_stale=False)
    clusters["target"].held[quota("frank", 1).slot] = quota("frank", 1)  # after planning: not looked at
    added, updated = (
        (AccessAction.WOULD_ADD, AccessAction.WOULD_UPDATE) if dry_run else (AccessAction.ADDED, AccessAction.UPDATED)
    )
    assert sync.ledger_rows(dry_run) == [
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
    sync.record(ledger, "sync-1", "run-1", ("src-id", "tgt-id"), dry_run)
    with ledger.engine.connect() as c:
        found = {tuple(r) for r in c.execute(select(access_quotas.c.run_id, access_quotas.c.dry_run))}
    assert found == {("run-1", int(dry_run))}
    recorded = ledger.access_quota_rows("sync-1")
    assert [(r.quota, r.target_value, r.action, r.reason) for r in recorded] == sync.ledger_rows(dry_run)
    assert {(r.source_cluster_id, r.target_cluster_id) for r in recorded} == {("src-id", "tgt-id")}
    assert ledger.access_quotas_set("src-id", "tgt-id") == (
        set() if dry_run else {quota("alice", 100), quota("bob", 200)}
    )


def test_what_a_sync_removes_and_keeps_is_recorded(clusters: dict[str, Cluster]) -> None:
    clusters["target"].held[quota("alice", 100).slot] = quota("alice", 100)
    sync = QuotaSync.read_and_plan(SOURCE, TARGET, SET_BEFORE, remove_stale=True)
    rows = {q.entity.name("user"): (action, reason) for q, _, action, reason in sync.ledger_rows(dry_run=False)}
    assert rows["alice"] == (AccessAction.PRESENT, None)
    assert rows["dave"] == (AccessAction.REMOVED, "set by this tool; the source no longer has it")
    assert {q.entity.name("user"): action for q, _, action, _ in sync.ledger_rows(dry_run=True)}[
        "dave"
    ] == AccessAction.WOULD_REMOVE
