"""One path for a run's evidence: the same plan run through ``kafka-migrate run`` and through the
kafka_migration DAG leaves the same ledger rows and the same report, except ids and times.

Both runs read one source; each writes to a target cluster of its own (the session's target for the DAG, a
broker of this test's for the CLI), so that both create the same topics and copy the same records. Every
difference between the two records must be an id, a time, or a field that names the run's trigger or its
target cluster; the list below is short and exact, so that a field recorded by one path and not the other
fails the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness.data.seed import OLD_TIMESTAMP, create_topic, producer, send
from kafka_migration.ledger import Ledger
from tests.e2e.conftest import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

# What may differ between two runs of one plan: ids, times, and how each was started.
IDS_AND_TIMES = {
    "id",  # a row's own number in its table
    "run_id",
    "started_at",
    "ended_at",
    "created_at",
    "updated_at",
    "verified_at",
    "timings",
    "report_sha256",
    "trigger",
    "dag_id",
    "dag_run_id",
    "target_topic_id",
    "source_topic_id",
    "seconds",
    "started",
    "ended",
    "generated_at",
    "duration_seconds",
    "sha256",
    "copy_seconds",
    "verify_seconds",
    "records_per_second",
}


def _seed(bootstrap: str, prefix: str) -> None:
    create_topic(bootstrap, f"{prefix}.orders", 3, {"cleanup.policy": "compact", "retention.ms": "-1"})
    create_topic(bootstrap, f"{prefix}.events", 2, {"retention.ms": "-1"})
    create_topic(bootstrap, f"{prefix}.empty", 1)
    p = producer(bootstrap)
    for i in range(300):
        send(p, f"{prefix}.orders", i % 3, f"k{i % 40}".encode(), b"v" * (i % 30), timestamp=OLD_TIMESTAMP + i)
        send(p, f"{prefix}.events", i % 2, None, f"e{i}".encode(), headers=[("n", str(i).encode())])
    p.flush(30)


def _without(value: Any, cluster_names: Mapping[str, str]) -> Any:
    """``value`` without ids and times; the two target clusters' addresses read as one name."""
    if isinstance(value, dict):
        return {k: _without(v, cluster_names) for k, v in value.items() if k not in IDS_AND_TIMES}
    if isinstance(value, list):
        return [_without(v, cluster_names) for v in value]
    if isinstance(value, str):
        for address, name in cluster_names.items():
            value = value.replace(address, name)
        return value
    return value


def _record(ledger: Ledger, run_id: str, reports: Path) -> dict[str, Any]:
    run = ledger.run(run_id)
    assert run is not None, run_id
    report = json.loads((reports / run_id / "report.json").read_text())
    segments = [s.to_dict() for s in ledger.run_segments(run_id)]
    return {"run": run.to_dict(), "segments": segments, "report": report}


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        found = [f"{path}.{k}: only in {'CLI' if k in a else 'DAG'}" for k in sorted(set(a) ^ set(b))]
        for key in sorted(set(a) & set(b)):
            found += _differences(a[key], b[key], f"{path}.{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: CLI {a!r} != DAG {b!r}"]


def test_the_cli_and_the_dag_record_one_plan_alike(  # type: ignore[no-untyped-def]
    migration_dag, clusters, kafka_connections, kafka_factory, unique, tmp_path: Path
) -> None:
    prefix = f"same{unique}"
    _seed(clusters.source, prefix)
    (cli_target,) = kafka_factory("evidence-cli-target")

    cli_state = tmp_path / "cli"
    cli_ledger = f"sqlite:///{tmp_path / 'cli-ledger.db'}"
    done = subprocess.run(
        [
            sys.executable, "-m", "kafka_migration.cli", "run",
            "--source", clusters.source, "--target", cli_target.bootstrap,
            "--include", f"{prefix}\\..*", "--state-dir", str(cli_state), "--ledger", cli_ledger,
            "--master", "local[2]", "--output", "json",
        ],
        capture_output=True, text=True, timeout=600, check=False, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cli_run_id = json.loads(done.stdout)["run_id"]

    dag_run = migration_dag.test(run_conf={"include": f"{prefix}\\..*", "dry_run": False})
    assert str(dag_run.state) == "success"
    from kafka_migration.airflow import settings
    from kafka_migration.airflow.hooks import LedgerHook

    dag_ledger = LedgerHook().get_conn()
    (dag_run_id,) = [r.run_id for r in dag_ledger.runs(limit=50) if r.dag_run_id == dag_run.run_id]

    cli_raw = _record(Ledger.open(cli_ledger), cli_run_id, cli_state / "reports")
    dag_raw = _record(dag_ledger, dag_run_id, settings.reports_dir())
    names = {  # the two targets' addresses and cluster ids, as one name each
        cli_target.bootstrap: "<target>",
        clusters.target: "<target>",
        cli_raw["run"]["target_cluster_id"]: "<target cluster id>",
        dag_raw["run"]["target_cluster_id"]: "<target cluster id>",
    }
    cli, dag = _without(cli_raw, names), _without(dag_raw, names)
    assert cli["run"]["status"] == "verified" and cli["report"]["verdict"] == "VERIFIED", cli["run"]
    assert len(cli["segments"]) == 6 and sum(s["copied_records"] or 0 for s in cli["segments"]) == 600
    differences = _differences(cli, dag)
    assert not differences, "\n".join(differences)
