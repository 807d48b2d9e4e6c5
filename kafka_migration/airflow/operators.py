"""Spark steps of the migration as Airflow operators.

A ``SparkSubmitOperator`` that submits one of the ``spark_jobs`` entry points for
one job of the plan (the DAGs use ``migrate``: copy and verification in one application).
Kafka settings (secrets included) reach spark-submit through its environment,
resolved from the Airflow connections at run time; they are never rendered into
templates, arguments or XCom. On YARN and Kubernetes, where the provider turns that
environment into ``--conf`` arguments, secrets go by reference
(kafka_migration/spark/driver_env.py). With the driver inside spark-submit (client deploy mode) the task
ends once the driver has written its results, not when Spark has stopped (``submit_until_results``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

from kafka_migration.model.text import noun_for, plural
from kafka_migration.spark.driver import results_written
from kafka_migration.spark.driver_env import driver_env
from kafka_migration.spark.submit import entry_point

if TYPE_CHECKING:
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from kafka_migration.spark.startup import DriverStartup


def _until_results_written(lines: Iterator[str], written: threading.Event) -> Iterator[str]:
    """The driver's output up to and including the line that says every results file is complete."""
    for line in lines:
        yield line
        if results_written(line):
            written.set()
            return


def _drain(process: subprocess.Popen[str], lines: Iterator[str]) -> None:
    """Read Spark's stop (not logged: the task may have ended by then) and reap the process."""
    for _ in lines:
        pass
    process.wait()


def submit_until_results(hook: SparkSubmitHook, application: str) -> bool:
    """The provider's ``SparkSubmitHook.submit`` for a driver inside spark-submit (client deploy mode), except
    that it returns as soon as the driver has logged that its results files are complete, as the CLI does
    (``SparkApplication.detach``): the SparkContext stop and JVM exit (~1.5-2 s) then overlap the next task
    instead of delaying it; the rest of the output is drained and the process reaped in the background.
    True when it returned early (success is then read from the results files, as the driver's exit code
    would say it); False when spark-submit ended without that line (exit code checked as the provider does).
    """
    from airflow.exceptions import AirflowException

    command = hook._build_spark_submit_command(application)
    env = {**os.environ, **hook._env} if hook._env else None
    hook._submit_sp = process = subprocess.Popen(  # on_kill stops it through the hook, as before
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=-1, universal_newlines=True, env=env
    )
    assert process.stdout is not None
    lines = iter(process.stdout)
    written = threading.Event()
    try:
        hook._process_spark_submit_log(_until_results_written(lines, written))
        if written.is_set():
            threading.Thread(target=_drain, args=(process, lines), name="spark-submit-drain", daemon=True).start()
            hook.log.info("The driver wrote its results; Spark stops by itself (not waited for).")
            return True
        returncode = process.wait()
        if returncode:
            raise AirflowException(
                f"Cannot execute: {hook._mask_cmd(command)}. Error code is: {returncode}.{hook._submit_log_tail}"
            )
        return False
    finally:
        hook._run_post_submit_commands()


class MigrationSparkOperator(SparkSubmitOperator):
    """Run the ``migrate`` (copy and verify), ``copy`` or ``verify`` step of one plan job with spark-submit."""

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
        spark_log_level: str | None = None,
        **kwargs: Any,
    ) -> None:
        """``spark_log_level``: Spark's own loggers in the task log (default WARN, or the ``[kafka_migration]
        spark_log_level`` option, or $KAFKA_MIGRATION_SPARK_LOG_LEVEL); ``INFO`` brings Spark's start-up lines
        back. The pipeline's own lines show at any level."""
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
        self.spark_log_level = spark_log_level

    def execute(self, context: Any) -> None:
        """Check the plan file and the DAG run's leases, then submit while a heartbeat renews the leases.

        Losing the leases mid-step (another run took them over) stops spark-submit and fails the task.
        """
        from kafka_migration.airflow import settings, tasks
        from kafka_migration.airflow.hooks import LedgerHook
        from kafka_migration.ledger.leases import LeaseHeartbeat
        from kafka_migration.run.claims import lease_keys

        ledger = LedgerHook().get_conn()
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
        startup = self.prepare()
        self.log.info(
            "%s job %s of run %s: topics %s",
            self.step,
            self.job["job"],
            self.job["run_id"],
            ", ".join(self.job["topics"]),
        )
        succeeded = detached = False
        try:
            if self._can_detach(startup):
                detached = submit_until_results(self._hook, self.application)
            else:
                super().execute(context)
            succeeded = True
        finally:
            startup.finish(succeeded)
        if detached:
            self._check_results()

    def _can_detach(self, startup: DriverStartup) -> bool:
        """The driver runs inside spark-submit here (not cluster deploy mode, not Kubernetes) and its JVM
        writes no class archive (put in place only once the JVM has exited): the task need not wait for
        Spark to stop once the results are written."""
        hook = self._hook
        return (
            startup.writing is None
            and hook is not None
            and not getattr(hook, "_is_kubernetes", False)
            and hook._connection.get("deploy_mode") != "cluster"
        )

    def _check_results(self) -> None:
        """After an early return: fail, as the driver's exit code 1 would, when a topic is not OK (the
        topic_result tasks say why)."""
        from airflow.exceptions import AirflowException

        from kafka_migration.model.results import OK, StepResults

        keys = ("copy_results", "verify_results") if self.step == "migrate" else (f"{self.step}_results",)
        bad = sorted(
            {name for key in keys for name, t in StepResults.read(self.job[key]).topics.items() if t.status != OK}
        )
        if bad:
            raise AirflowException(
                f"The Spark {self.step} step wrote its results, but {plural(len(bad), 'topic')} "
                f"{noun_for(len(bad), 'is')} not OK: {', '.join(bad)} "
                "(see the topic_result tasks)."
            )

    def prepare(self) -> DriverStartup:
        """Arguments, environment and confs of the submit (no secret in a conf); the driver start-up."""
        from kafka_migration.airflow import settings
        from kafka_migration.airflow.hooks import KafkaClusterHook
        from kafka_migration.spark.executor_env import executor_env_conf
        from kafka_migration.spark.startup import (
            LOG_LEVEL_VARIABLE,
            default_archive_dir,
            driver_startup,
            spark_log_level,
            worker_daemon_conf,
        )

        source = KafkaClusterHook(self.source_conn_id, "source").get_cluster_config()
        target = KafkaClusterHook(self.target_conn_id, "target").get_cluster_config()
        migrate = self.step == "migrate"
        self.application_args = [
            "--plan",
            self.job["plan_path"],
            "--job",
            str(self.job["job"]),
            "--results",
            self.job["copy_results" if migrate else f"{self.step}_results"],
            *(["--verify-results", self.job["verify_results"]] if migrate else []),
            "--parallel-topics",
            str(self.parallel_topics),
        ]
        hook = self._get_hook()
        # On YARN and Kubernetes the provider passes spark-submit's environment as --conf arguments.
        is_yarn, is_k8s = bool(getattr(hook, "_is_yarn", False)), bool(getattr(hook, "_is_kubernetes", False))
        delivery = driver_env([source, target], env_becomes_conf=is_yarn or is_k8s, kubernetes=is_k8s)
        log_level = spark_log_level(self.spark_log_level or settings.spark_log_level())
        env = {
            **delivery.env,
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            "PYSPARK_DRIVER_PYTHON": os.environ.get("PYSPARK_DRIVER_PYTHON", sys.executable),
            LOG_LEVEL_VARIABLE: log_level,  # the driver keeps it after its context started (spark/driver.py)
        }
        if shutil.which("spark-submit") is None:
            # The pyspark package ships spark-submit; Airflow only looks for it on PATH.
            from kafka_migration.spark.startup import pyspark_dir

            env["PATH"] = os.pathsep.join([str(pyspark_dir() / "bin"), os.environ.get("PATH", "")])
        self.env_vars = env
        deploy_mode = hook._connection.get("deploy_mode")
        master = hook._connection.get("master")
        conf = {**dict(self.conf or {}), **delivery.conf}
        archive = settings.task_executor_env()
        if archive:  # the packed environment the executors run (spark/executor_env.py); not in local mode
            conf = executor_env_conf(archive, conf, deploy_mode, master)
            if "spark.archives" in conf:
                self.log.info("Executors run the shipped environment %s", conf["spark.archives"])
        # Shorter driver start-up (spark/startup.py).
        startup = driver_startup(default_archive_dir(), deploy_mode, log_level)
        conf = worker_daemon_conf(conf, master, env["PYSPARK_PYTHON"])
        self.conf = startup.conf(conf)
        self._hook = self._get_hook()
        return startup
