"""Planning while a source broker has just crashed, on replicated clusters.

Until the cluster fences a crashed broker (``broker.session.timeout.ms``, 9 s by default) the metadata still
names it: the leader of its partitions and, for librdkafka, possibly the controller that topic DescribeConfigs
go to. The planner's reads must neither fail nor guess: before this tier, ListOffsets answered the invalid
offset -1001 for the dead leader's partitions (silently planned), and DescribeConfigs timed out waiting for a
controller that would never answer. Now the planner asks a live broker for the configs, asks again for the
offsets once the metadata names the new leaders, and plans every partition exactly.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.faults.conftest import ReplicatedPair
from tests.faults.test_broker_maintenance import PARTITIONS, create, seed
from tests.faults.test_coordinator_moves import cli

pytestmark = [pytest.mark.integration]


def test_a_dry_run_plans_exactly_while_the_broker_named_controller_is_dead(
    replicated: ReplicatedPair, tmp_path: Path
) -> None:
    source, target = replicated
    topic = f"plan{uuid.uuid4().hex[:6]}"
    create(source, topic)
    seed(source, topic, PARTITIONS * 50)
    admin = source.admin()
    controller = admin.describe_cluster().result(30).controller.id  # where librdkafka sends topic DescribeConfigs
    led = [p for p, (leader, _, _) in source.partitions(topic).items() if leader == controller]
    source.node(controller).kill()  # a crash: it stays the controller and a leader until the cluster fences it
    planned = cli(
        "run", "--source", source.bootstrap, "--target", target.bootstrap, "--include", topic, "--dry-run",
        state=tmp_path / "state",
    )  # fmt: skip
    assert planned.returncode == 0, planned.stdout + planned.stderr
    for partition in range(PARTITIONS):  # exact offsets, also for the partitions the dead broker led
        assert f"partition {partition}: offsets 0–49 (50 offsets), from earliest" in planned.stdout, (
            led,
            planned.stdout,
        )


def test_offsets_are_exact_when_leaders_move_between_the_client_learning_them_and_asking(
    replicated: ReplicatedPair,
) -> None:
    """A rolling restart during planning: the client learned the leaders, then one broker shuts down (its
    partitions elect new leaders) before the offsets are asked. Partitions it led answer with an error or not at
    all until the client learns the new leaders; each is asked again, nothing is guessed (kafka/offsets.py)."""
    from kafka_migration.kafka.clients import KafkaCluster
    from kafka_migration.model.config import ClusterConfig

    source, _ = replicated
    topic = f"elect{uuid.uuid4().hex[:6]}"
    create(source, topic)
    seed(source, topic, PARTITIONS * 50)
    cluster = KafkaCluster(ClusterConfig("source", source.client_config()))
    before = cluster.topic_states([topic])[topic]  # the client now knows every partition's leader
    assert before.latest == dict.fromkeys(range(PARTITIONS), 50)
    leaders = {p: leader for p, (leader, _, _) in source.partitions(topic).items()}
    moved = max(set(leaders.values()), key=list(leaders.values()).count)
    source.node(moved).stop(timeout=60)  # a controlled shutdown: its partitions get other leaders at once
    try:
        assert {p for p, (leader, _, _) in source.partitions(topic).items() if leaders[p] == moved}
        found = cluster.offsets_at_ends({topic: PARTITIONS})
        at_time = cluster.offsets_for_times({(topic, p): 0 for p in range(PARTITIONS)})
    finally:
        source.start_all()
        source.wait_in_sync([topic])
    assert found[("earliest", topic)] == dict.fromkeys(range(PARTITIONS), 0)
    assert found[("latest", topic)] == dict.fromkeys(range(PARTITIONS), 50)
    assert at_time == {(topic, p): 0 for p in range(PARTITIONS)}
