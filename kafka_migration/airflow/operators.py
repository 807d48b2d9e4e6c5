"""Spark steps of the migration as Airflow operators.

A ``SparkSubmitOperator`` that submits one of the ``spark_jobs`` entry points for
one job of the plan. Kafka settings (secrets included) reach spark-submit through
its environment, resolved from the Airflow connections at run time; they are
never rendered into templates, arguments or XCom.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from kafka_migration.config import env_var, is_secret_setting
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.spark.submit import entry_point


class MigrationSparkOperator(SparkSubmitOperator):
    """Run the ``copy`` or ``verify`` step of one plan job with spark-submit."""

    template_fields = (*SparkSubmitOperator.template_fields, "source_conn_id", "target_conn_id")
    ui_color = "#e8f4fd"

    def __init__(
        self,
        *,
        step: str,
        job: dict[str, Any],
        source_conn_id: str = "kafka_source",
        target_conn_id: str = "kafka_target",
        parallel_topics: int = 4,
        **kwargs: Any,
    ) -> None:
        conf = {
            "spark.ui.showConsoleProgress": "false",
            **(kwargs.pop("conf", None) or {}),
        }
        super().__init__(
            application=str(entry_point(step)),
            name=f"kafka-migration-{step}",
            conf=conf,
            **kwargs,
        )
        self.step = step
        self.job = job
        self.source_conn_id = source_conn_id
        self.target_conn_id = target_conn_id
        self.parallel_topics = parallel_topics

    def execute(self, context: Any) -> None:
        """Check the plan file and the DAG run's leases, then submit while a heartbeat renews the leases.

        Losing the leases mid-step (another run took them over) stops spark-submit and fails the task.
        """
        from kafka_migration.airflow import settings, tasks
        from kafka_migration.ledger.leases import LeaseHeartbeat
        from kafka_migration.pipeline import lease_keys

        ledger = tasks.open_ledger()
        plan = tasks.load_plan(self.job["plan_path"], self.job["run_id"], ledger)
        tasks.hold_leases(plan, ledger)  # raises before anything is submitted when the leases were taken over
        heartbeat = LeaseHeartbeat(
            ledger.leases, plan.run_id, lease_keys(plan), settings.lease_ttl(), on_lost=lambda _: self.on_kill()
        )
        with heartbeat:
            try:
                self._submit(context)
            except Exception:
                heartbeat.check()  # a Spark step stopped for a lost lease fails as such
                raise
        heartbeat.check()

    def _submit(self, context: Any) -> None:
        from kafka_migration.airflow.hooks import KafkaClusterHook
        from kafka_migration.spark.startup import default_archive_dir, driver_startup

        source = KafkaClusterHook(self.source_conn_id, "source").get_cluster_config()
        target = KafkaClusterHook(self.target_conn_id, "target").get_cluster_config()
        results = self.job[f"{self.step}_results"]
        self.application_args = [
            "--plan",
            self.job["plan_path"],
            "--job",
            str(self.job["job"]),
            "--results",
            results,
            "--parallel-topics",
            str(self.parallel_topics),
        ]
        env = {
            env_var("source"): source.to_env(),
            env_var("target"): target.to_env(),
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            "PYSPARK_DRIVER_PYTHON": os.environ.get("PYSPARK_DRIVER_PYTHON", sys.executable),
        }
        if shutil.which("spark-submit") is None:
            # The pyspark package ships spark-submit; Airflow only looks for it on PATH.
            import pyspark

            env["PATH"] = os.pathsep.join(
                [os.path.join(os.path.dirname(pyspark.__file__), "bin"), os.environ.get("PATH", "")]
            )
        self.env_vars = env
        self._hook = self._get_hook()
        hook = self._hook
        secrets = [k for cfg in (source, target) for k in cfg.settings if is_secret_setting(k)]
        if secrets and (getattr(hook, "_is_yarn", False) or getattr(hook, "_is_kubernetes", False)):
            raise ConfigurationError(
                "On YARN and Kubernetes the Spark provider turns environment variables into --conf arguments, "
                f"which would expose {sorted(set(secrets))}. Provide "
                f"{env_var('source')} / {env_var('target')} to the driver through the cluster's secret "
                "mechanism (e.g. spark.kubernetes.driver.secretKeyRef) and use connections without secrets."
            )
        # Shorter driver start-up (spark/startup.py).
        startup = driver_startup(default_archive_dir(), hook._connection.get("deploy_mode"))
        self.conf = startup.conf(dict(self.conf or {}))
        self._hook = self._get_hook()
        self.log.info(
            "%s job %s of run %s: topics %s",
            self.step,
            self.job["job"],
            self.job["run_id"],
            ", ".join(self.job["topics"]),
        )
        succeeded = False
        try:
            super().execute(context)
            succeeded = True
        finally:
            startup.finish(succeeded)
