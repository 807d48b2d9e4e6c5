"""`kafka-migrate checkpoints forget` (the way out after a recreated topic) and `history`, on both backends."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kafka_migration.cli import main
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.ledger import Ledger
from kafka_migration.ledger.leases import Holder, LeaseKey
from tests.unit.ledger.test_ledger import outcomes, plan


def test_forget_drops_checkpoints_topic_ids_and_interrupted_segments(ledger_url: str) -> None:
    ledger = Ledger.open(ledger_url)
    first = plan("run-1", 0, 100, 0)
    first = replace(first, topics=(replace(first.topics[0], source_topic_id="sid", target_topic_id="tid"),))
    ledger.start_run(first, trigger="cli")
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: False}))
    assert ledger.topic_ids("src-cluster", "tgt-cluster")["orders", "copy.orders"].source_topic_id == "sid"
    assert set(ledger.pending_segments("src-cluster", "tgt-cluster")) == {("orders", 1, "copy.orders")}

    ledger.leases.acquire(
        Holder("run-2", "cli", "elsewhere"), [LeaseKey("src-cluster", "orders", "tgt-cluster", "copy.orders")], 600
    )
    with pytest.raises(
        ConfigurationError, match=r"A run is copying this topic now: target topic copy\.orders is held by run run-2"
    ):
        ledger.forget_checkpoints("orders")
    assert ledger.checkpoints("src-cluster", "tgt-cluster") != {}  # nothing forgotten
    ledger.leases.release("run-2")

    assert ledger.forget_checkpoints("orders") == [("src-cluster", "orders", "tgt-cluster", "copy.orders")]
    assert ledger.checkpoints("src-cluster", "tgt-cluster") == {}
    assert ledger.pending_segments("src-cluster", "tgt-cluster") == {}  # the interrupted copy is not resumed
    ids = ledger.topic_ids("src-cluster", "tgt-cluster")["orders", "copy.orders"]
    assert (ids.source_topic_id, ids.target_topic_id) == (None, None)
    assert [s.status for s in ledger.run_segments("run-1")] == ["verified", "mismatch"]  # evidence stays

    second = plan("run-3", 0, 40, 0)  # a fresh copy afterwards counts again
    ledger.start_run(second, trigger="cli")
    assert set(ledger.pending_segments("src-cluster", "tgt-cluster")) == {
        ("orders", 0, "copy.orders"),
        ("orders", 1, "copy.orders"),
    }
    with pytest.raises(ConfigurationError, match="no copy of source topic unknown"):
        ledger.forget_checkpoints("unknown")


def test_forget_from_the_command_line(ledger_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = Ledger.open(ledger_url)
    first = plan("run-1", 0, 100, 0)
    ledger.start_run(first, trigger="cli")
    ledger.record_topic(first, first.topics[0], *outcomes(first, {0: True, 1: True}))
    assert main(["checkpoints", "forget", "--topic", "orders", "--ledger", ledger_url]) == 0
    assert "Forgot the checkpoints of orders on src-cluster -> copy.orders on tgt-cluster" in capsys.readouterr().out
    assert main(["checkpoints", "forget", "--topic", "orders", "--target-topic", "x", "--ledger", ledger_url]) == 2
    assert "no copy of source topic orders to x" in capsys.readouterr().err


def test_history_lists_the_runs_writing_now(ledger_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = Ledger.open(ledger_url)
    first = plan("run-1", 0, 100, 0)
    ledger.start_run(first, trigger="cli")
    key = LeaseKey("src-cluster", "orders", "tgt-cluster", "copy.orders")
    ledger.leases.acquire(Holder("run-1", "cli", "cli process 7 on host-a"), [key], 600)
    assert main(["history", "--ledger", ledger_url]) == 0
    out = capsys.readouterr().out
    assert "Runs writing now (1 target topic lease):" in out
    run_line = next(line for line in out.splitlines() if line.startswith("run-1 "))
    source, target = first.source.bootstrap, first.target.bootstrap  # each cluster's id beside where it was reached
    assert run_line.endswith(f"src-cluster ({source.split(',')[0]}) -> tgt-cluster ({target.split(',')[0]})"), run_line
    assert "copy.orders on tgt-cluster: run run-1 (cli process 7 on host-a) since 20" in out
