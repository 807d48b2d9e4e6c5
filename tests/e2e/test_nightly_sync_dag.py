"""kafka_nightly_sync end to end: incremental, picks up new topics, reports disappeared ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.kafka.settings import client_settings
from kafka_migration.ledger import Ledger, default_ledger_url
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.state import CommittedOffset

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def nightly_dag(airflow_home: Path):  # type: ignore[no-untyped-def]
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag("kafka_nightly_sync")


def _fill(bootstrap: str, topic: str, count: int, tag: str) -> None:
    p = producer(bootstrap)
    for i in range(count):
        send(p, topic, i % 2, f"{tag}{i}".encode(), b"payload")
    p.flush(10)


def _same(clusters, topic: str) -> bool:  # type: ignore[no-untyped-def]
    return all(
        without_offsets(read_partition(clusters.source, topic, p))
        == without_offsets(read_partition(clusters.target, topic, p))
        for p in range(2)
    )


def test_nightly_sync_is_scheduled_one_at_a_time_without_catchup(nightly_dag) -> None:  # type: ignore[no-untyped-def]
    assert nightly_dag.max_active_runs == 1
    assert nightly_dag.catchup is False
    assert nightly_dag.schedule == "@daily"


def test_nightly_sync_copies_only_what_is_new(nightly_dag, clusters, kafka_connections, unique) -> None:  # type: ignore[no-untyped-def]
    prefix = f"nightly{unique}"
    # sync_groups explicit: in-process dag.test() runs keep an earlier run's conf as the Params' values
    conf = {"include": f"{prefix}\\..*", "sync_groups": False}
    for name in ("a", "gone"):
        create_topic(clusters.source, f"{prefix}.{name}", 2)
        _fill(clusters.source, f"{prefix}.{name}", 100, name)

    assert str(nightly_dag.test(run_conf=conf).state) == "success"
    assert _same(clusters, f"{prefix}.a") and _same(clusters, f"{prefix}.gone")

    # Nothing new: no Spark job at all, but the optional group sync still keeps a standby's groups warm.
    group = f"{prefix}-standby"
    GroupCluster(ClusterConfig("source", {"bootstrap.servers": clusters.source})).alter_offsets(
        group, {(f"{prefix}.a", 0): CommittedOffset(20), (f"{prefix}.a", 1): CommittedOffset(50)}
    )
    assert str(nightly_dag.test(run_conf={**conf, "sync_groups": True, "groups": group}).state) == "success"
    target_groups = GroupCluster(ClusterConfig("target", {"bootstrap.servers": clusters.target}))
    assert {k: v.offset for k, v in target_groups.committed(group).items()} == {
        (f"{prefix}.a", 0): 20,  # same names, no offset gaps: the same offsets
        (f"{prefix}.a", 1): 50,  # the end (50 records)
    }

    _fill(clusters.source, f"{prefix}.a", 40, "late")
    create_topic(clusters.source, f"{prefix}.b", 2)
    _fill(clusters.source, f"{prefix}.b", 30, "b")
    admin = AdminClient(client_settings({"bootstrap.servers": clusters.source}))  # kept alive until the result
    admin.delete_topics([f"{prefix}.gone"])[f"{prefix}.gone"].result(10)
    assert str(nightly_dag.test(run_conf=conf).state) == "success"
    assert _same(clusters, f"{prefix}.a") and _same(clusters, f"{prefix}.b")

    ledger = Ledger.open(default_ledger_url(Path(os.environ["KAFKA_MIGRATION_STATE_DIR"])))
    runs = [
        r
        for r in ledger.runs()
        if r.dag_id == "kafka_nightly_sync" and (r.params or {}).get("include") == conf["include"]
    ]
    assert [r.status for r in runs] == ["verified", "up_to_date", "verified"]
    assert runs[0].records == 40 + 30  # 40 new on a, 30 on b; nothing doubled
    assert any(f"{prefix}.gone" in w and "no longer exists" in w for w in runs[0].warnings or ())
    synced = ledger.group_sync_rows(run_id=runs[1].run_id)
    assert [(r.group_id, r.partition, r.outcome, r.proof) for r in synced] == [
        (group, 0, "synced", "same_record"),
        (group, 1, "synced", "both_at_end"),
    ]
    report = json.loads(
        (Path(os.environ["KAFKA_MIGRATION_STATE_DIR"]) / "reports" / runs[1].run_id / "report.json").read_text()
    )
    assert report["consumer_groups"]["partitions"] == 2 and report["consumer_groups"]["partitions_not_synced"] == 0
    assert "consumer_groups" not in json.loads(
        (Path(os.environ["KAFKA_MIGRATION_STATE_DIR"]) / "reports" / runs[0].run_id / "report.json").read_text()
    )
