"""A refusal found after the copy has started (issue 46): target topics are released to the copy as the broker
brings them up, so Write on a topic late in the run order is known only once the first topics are being copied.

On clusters that enforce ACLs (StandardAuthorizer, SASL_SSL/SCRAM), ``migrator`` may write to every target
topic but the last of the run order. The run creates them all, releases the first window to Spark, finds the
missing Write, stops the copy and exits 2 naming it and saying what had started. Once Write is granted, the next
run resumes and ends exact: every target partition holds its source's records once, in order.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from harness.kafka import KafkaCluster
from harness.kafka.acls import Acl, grant, revoke_all
from tests.integration.test_acls import NEEDED, PRINCIPAL

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")
FIRST = 60  # topics before the refused one: more than the first window the run waits for (50)


def _acls(role: str, topics: list[str], group: str, skip: set[tuple[str, str]]) -> list[Acl]:
    names = {"topic": topics, "group": [group], "cluster": ["cluster"]}
    return [
        Acl(PRINCIPAL, op, kind, name)
        for r, kind, op in NEEDED
        if r == role
        for name in names[kind]
        if (op, name) not in skip
    ]


def test_a_write_refused_after_the_copy_started_stops_it_and_the_next_run_ends_exact(
    acl_clusters: list[KafkaCluster], tmp_path: Path
) -> None:
    source, target = acl_clusters
    prefix = f"rel{uuid.uuid4().hex[:6]}"
    # Bigger topics come first in the run order: the refused one, with the fewest records, comes last.
    topics = [f"{prefix}.a{i:03d}" for i in range(FIRST)]
    refused = f"{prefix}.z"
    admin = source.client_config()
    seeder = producer(source.bootstrap, {k: v for k, v in admin.items() if k != "bootstrap.servers"})
    for name, count in [*((t, 4) for t in topics), (refused, 2)]:
        create_topic(source.bootstrap, name, 1, settings=admin)
        for i in range(count):
            send(seeder, name, 0, f"k{i}".encode(), f"{name}-{i}".encode())
    seeder.flush(30)
    everything = [*topics, refused]
    for cluster in (source, target):
        revoke_all(cluster.client_config(), PRINCIPAL)
    group = f"{prefix}-app"
    grant(source.client_config(), _acls("source", everything, group, set()))
    grant(target.client_config(), _acls("target", everything, group, {("Write", refused)}))
    for role, cluster in (("source", source), ("target", target)):
        (tmp_path / f"{role}.json").write_text(json.dumps(cluster.client_config("migrator")))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    command = [
        KAFKA_MIGRATE, "run", "--include", f"{re.escape(prefix)}\\..*",
        "--source-config", str(tmp_path / "source.json"), "--target-config", str(tmp_path / "target.json"),
        "--state-dir", str(tmp_path / "state"), "--master", "local[2]",
    ]  # fmt: skip
    try:
        first = subprocess.run(command, capture_output=True, text=True, timeout=400, check=False, env=env)
        assert first.returncode == 2, first.stdout + first.stderr
        (line,) = [line for line in first.stderr.splitlines() if line.startswith("error: ")]
        assert f"does not allow {PRINCIPAL}: Write on topic {refused}" in line
        started = re.search(r"the copy of the (\d+) topics before them had started, and stopped with the run", line)
        # Almost always the first topics are released, and copying, before the refused one is looked at. A broker
        # that brings the run order's first topic up a poll after the refused one (CI saw it once) has the refusal
        # come before any release: then nothing was copied, as the line says, and the next run ends exact as well.
        assert (started and 1 <= int(started.group(1)) <= FIRST) or "were created, empty; nothing was copied" in line
        assert started or not any(
            read_partition(target.bootstrap, name, 0, settings=target.client_config()) for name in everything
        ), line
        assert "Traceback" not in first.stderr

        grant(target.client_config(), [Acl(PRINCIPAL, "Write", "topic", refused)])
        second = subprocess.run(command, capture_output=True, text=True, timeout=400, check=False, env=env)
        assert second.returncode == 0 and "verified" in second.stdout, second.stdout + second.stderr
        for name in everything:  # nothing lost, nothing doubled, in order
            copied = read_partition(target.bootstrap, name, 0, settings=target.client_config())
            original = read_partition(source.bootstrap, name, 0, settings=admin)
            assert without_offsets(copied) == without_offsets(original), name
            assert len(original) == (2 if name == refused else 4)
    finally:
        for cluster in (source, target):
            revoke_all(cluster.client_config(), PRINCIPAL)
