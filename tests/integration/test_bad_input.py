"""The bad-input matrix, part 2: refusals that need real clusters (cluster ids, topic names on the target).

Each case runs through the CLI (``kafka-migrate run``, in-process) and through the Airflow plan task
(``run_tasks.plan_run``, connections from the environment) and must stop before anything is created,
written or recorded: exit 2 / ConfigurationError, one line naming the problem and the fix, no target
topic, no run directory, no run in the ledger. The cases without a cluster are in
tests/unit/cli/test_bad_input_matrix.py.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient

from harness.data.seed import create_topic
from kafka_migration.cli import EXIT_BAD_INPUT, main
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger
from tests.leaks import leaked

pytestmark = pytest.mark.integration

CLI = [sys.executable, "-m", "kafka_migration.cli"]


def _topics(bootstrap: str) -> set[str]:
    return set(AdminClient(client_settings({"bootstrap.servers": bootstrap})).list_topics(timeout=10).topics)


@dataclass(frozen=True)
class ClusterCase:
    """Topics to create first ({p} = a prefix unique to the test), the run's options, the expected line.

    ``same_cluster``: the target is the source cluster (same cluster id)."""

    id: str
    source_topics: tuple[str, ...]
    options: dict[str, Any]
    expect: str
    target_topics: tuple[str, ...] = ()
    same_cluster: bool = False


CASES = [
    ClusterCase(
        "same cluster, identity rename",
        ("{p}.a",),
        {"include": r"{p}\..*"},
        "and the rename '{topic}' keeps every name: each topic would be copied onto itself",
        same_cluster=True,
    ),
    ClusterCase(
        "same cluster, a copy is also a source",
        ("{p}.a", "copy.{p}.a"),
        {"include": r"(copy\.)?{p}\..*", "rename": "copy.{topic}"},
        "1 topic would be both copied and written to in this run: 'copy.{p}.a' (the copy of '{p}.a')",
        same_cluster=True,
    ),
    ClusterCase(
        "'.' and '_' collide with an existing target topic",
        ("{p}.orders",),
        {"include": r"{p}\..*"},
        "'{p}.orders' (from '{p}.orders') with existing '{p}_orders'",
        target_topics=("{p}_orders",),
    ),
    # Two new target topics that collide need two source topics that collide, which Apache Kafka
    # refuses to create ("collides with existing topic"): tests/unit/test_naming.py has that rule.
    ClusterCase(
        "target name longer than Kafka allows",
        ("{p}." + "n" * 220,),
        {"include": r"{p}\..*", "rename": "migrated-from-the-old-cluster.{topic}"},
        "which is not a legal Kafka topic name",
    ),
    ClusterCase(
        "replication factor above the target's broker count",
        ("{p}.a",),
        {"include": r"{p}\..*", "replication_factor": 3},
        "The target replication factor 3 exceeds the 1 broker of the target cluster {target_id}",
    ),
    ClusterCase("no topic matches", ("{p}.a",), {"include": r"{p}\.b.*"}, "No topic on the source cluster"),
]


def _cli_args(options: dict[str, Any]) -> list[str]:
    args = []
    for name, value in options.items():
        args += [f"--{name.replace('_', '-')}", str(value)]
    return args


@pytest.fixture
def prepared(request: pytest.FixtureRequest, clusters, unique: str, tmp_path: Path, monkeypatch):  # type: ignore[no-untyped-def]
    case: ClusterCase = request.param
    prefix = f"bad{unique}"
    target = clusters.source if case.same_cluster else clusters.target
    for name in case.source_topics:
        create_topic(clusters.source, name.format(p=prefix), 1)
    for name in case.target_topics:
        create_topic(target, name.format(p=prefix), 1)
    monkeypatch.setenv("KAFKA_MIGRATION_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("KAFKA_MIGRATION_LEDGER_URL", f"sqlite:///{tmp_path / 'state' / 'ledger.db'}")
    monkeypatch.setattr(logging, "basicConfig", lambda **_: None)
    options = {k: v.replace("{p}", prefix) if isinstance(v, str) else v for k, v in case.options.items()}
    admin = AdminClient({"bootstrap.servers": target})  # kept alive until its future is resolved
    target_id = admin.describe_cluster().result(timeout=15).cluster_id
    expect = case.expect.replace("{p}", prefix).replace("{target_id}", target_id)
    return case, options, target, expect, tmp_path / "state", _topics(target)


def _nothing_written(state: Path, target: str, before: set[str]) -> None:
    assert _topics(target) == before, "a target topic was created"
    assert not (state / "runs").exists(), "a run directory was written"
    assert not (state / "reports").exists(), "a report was written"
    if (state / "ledger.db").exists():  # opened (schema) for the checkpoints, but nothing recorded
        assert Ledger.open(f"sqlite:///{state / 'ledger.db'}").runs() == []


@pytest.mark.parametrize("prepared", CASES, ids=[c.id for c in CASES], indirect=True)
def test_cli_refuses_before_writing(prepared, clusters, capfd: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    _case, options, target, expect, state, before = prepared
    code = main(["run", "--source", clusters.source, "--target", target, *_cli_args(options)])
    out, err = capfd.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == EXIT_BAD_INPUT, f"exit {code}\n{out}\n{err}"
    assert len(lines) == 1 and expect in lines[0], err
    _nothing_written(state, target, before)
    _no_spark_left(state)


def _no_spark_left(state: Path, within: float = 30.0) -> None:
    """The Spark application started while planning (it waits for the plan) is gone once the refusal is out."""
    import psutil

    def left() -> list[str]:
        found = []
        for process in psutil.process_iter(["cmdline"]):
            cmdline = " ".join(process.info["cmdline"] or [])
            if str(state) in cmdline and "migrate_topics.py" in cmdline:
                found.append(cmdline)
        return found

    deadline = time.monotonic() + within  # the Python driver follows its JVM within moments
    while left() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left() == []


@pytest.mark.parametrize("prepared", CASES, ids=[c.id for c in CASES], indirect=True)
def test_plan_task_refuses_before_writing(prepared, clusters, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from kafka_migration.airflow.dag_factory import migration_params
    from kafka_migration.airflow.run_tasks import plan_run

    _case, options, target, expect, state, before = prepared
    for conn_id, bootstrap in (("KAFKA_SOURCE", clusters.source), ("KAFKA_TARGET", target)):
        monkeypatch.setenv(
            f"AIRFLOW_CONN_{conn_id}", json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": bootstrap}})
        )
    declared = migration_params()
    params = {name: param.value for name, param in declared.items()} | options
    with pytest.raises(ConfigurationError) as refused:
        plan_run(params, "manual__bad_input", declared=declared)
    assert "\n" not in str(refused.value) and expect in str(refused.value)
    _nothing_written(state, target, before)


def test_cli_exit_2_on_unreachable_cluster_without_secrets_in_output(clusters, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The real entry point, as a subprocess: secrets stay out of what it prints, even when it fails."""
    config = tmp_path / "target.json"
    config.write_text('{"sasl.password": "s3cr3t-value", "security.protocol": "PLAINTEXT"}')
    result = subprocess.run(
        [
            *CLI,
            "run",
            "--source",
            clusters.source,
            "--target",
            "127.0.0.1:1",
            "--target-config",
            str(config),
            "--state-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "No bootstrap broker of the target cluster answers at 127.0.0.1:1" in result.stderr
    assert leaked("s3cr3t-value", result.stderr, result.stdout) == []


def test_cli_refuses_an_unresolvable_host_before_spark_starts(clusters, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A typo in a host name: one line, exit 2, before Spark's start-up and before anything is written (the
    verbose run would show Spark's output, and its run directory would exist, had Spark started)."""
    state = tmp_path / "state"
    result = subprocess.run(
        [
            *CLI,
            "run",
            "--source",
            clusters.source,
            "--target",
            "kafka-tagret.invalid:9092",
            "--state-dir",
            str(state),
            "-v",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: The target cluster's bootstrap address kafka-tagret.invalid")
    assert "does not resolve" in lines[0] and "Spark" not in result.stderr + result.stdout
    assert not (state / "runs").exists()


def test_cli_unreachable_ledger_stops_the_spark_application_started_ahead(  # type: ignore[no-untyped-def]
    clusters, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Spark starts before the ledger is opened (its start-up overlaps the rest); a ledger that cannot be
    opened still ends in one line and exit 2, with that application gone and nothing written."""
    state = tmp_path / "state"
    code = main(
        [
            "run",
            "--source",
            clusters.source,
            "--target",
            clusters.target,
            "--state-dir",
            str(state),
            "--ledger",
            "postgresql://postgres@127.0.0.1:1/kafka_migration",
        ]
    )
    _out, err = capfd.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == EXIT_BAD_INPUT, err
    assert len(lines) == 1 and "Cannot open the ledger" in lines[0], err
    assert not (state / "runs").exists()
    _no_spark_left(state, within=2.0)  # stopped, not left to find out by itself that the CLI is gone
