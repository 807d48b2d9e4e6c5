"""Spark steps of the migration as Airflow operators.

``MigrationSparkOperator`` submits one of the ``spark_jobs`` entry points for one job of the plan (the DAGs
use ``migrate``: copy and verification in one application) to the master of a ``spark`` connection, which
``SparkConnectionHook`` reads, through ``spark_steps.SparkStep`` (the plan task's census is submitted alike).
Kafka settings (secrets included) reach spark-submit through its environment, resolved from the Airflow
connections at run time; they are never rendered into templates, arguments or XCom.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseOperator

from kafka_migration.airflow.spark_steps import SparkStep, StepFiles
from kafka_migration.exceptions import SparkJobError
from kafka_migration.model.text import noun_for, plural
from kafka_migration.spark.submit import entry_point


class MigrationSparkOperator(BaseOperator):
    """Run the ``migrate`` (copy and verify), ``copy`` or ``verify`` step of one plan job with spark-submit."""

    template_fields = ("conf", "conn_id", "source_conn_id", "target_conn_id")
    ui_color = "#e8f4fd"

    def __init__(  # noqa: PLR0913 (Airflow's partial/expand and DAG serialization take plain keyword arguments)
        self,
        *,
        step: str,
        job: dict[str, Any],
        conn_id: str = "spark_default",
        conf: dict[str, str] | None = None,
        source_conn_id: str = "kafka_source",
        target_conn_id: str = "kafka_target",
        parallel_topics: int = 4,
        spark_log_level: str | None = None,
        **kwargs: Any,
    ) -> None:
        """``conn_id``: the ``spark`` connection; ``conf``: Spark settings of this task (over the connection's
        extra ``conf``). ``spark_log_level``: Spark's own loggers in the task log (default WARN, or the
        ``[kafka_migration] spark_log_level`` option, or $KAFKA_MIGRATION_SPARK_LOG_LEVEL); ``INFO`` brings
        Spark's start-up lines back. The pipeline's own lines show at any level."""
        super().__init__(**kwargs)
        self.step = step
        self.job = job
        self.conn_id = conn_id
        self.conf = dict(conf or {})
        self.source_conn_id = source_conn_id
        self.target_conn_id = target_conn_id
        self.parallel_topics = parallel_topics
        self.spark_log_level = spark_log_level
        self.application = str(entry_point(step))
        self._submit_step: SparkStep | None = None

    def execute(self, context: Any) -> None:
        """Check the plan file and the DAG run's leases, then submit while a heartbeat renews the leases.

        Losing the leases mid-step (another run took them over) stops spark-submit and fails the task.
        """
        from kafka_migration.airflow import run_tasks, settings
        from kafka_migration.airflow.hooks import LedgerHook
        from kafka_migration.ledger.leases import LeaseHeartbeat
        from kafka_migration.run.claims import lease_keys

        ledger = LedgerHook().get_conn()
        plan = run_tasks.load_plan(self.job["plan_path"], self.job["run_id"], ledger)
        run_tasks.hold_leases(plan, ledger)  # raises before anything is submitted when the leases were taken over
        heartbeat = LeaseHeartbeat(
            ledger.leases, plan.run_id, lease_keys(plan), settings.lease_ttl(), on_lost=lambda _: self.on_kill()
        )
        with heartbeat:
            try:
                self._submit()
            except Exception:
                heartbeat.check()  # a Spark step stopped for a lost lease fails as such
                raise
        heartbeat.check()

    def get_openlineage_facets_on_start(self) -> Any:
        """For apache-airflow-providers-openlineage: this job's source topics in, their target topics out."""
        from kafka_migration.airflow.lineage import job_lineage

        return job_lineage(self.job["plan_path"], list(self.job["topics"]))

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        return self.get_openlineage_facets_on_start()

    def on_kill(self) -> None:
        """Stop spark-submit (and, through the provider, a driver running on the cluster)."""
        self.submitter().kill()

    def submitter(self) -> SparkStep:
        """The submit of this task's job, made once (from the rendered fields, in ``execute``), so that ``on_kill``
        stops the one that runs."""
        if self._submit_step is None:
            migrate = self.step == "migrate"
            files = StepFiles(
                self.job["plan_path"],
                self.job["copy_results" if migrate else f"{self.step}_results"],
                self.job["verify_results"] if migrate else None,
                (str(self.job["job"]),),
            )
            self._submit_step = SparkStep(
                self.step,
                files,
                conn_id=self.conn_id,
                source_conn_id=self.source_conn_id,
                target_conn_id=self.target_conn_id,
                conf=self.conf,
                parallel_topics=self.parallel_topics,
                spark_log_level=self.spark_log_level,
                log=self.log,
            )
        return self._submit_step

    def _submit(self) -> None:
        self.log.info(
            "%s job %s of run %s: topics %s",
            self.step,
            self.job["job"],
            self.job["run_id"],
            ", ".join(self.job["topics"]),
        )
        if self.submitter().run():
            self._check_results()

    def _check_results(self) -> None:
        """After an early return: fail, as the driver's exit code 1 would, when a topic is not OK (the
        topic_result tasks say why)."""
        from kafka_migration.model.results import OK, StepResults

        keys = ("copy_results", "verify_results") if self.step == "migrate" else (f"{self.step}_results",)
        bad = sorted(
            {name for key in keys for name, t in StepResults.read(self.job[key]).topics.items() if t.status != OK}
        )
        if bad:
            raise SparkJobError(
                f"The Spark {self.step} step wrote its results, but {plural(len(bad), 'topic')} "
                f"{noun_for(len(bad), 'is')} not OK: {', '.join(bad)} "
                "(see the topic_result tasks)."
            )


class MigrationSummaryOperator(BaseOperator):
    """The task that closes a run: stores its evidence and closes it through run/evidence.py (``run_tasks.
    summarize_run``), and syncs the consumer groups when asked; skipped after a failed plan (whose error is the
    one to read), failed unless every topic is verified.

    After a verified run, one asset event per target topic copied and verified, through the outlet alias
    ``kafka_migration.verified_topics`` (named as the Kafka provider names a topic: ``kafka://host:port/topic``):
    a DAG scheduled on such an asset runs after a verified migration, never after one that failed or found
    differences (a failed task's asset events are not recorded, and none is added). Its OpenLineage (inputs,
    outputs, the ``kafkaMigration`` run facet) is what run/evidence.py built (kafka_migration/airflow/lineage.py).
    """

    ui_color = "#e8f5e9"

    def __init__(self, *, group_sync: bool = False, **kwargs: Any) -> None:
        from airflow.sdk import AssetAlias
        from airflow.task.trigger_rule import TriggerRule

        from kafka_migration.airflow.lineage import VERIFIED_TOPICS_ALIAS

        kwargs.setdefault("trigger_rule", TriggerRule.ALL_DONE)  # also after a failed copy: the run is closed
        super().__init__(outlets=[AssetAlias(VERIFIED_TOPICS_ALIAS)], **kwargs)
        self.group_sync = group_sync

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowSkipException

        from kafka_migration.airflow import run_tasks
        from kafka_migration.airflow.lineage import TASK

        TASK.runs.clear()
        ti, params = context["ti"], context.get("params") or {}
        requested = self.group_sync and bool(params.get("sync_groups"))
        try:
            result = run_tasks.summarize_run(
                ti.xcom_pull(task_ids="plan", key="plan"),
                target_topic_ids=ti.xcom_pull(task_ids="plan", key=run_tasks.TARGET_TOPIC_IDS),
                group_params=params if requested else None,
                topics_created=ti.xcom_pull(task_ids="plan", key="topics") is not None,
            )
        except run_tasks.PlanFailed as exc:  # the plan's error is the run's one red task
            raise AirflowSkipException(str(exc)) from None
        if result.get("verified"):
            self._verified_assets(context, result["run_id"])
        return result

    def _verified_assets(self, context: Any, run_id: str) -> None:
        from airflow.sdk import Asset, AssetAlias

        from kafka_migration.airflow import settings
        from kafka_migration.airflow.lineage import VERIFIED_TOPICS_ALIAS, verified_assets

        events = context["outlet_events"][AssetAlias(VERIFIED_TOPICS_ALIAS)]
        for uri, extra in verified_assets(settings.reports_dir() / run_id / "report.json"):
            events.add(Asset(uri), extra=extra)
            self.log.info("Asset event: %s verified", uri)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """For apache-airflow-providers-openlineage: the run's topics and its evidence as run facets."""
        from kafka_migration.airflow.lineage import run_lineage

        return run_lineage()

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        return self.get_openlineage_facets_on_complete(task_instance)
