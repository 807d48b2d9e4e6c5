"""Bad input is refused with a clear message before anything is written (real brokers)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from harness.seed import create_topic, producer, seal_partitions, send
from kafka_migration.clients import KafkaCluster, client_settings
from kafka_migration.config import ClusterConfig, MigrationOptions
from kafka_migration.exceptions import ClusterUnreachableError, NoTopicsMatchedError, TopicConflictError
from kafka_migration.planner import build_plan

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "kafka_migration.cli"]


def _target_topics(bootstrap: str) -> set[str]:
    return set(AdminClient(client_settings({"bootstrap.servers": bootstrap})).list_topics(timeout=10).topics)


def _plan(source: str, target: str, **options: object):  # type: ignore[no-untyped-def]
    return build_plan(
        KafkaCluster(ClusterConfig("source", {"bootstrap.servers": source})),
        KafkaCluster(ClusterConfig("target", {"bootstrap.servers": target})),
        MigrationOptions(**options),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("role", ["source", "target"])
def test_unreachable_cluster_is_named_within_30s(clusters, role: str) -> None:  # type: ignore[no-untyped-def]
    dead = "127.0.0.1:1"
    started = time.monotonic()
    with pytest.raises(ClusterUnreachableError) as error:
        _plan(dead if role == "source" else clusters.source, dead if role == "target" else clusters.target)
    assert time.monotonic() - started < 30
    assert f"Cannot reach the {role} cluster at {dead}" in str(error.value)


def test_no_topic_matches_writes_nothing(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    before = _target_topics(clusters.target)
    with pytest.raises(NoTopicsMatchedError, match=f"matches include 'nothing{unique}.*'"):
        _plan(clusters.source, clusters.target, include=f"nothing{unique}.*")
    assert _target_topics(clusters.target) == before


def test_incompatible_target_topic_stops_before_writing(clusters, unique) -> None:  # type: ignore[no-untyped-def]
    create_topic(clusters.source, f"wide{unique}", 4)
    create_topic(clusters.source, f"fine{unique}", 1)
    create_topic(clusters.target, f"wide{unique}", 2)
    p = producer(clusters.source)
    send(p, f"fine{unique}", 0, b"k", b"v")
    p.flush(10)
    seal_partitions(clusters.source, f"fine{unique}", [0])
    with pytest.raises(TopicConflictError) as error:
        _plan(clusters.source, clusters.target, include=f"(wide|fine){unique}")
    assert f"target topic 'wide{unique}' has 2 partitions" in str(error.value)
    assert f"fine{unique}" not in _target_topics(clusters.target)


def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "run", *args, "--state-dir", str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )


def test_cli_exit_2_on_invalid_regex(clusters, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = _cli("--source", clusters.source, "--target", clusters.target, "--include", "orders(", tmp_path=tmp_path)
    assert result.returncode == 2
    assert "include pattern 'orders(' is not a valid regular expression" in result.stderr


def test_cli_exit_2_on_unreachable_cluster_without_secrets_in_output(clusters, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "target.json"
    config.write_text('{"sasl.password": "s3cr3t-value", "security.protocol": "PLAINTEXT"}')
    result = _cli(
        "--source", clusters.source, "--target", "127.0.0.1:1", "--target-config", str(config), tmp_path=tmp_path
    )
    assert result.returncode == 2
    assert "Cannot reach the target cluster at 127.0.0.1:1" in result.stderr
    assert "s3cr3t-value" not in result.stderr + result.stdout
