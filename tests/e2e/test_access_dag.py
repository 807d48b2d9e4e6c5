"""The kafka_migration_access DAG end to end: real Airflow (dag.test, its metadata DB), a pair of ACL-enforcing
Apache Kafka clusters (SASL_SSL/SCRAM), the ledger. The CLI's access sync with its options as Params: a dry run
writes nothing, a sync carries the bindings and the user and proves them live, a planted DENY fails the run
after recording it, bad input fails before anything is written; the SCRAM password (from an Airflow connection,
through the environment-variables secrets backend) is in no log, no XCom, no table.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from harness.data.seed import create_topic
from harness.kafka import ClusterSpec, SaslSsl
from kafka_migration.kafka.access import AccessCluster
from kafka_migration.model.access import (
    AclBinding,
    Password,
    PatternType,
    PermissionType,
    ResourceType,
    ScramCredential,
)
from kafka_migration.model.config import ClusterConfig
from tests.leaks import leaks

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

REPO = Path(__file__).resolve().parents[2]
SECRET = f"scram-{uuid.uuid4().hex}"
ALICE = ScramCredential("alice", "SCRAM-SHA-512", 4096)
BINDINGS = [
    AclBinding(ResourceType.TOPIC, "orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.ALLOW),
    AclBinding(ResourceType.TOPIC, "events", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW),
    AclBinding(ResourceType.GROUP, "billing", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW),
    AclBinding(ResourceType.TOPIC, "events", PatternType.LITERAL, "User:reader", "*", "READ", PermissionType.ALLOW),
]
# Every run names dry_run: a run without it kept the earlier run's dry_run here (one DAG object, dag.test).
CONF = {
    "rename": "dc1.{topic}",
    "principal_map": {"User:reader": "User:reader-dc2"},
    "super_users": ["User:admin"],
    "dry_run": False,
}


@pytest.fixture
def access_dag(airflow_home: Path):  # type: ignore[no-untyped-def]
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag("kafka_migration_access")


def _tables(url: str) -> dict[str, str]:
    """Every row of every table of a database, as text (for the secret search)."""
    engine = sa.create_engine(url)
    try:
        metadata = sa.MetaData()
        metadata.reflect(engine)
        with engine.connect() as conn:
            return {n: "\n".join(repr(tuple(r)) for r in conn.execute(t.select())) for n, t in metadata.tables.items()}
    finally:
        engine.dispose()


def _syncs(ledger_url: str) -> list[tuple[str, int, int]]:
    """Each recorded sync: its id, how many of its probes matched and how many did not."""
    engine = sa.create_engine(ledger_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT s.sync_id, (SELECT COALESCE(SUM(matched), 0) FROM km_access_probes p WHERE "
                    "p.sync_id = s.sync_id), (SELECT COUNT(*) FROM km_access_probes p WHERE p.sync_id = s.sync_id "
                    "AND matched = 0) FROM (SELECT sync_id, MIN(synced_at) AS t FROM km_access_syncs GROUP BY "
                    "sync_id) s ORDER BY s.t"
                )
            )
            return [tuple(r) for r in rows]  # type: ignore[misc]
    finally:
        engine.dispose()


def test_the_dag_takes_the_clis_options_as_documented_params(access_dag) -> None:  # type: ignore[no-untyped-def]
    assert access_dag.schedule is None and access_dag.max_active_runs == 1
    assert [t.task_id for t in access_dag.tasks] == ["sync"]
    for name in ("source_conn_id", "target_conn_id", "dry_run", "rename", "principal_map", "super_users"):
        param = access_dag.params.get_param(name)
        assert param.schema.get("title") and param.description, name
    for name in ("remove_stale", "credentials_conn_id", "probe_users"):
        assert access_dag.params.get_param(name).description, name
    assert "password" not in json.dumps(access_dag.params.dump()).lower().replace("passwords", "")


def test_the_access_dag_plans_syncs_proves_refuses_and_keeps_the_password_secret(  # type: ignore[no-untyped-def]
    access_dag, kafka_factory, test_pki, tmp_path: Path, monkeypatch, capfd, caplog
) -> None:
    security = SaslSsl(test_pki, acls=True)
    source, target = kafka_factory(ClusterSpec("dag-acl-src", security), ClusterSpec("dag-acl-dst", security))
    for topic in ("orders", "events"):
        create_topic(source.bootstrap, topic, 1, settings=source.client_config())
        create_topic(target.bootstrap, f"dc1.{topic}", 1, settings=target.client_config())
    source_admin = AccessCluster(ClusterConfig("source", source.client_config()))
    source_admin.upsert_scram([ALICE], {"alice": Password("alice", SECRET)})
    source_admin.create(BINDINGS)
    target_admin = AccessCluster(ClusterConfig("target", target.client_config()))

    state = tmp_path / "state"
    monkeypatch.setenv("KAFKA_MIGRATION_STATE_DIR", str(state))
    monkeypatch.delenv("KAFKA_MIGRATION_LEDGER_URL", raising=False)
    for conn_id, cluster in (("KAFKA_SOURCE", source), ("KAFKA_TARGET", target)):
        monkeypatch.setenv(
            f"AIRFLOW_CONN_{conn_id}", json.dumps({"conn_type": "kafka", "extra": cluster.client_config()})
        )
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_MIGRATION_SCRAM", json.dumps({"conn_type": "generic", "extra": {"alice": SECRET}})
    )
    ledger_url = f"sqlite:///{state / 'ledger.db'}"

    assert str(access_dag.test(run_conf={**CONF, "dry_run": True}).state) == "success"
    assert target_admin.bindings().bindings == () and ALICE not in target_admin.scram_credentials()

    assert str(access_dag.test(run_conf=CONF).state) == "success"
    assert set(target_admin.bindings().bindings) == {
        AclBinding(
            ResourceType.TOPIC, "dc1.orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.ALLOW
        ),
        AclBinding(
            ResourceType.TOPIC, "dc1.events", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW
        ),
        AclBinding(ResourceType.GROUP, "billing", PatternType.LITERAL, "User:alice", "*", "READ", PermissionType.ALLOW),
        AclBinding(
            ResourceType.TOPIC, "dc1.events", PatternType.LITERAL, "User:reader-dc2", "*", "READ", PermissionType.ALLOW
        ),
    }
    assert ALICE in target_admin.scram_credentials()
    dry, synced = _syncs(ledger_url)
    assert dry[1:] == (0, 0) and synced[1] == 7 and synced[2] == 0  # alice's probes answered alike

    target_admin.create(
        [
            AclBinding(
                ResourceType.TOPIC, "dc1.orders", PatternType.LITERAL, "User:alice", "*", "WRITE", PermissionType.DENY
            )
        ]
    )
    assert str(access_dag.test(run_conf=CONF).state) == "failed"
    planted = _syncs(ledger_url)[-1]
    assert planted[2] == 1  # recorded before the task failed: the produce the target now refuses

    bad = {**CONF, "principal_map": {"reader": "User:reader-dc2"}}
    assert str(access_dag.test(run_conf=bad).state) == "failed"
    assert str(access_dag.test(run_conf={**CONF, "dryrun": True}).state) == "failed"  # a typo of dry_run
    assert len(_syncs(ledger_url)) == 3  # both refused before anything was read or written
    output = capfd.readouterr()
    logged = output.out + output.err + caplog.text
    assert "Param principal_map maps 'reader': 'User:reader-dc2'" in logged
    assert "Unknown Param 'dryrun' in the run configuration" in logged
    assert "probe DIFFERENT: alice: produce to topic orders (dc1.orders on the target)" in logged

    home = Path(os.environ["AIRFLOW_HOME"])
    places: dict[str, str | bytes] = {"task output": output.out + output.err, "task logs": caplog.text}
    places.update(
        {f"Airflow metadata table {t}": rows for t, rows in _tables(f"sqlite:///{home / 'airflow.db'}").items()}
    )
    places.update({f"ledger table {t}": rows for t, rows in _tables(ledger_url).items()})
    for log_file in (home / "logs").rglob("*") if (home / "logs").exists() else ():
        if log_file.is_file():
            places[str(log_file)] = log_file.read_bytes()
    assert "Airflow metadata table xcom" in places and "ledger table km_access_probes" in places
    assert leaks({"the SCRAM password": SECRET}, places) == []
