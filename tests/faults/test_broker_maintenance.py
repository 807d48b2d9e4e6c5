"""Runs that ride through broker maintenance on replicated clusters: restarts, a lost broker, too few replicas.

Real ``kafka-migrate run`` (real spark-submit) between two three-node Apache Kafka clusters (replication factor
3, ``min.insync.replicas=2``; tests/faults/conftest.py). Brokers are restarted one after another as an operator
rolls a cluster (a controlled shutdown, the node back, its replicas in sync, the next node), killed as in a crash,
or kept down. Each case ends exact (every source record once on the target, in order, verified) or with one clear
failure followed by an exact re-run; nothing is ever doubled.

To restart three brokers during one copy, the copy is slowed on purpose: the source's proxies answer 50 ms late
each way and a fetch returns 4 KB (about 30 records), so each partition reads at most about 300 records a second
however fast the machine is (tests/conftest.py: SLOW_READS, LATENCY).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import NewTopic

from harness.data.read import read_partition, without_offsets
from harness.data.seed import producer, send
from harness.kafka.replicated import ReplicatedCluster
from tests.conftest import LATENCY, SLOW_READS, SMALL_BATCHES
from tests.faults.conftest import ReplicatedPair
from tests.integration.test_network_faults import Run, target_size

pytestmark = [pytest.mark.integration, pytest.mark.spark]

PARTITIONS = 2
# Short bounds, so that a write the target refuses fails in seconds (the product's defaults are 60 s and 120 s).
SHORT = {"socket.timeout.ms": 10_000, "message.timeout.ms": 15_000}


def create(cluster: ReplicatedCluster, topic: str, partitions: int = PARTITIONS) -> None:
    admin = cluster.admin()
    admin.create_topics([NewTopic(topic, partitions, 3)])[topic].result(30)
    cluster.wait_in_sync([topic])


def seed(cluster: ReplicatedCluster, topic: str, count: int) -> None:
    p = producer(cluster.bootstrap, **SMALL_BATCHES, acks="all")
    for i in range(count):
        send(p, topic, i % PARTITIONS, f"key-{i}".encode(), b"v" * 100, headers=[("i", str(i).encode())])
    p.flush(60)


def read_settled(bootstrap: str, topic: str, partition: int, expected: int, within: float = 30.0) -> list[dict]:
    """The partition's records, read again while it shows fewer than ``expected``: a leader just elected (these
    clusters move leaders back every 5 s) reports a high watermark behind the records it holds until its followers
    fetch again, so one read can end early. Records that are really missing still fail after ``within``."""
    deadline = time.monotonic() + within
    records = read_partition(bootstrap, topic, partition)
    while len(records) < expected and time.monotonic() < deadline:
        time.sleep(0.5)
        records = read_partition(bootstrap, topic, partition)
    return records


def assert_exact(source: ReplicatedCluster, target: ReplicatedCluster, topic: str, per_partition: int) -> None:
    for partition in range(PARTITIONS):
        expected = without_offsets(read_settled(source.bootstrap, topic, partition, per_partition))
        copied = without_offsets(read_settled(target.bootstrap, topic, partition, len(expected)))
        assert len(expected) == per_partition
        assert len(copied) == len(expected), f"partition {partition}: {len(copied)} target vs {len(expected)} source"
        assert copied == expected, f"partition {partition} differs"


def wait_for(condition: Callable[[], bool], run: Run, what: str, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert run.process.poll() is None, f"the run ended before {what}:\n{run.output[-3000:]}"
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.1)


def slow_copy(
    source: ReplicatedCluster, target: ReplicatedCluster, topic: str, per_partition: int, state: Path, **configs: Any
) -> Run:
    """A replicated topic of ``per_partition`` records a partition, and a run copying it from a source slowed on
    purpose (LATENCY, SLOW_READS); returns once the copy has written its first records."""
    create(source, topic)
    seed(source, topic, PARTITIONS * per_partition)
    source.set_latency(LATENCY)
    run = Run(source, target, topic, state, source_config=SLOW_READS, **configs)  # type: ignore[arg-type]
    wait_for(lambda: target_size(target.bootstrap, topic) > 0, run, "the copy started")
    return run


def roll(cluster: ReplicatedCluster, topics: list[str]) -> list[tuple[int, float]]:
    """Restart every node one after another, as an operator rolls a cluster: a controlled shutdown, the node
    back, every replica of ``topics`` in sync again, then the next. Returns (node, seconds down) per node."""
    done = []
    for node in cluster.nodes:
        done.append((node.node_id, cluster.restart(node.node_id)))
        cluster.wait_in_sync(topics)
    return done


def _in_background(work: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(work())
        except BaseException as exc:  # surfaced by the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.parametrize("side", ["source", "target"])
def test_every_broker_restarted_one_after_another_during_a_copy_ends_exact(
    replicated: ReplicatedPair, tmp_path: Path, side: str
) -> None:
    source, target = replicated
    rolled = source if side == "source" else target
    topic = f"roll{side}{uuid.uuid4().hex[:6]}"
    per_partition = 9_000  # at ~300 records/s a partition: 30 s of copy at least, three restarts of ~10 s each
    run = slow_copy(source, target, topic, per_partition, tmp_path / "state")
    thread, outcome = _in_background(lambda: roll(rolled, [topic]))
    thread.join(300)
    assert outcome and not isinstance(outcome[0], BaseException), outcome
    copying = target_size(target.bootstrap, topic) < PARTITIONS * per_partition
    source.set_latency(0)
    code = run.wait()
    assert code == 0, run.output[-3000:]
    assert copying, "the copy ended before the last restart: copy more records"
    assert "verified: every partition matches" in run.output
    assert_exact(source, target, topic, per_partition)


def test_the_leader_of_a_partition_being_written_killed_for_good_ends_exact(
    replicated: ReplicatedPair, tmp_path: Path
) -> None:
    source, target = replicated
    topic = f"crash{uuid.uuid4().hex[:6]}"
    per_partition = 3_000
    run = slow_copy(source, target, topic, per_partition, tmp_path / "state")
    leader = target.leader_of(topic, 0)
    target.node(leader).kill()  # a crash: no controlled shutdown, and it does not come back during the run
    wait_for(lambda: target.leader_of(topic, 0) not in (leader, -1), run, "a new leader of partition 0")
    source.set_latency(0)
    code = run.wait()
    assert code == 0, run.output[-3000:]
    assert_exact(source, target, topic, per_partition)  # nothing doubled by the producer's retries


def test_two_target_brokers_down_refuse_writes_then_a_rerun_ends_exact(
    replicated: ReplicatedPair, tmp_path: Path
) -> None:
    source, target = replicated
    topic = f"isr{uuid.uuid4().hex[:6]}"
    per_partition = 1_500
    state = tmp_path / "state"
    run = slow_copy(source, target, topic, per_partition, state, target_config=SHORT)
    for node in target.nodes[1:]:
        node.stop(timeout=60)  # one node left: below min.insync.replicas=2, acks=all writes are refused
    code = run.wait()
    assert code == 3, run.output[-3000:]
    assert "FAILED: a copy did not complete" in run.output
    assert f"{topic}[" in run.output and "message.timeout.ms" in run.output
    assert "in-sync replica" in run.output and "min.insync.replicas=2" in run.output, run.output[-3000:]

    target.start_all()
    target.wait_in_sync([topic])
    source.set_latency(0)
    rerun = Run(source, target, topic, state)  # type: ignore[arg-type]
    assert rerun.wait() == 0, rerun.output[-3000:]
    assert_exact(source, target, topic, per_partition)


def test_target_brokers_restarted_and_leaders_elected_during_verification_ends_exact(
    replicated: ReplicatedPair, tmp_path: Path
) -> None:
    """Verification reads the target through its slowed proxies; meanwhile every target node is restarted in turn,
    each followed by a preferred-leader election that moves leadership back to it."""
    source, target = replicated
    topic = f"verroll{uuid.uuid4().hex[:6]}"
    # The copy writes uncompressed record batches of 4 KB (about 30 records) and the target answers 100 ms late each
    # way, 4 KB a fetch: reading 8,000 records back takes 53 s a partition at least, the three restarts about 45 s.
    # (The copy's writes are slowed too, less: five requests in flight.)
    per_partition = 8_000
    total = PARTITIONS * per_partition
    create(source, topic)
    seed(source, topic, total)
    target.set_latency(2 * LATENCY)
    small = {**SLOW_READS, "batch.size": 4096, "compression.type": "none"}
    run = Run(source, target, topic, tmp_path / "state", target_config=small)  # type: ignore[arg-type]
    wait_for(lambda: target_size(target.bootstrap, topic) == total, run, "the copy wrote every record")
    elected: list[int] = []

    def roll_and_elect() -> None:
        for node in target.nodes:
            target.restart(node.node_id)
            target.wait_in_sync([topic])
            elected.append(target.elect_preferred([topic]))

    thread, outcome = _in_background(roll_and_elect)
    thread.join(300)
    assert outcome and not isinstance(outcome[0], BaseException), outcome
    verifying = run.process.poll() is None
    target.set_latency(0)
    code = run.wait()
    assert code == 0, run.output[-3000:]
    assert verifying, "verification ended before the last restart: verify more records\n" + run.output[-4000:]
    assert "verified: every partition matches" in run.output
    assert_exact(source, target, topic, per_partition)
