"""`python -m harness.data.seed`: the docker-compose kafka-seed service's command, on a PLAINTEXT Apache Kafka.

A cluster of its own (not the session's clusters): the sample topics have fixed names. The same
command over the stack's SASL_SSL listener is in tests/integration/test_compose_kafka.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient

from harness.data.seed import SEED_CONFIG_ENV, sample_topics
from harness.kafka import KafkaCluster
from tests.unit.compose_file import REPO

pytestmark = pytest.mark.integration


@pytest.fixture
def broker(kafka_factory) -> KafkaCluster:  # type: ignore[no-untyped-def]
    (cluster,) = kafka_factory("seed-test")
    return cluster


def _seed(settings: dict[str, str] | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != SEED_CONFIG_ENV}
    if settings is not None:
        env[SEED_CONFIG_ENV] = json.dumps(settings)
    return subprocess.run(
        [sys.executable, "-m", "harness.data.seed", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_seeds_once_with_the_settings_from_the_environment(broker: KafkaCluster) -> None:
    settings = {"bootstrap.servers": broker.bootstrap, "client.id": "kafka-seed", "security.protocol": "PLAINTEXT"}
    first = _seed(settings, "--if-empty")
    assert first.returncode == 0, first.stderr
    assert f"seeded {len(sample_topics())} topics" in first.stdout
    topics = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=15).topics
    assert {t.name for t in sample_topics()} <= set(topics)
    assert len(topics["orders"].partitions) == 6

    again = _seed(settings, "--if-empty")  # a restarted stack must not seed twice
    assert again.returncode == 0, again.stderr
    assert "nothing seeded" in again.stdout


def test_settings_reach_the_clients_and_bad_input_is_one_clear_line(broker: KafkaCluster) -> None:
    bad = _seed({"bootstrap.servers": broker.bootstrap, "security.protocol": "nonsense"})
    assert bad.returncode == 1
    assert bad.stderr.startswith("harness.data.seed: seeding") and "security.protocol" in bad.stderr

    missing = _seed(None)
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0 and SEED_CONFIG_ENV in missing.stderr
    assert _seed({"client.id": "no-bootstrap"}).returncode == 2
