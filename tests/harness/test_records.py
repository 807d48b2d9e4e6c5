"""``python -m harness.data.records delete``: the DeleteRecords that docs/concepts.md names for practice, in a checkout
that has no Kafka scripts, against a real broker (the session's target)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from harness.data.app import produce
from harness.data.records import main
from harness.data.topics import log_range
from tests.conftest import Clusters
from tests.unit.compose_file import REPO

pytestmark = pytest.mark.integration


def test_delete_moves_the_log_start_and_refuses_an_offset_past_the_end(
    clusters: Clusters, unique: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = f"records{unique}"
    admin = AdminClient({"bootstrap.servers": clusters.target})  # held until the answer is in
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=20)
    produce(clusters.target, topic, 50)
    capsys.readouterr()
    command = ["delete", "--bootstrap", clusters.target, "--topic", topic, "--partition", "0", "--before", "20"]

    done = subprocess.run(
        [sys.executable, "-m", "harness.data.records", *command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        done.stdout
        == f"{topic}[0] on {clusters.target} now starts at offset 20 (it started at 0 and ends at 50): 20 deleted\n"
    )
    assert log_range(clusters.target, topic, 0) == (20, 50)

    assert main([*command[:-1], "51"]) == 2
    refused = capsys.readouterr().out
    assert refused.startswith(f"error: DeleteRecords of {topic}[0] on {clusters.target} before offset 51 failed: ")
    assert "out of range" in refused.lower() and refused.count("\n") == 1, refused
    assert log_range(clusters.target, topic, 0) == (20, 50)

    # A settings file as make clusters writes it (a secured kind's holds its TLS and SASL settings too); -1: the end.
    settings = tmp_path / "target.json"
    settings.write_text(json.dumps({"bootstrap.servers": clusters.target}))
    assert main(["delete", "--config", str(settings), "--topic", topic, "--partition", "0", "--before", "-1"]) == 0
    assert log_range(clusters.target, topic, 0) == (50, 50)
