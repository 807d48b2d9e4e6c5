"""The kafka_migration DAG end to end: real Airflow (dag.test), real spark-submit, two brokers."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from harness.data.read import read_partition, without_offsets
from harness.data.seed import OLD_TIMESTAMP, create_topic, producer, send
from kafka_migration.kafka.groups import GroupCluster
from kafka_migration.kafka.settings import client_settings
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.state import CommittedOffset

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

REPO = Path(__file__).resolve().parents[2]


def _topics(bootstrap: str) -> set[str]:
    return set(AdminClient(client_settings({"bootstrap.servers": bootstrap})).list_topics(timeout=10).topics)


def _seed(bootstrap: str, prefix: str) -> None:
    create_topic(bootstrap, f"{prefix}.orders", 3, {"cleanup.policy": "compact"})
    create_topic(bootstrap, f"{prefix}.empty", 2)
    create_topic(bootstrap, f"{prefix}.skip", 1)
    p = producer(bootstrap)
    for i in range(600):
        headers = [("h", b"1"), ("h", None)] if i % 7 == 0 else None
        send(
            p,
            f"{prefix}.orders",
            i % 3,
            f"k{i}".encode(),  # a compacted topic takes no null key (Apache Kafka refuses the batch)
            None if i % 13 == 0 else b"v" * (i % 50),
            headers=headers,
            timestamp=OLD_TIMESTAMP + i,
        )
    send(p, f"{prefix}.skip", 0, b"k", b"excluded")
    p.flush(30)


def test_dag_has_no_import_errors_and_documented_params(migration_dag) -> None:  # type: ignore[no-untyped-def]
    params = migration_dag.params
    for name in (
        "include",
        "exclude",
        "rename",
        "dry_run",
        "source_conn_id",
        "target_conn_id",
        "sync_groups",
        "groups",
        "exclude_groups",
    ):
        param = params.get_param(name)
        assert param.schema.get("title") and param.description, name
    assert migration_dag.schedule is None or str(migration_dag.timetable.summary) in {"None", "Never"}


def test_dag_puts_only_the_copy_between_plan_and_summary(migration_dag) -> None:  # type: ignore[no-untyped-def]
    """Each task between trigger and report costs a task process and a scheduler hop: the per-topic results
    run beside the summary, their topic list beside the copy, and both only after what they read."""
    upstream = {t.task_id: t.upstream_task_ids for t in migration_dag.tasks}
    assert upstream == {
        "plan": set(),
        "copy_verify": {"plan"},
        "list_topics": {"plan"},
        "topic_result": {"list_topics", "copy_verify"},
        "summary": {"copy_verify"},
    }


def test_migration_dag_copies_and_verifies(migration_dag, clusters, kafka_connections, unique) -> None:  # type: ignore[no-untyped-def]
    prefix = f"e2e{unique}"
    _seed(clusters.source, prefix)
    group = f"{prefix}-app"  # a consumer group on the source, synced by the summary (Param sync_groups)
    source_groups = GroupCluster(ClusterConfig("source", {"bootstrap.servers": clusters.source}))
    source_groups.alter_offsets(
        group, {(f"{prefix}.orders", 0): CommittedOffset(100), (f"{prefix}.orders", 1): CommittedOffset(0)}
    )
    run = migration_dag.test(
        run_conf={
            "include": f"{prefix}\\..*",
            "exclude": f"{prefix}\\.skip",
            "rename": "copy.{topic}",
            "dry_run": False,
            "sync_groups": True,
            "groups": f"{prefix}-.*",
        }
    )
    assert str(run.state) == "success"
    target_groups = GroupCluster(ClusterConfig("target", {"bootstrap.servers": clusters.target}))
    assert {k: v.offset for k, v in target_groups.committed(group).items()} == {
        (f"copy.{prefix}.orders", 0): 100,
        (f"copy.{prefix}.orders", 1): 0,
    }

    target_topics = _topics(clusters.target)
    assert f"copy.{prefix}.orders" in target_topics and f"copy.{prefix}.empty" in target_topics
    assert f"copy.{prefix}.skip" not in target_topics
    for partition in range(3):  # checked independently of the pipeline's own verification
        source = without_offsets(read_partition(clusters.source, f"{prefix}.orders", partition))
        target = without_offsets(read_partition(clusters.target, f"copy.{prefix}.orders", partition))
        assert source == target and len(source) > 150
    assert read_partition(clusters.target, f"copy.{prefix}.empty", 0) == []

    admin = AdminClient(client_settings({"bootstrap.servers": clusters.target}))
    resource = ConfigResource(ResourceType.TOPIC, f"copy.{prefix}.orders")
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["cleanup.policy"].value == "compact"

    # Where the DAG run's time went, from Airflow's own stamps: in the ledger, comparable with the CLI's.
    from kafka_migration.airflow.hooks import LedgerHook

    (recorded,) = [r for r in LedgerHook().get_conn().runs(limit=20) if r.dag_run_id == run.run_id]
    timings = recorded.timings
    assert timings is not None and timings.wall > 0 and 0 < timings.plan < timings.wall


def test_dry_run_dag_writes_nothing(migration_dag, clusters, kafka_connections, unique) -> None:  # type: ignore[no-untyped-def]
    prefix = f"dry{unique}"
    _seed(clusters.source, prefix)
    before = _topics(clusters.target)
    run = migration_dag.test(run_conf={"include": f"{prefix}\\..*", "dry_run": True})
    assert str(run.state) == "success"
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    assert states["summary"] == "success", states  # a plan with no topic to create is a plan that succeeded
    assert _topics(clusters.target) == before


def test_dag_run_with_a_bad_pattern_is_refused_when_triggered(migration_dag, clusters, kafka_connections) -> None:  # type: ignore[no-untyped-def]
    """The include Param is a JSON Schema 'regex': the trigger itself is refused, no run starts."""
    from airflow.sdk.exceptions import ParamValidationError

    before = _topics(clusters.target)
    with pytest.raises(ParamValidationError, match=r"Invalid input for param include: 'orders\(' is not a 'regex'"):
        migration_dag.test(run_conf={"include": "orders(", "dry_run": False})
    assert _topics(clusters.target) == before


def test_dag_run_refuses_an_undeclared_param_before_writing(  # type: ignore[no-untyped-def]
    migration_dag, clusters, kafka_connections, unique, capfd
) -> None:
    """The bad-input matrix through real Airflow: run conf keys reach the plan task even when the DAG
    does not declare them, so a typo ('inclde') would silently copy every topic; the plan task refuses it."""
    from kafka_migration.airflow.hooks import LedgerHook
    from kafka_migration.airflow.settings import task_state_dir
    from kafka_migration.ledger import Ledger

    prefix = f"typo{unique}"
    _seed(clusters.source, prefix)
    before = _topics(clusters.target)
    runs_before = {r.run_id for r in Ledger.open(LedgerHook().get_uri()).runs(limit=1000)}
    run_dirs_before = set((task_state_dir() / "runs").glob("*"))

    run = migration_dag.test(run_conf={"inclde": f"{prefix}\\..*"})

    assert str(run.state) == "failed"
    states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    # One red task for one cause: the plan's. The summary has no run to close and says so, skipped.
    assert [task for task, state in states.items() if state == "failed"] == ["plan"], states
    assert states["copy_verify"] == states["topic_result"] == "upstream_failed", states
    assert states["summary"] == "skipped", states
    assert "Unknown Param 'inclde' in the run configuration" in capfd.readouterr().out
    assert _topics(clusters.target) == before
    assert {r.run_id for r in Ledger.open(LedgerHook().get_uri()).runs(limit=1000)} == runs_before
    assert set((task_state_dir() / "runs").glob("*")) == run_dirs_before


def test_bad_group_pattern_is_refused_when_triggered(migration_dag, clusters, kafka_connections, unique) -> None:  # type: ignore[no-untyped-def]
    """The groups Param is a JSON Schema 'regex' like include: the trigger itself is refused, no run starts."""
    from airflow.sdk.exceptions import ParamValidationError

    topic = f"groups{unique}"  # a valid selection: only the group pattern is wrong
    create_topic(clusters.source, topic, 1)
    before = _topics(clusters.target)
    with pytest.raises(ParamValidationError, match=r"Invalid input for param groups: 'app-\(' is not a 'regex'"):
        migration_dag.test(run_conf={"include": topic, "sync_groups": True, "groups": "app-("})
    assert _topics(clusters.target) == before


def test_a_plan_task_that_failed_after_opening_its_run_leaves_it_closed(
    migration_dag, clusters, kafka_connections, unique
) -> None:  # type: ignore[no-untyped-def]
    """The plan task records the run, then creates the topics. Should the creation fail, the summary closes
    the run as failed with its report and releases its leases, and is skipped: the plan's error is the one
    red task of the DAG run (the DAG wraps summarize_run's PlanFailed in a skip)."""
    import pytest as _pytest

    from kafka_migration.airflow import run_tasks
    from kafka_migration.airflow.hooks import LedgerHook
    from kafka_migration.airflow.settings import reports_dir

    prefix = f"halfplan{unique}"
    _seed(clusters.source, prefix)
    planned = run_tasks.plan_run({"include": f"{prefix}\\.orders"}, f"manual__{unique}")["plan"]
    ledger = LedgerHook().get_conn()
    assert ledger.run(planned["run_id"]).status == "running"  # type: ignore[union-attr]
    assert ledger.leases.active(), "the plan took the leases of its target topics"
    with _pytest.raises(run_tasks.PlanFailed, match=f"Run {planned['run_id']} closed as failed: the plan task failed"):
        run_tasks.summarize_run(planned, topics_created=False)
    recorded = ledger.run(planned["run_id"])
    assert recorded is not None and recorded.status == "failed"
    assert (reports_dir() / planned["run_id"] / "report.html").is_file()
    assert [lease for lease in ledger.leases.active() if lease.run_id == planned["run_id"]] == []
