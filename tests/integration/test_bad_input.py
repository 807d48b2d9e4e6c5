"""Secrets stay out of what the CLI prints, even when it fails (real brokers).

The other bad-input cases are in test_planner.py and test_cli.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from kafka_migration.clients import KafkaCluster, client_settings
from kafka_migration.config import ClusterConfig, MigrationOptions
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


def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "run", *args, "--state-dir", str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )


def test_cli_exit_2_on_unreachable_cluster_without_secrets_in_output(clusters, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "target.json"
    config.write_text('{"sasl.password": "s3cr3t-value", "security.protocol": "PLAINTEXT"}')
    result = _cli(
        "--source", clusters.source, "--target", "127.0.0.1:1", "--target-config", str(config), tmp_path=tmp_path
    )
    assert result.returncode == 2
    assert "Cannot reach the target cluster at 127.0.0.1:1" in result.stderr
    assert "s3cr3t-value" not in result.stderr + result.stdout
