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
