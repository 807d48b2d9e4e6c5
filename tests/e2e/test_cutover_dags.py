"""kafka_cutover and kafka_failback end to end: real Airflow (dag.test), real spark-submit, two brokers.

One round trip (two migrations): the cutover DAG refuses while a producer writes and while a
source consumer runs, then switches; a consumer continues on the target exactly; records
produced on the target afterwards go back to the source verified, and the group continues
on the source exactly.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.data.group_clients import active_member, busy_producer, commit, resume_records
from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.ledger import Ledger, default_ledger_url
from kafka_migration.model.config import ClusterConfig

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def dags(airflow_home: Path):  # type: ignore[no-untyped-def]
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag("kafka_cutover"), bag.get_dag("kafka_failback")


def _fields(record: dict) -> dict:  # type: ignore[type-arg]
    return {k: v for k, v in record.items() if k != "offset"}


def _latest_cutover(ledger: Ledger) -> dict:  # type: ignore[type-arg]
    return ledger.cutovers(limit=1)[0]


def test_cutover_dags_are_manual_with_documented_params(dags) -> None:  # type: ignore[no-untyped-def]
    cutover, failback = dags
    for dag, names in (
        (cutover, ("include", "exclude", "rename", "groups", "exclude_groups", "quiet_seconds", "source_conn_id")),
        (failback, ("cutover_id", "quiet_seconds", "source_conn_id", "target_conn_id")),
    ):
        assert dag.max_active_runs == 1 and dag.schedule is None
        for name in names:
            param = dag.params.get_param(name)
            assert param.schema.get("title") and param.description, (dag.dag_id, name)
    task_ids = [t.task_id for t in cutover.tasks]
    assert task_ids[0] == "preflight" and "finish" in task_ids and "copy_verify" in task_ids


def test_cutover_and_failback_dags_round_trip(dags, clusters, kafka_connections, unique) -> None:  # type: ignore[no-untyped-def]
    cutover_dag, failback_dag = dags
    topic, group = f"dagcut{unique}", f"orders-app{unique}"
    create_topic(clusters.source, topic, 2)
    p = producer(clusters.source)
    for i in range(160):
        send(p, topic, i % 2, f"k{i}".encode(), f"v{i}".encode())
    p.flush(10)
    commit(clusters.source, group, {(topic, 0): 10, (topic, 1): 20})
    ledger = Ledger.open(default_ledger_url(Path(os.environ["KAFKA_MIGRATION_STATE_DIR"])))
    conf = {"include": topic, "groups": group, "quiet_seconds": 2}

    with busy_producer(clusters.source, topic, 2):
        assert str(cutover_dag.test(run_conf=conf).state) == "failed"
    refused = _latest_cutover(ledger)
    assert refused["status"] == "refused" and f"source topic {topic} is still written to" in refused["message"]

    with active_member(clusters.source, group, [topic]):
        assert str(cutover_dag.test(run_conf=conf).state) == "failed"
    refused = _latest_cutover(ledger)
    assert (
        refused["status"] == "refused" and f"has active members on the source cluster: {group} (" in refused["message"]
    )
    from kafka_migration.airflow import settings

    page = (settings.reports_dir() / refused["cutover_id"] / "report.html").read_text()  # written by the refusal
    assert f"<li><b>consumer group {group} on the source cluster</b>" in page and "<style>" in page
    assert "Run the cutover again: trigger DAG kafka_cutover with the same Params." in page
    assert "kafka-migrate failback" not in page and "kafka_failback" not in page and "run None" not in page

    end = read_partition(clusters.source, topic, 1)[-1]["offset"] + 1
    commit(clusters.source, group, {(topic, 1): end})  # partition 1: read to the end on the source
    assert str(cutover_dag.test(run_conf=conf).state) == "success"
    done = _latest_cutover(ledger)
    assert done["status"] == "completed" and done["groups"] == [group]
    source_next = {0: read_partition(clusters.source, topic, 0, start=10)[0]}
    on_target = resume_records(clusters.target, group, topic, [0])
    assert _fields(on_target[0]) == _fields(source_next[0])
    ends = {p["partition"]: p for p in done["topics"][0]["partitions"]}
    target_groups = GroupCluster(ClusterConfig("target", {"bootstrap.servers": clusters.target}))
    assert target_groups.committed(group)[topic, 1].offset == ends[1]["target_end"]  # caught up: the end

    p = producer(clusters.target)
    for i in range(20):
        send(p, topic, i % 2, f"new-{i}".encode(), b"written on the target after the cutover")
    p.flush(10)
    positions = {0: ends[0]["target_end"] + 3, 1: ends[1]["target_end"]}
    commit(clusters.target, group, {(topic, q): o for q, o in positions.items()})

    run = failback_dag.test(run_conf={"cutover_id": done["cutover_id"], "quiet_seconds": 1})
    assert str(run.state) == "success"
    row = ledger.cutover(done["cutover_id"])
    assert row["failback_status"] == "completed" and ledger.run(row["failback_run_id"]).status == "verified"  # type: ignore[union-attr]
    for q in range(2):
        after_cutover = read_partition(clusters.target, topic, q, start=ends[q]["target_end"])
        appended = read_partition(clusters.source, topic, q, start=ends[q]["source_end"])
        assert without_offsets(appended) == without_offsets(after_cutover) and len(appended) == 10
    expected = {q: read_partition(clusters.target, topic, q, start=o)[0] for q, o in positions.items()}
    on_source = resume_records(clusters.source, group, topic, [0, 1])
    assert {q: _fields(r) for q, r in on_source.items()} == {q: _fields(r) for q, r in expected.items()}
