"""Network faults between the pipeline and a cluster: ``kafka-migrate run`` against proxied brokers.

The session's source and target Apache Kafka brokers, each reachable only through a loopback proxy
(tests/conftest.py ``proxied_pair``; the broker advertises the proxy's port). The tests cut or slow a proxy
during a real run (real spark-submit) and check what a user sees: exit code, the message,
the ledger, and, with an independent reader, that the target holds every source record
exactly once after the run or its rerun.

To cut a copy in its middle, the source is slowed on purpose (tests/conftest.py): small record batches, a
4 KB fetch limit and 50 ms of latency each way make a 1,200-record copy take a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from harness.kafka.proxied import ProxiedCluster
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger
from tests.conftest import LATENCY, SLOW_READS, SMALL_BATCHES, ProxiedPair

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
PARTITIONS = 2
PER_PARTITION = 600
TOTAL = PARTITIONS * PER_PARTITION
# Short bounds for the tests (the product defaults are 60 s and 120 s; docs/concepts.md).
SHORT = {"socket.timeout.ms": 5000, "message.timeout.ms": 6000}
RUN_TIMEOUT = 300  # seconds: a run that takes longer hangs, which is what these tests rule out
Pair = ProxiedPair


@pytest.fixture(autouse=True)
def pair(proxied: Pair) -> Pair:
    """The session's proxied pair; every test starts and ends with both proxies forwarding, without latency."""
    return proxied


def seed(bootstrap: str, topic: str) -> None:
    """Small batches (about 30 records each), so that a 4 KB fetch limit really means many fetches."""
    create_topic(bootstrap, topic, PARTITIONS)
    p = producer(bootstrap, **SMALL_BATCHES)
    for i in range(PARTITIONS * PER_PARTITION):
        send(p, topic, i % PARTITIONS, f"key-{i}".encode(), b"v" * 100, headers=[("i", str(i).encode())])
    p.flush(30)


def config_file(directory: Path, name: str, settings: dict[str, Any]) -> Path:
    path = directory / f"{name}.json"
    path.write_text(json.dumps(settings))
    return path


class Run:
    """One ``kafka-migrate run`` in the background, with its output collected."""

    def __init__(
        self,
        source: ProxiedCluster,
        target: ProxiedCluster,
        topic: str,
        state: Path,
        source_config: dict[str, Any] | None = None,
        target_config: dict[str, Any] | None = None,
    ) -> None:
        state.mkdir(parents=True, exist_ok=True)
        command = [
            KAFKA_MIGRATE, "run",
            "--source", source.bootstrap, "--target", target.bootstrap,
            "--source-config", str(config_file(state, "source", source_config or {})),
            "--target-config", str(config_file(state, "target", target_config or {})),
            "--include", topic, "--state-dir", str(state), "--master", "local[2]",
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
        self.state = state
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.output = ""
        self._reader = threading.Thread(target=self._collect, daemon=True)
        self._reader.start()

    def _collect(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output += line

    def wait(self) -> int:
        try:
            code = self.process.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            pytest.fail(f"the run did not end within {RUN_TIMEOUT}s (a hang):\n{self.output[-3000:]}")
        self._reader.join(10)
        return code

    def ledger(self) -> Ledger:
        return Ledger.open(f"sqlite:///{self.state / 'ledger.db'}")


def run_to_end(source: ProxiedCluster, target: ProxiedCluster, topic: str, state: Path, **configs: Any) -> Run:
    run = Run(source, target, topic, state, **configs)
    run.wait()
    return run


def target_size(bootstrap: str, topic: str) -> int:
    admin = AdminClient(client_settings({"bootstrap.servers": bootstrap, "socket.timeout.ms": 2000}))
    try:
        futures = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(PARTITIONS)})
        return sum(f.result(5).offset for f in futures.values())
    except Exception:
        return 0  # not created yet


def wait_until(condition: Callable[[], bool], run: Run, what: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert run.process.poll() is None, f"the run ended before {what}:\n{run.output[-3000:]}"
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


def assert_exact(source: ProxiedCluster, target: ProxiedCluster, topic: str) -> None:
    for partition in range(PARTITIONS):
        expected = without_offsets(read_partition(source.bootstrap, topic, partition))
        copied = without_offsets(read_partition(target.bootstrap, topic, partition))
        assert len(expected) == PER_PARTITION
        assert copied == expected, f"partition {partition}: {len(copied)} target vs {len(expected)} source records"


def test_source_cut_for_seconds_mid_copy_to_a_slow_target_ends_exact(pair: Pair, tmp_path: Path) -> None:
    """The source drops every connection for 3 s mid-copy; the target is 50 ms away each way throughout."""
    source, target = pair
    topic = f"srccut{uuid.uuid4().hex[:8]}"
    seed(source.bootstrap, topic)
    source.proxy.set_latency(LATENCY)
    target.proxy.set_latency(LATENCY)
    run = Run(source, target, topic, tmp_path / "state", source_config=SLOW_READS)
    wait_until(lambda: target_size(target.bootstrap, topic) > 0, run, "the copy started")
    source.proxy.cut()  # every source connection dropped, new ones refused
    copied_at_cut = target_size(target.bootstrap, topic)
    time.sleep(3)
    source.proxy.restore()
    code = run.wait()
    assert copied_at_cut < TOTAL, "the copy ended before the cut; slow the source more"
    if code != 0:
        # Allowed by the contract: a clear failure naming the cluster and the partition, and a rerun that is exact.
        assert code == 3 and "source cluster" in run.output and f"{topic}[" in run.output, run.output[-3000:]
        run = run_to_end(source, target, topic, tmp_path / "state", source_config=SLOW_READS)
    assert run.process.returncode == 0, run.output[-3000:]
    assert "verified: every partition matches" in run.output
    assert_exact(source, target, topic)


def test_target_cut_for_good_fails_in_bounded_time_and_a_rerun_resumes_exactly(pair: Pair, tmp_path: Path) -> None:
    source, target = pair
    topic = f"tgtcut{uuid.uuid4().hex[:8]}"
    seed(source.bootstrap, topic)
    source.proxy.set_latency(LATENCY)
    state = tmp_path / "state"
    run = Run(source, target, topic, state, source_config={**SLOW_READS, **SHORT}, target_config=SHORT)
    wait_until(lambda: target_size(target.bootstrap, topic) > 0, run, "the copy started")
    target.proxy.cut(blackhole=True)  # a lost route: no reset, no answer, ever
    code = run.wait()  # bounded: message.timeout.ms for the copy, socket.timeout.ms for every read

    assert code == 3, run.output[-3000:]
    assert "FAILED: a copy did not complete" in run.output
    assert f"target cluster {target.bootstrap}" in run.output  # the message names the target ...
    assert "partition 0:" in run.output or "partition 1:" in run.output  # ... and the partitions
    assert "message.timeout.ms" in run.output
    (record,) = run.ledger().runs()
    assert record.status == "failed"

    target.proxy.restore()
    source.proxy.set_latency(0)
    rerun = run_to_end(source, target, topic, state)
    assert rerun.process.returncode == 0, rerun.output[-3000:]
    assert "from resume -> target offset" in rerun.output  # started where the failed run's segments began
    assert_exact(source, target, topic)
    assert [r.status for r in rerun.ledger().runs()] == ["verified", "failed"]


def _unchanged_for(seconds: float, value: Callable[[], int]) -> bool:
    """Whether ``value()`` stays the same for ``seconds`` (polled every 0.1 s)."""
    first = value()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.1)
        if value() != first:
            return False
    return True


def test_cut_during_verification_could_not_verify_and_a_rerun_verifies(pair: Pair, tmp_path: Path) -> None:
    source, target = pair
    topic = f"vercut{uuid.uuid4().hex[:8]}"
    seed(source.bootstrap, topic)
    state = tmp_path / "state"
    # Each Spark task verifies its partitions right after copying them (both partitions share one task
    # here): slow source reads make that verification take seconds, and the source is cut once the
    # target stopped growing, i.e. between the copy and the verification's own reads of the source.
    source.proxy.set_latency(0.1)
    run = Run(source, target, topic, state, source_config={**SLOW_READS, **SHORT}, target_config=SHORT)
    wait_until(lambda: target_size(target.bootstrap, topic) > 0, run, "the copy started")
    wait_until(lambda: _unchanged_for(2.0, lambda: target_size(target.bootstrap, topic)), run, "the copy ended")
    source.proxy.cut()
    code = run.wait()
    source.proxy.restore()

    assert code == 3, run.output[-3000:]
    assert "could not verify" in run.output and "could NOT be verified" in run.output
    assert "mismatch" not in run.output and "verified: every partition matches" not in run.output
    assert f"source cluster {source.bootstrap}" in run.output
    ledger = run.ledger()
    (record,) = ledger.runs()
    assert record.status == "unverified"
    assert {s.status for s in ledger.run_segments(record.run_id)} == {"unverified"}
    (report,) = state.glob("reports/*/report.json")
    assert json.loads(report.read_text())["verdict"] == "COULD NOT VERIFY"

    # The rerun verifies what the first run copied, without writing it again.
    source.proxy.set_latency(0)
    rerun = run_to_end(source, target, topic, state)
    assert rerun.process.returncode == 0, rerun.output[-3000:]
    assert "0 records copied" in rerun.output  # everything was already there: found, not written again
    assert_exact(source, target, topic)
    assert [r.status for r in rerun.ledger().runs()] == ["verified", "unverified"]
