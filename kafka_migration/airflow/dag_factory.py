"""Build the migration DAGs. The DAG files call ``migration_dag`` and nothing else.

plan (plans the run and creates the target topics it needs)
  -> copy_verify (a Spark application per job of topics: it copies, and verifies each partition right
     after its copy, from fresh reads of both clusters)
  -> summary (records every topic's evidence, syncs the consumer groups when Param sync_groups asks,
     closes the run and writes the report; after a verified run, an asset event per verified target topic)
  -> and beside it topic_result (one per topic: its verdict, read from the job's results files;
     list_topics, beside copy_verify, lists the topics for it)

Every task between trigger and report costs a task process and a scheduler hop (~0.6 s in a deployed
Airflow), so work that needs no task of its own rides in a task that is on the way anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from airflow.sdk import DAG, Param, task
from airflow.task.trigger_rule import TriggerRule

from kafka_migration.airflow import run_tasks
from kafka_migration.airflow.operators import MigrationSparkOperator, MigrationSummaryOperator
from kafka_migration.airflow.schema_tasks import schema_params
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import MigrationOptions

# Airflow's trigger form sends an emptied text field as null: a Param whose empty value means "none" must take it,
# or the form keeps its Trigger button disabled while the field holds its default.
OPTIONAL_TEXT = ["null", "string"]
TOPICS = "topics"  # XCom key of the plan task: one entry per planned topic, for the per-topic results


def skipped_after_a_failed_plan(finish: Callable[..., dict], *args: Any, **kwargs: Any) -> dict:  # type: ignore[type-arg]
    """``finish``, skipped (not failed) when the plan (or a cutover's pre-flight) failed: that task's error is
    the cause, and a second red task would only repeat it. What the failed task opened is still closed (the
    run, the cutover, their reports) before the skip. The DAG run fails all the same: the per-topic results,
    mapped over what the plan gives, end upstream_failed."""
    from airflow.sdk.exceptions import AirflowSkipException

    try:
        return finish(*args, **kwargs)
    except run_tasks.PlanFailed as exc:
        raise AirflowSkipException(str(exc)) from None


def migration_params(
    include: str = ".*",
    exclude: str = "",
    rename: str = "{topic}",
    schema_ids: str = "off",
    unknown_schema_ids: str = "refuse",
) -> dict[str, Param]:
    """The trigger form. Invalid defaults (the nightly DAG reads them from airflow.cfg) are an import
    error that names the value, not a run that fails later."""
    try:
        MigrationOptions(include=include, exclude=exclude or None, rename=rename)
        schemas = schema_params(schema_ids, unknown_schema_ids)
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"{exc} (a default Param of the DAG; kafka_nightly_sync reads it from [kafka_migration] "
            "nightly_include, nightly_exclude, nightly_rename, nightly_schema_ids or nightly_unknown_schema_ids)"
        ) from None
    return {
        "include": Param(
            include,
            type="string",
            minLength=1,
            format="regex",
            title="Include topics",
            description="Regular expression a source topic name must fully match. Internal topics are only "
            "copied when named in it.",
        ),
        "exclude": Param(
            exclude,
            type=OPTIONAL_TEXT,
            format="regex",
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
        "accept_target_retention": Param(
            False,
            type="boolean",
            title="Accept a target that keeps less",
            description="Go on when an existing target topic keeps less than the source (retention.ms, "
            "retention.bytes, compaction lags): only what it keeps is copied, and the report says so. Off: such a run "
            "is refused before anything is written.",
        ),
        "accept_target_loss": Param(
            False,
            type="boolean",
            title="Accept lost verified records",
            description="Accept verified records the target lost since earlier runs (its log start moved past them "
            "while the source still holds them); recorded in the ledger and the report. Off: such a run fails.",
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
        "sync_groups": Param(
            False,
            type="boolean",
            title="Sync consumer groups",
            description="After verification, translate the committed offsets of the source consumer groups "
            "to the target exactly (through the ledger's offset map), write them for groups with no active "
            "members there, never moving a target group back, and prove each partition.",
        ),
        "groups": Param(
            ".*",
            type="string",
            minLength=1,
            format="regex",
            title="Consumer groups",
            description="Regular expression a source consumer group id must fully match (with sync_groups).",
        ),
        "exclude_groups": Param(
            "",
            type=OPTIONAL_TEXT,
            format="regex",
            title="Exclude consumer groups",
            description="Regular expression of consumer group ids to leave out (empty: none).",
        ),
        "topics_per_job": Param(
            25,
            type="integer",
            minimum=1,
            maximum=1000,
            title="Topics per Spark application",
            description="Small topics share a Spark application so that they do not each pay a Spark start-up.",
        ),
        **schemas,
    }


def migration_steps(
    dag_id: str,
    source_conn_id: str = "{{ params.source_conn_id }}",
    target_conn_id: str = "{{ params.target_conn_id }}",
    options_from: str | None = None,
    group_sync: bool = False,
    declared: tuple[str, ...] | None = None,
) -> tuple[Any, Any]:
    """plan -> copy_verify -> summary and topic_result, inside a ``with DAG``; returns (plan, summary).

    ``options_from`` names a task whose return value holds ``options`` and the connection ids
    the run uses instead of the Params (the failback's reverse direction and topic map).
    ``group_sync``: the summary syncs the consumer groups when Param ``sync_groups`` asks; the cutover
    DAGs move their groups in their own ``finish`` task instead. ``declared``: the DAG's Param names,
    so that the plan task refuses any other key of the run configuration (a likely typo).
    """

    def _conns(ti: Any, params: dict | None) -> tuple[str | None, str | None, dict | None]:  # type: ignore[type-arg]
        if options_from is None:
            return None, None, None
        prepared = ti.xcom_pull(task_ids=options_from) or {}
        return prepared.get("source_conn_id"), prepared.get("target_conn_id"), prepared.get("options")

    @task
    def plan(params: dict | None = None, run_id: str | None = None, ti=None) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
        from airflow.sdk.exceptions import AirflowFailException

        source, target, options = _conns(ti, params)
        try:
            planned = run_tasks.plan_run(
                params or {},
                run_id or "manual",
                dag_id=dag_id,
                declared=declared,
                options=options,
                source_conn_id=source,
                target_conn_id=target,
            )
        except ConfigurationError as exc:  # bad input: fail at once, a retry would meet the same input
            raise AirflowFailException(str(exc)) from None
        ti.xcom_push(key="plan", value=planned["plan"])  # first: a summary closes the run if creation fails
        target_conn_id = target or (params or {}).get("target_conn_id") or "kafka_target"
        ti.xcom_push(key=TOPICS, value=run_tasks.create_topics(planned["plan"], target_conn_id))
        return planned["jobs"]

    @task
    def list_topics(jobs: list[dict], ti=None) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
        """What topic_result expands over: Airflow maps only over a task's return value, and the plan's is
        its jobs (taken here only to run after the plan). Runs beside copy_verify."""
        return ti.xcom_pull(task_ids="plan", key=TOPICS) or []

    @task(trigger_rule=TriggerRule.ALL_DONE, map_index_template="{{ topic }}")
    def topic_result(plan_path: str, topic: str) -> dict:  # type: ignore[type-arg]
        from airflow.sdk import get_current_context

        get_current_context()["topic"] = topic  # type: ignore[typeddict-unknown-key]
        return run_tasks.topic_result(plan_path, topic)

    jobs = plan()
    spark_step = {
        "source_conn_id": source_conn_id,
        "target_conn_id": target_conn_id,
        "conn_id": "spark_default",
        "map_index_template": "{{ task.job['label'] }}",
    }
    # One Spark application per job copies and verifies: one start-up, verification overlapping the copy.
    copy_verify = MigrationSparkOperator.partial(task_id="copy_verify", step="migrate", **spark_step).expand(job=jobs)
    results = topic_result.expand_kwargs(list_topics(jobs))
    # ALL_DONE: also after a failed copy, so that the run is closed, its evidence stored and its report written.
    # After a failed plan it closes what the plan opened and is skipped: the plan's error is the one to read.
    # After a verified run, an asset event per verified target topic; its lineage through the provider.
    done = MigrationSummaryOperator(task_id="summary", group_sync=group_sync)
    # The per-topic verdicts and the summary read the same results files: side by side, not one after the other.
    copy_verify >> [results, done]
    return jobs, done


def migration_dag(dag_id: str, schedule: Any, params: dict[str, Param], description: str, doc_md: str) -> DAG:
    declared = tuple(params)
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
        migration_steps(dag_id, group_sync=True, declared=declared)
    return dag
