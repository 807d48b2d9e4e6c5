"""Build the ``kafka_cutover`` and ``kafka_failback`` DAGs. The DAG files call these and nothing else.

kafka_cutover:  preflight -> plan -> copy_verify -> summary (topic_result beside it) -> finish
kafka_failback: prepare   -> plan -> copy_verify -> summary (topic_result beside it) -> finish
(the failback's run reads the cutover's target and writes its source)
"""

from __future__ import annotations

from airflow.sdk import DAG, Param, task
from airflow.task.trigger_rule import TriggerRule

from kafka_migration.airflow import cutover_tasks
from kafka_migration.airflow.dag_factory import (
    OPTIONAL_TEXT,
    TOPICS,
    migration_params,
    migration_steps,
    skipped_after_a_failed_plan,
)
from kafka_migration.cutover.point import DEFAULT_QUIET_SECONDS


def _quiet_param() -> Param:
    return Param(
        DEFAULT_QUIET_SECONDS,
        type="number",
        minimum=0,
        maximum=3600,
        title="Quiet seconds",
        description="The topics must not receive a record for this long (their producers are switched or "
        "stopped) before the run starts.",
    )


def cutover_params() -> dict[str, Param]:
    params = {k: v for k, v in migration_params().items() if k not in ("dry_run", "sync_groups")}
    params["groups"] = Param(
        ".*",
        type="string",
        minLength=1,
        title="Consumer groups",
        description="Regular expression a consumer group id must fully match; of those, the groups with committed "
        "offsets on the selected topics move to the target.",
    )
    params["exclude_groups"] = Param(
        "", type=OPTIONAL_TEXT, title="Exclude groups", description="Regular expression of group ids to leave out."
    )
    params["quiet_seconds"] = _quiet_param()
    return params


def failback_params() -> dict[str, Param]:
    base = migration_params()
    return {
        "cutover_id": Param(
            "",
            type="string",
            minLength=1,
            title="Cutover",
            description="The cutover to reverse (its id, as listed by 'kafka-migrate history --cutovers' and in its "
            "report).",
        ),
        "quiet_seconds": _quiet_param(),
        "source_conn_id": base["source_conn_id"],
        "target_conn_id": base["target_conn_id"],
        "topics_per_job": base["topics_per_job"],
        # After runs that translated the schema ids: schema_ids translate, the registries named as in the cutover.
        **{
            k: base[k]
            for k in ("schema_ids", "unknown_schema_ids", "source_registry_conn_id", "target_registry_conn_id")
        },
    }


def cutover_dag(dag_id: str = "kafka_cutover", doc_md: str | None = None) -> DAG:
    with DAG(
        dag_id=dag_id,
        description="Switch producers and consumers to the target cluster: quiet checks, final verified run, "
        "group offsets with proof, checklist",
        schedule=None,
        catchup=False,
        max_active_runs=1,
        params=cutover_params(),
        tags=["kafka", "migration", "cutover"],
        doc_md=doc_md,
    ) as dag:

        @task
        def preflight(params: dict | None = None, run_id: str | None = None) -> dict:  # type: ignore[type-arg]
            return cutover_tasks.cutover_preflight(params or {}, run_id or "manual", dag_id)

        @task(trigger_rule=TriggerRule.ALL_DONE)
        def finish(params: dict | None = None, ti=None) -> dict:  # type: ignore[no-untyped-def,type-arg]
            return skipped_after_a_failed_plan(
                cutover_tasks.cutover_finish,
                ti.xcom_pull(task_ids="preflight"),
                ti.xcom_pull(task_ids="plan", key="plan"),
                params or {},
                topics_created=ti.xcom_pull(task_ids="plan", key=TOPICS) is not None,
            )

        checked = preflight()
        plan, summary = migration_steps(dag_id, options_from="preflight")
        checked >> plan
        summary >> finish()
    return dag


def failback_dag(dag_id: str = "kafka_failback", doc_md: str | None = None) -> DAG:
    with DAG(
        dag_id=dag_id,
        description="Copy what the target received after a cutover back to the source, verified, and move the "
        "consumer groups back",
        schedule=None,
        catchup=False,
        max_active_runs=1,
        params=failback_params(),
        tags=["kafka", "migration", "cutover"],
        doc_md=doc_md,
    ) as dag:

        @task
        def prepare(params: dict | None = None) -> dict:  # type: ignore[type-arg]
            return cutover_tasks.failback_prepare(params or {})

        @task(trigger_rule=TriggerRule.ALL_DONE)
        def finish(params: dict | None = None, ti=None) -> dict:  # type: ignore[no-untyped-def,type-arg]
            return skipped_after_a_failed_plan(
                cutover_tasks.failback_finish,
                ti.xcom_pull(task_ids="prepare"),
                ti.xcom_pull(task_ids="plan", key="plan"),
                params or {},
                topics_created=ti.xcom_pull(task_ids="plan", key=TOPICS) is not None,
            )

        prepared = prepare()
        plan, summary = migration_steps(
            dag_id,
            source_conn_id="{{ params.target_conn_id }}",  # reverse: read the cutover's target
            target_conn_id="{{ params.source_conn_id }}",
            options_from="prepare",
        )
        prepared >> plan
        summary >> finish()
    return dag
