"""A DAG run holds its leases from the plan task to the summary task; run files a resuming task refuses.

The DAG runs with dag.test() in a child process (real Airflow, real spark-submit) while this test
starts a CLI run on the same topic against the same ledger: the CLI run must refuse, naming the
DAG run. The finished DAG run's files are then damaged, and its tasks, run again as a retry or a
cleared task would run them, must refuse before writing anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic
from kafka_migration.exceptions import LeaseLostError, RunFileError
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger, default_ledger_url
from tests.spark.test_resume import _fill

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]

DAG_TEST = textwrap.dedent(
    """
    import json, sys
    from airflow.dag_processing.dagbag import DagBag
    dag = DagBag(dag_folder=sys.argv[1]).get_dag("kafka_migration")
    print("DAG RUN STATE", dag.test(run_conf=json.loads(sys.argv[2])).state)
    """
)


def _exact(clusters, topic: str) -> None:  # type: ignore[no-untyped-def]
    for partition in range(2):
        source = without_offsets(read_partition(clusters.source, topic, partition))
        assert without_offsets(read_partition(clusters.target, topic, partition)) == source


def test_dag_run_holds_its_leases_and_a_cli_run_beside_it_refuses(  # type: ignore[no-untyped-def]
    airflow_home, clusters, kafka_connections, unique, tmp_path: Path
) -> None:
    topic = f"leasedag{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 2, 200, "a")
    ledger_url = default_ledger_url(Path(os.environ["KAFKA_MIGRATION_STATE_DIR"]))
    dag_run = subprocess.Popen(
        [sys.executable, "-c", DAG_TEST, str(REPO / "dags"), json.dumps({"include": topic})],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        held: list = []  # type: ignore[type-arg]
        while not held:  # the plan task takes the DAG run's lease
            assert dag_run.poll() is None, dag_run.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the DAG run never took its lease"
            time.sleep(0.5)
            held = [x for x in Ledger.open(ledger_url).leases.active() if x.key.target_topic == topic]
        (lease,) = held
        assert lease.trigger == "airflow" and lease.holder.startswith("DAG kafka_migration, DAG run manual__")

        cli = subprocess.run(
            [
                sys.executable,
                "-m",
                "kafka_migration.cli",
                "run",
                "--source",
                clusters.source,
                "--target",
                clusters.target,
                "--include",
                topic,
                "--state-dir",
                str(tmp_path),
                "--ledger",
                ledger_url,
                "--master",
                "local[2]",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        output = dag_run.communicate(timeout=900)[0]
    finally:
        if dag_run.poll() is None:
            dag_run.kill()
    assert cli.returncode == 2, cli.stdout + cli.stderr
    assert f"target topic {topic} is held by run {lease.run_id} (DAG kafka_migration, DAG run manual__" in cli.stderr
    assert " since 20" in cli.stderr
    assert "DAG RUN STATE success" in output, output[-5000:]
    _exact(clusters, topic)  # the DAG run copied everything once; the CLI run wrote nothing
    ledger = Ledger.open(ledger_url)
    assert ledger.leases.active() == []  # the summary task released the DAG run's lease
    runs = [r for r in ledger.runs() if (r.params or {}).get("include") == topic]
    assert [(r.trigger, r.status) for r in runs] == [("airflow", "verified")]

    _resumed_tasks_refuse_damaged_run_files(clusters, topic, lease.run_id, ledger)


def _resumed_tasks_refuse_damaged_run_files(clusters, topic: str, run_id: str, ledger: Ledger) -> None:  # type: ignore[no-untyped-def]
    """The task bodies of the finished DAG run, run again (a retry, a cleared task) on damaged files."""
    from kafka_migration.airflow import run_tasks
    from kafka_migration.airflow.operators import MigrationSparkOperator
    from kafka_migration.ledger.leases import Holder
    from kafka_migration.run.claims import lease_keys

    directory = Path(os.environ["KAFKA_MIGRATION_STATE_DIR"]) / "runs" / run_id
    plan_path = directory / "plan.json"
    planned = {"run_id": run_id, "plan_path": str(plan_path), "dry_run": False, "nothing_new": False}
    job = {
        "run_id": run_id,
        "job": 0,
        "topics": [topic],
        "label": topic,
        "plan_path": str(plan_path),
        "copy_results": str(directory / "copy-job0.json"),
        "verify_results": str(directory / "verify-job0.json"),
    }
    target_before = [read_partition(clusters.target, topic, p) for p in range(2)]
    segments_before = ledger.run_segments(run_id)

    (directory / "copy-job0.json").write_text('{"step": "copy", "topics": {')  # a half-written results file
    with pytest.raises(
        RunFileError, match=r"copy results file .*copy-job0.json is corrupt .* Clear the copy_verify \[0\] task"
    ):
        run_tasks.topic_result(str(plan_path), topic)
    (directory / "copy-job0.json").unlink()
    with pytest.raises(RunFileError, match=r"No copy results at .*copy-job0.json: the copy_verify \(job 0: "):
        run_tasks.topic_result(str(plan_path), topic)

    plan = json.loads(plan_path.read_text())
    plan["topics"][0]["partitions"][0]["end"] += 1000  # an edited plan
    plan_path.write_text(json.dumps(plan))
    with pytest.raises(RunFileError, match="differs from the plan the ledger recorded for run"):
        run_tasks.create_topics(planned, "kafka_target")
    plan_path.write_text(plan_path.read_text()[:100])  # a truncated one
    with pytest.raises(
        RunFileError, match=r"plan file .*plan.json of run .* is corrupt .* Clear this DAG run's 'plan'"
    ):
        run_tasks.create_topics(planned, "kafka_target")
    plan_path.unlink()
    operator = MigrationSparkOperator(task_id="copy_verify", step="migrate", job=job, conn_id="spark_default")
    with pytest.raises(RunFileError, match=r"plan file .*plan.json of run .* is missing"):
        operator.execute(context={})
    with pytest.raises(RunFileError, match="is missing"):
        run_tasks.summarize_run(planned)

    assert [read_partition(clusters.target, topic, p) for p in range(2)] == target_before  # nothing written
    assert ledger.run_segments(run_id) == segments_before  # nothing recorded
    assert ledger.run(run_id).status == "verified"  # type: ignore[union-attr]

    # A failed copy is no missing file: without verify results the verdict is the copy's own error.
    plan_path.write_text(json.dumps(ledger.run(run_id).plan))  # type: ignore[union-attr]
    failed = {"source_topic": topic, "target_topic": topic, "status": "failed", "seconds": 1.0,
              "error": "partition 0: target broker down"}  # fmt: skip
    results = {"step": "copy", "run_id": run_id, "jobs": [0], "topics": {topic: failed}, "started_at": "", "seconds": 1}
    (directory / "copy-job0.json").write_text(json.dumps(results))
    (directory / "verify-job0.json").unlink()
    ledger.leases.acquire(
        Holder(run_id, "airflow", "the DAG run"), lease_keys(run_tasks.load_plan(plan_path, run_id, ledger)), 60
    )
    with pytest.raises(RuntimeError, match=f"Topic {topic}: copy failed: partition 0: target broker down"):
        run_tasks.topic_result(str(plan_path), topic)
    ledger.leases.release(run_id)

    # A summary whose run lost its leases (another run took them over) stores nothing and closes the run.
    other = Holder("another-run", "cli", "a CLI run")
    ledger.leases.acquire(other, lease_keys(run_tasks.load_plan(plan_path, run_id, ledger)), 60)
    with pytest.raises(LeaseLostError, match=f"Run {run_id} lost the lease on 1 target topic"):
        run_tasks.summarize_run(planned)
    assert ledger.run_segments(run_id) == segments_before  # no evidence of the failed copy stored
    assert ledger.run(run_id).status == "failed"  # type: ignore[union-attr]
    assert [x.run_id for x in ledger.leases.active()] == ["another-run"]  # the other run's lease is kept
    ledger.leases.release("another-run")


def test_dag_run_refuses_a_target_topic_a_cli_run_holds(  # type: ignore[no-untyped-def]
    migration_dag, clusters, kafka_connections, unique, capfd
) -> None:
    """The other way round: the lease a CLI run takes (its row, written here directly) stops the DAG's plan task."""
    from kafka_migration.kafka.clients import KafkaCluster
    from kafka_migration.ledger.leases import Holder, LeaseKey
    from kafka_migration.model.config import ClusterConfig

    topic = f"leasecli{unique}"
    create_topic(clusters.source, topic, 2)
    _fill(clusters.source, topic, 2, 50, "a")
    source_id = KafkaCluster(ClusterConfig("source", {"bootstrap.servers": clusters.source})).describe().cluster_id
    target_id = KafkaCluster(ClusterConfig("target", {"bootstrap.servers": clusters.target})).describe().cluster_id
    ledger = Ledger.open(default_ledger_url(Path(os.environ["KAFKA_MIGRATION_STATE_DIR"])))
    holder = Holder.this_process("cli-20261123T000000Z-abcdef")
    ledger.leases.acquire(holder, [LeaseKey(source_id, topic, target_id, topic)], ttl=600)
    try:
        run = migration_dag.test(run_conf={"include": topic})
    finally:
        ledger.leases.release(holder.run_id)
    assert str(run.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert states["plan"] == "failed" and states.get("copy_verify") != "success"
    assert (
        topic not in AdminClient(client_settings({"bootstrap.servers": clusters.target})).list_topics(timeout=10).topics
    )
    assert [r for r in ledger.runs() if (r.params or {}).get("include") == topic] == []  # nothing recorded
    logged = capfd.readouterr()
    assert f"target topic {topic} is held by run {holder.run_id} (cli process" in logged.out + logged.err
