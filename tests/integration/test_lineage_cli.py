"""``kafka-migrate run`` with OpenLineage configured as a user configures openlineage-python (a subprocess, real
brokers, real spark-submit): the file transport receives START and COMPLETE, valid against the OpenLineage
schemas, with the datasets, counts and checksums of report.json; a run with differences sends FAIL; an endpoint
nobody answers is one warning line and the run still exits 0."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.data.seed import create_topic, producer, send
from tests.spark.test_migrate_job import FAULTY_COPIER
from tests.unit.lineage.schemas import validate_event

pytestmark = [pytest.mark.integration, pytest.mark.spark]

KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")


def _seed(bootstrap: str, topic: str, partitions: int = 2, records: int = 60) -> None:
    create_topic(bootstrap, topic, partitions)
    p = producer(bootstrap)
    for i in range(records):
        send(p, topic, i % partitions, f"k{i}".encode(), f"v{i}".encode(), headers=[("n", str(i).encode())])
    p.flush(10)


def _run(clusters: Any, topic: str, directory: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI in ``directory`` (no openlineage.yml there), with only the OpenLineage settings given here."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_MIGRATION_", "OPENLINEAGE"))}
    command = [KAFKA_MIGRATE, "run", "--source", clusters.source, "--target", clusters.target, "--include", topic]
    command += ["--rename", "copy.{topic}", "--state-dir", str(directory / "state")]
    env = {**base, "HOME": str(directory), **env}
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, cwd=directory, env=env)


def _file_transport(path: Path) -> dict[str, str]:
    return {
        "OPENLINEAGE__TRANSPORT__TYPE": "file",
        "OPENLINEAGE__TRANSPORT__LOG_FILE_PATH": str(path),
        "OPENLINEAGE__TRANSPORT__APPEND": "true",
    }


def _events(path: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for event in events:
        validate_event(event)
    return events


def _report(directory: Path, run_id: str) -> tuple[dict[str, Any], bytes]:
    (path,) = (directory / "state").rglob(f"{run_id}/report.json")
    data = path.read_bytes()
    return json.loads(data), data


def test_a_verified_run_sends_start_and_complete_with_the_reports_evidence(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"lineage{unique}"
    _seed(clusters.source, topic)
    events_file = tmp_path / "events.jsonl"
    done = _run(clusters, topic, tmp_path, **_file_transport(events_file))
    assert done.returncode == 0, done.stdout + done.stderr
    start, complete = _events(events_file)
    assert (start["eventType"], complete["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == complete["run"]["runId"]
    facet = complete["run"]["facets"]["kafkaMigration"]
    report, data = _report(tmp_path, facet["runId"])
    assert facet["reportSha256"] == "sha256:" + hashlib.sha256(data).hexdigest()
    assert facet["verdict"] == report["verdict"] == "VERIFIED"
    source, target = clusters.source.split(",")[0].lower(), clusters.target.split(",")[0].lower()
    assert [(d["namespace"], d["name"]) for d in complete["inputs"]] == [(f"kafka://{source}", topic)]
    assert [(d["namespace"], d["name"]) for d in complete["outputs"]] == [(f"kafka://{target}", f"copy.{topic}")]
    (rtopic,) = report["topics"]
    assert complete["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == rtopic["records_copied"] == 60
    (ftopic,) = facet["topics"]
    assert len(ftopic["partitions"]) == len(rtopic["partition_details"]) == 2
    for ours, theirs in zip(ftopic["partitions"], rtopic["partition_details"], strict=True):
        assert ours["sourceRecords"] == theirs["source_records"] == ours["targetRecords"] == 30
        assert ours["sourceChecksum"] == theirs["source_checksum"] == theirs["target_checksum"]
        assert (ours["sourceStart"], ours["sourceEnd"]) == (theirs["source_start"], theirs["source_end"])


def test_a_run_with_differences_sends_fail(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"lineage{unique}faulty"  # the faulty copier leaves each partition's last record out
    _seed(clusters.source, topic)
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "sitecustomize.py").write_text(FAULTY_COPIER)
    events_file = tmp_path / "events.jsonl"
    done = _run(clusters, topic, tmp_path, PYTHONPATH=str(plugin), **_file_transport(events_file))
    assert done.returncode == 1, done.stdout + done.stderr
    start, fail = _events(events_file)
    assert (start["eventType"], fail["eventType"]) == ("START", "FAIL")
    facet = fail["run"]["facets"]["kafkaMigration"]
    assert facet["status"] == "mismatch" and facet["verdict"] == "NOT VERIFIED"
    report, _ = _report(tmp_path, facet["runId"])
    assert (
        [p["status"] for p in facet["topics"][0]["partitions"]]
        == [p["status"] for p in report["topics"][0]["partition_details"]]
        == ["mismatch", "mismatch"]
    )
    assert fail["run"]["facets"]["errorMessage"]["message"]


def test_an_unreachable_endpoint_leaves_exit_0(clusters, unique, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    topic = f"lineage{unique}down"
    _seed(clusters.source, topic)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = _run(clusters, topic, tmp_path, OPENLINEAGE_URL=f"http://127.0.0.1:{port}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified: every partition matches" in done.stdout
    warnings = [line for line in (done.stdout + done.stderr).splitlines() if "OpenLineage: could not send" in line]
    assert len(warnings) == 1, done.stderr
