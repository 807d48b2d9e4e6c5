"""Build the migration DAGs. The DAG files call ``migration_dag`` and nothing else.

plan -> create_topics -> copy (a Spark application per job of topics)
     -> verify (a separate Spark application per job) -> topic_result (one per topic) -> summary
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import DAG, Param, task
from airflow.task.trigger_rule import TriggerRule

from kafka_migration.airflow import tasks
from kafka_migration.airflow.operators import MigrationSparkOperator


def migration_params(include: str = ".*", exclude: str = "", rename: str = "{topic}") -> dict[str, Param]:
    return {
        "include": Param(
            include,
            type="string",
            minLength=1,
            title="Include topics",
            description="Regular expression a source topic name must fully match. Internal topics are only "
            "copied when named in it.",
        ),
        "exclude": Param(
            exclude,
            type="string",
            title="Exclude topics",
            description="Regular expression of topic names to leave out (empty: none).",
        ),
        "rename": Param(
            rename,
            type="string",
            pattern=r"^[A-Za-z0-9._-]*\{topic\}[A-Za-z0-9._-]*$",
            title="Target name template",
            description="How target topics are named; {topic} is the source name, e.g. 'src.{topic}'.",
        ),
        "dry_run": Param(
            False,
            type="boolean",
            title="Dry run",
            description="Only plan: log the topics, configs and offset ranges; create and copy nothing.",
        ),
        "start": Param(
            "earliest",
            type="string",
            pattern=r"^(earliest|latest|\d+|\d{4}-\d{2}-\d{2}.*)$",
            title="Start of a first copy",
            description="Where partitions never copied before start: earliest, latest, or a time (ISO 8601 such as "
            "2026-11-01T00:00:00Z, or epoch ms). Partitions with a checkpoint continue from it.",
        ),
        "allow_gaps": Param(
            False,
            type="boolean",
            title="Accept expired records",
            description="Continue when records expired from the source (retention) before they were copied; "
            "the gap is counted and reported. Off: such a run fails.",
        ),
        "source_conn_id": Param(
            "kafka_source",
            type="string",
            minLength=1,
            title="Source connection",
            description="Airflow connection (type kafka; librdkafka settings as JSON in extra) of the source cluster.",
        ),
        "target_conn_id": Param(
            "kafka_target",
            type="string",
            minLength=1,
            title="Target connection",
            description="Airflow connection of the target cluster.",
        ),
        "replication_factor": Param(
            None,
            type=["null", "integer"],
            minimum=1,
            title="Target replication factor",
            description="Leave empty for min(source replication factor, target broker count).",
        ),
        "topics_per_job": Param(
            25,
            type="integer",
            minimum=1,
            maximum=1000,
            title="Topics per Spark application",
            description="Small topics share a Spark application so that they do not each pay a Spark start-up.",
        ),
    }


def migration_dag(dag_id: str, schedule: Any, params: dict[str, Param], description: str, doc_md: str) -> DAG:
    with DAG(
        dag_id=dag_id,
        description=description,
        schedule=schedule,
        catchup=False,  # a missed night is caught up by the next run, which starts at the checkpoints
        max_active_runs=1,
        params=params,
        tags=["kafka", "migration"],
        doc_md=doc_md,
    ) as dag:

        @task
        def plan(params: dict | None = None, run_id: str | None = None, ti=None) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
            planned = tasks.plan_run(params or {}, run_id or "manual", dag_id=dag_id)
            ti.xcom_push(key="plan", value=planned["plan"])
            return planned["jobs"]

        @task
        def create_topics(jobs: list[dict], params: dict | None = None, ti=None) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
            planned = ti.xcom_pull(task_ids="plan", key="plan")
            return tasks.create_topics(planned, (params or {}).get("target_conn_id") or "kafka_target")

        @task(trigger_rule=TriggerRule.ALL_DONE, map_index_template="{{ topic }}")
        def topic_result(plan_path: str, topic: str, target_topic_id: str | None = None) -> dict:  # type: ignore[type-arg]
            from airflow.sdk import get_current_context

            get_current_context()["topic"] = topic  # type: ignore[typeddict-unknown-key]
            return tasks.topic_result(plan_path, topic, target_topic_id)

        @task(trigger_rule=TriggerRule.ALL_DONE)
        def summary(ti=None) -> dict:  # type: ignore[no-untyped-def,type-arg]
            return tasks.summarize_run(ti.xcom_pull(task_ids="plan", key="plan"))

        jobs = plan()
        topics = create_topics(jobs)
        spark_step = {
            "source_conn_id": "{{ params.source_conn_id }}",
            "target_conn_id": "{{ params.target_conn_id }}",
            "conn_id": "spark_default",
            "map_index_template": "{{ task.job['label'] }}",
        }
        copy = MigrationSparkOperator.partial(task_id="copy", step="copy", **spark_step).expand(job=jobs)
        verify = MigrationSparkOperator.partial(task_id="verify", step="verify", **spark_step).expand(job=jobs)
        results = topic_result.expand_kwargs(topics)
        topics >> copy >> verify >> results >> summary()
    return dag
