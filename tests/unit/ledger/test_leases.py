"""Leases in the ledger on SQLite and PostgreSQL: all or nothing, one winner, expiry, takeover, heartbeat."""

from __future__ import annotations

import multiprocessing
import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest

from kafka_migration.exceptions import ConfigurationError, LeaseHeldError, LeaseLostError
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.leases import Holder, LeaseHeartbeat, LeaseKey, parse_lease_ttl


def key(topic: str) -> LeaseKey:
    return LeaseKey("src-cluster", topic, "dst-cluster", f"copy.{topic}")


A = Holder("run-a", "cli", "cli process 11 on host-a")
B = Holder("run-b", "airflow", "DAG kafka_migration, DAG run manual__2026-11-23")


def wait_until_expired(ledger: Ledger, run_id: str) -> None:
    deadline = time.monotonic() + 30
    while ledger.leases.held_by(run_id)[0].expires_at > datetime.now(UTC):
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_a_held_lease_refuses_others_all_or_nothing(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    assert ledger.leases.acquire(A, [key("orders")], ttl=600) == []
    with pytest.raises(LeaseHeldError) as refused:
        ledger.leases.acquire(B, [key("audit"), key("orders")], ttl=600)
    message = str(refused.value)
    assert "target topic copy.orders is held by run run-a (cli process 11 on host-a) since 20" in message
    assert "stops before writing anything" in message and "KAFKA_MIGRATION_LEASE_TTL" in message
    assert ledger.leases.held_by("run-b") == []  # not even the free topic was taken
    assert ledger.leases.acquire(A, [key("orders"), key("audit")], ttl=600) == []  # re-entrant for its holder
    assert [lease.key.target_topic for lease in ledger.leases.held_by("run-a")] == ["copy.audit", "copy.orders"]
    assert ledger.leases.release("run-b") == 0
    assert ledger.leases.release("run-a") == 2
    assert ledger.leases.acquire(B, [key("orders")], ttl=600) == []


def test_runs_starting_at_the_same_moment_have_exactly_one_winner(ledger_url: str) -> None:
    Ledger.open(ledger_url)  # schema first
    holders = [Holder(f"run-{i}", "cli", f"process {i}") for i in range(6)]
    ledgers = [Ledger.open(ledger_url) for _ in holders]  # one engine (connection pool) each, like processes
    start = threading.Barrier(len(holders))
    outcome: dict[str, str] = {}

    def attempt(holder: Holder, ledger: Ledger) -> None:
        start.wait()
        try:
            ledger.leases.acquire(holder, [key("a"), key("b"), key("c")], ttl=600)
            outcome[holder.run_id] = "won"
        except LeaseHeldError:
            outcome[holder.run_id] = "refused"

    threads = [threading.Thread(target=attempt, args=pair) for pair in zip(holders, ledgers, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(outcome.values()) == ["refused"] * 5 + ["won"]
    (winner,) = [run for run, result in outcome.items() if result == "won"]
    assert {lease.run_id for lease in ledgers[0].leases.active()} == {winner}


def test_an_expired_lease_is_taken_over_and_the_old_holder_learns_it(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    ledger.leases.acquire(A, [key("orders")], ttl=1)
    wait_until_expired(ledger, "run-a")
    (takeover,) = ledger.leases.acquire(B, [key("orders")], ttl=600)
    assert takeover.previous.run_id == "run-a"
    assert "took over the lease on target topic copy.orders (cluster dst-cluster) from run run-a" in takeover.message()
    (lease,) = ledger.leases.held_by("run-b")
    assert lease.taken_over_from == "run-a" and lease.trigger == "airflow"
    with pytest.raises(LeaseLostError) as lost:
        ledger.leases.renew("run-a", [key("orders")], ttl=600)
    assert "copy.orders: now held by run run-b (DAG kafka_migration, DAG run manual__2026-11-23)" in str(lost.value)
    assert ledger.leases.release("run-a") == 0  # releasing cannot drop the new holder's lease
    assert [x.run_id for x in ledger.leases.active()] == ["run-b"]


def _contend(number: int, url: str, rounds: list[list[LeaseKey]], start: Any, results: Any) -> None:
    """Contender ``number`` of each round of a takeover race, in a thread or a process, with an engine of its own."""
    ledger = Ledger.open(url)
    try:
        for r, keys in enumerate(rounds):
            holder = Holder(f"run-{r}-{number}", "cli", f"cli process {number} on host-{r}")
            start.wait(120)
            try:
                takeovers = ledger.leases.acquire(holder, keys, ttl=600)
                results.put((r, holder.run_id, "won", sorted(t.previous.run_id for t in takeovers)))
            except LeaseHeldError as exc:
                results.put((r, holder.run_id, "refused", str(exc)))
    except BaseException as exc:
        start.abort()  # the others stop waiting for this one
        results.put((-1, f"contender {number}", "error", repr(exc)))
    finally:
        ledger.engine.dispose()


def test_runs_taking_over_the_same_expired_leases_at_once_have_exactly_one_winner(ledger_url: str) -> None:
    """The holder of three leases died; six runs (three threads, three processes) find them expired at the same
    moment and all try to take them over. The takeover's compare-and-set lets exactly one have them; the others
    are refused, naming the winner, and the rows record the winner and whom it took them from. Raced in several
    rounds (a fresh set of expired leases each), as one round may happen to serialise the contenders."""
    ledger = Ledger.open(ledger_url)
    dead = Holder("run-dead", "cli", "cli process 9 on host-gone")
    rounds = [[key(f"round{r}.{name}") for name in ("a", "b", "c")] for r in range(5)]
    ledger.leases.acquire(dead, [k for keys in rounds for k in keys], ttl=1)
    # Forked before any contender thread starts; each process opens an engine of its own, not touching this one's.
    fork = multiprocessing.get_context("fork")
    start, results = fork.Barrier(6), fork.Queue()
    args = (ledger_url, rounds, start, results)
    contenders: list[Any] = [fork.Process(target=_contend, args=(n, *args)) for n in (3, 4, 5)]
    contenders += [threading.Thread(target=_contend, args=(n, *args)) for n in (0, 1, 2)]
    wait_until_expired(ledger, "run-dead")
    for contender in contenders:
        contender.start()
    found: list[tuple[int, str, str, Any]] = []
    while len(found) < 6 * len(rounds):
        found.append(results.get(timeout=180))
        assert found[-1][2] != "error", found[-1]
    for contender in contenders:
        contender.join(timeout=60)
    for r, keys in enumerate(rounds):
        outcomes = {run: (result, detail) for n, run, result, detail in found if n == r}
        winners = [run for run, (result, _) in outcomes.items() if result == "won"]
        assert len(outcomes) == 6 and len(winners) == 1, f"round {r}: {outcomes}"
        (winner,) = winners
        assert outcomes[winner][1] == ["run-dead"] * 3  # it says whose leases it took over
        for run, (result, detail) in outcomes.items():
            if run == winner:
                continue
            assert result == "refused", f"round {r}: {run}: {detail}"
            assert f"run {run} stops before writing anything" in detail
            for k in keys:
                assert f"target topic {k.target_topic} is held by run {winner} (" in detail
        rows = ledger.leases.active(keys)
        assert [(x.key.target_topic, x.run_id, x.taken_over_from) for x in rows] == [
            (k.target_topic, winner, "run-dead") for k in keys
        ]


def test_the_heartbeat_keeps_a_lease_alive_and_reports_its_loss(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    ledger.leases.acquire(A, [key("orders")], ttl=3)
    with LeaseHeartbeat(ledger.leases, "run-a", [key("orders")], ttl=3) as heartbeat:
        time.sleep(5)  # longer than the time to live: only renewals keep the lease
        with pytest.raises(LeaseHeldError):
            ledger.leases.acquire(B, [key("orders")], ttl=600)
        assert heartbeat.lost is None
    wait_until_expired(ledger, "run-a")
    ledger.leases.acquire(B, [key("orders")], ttl=600)
    lost = threading.Event()
    with LeaseHeartbeat(ledger.leases, "run-a", [key("orders")], ttl=1, on_lost=lambda _: lost.set()) as heartbeat:
        assert lost.wait(30)
    assert heartbeat.lost is not None and "run run-b" in heartbeat.lost
    with pytest.raises(LeaseLostError):
        heartbeat.check()


@pytest.mark.parametrize("value", ["soon", "0", "-5", "inf", "nan"])
def test_a_bad_time_to_live_is_refused(value: str) -> None:
    with pytest.raises(ConfigurationError, match=r"at least 1 seconds|not a number"):
        parse_lease_ttl(value)
    assert parse_lease_ttl(None) == 600 and parse_lease_ttl("2.5") == 2.5


def test_runs_opening_a_new_ledger_at_once_migrate_it_once(ledger_url: str) -> None:
    """Two runs started at the same moment on an empty ledger both create the schema: one waits for the other."""
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def open_ledger() -> None:
        start.wait()
        try:
            Ledger.open(ledger_url)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_ledger) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert Ledger.open(ledger_url).leases.active() == []
