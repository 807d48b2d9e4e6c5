"""access/sync.py, an access sync end to end on in-memory clusters (bindings, SCRAM users, quotas) and a real SQLite
ledger: what it writes, proves, records and reports, a dry run that writes nothing, a refusal before anything is
written, every client closed however it ends (its inputs: test_inputs.py). Real brokers:
tests/integration/test_access*.py."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from kafka_migration.access import sync
from kafka_migration.access.acls.rules import selection
from kafka_migration.access.probes.live import ProbeSetup
from kafka_migration.access.quotas import sync as quota_sync
from kafka_migration.access.sync import (
    EXIT_DIFFERENT,
    EXIT_OK,
    AccessSyncOptions,
    AccessSyncResult,
    sync_access,
)
from kafka_migration.access.users.sync import _log_in
from kafka_migration.exceptions import ConfigurationError, MigrationError
from kafka_migration.kafka.access import ReadBindings
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.schema import access_quotas, access_syncs
from kafka_migration.model.access import (
    AccessAction,
    AccessVerdict,
    AclBinding,
    LoginOutcome,
    Password,
    PatternType,
    PermissionType,
    Quota,
    QuotaEntity,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.probes import Probe, ProbeOutcome, ProbeReport
from tests.unit.access.quotas.test_sync import Cluster as QuotaClusterInMemory

SOURCE = ClusterConfig("source", {"bootstrap.servers": "src:9092"})
TARGET = ClusterConfig("target", {"bootstrap.servers": "tgt:9092"})
WRITE = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.ALLOW)
READ = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", "*", "READ", PermissionType.ALLOW)
ALICE = ScramCredential("alice", "SCRAM-SHA-512", 8192)
BOB = ScramCredential("bob", "SCRAM-SHA-256", 4096)
RATE = Quota(QuotaEntity.of(user="alice"), "producer_byte_rate", 1024.0)


class Access:
    """One cluster as AccessCluster reads and writes it, in memory; ``calls`` records every write and login."""

    def __init__(
        self,
        cluster_id: str,
        bindings: Iterable[AclBinding] = (),
        users: Iterable[ScramCredential] = (),
        unreadable: int = 0,
        wrong_passwords: Iterable[str] = (),
    ) -> None:
        self.cluster_id = cluster_id
        self.held = set(bindings)
        self.users = set(users)
        self.unreadable = unreadable
        self.wrong = set(wrong_passwords)
        self.calls: list[tuple[Any, ...]] = []
        self.closed = False

    def describe(self) -> Any:
        return type("Info", (), {"cluster_id": self.cluster_id})()

    def bindings(self) -> ReadBindings:
        return ReadBindings(tuple(sorted(self.held)), self.unreadable)

    def scram_credentials(self) -> tuple[ScramCredential, ...]:
        return tuple(sorted(self.users))

    def topic_names(self) -> set[str]:
        return {"orders"}

    def create(self, bindings: Sequence[AclBinding]) -> None:
        self.calls.append(("create", tuple(bindings)))
        self.held |= set(bindings)

    def delete(self, bindings: Iterable[AclBinding]) -> int:
        gone = tuple(bindings)
        self.calls.append(("delete", gone))
        self.held -= set(gone)
        return len(gone)

    def upsert_scram(self, credentials: Sequence[ScramCredential], passwords: Mapping[str, Password]) -> None:
        self.calls.append(("upsert", tuple(credentials), tuple(sorted(passwords))))
        self.users |= set(credentials)

    def login(self, credential: ScramCredential, password: Password) -> tuple[str, str | None]:
        self.calls.append(("login", credential))
        if password.user != credential.user or credential.user in self.wrong:
            return LoginOutcome.FAILED, "SASL authentication failed"
        return LoginOutcome.PROVEN, None

    def close(self) -> None:
        self.closed = True


class World:
    """Both clusters (ACLs, users, quotas), the ledger, and what the probes and the permission check were asked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: Access, target: Access) -> None:
        self.source, self.target = source, target
        self.quotas = {"source": QuotaClusterInMemory([RATE]), "target": QuotaClusterInMemory()}
        self.ledger = Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}")
        self.reports = tmp_path / "reports"
        self.permissions: list[tuple[Any, Any, bool]] = []
        self.checks: list[Any] = []
        self.probed: list[dict[str, Any]] = []
        self.probe_report = ProbeReport()
        clusters = {"source": source, "target": target}
        monkeypatch.setattr(sync, "AccessCluster", lambda config: clusters[config.role])
        monkeypatch.setattr(sync, "QuotaCluster", lambda config: self.quotas[config.role])
        monkeypatch.setattr(quota_sync.time, "sleep", lambda _: None)
        monkeypatch.setattr(
            sync, "check_access_permissions", lambda s, t, dry_run: self.permissions.append((s, t, dry_run))
        )
        record = self.ledger.record_access_check
        monkeypatch.setattr(
            self.ledger, "record_access_check", lambda check: (self.checks.append(check), record(check))
        )
        monkeypatch.setattr(sync, "probe_users", self.probe)

    def probe(self, source: Any, target: Any, bindings: Any, topics: Any, setup: ProbeSetup) -> ProbeReport:
        self.probed.append({"source": source, "target": target, "bindings": bindings, "topics": topics, **vars(setup)})
        return self.probe_report

    def run(self, **options: Any) -> AccessSyncResult:
        options = AccessSyncOptions(reports_dir=self.reports, **options)
        return sync_access(SOURCE, TARGET, self.ledger, "access-1", options)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> World:
    """The source grants alice WRITE and bob READ on orders and has both as SCRAM users; the target has bob."""
    return World(monkeypatch, tmp_path, Access("src-id", [WRITE, READ], [ALICE, BOB]), Access("tgt-id", [READ], [BOB]))


PASSWORDS = {"alice": Password("alice", "alice-secret"), "bob": Password("bob", "bob-secret")}


def test_a_sync_writes_what_is_missing_proves_it_records_it_and_reports_it(world: World) -> None:
    result = world.run(passwords=PASSWORDS)
    assert world.permissions == [(world.source, world.target, False)]  # checked first, for a sync that writes
    assert world.target.calls == [
        ("create", (WRITE,)),
        ("delete", ()),
        ("upsert", (ALICE,), ("alice", "bob")),
        ("login", ALICE),
        ("login", BOB),
    ]
    assert world.quotas["target"].held == {RATE.slot: RATE}
    (probed,) = world.probed
    assert (probed["source"], probed["target"]) == (SOURCE, TARGET)
    assert probed["bindings"] == (WRITE, READ) and probed["passwords"] == PASSWORDS
    assert probed["mechanisms"] == {"alice": "SCRAM-SHA-512", "bob": "SCRAM-SHA-256"}
    assert probed["topics"] == ({"orders"}, {"orders"}) and probed["rename"] == "{topic}"
    assert probed["principals"] is None and probed["most_users"] == sync.DEFAULT_USERS
    assert (result.sync_id, result.dry_run, result.source_cluster_id, result.target_cluster_id) == (
        "access-1",
        False,
        "src-id",
        "tgt-id",
    )
    assert (result.plan.add, result.plan.present, result.unreadable) == ((WRITE,), (READ,), (0, 0))
    assert result.actions_checked == len(selection([WRITE, READ])) > 0
    assert result.differences == () and result.logins == {
        "alice": (LoginOutcome.PROVEN, None),
        "bob": (LoginOutcome.PROVEN, None),
    }
    assert result.quotas.proven and result.proven and result.exit_code == EXIT_OK
    assert world.source.closed and world.target.closed
    rows = world.ledger.access_sync_rows("access-1")
    assert [(r.binding, r.action, r.reason) for r in rows] == [
        (WRITE, AccessAction.ADDED, None),
        (READ, AccessAction.PRESENT, None),
    ]
    assert world.ledger.access_user_rows("access-1") == [
        (ALICE, AccessAction.ADDED, LoginOutcome.PROVEN, None),
        (BOB, AccessAction.PRESENT, LoginOutcome.PROVEN, None),
    ]
    assert [(r.quota, r.action) for r in world.ledger.access_quota_rows("access-1")] == [(RATE, AccessAction.ADDED)]
    check = world.ledger.access_check("access-1")
    assert check is not None
    assert (check.verdict, check.dry_run, check.actions_checked, check.differences) == (
        AccessVerdict.PROVEN,
        False,
        result.actions_checked,
        (),
    )
    assert (check.source_bootstrap, check.target_bootstrap, check.run_id) == ("src:9092", "tgt:9092", None)
    assert result.report == world.reports / "access-1" / "report.html" and result.report.exists()
    assert world.ledger.access_check("access-1").report_sha256  # type: ignore[union-attr]
    (recorded,) = world.checks
    assert recorded.synced_at.utcoffset() is not None and recorded.synced_at.utcoffset().total_seconds() == 0
    with world.ledger.engine.connect() as c:  # the records say which run, and that it was no dry run
        for table in (access_syncs, access_quotas):
            assert c.execute(select(table.c.run_id, table.c.dry_run)).all() == [(None, 0)] * (
                2 if table is access_syncs else 1
            )


def test_a_sync_that_fails_half_way_closes_every_client_it_opened(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write refused after both clusters and their quotas were read: the error comes out, and the ACL and the
    quota clients of both clusters are closed all the same (kafka-python's would keep reconnecting)."""

    def refused(bindings: Sequence[AclBinding]) -> None:
        raise MigrationError("target cluster tgt:9092: could not create ACL bindings: POLICY_VIOLATION")

    monkeypatch.setattr(world.target, "create", refused)
    with pytest.raises(MigrationError, match="POLICY_VIOLATION"):
        world.run(passwords=PASSWORDS)
    assert world.source.closed and world.target.closed
    assert world.quotas["source"].closed and world.quotas["target"].closed


def test_a_plan_refused_closes_every_client_and_writes_nothing(world: World) -> None:
    """The principal map sends alice and bob, limited differently, onto one user: refused while planning the
    quotas, after every client was opened; none of them is left open, nothing is written or recorded."""
    bob = Quota(QuotaEntity.of(user="bob"), "producer_byte_rate", 2048.0)
    world.quotas["source"].held[bob.slot] = bob
    with pytest.raises(ConfigurationError, match="carries quotas of two source users onto one target user"):
        world.run(passwords=PASSWORDS, principals={"User:alice": "User:x", "User:bob": "User:x"})
    assert world.source.closed and world.target.closed
    assert world.quotas["source"].closed and world.quotas["target"].closed
    assert world.target.calls == [] and world.quotas["target"].altered == []
    assert world.ledger.access_check("access-1") is None and world.ledger.access_sync_rows("access-1") == []


def test_a_password_for_an_unknown_user_is_refused_before_a_binding_that_cannot_be_carried(world: World) -> None:
    """Both refusals apply: the credentials are named first, as they were before the sync's parts took one
    shape."""
    world.source.held.add(
        AclBinding(ResourceType.TOPIC, "ord", PatternType.PREFIXED, "User:alice", "*", "READ", PermissionType.ALLOW)
    )
    with pytest.raises(ConfigurationError, match="has no SCRAM credential for: zed"):
        world.run(rename="{topic}.copy", passwords={"zed": Password("zed", "x")})
    assert world.target.calls == []


def test_a_dry_run_writes_nothing_and_proves_the_plan_as_it_would_be(world: World) -> None:
    result = world.run(passwords={"alice": Password("alice", "alice-secret")}, dry_run=True, run_id="run-3")
    with world.ledger.engine.connect() as c:
        assert {tuple(r) for r in c.execute(select(access_syncs.c.run_id, access_syncs.c.dry_run))} == {("run-3", 1)}
        assert {tuple(r) for r in c.execute(select(access_quotas.c.run_id, access_quotas.c.dry_run))} == {("run-3", 1)}
    assert world.permissions == [(world.source, world.target, True)]
    assert world.target.calls == [] and world.quotas["target"].altered == [] and world.probed == []
    assert result.differences == () and result.logins == {} and result.report is None
    assert result.proven  # as it would be once applied
    rows = world.ledger.access_sync_rows("access-1")
    assert [(r.binding, r.action, r.run_id) for r in rows] == [
        (WRITE, AccessAction.WOULD_ADD, "run-3"),
        (READ, AccessAction.PRESENT, "run-3"),
    ]
    assert world.ledger.access_user_rows("access-1") == [
        (ALICE, AccessAction.WOULD_ADD, None, None),
        (BOB, AccessAction.PRESENT, None, None),
    ]
    check = world.ledger.access_check("access-1")
    assert check is not None and (check.dry_run, check.run_id, check.verdict) == (True, "run-3", AccessVerdict.PROVEN)
    assert not world.reports.exists()


def test_a_binding_that_cannot_be_carried_exactly_refuses_the_sync_before_anything_is_written(world: World) -> None:
    world.source.held |= {
        AclBinding(ResourceType.TOPIC, name, PatternType.PREFIXED, "User:alice", "*", "READ", PermissionType.ALLOW)
        for name in "wxyz"
    }
    world.source.held.add(
        AclBinding(ResourceType.TOPIC, "ord", PatternType.PREFIXED, "User:alice", "*", "READ", PermissionType.ALLOW)
    )
    with pytest.raises(ConfigurationError) as refused:
        world.run(rename="{topic}.copy")
    assert str(refused.value).startswith(
        "5 ACL bindings of the source cannot be carried to the target exactly, nothing was written: ALLOW User:alice "
        "READ on TOPIC ord (prefixed): rename '{topic}.copy' adds '.copy'"
    )
    assert str(refused.value).endswith("that only prepends, and 2 more.")  # three named, the rest counted
    assert world.target.calls == [] and world.quotas["target"].reads == 0
    assert world.ledger.access_check("access-1") is None


def test_what_keeps_a_sync_from_being_proven_is_recorded_with_it(world: World) -> None:
    """A DENY on the target the source lacks (a conflict, and bob denied there), a binding the target cannot name,
    a user without a password, a failed login, a probe whose answers differ, a stale binding of this tool."""
    deny = AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", "*", "READ", PermissionType.DENY)
    stale = AclBinding(ResourceType.TOPIC, "gone", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW)
    world.target.held |= {deny, stale}
    world.target.unreadable = 2
    world.target.wrong.add("alice")
    world.ledger.record_access_sync("earlier", None, "src-id", "tgt-id", [(stale, AccessAction.ADDED, None)])
    mismatch = ProbeOutcome(Probe("alice", "produce", "orders"), "alice", "orders", "allowed", "denied (X)")
    world.probe_report = ProbeReport((mismatch,))
    result = world.run(
        passwords={"alice": Password("alice", "wrong")}, remove_stale=True, principals={"User:x": "User:y"}
    )
    assert result.plan.conflicts == (deny,) and result.plan.remove == (stale,)
    assert ("delete", (stale,)) in world.target.calls
    assert [d.source_action.principal for d in result.differences] == ["User:bob"] * len(result.differences)
    assert result.unreadable == (0, 2) and result.failed_logins == ["alice"]
    assert result.users.needs_password == () and result.probes.mismatches == [mismatch]
    assert not result.proven and result.exit_code == EXIT_DIFFERENT
    assert world.probed[0]["passwords"] == {}  # no user logged in: none to probe as
    assert world.probed[0]["principals"] == {"User:x": "User:y"}
    actions = {(r.binding, r.action, r.reason) for r in world.ledger.access_sync_rows("access-1")}
    assert (deny, AccessAction.CONFLICT, "a DENY on the target that the source lacks") in actions
    assert (stale, AccessAction.REMOVED, "created by this tool; the source no longer has it") in actions
    check = world.ledger.access_check("access-1")
    assert check is not None and check.verdict == AccessVerdict.DIFFERENT and check.unreadable == (0, 2)
    assert check.differences == tuple(d.describe() for d in result.differences)


def test_the_probes_ask_as_many_users_as_the_sync_is_told(world: World) -> None:
    world.run(passwords=PASSWORDS, probe_users_most=1)
    (probed,) = world.probed
    assert probed["most_users"] == 1 and probed["passwords"] == PASSWORDS  # the probes take the first by name


def test_a_user_without_a_password_is_not_moved_and_named(world: World) -> None:
    world.target.users.clear()
    result = world.run(passwords={"bob": Password("bob", "bob-secret")})
    assert result.users.needs_password == (ALICE,) and not result.proven
    assert ("upsert", (BOB,), ("bob",)) in world.target.calls
    rows = world.ledger.access_user_rows("access-1")
    assert rows == [
        (BOB, AccessAction.ADDED, LoginOutcome.PROVEN, None),
        (ALICE, AccessAction.NEEDS_PASSWORD, None, "no password given for it"),
    ]


def test_each_user_logs_in_once_with_its_first_credentials_mechanism() -> None:
    target = Access("tgt-id")
    sha256 = ScramCredential("alice", "SCRAM-SHA-256", 4096)
    logins = _log_in(target, [ALICE, sha256, BOB], {"alice": Password("alice", "a")})
    assert logins == {"alice": (LoginOutcome.PROVEN, None)} and target.calls == [("login", ALICE)]


def test_the_principal_map_carries_bindings_users_quotas_and_the_proof(world: World) -> None:
    alice2 = AclBinding(
        ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice2", "*", "WRITE", PermissionType.ALLOW
    )
    result = world.run(principals={"User:alice": "User:alice2"})
    assert result.plan.add == (alice2,) and result.differences == ()
    assert world.quotas["target"].held == {
        Quota(QuotaEntity.of(user="alice2"), "producer_byte_rate", 1024.0).slot: (
            Quota(QuotaEntity.of(user="alice2"), "producer_byte_rate", 1024.0)
        )
    }
    assert result.quotas.proven


def test_super_users_decide_alike_on_both_clusters(world: World) -> None:
    """bob is a super user of both clusters: a DENY of his on the target changes nothing he may do."""
    world.target.held.add(
        AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:bob", "*", "READ", PermissionType.DENY)
    )
    assert world.run(super_users={"User:bob"}).differences == ()


def test_only_this_tools_own_stale_bindings_and_quotas_are_removed_and_only_when_asked(world: World) -> None:
    stale = AclBinding(ResourceType.TOPIC, "gone", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW)
    world.target.held.add(stale)
    dave, bob = (
        Quota(QuotaEntity.of(user="dave"), "producer_byte_rate", 5.0),
        Quota(QuotaEntity.of(user="bob"), "producer_byte_rate", 250.0),
    )
    world.quotas["target"].held = {dave.slot: dave, bob.slot: bob}
    world.quotas["source"].held[bob.slot] = Quota(bob.entity, bob.key, 200.0)
    world.ledger.record_access_sync("earlier", None, "src-id", "tgt-id", [(stale, AccessAction.ADDED, None)])
    world.ledger.record_access_quotas(
        "earlier",
        None,
        "src-id",
        "tgt-id",
        [(dave, None, AccessAction.ADDED, None), (bob, None, AccessAction.ADDED, None)],
    )
    kept = world.run()
    assert kept.plan.remove == () and stale in world.target.held
    assert kept.quotas.plan.remove == () and kept.quotas.plan.update[0].quota.value == 200.0  # ours: set again
    removed = sync_access(SOURCE, TARGET, world.ledger, "access-2", AccessSyncOptions(remove_stale=True))
    assert removed.plan.remove == (stale,) and removed.quotas.plan.remove == (dave,)


def test_quotas_that_differ_keep_the_sync_from_being_proven(world: World) -> None:
    carol = Quota(QuotaEntity.of(user="carol"), "producer_byte_rate", 999.0)
    world.quotas["target"].held[carol.slot] = carol  # not this tool's: left alone, a difference
    result = world.run(passwords=PASSWORDS)
    assert [d.entity.name("user") for d in result.quotas.differences] == ["carol"]
    assert not result.proven and result.exit_code == EXIT_DIFFERENT
