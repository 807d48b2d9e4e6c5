"""Spark steps of the migration as Airflow operators.

``MigrationSparkOperator`` submits one of the ``spark_jobs`` entry points for one job of the plan (the DAGs
use ``migrate``: copy and verification in one application) to the master of a ``spark`` connection, which
``SparkConnectionHook`` reads. Kafka settings (secrets included) reach spark-submit through its environment,
resolved from the Airflow connections at run time; they are never rendered into templates, arguments or XCom.

Where the driver runs inside spark-submit (client deploy mode, not Kubernetes), the product submits itself,
with the command the CLI builds (``spark/submit.submit_command``): the task ends once the driver has written
its results, not when Spark has stopped. Elsewhere the driver runs on the cluster and the Spark provider's
public ``SparkSubmitHook`` submits, follows and kills it; it turns the environment into ``--conf`` arguments,
so secrets go by reference (kafka_migration/spark/driver_env.py). No private member of the provider is used.
"""

from __future__ import annotations

import base64
import binascii
import collections
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

from kafka_migration.exceptions import ConfigurationError, SparkJobError
from kafka_migration.model.text import noun_for, plural
from kafka_migration.spark.driver import results_written
from kafka_migration.spark.submit import entry_point

if TYPE_CHECKING:
    from kafka_migration.airflow.hooks import SparkConnection
    from kafka_migration.spark.startup import DriverStartup


CONSOLE_PROGRESS = "spark.ui.showConsoleProgress"


@dataclass(frozen=True)
class Submission:
    """One submit of a step, as ``MigrationSparkOperator.prepare`` resolves it (no secret in ``conf``)."""

    connection: SparkConnection
    conf: dict[str, str]  # with the driver start-up's options
    env: dict[str, str]  # added to spark-submit's environment: the cluster settings travel here
    arguments: list[str]  # the application's
    startup: DriverStartup


def _drain(process: subprocess.Popen[str], lines: Iterator[str]) -> None:
    """Read Spark's stop (not logged: the task may have ended by then) and reap the process."""
    for _ in lines:
        pass
    process.wait()


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
        self._process: subprocess.Popen[str] | None = None
        self._provider_hook: Any = None  # the provider's SparkSubmitHook while it submits
        self._killed = threading.Event()

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
        self._killed.set()
        process, hook = self._process, self._provider_hook
        if process is not None and process.poll() is None:
            self.log.info("Stopping spark-submit (pid %s)", process.pid)
            process.kill()
        if hook is not None:
            hook.on_kill()

    def _submit(self) -> None:
        submission = self.prepare()
        self.log.info(
            "%s job %s of run %s: topics %s",
            self.step,
            self.job["job"],
            self.job["run_id"],
            ", ".join(self.job["topics"]),
        )
        ours = submission.connection.driver_in_submit
        succeeded = False
        try:
            if ours:
                self.submit_until_results(submission)
            else:
                self._submit_with_provider(submission)
            succeeded = True
        finally:
            submission.startup.finish(succeeded)
        if ours:
            self._check_results()

    def prepare(self) -> Submission:
        """Arguments, environment and confs of the submit (no secret in a conf); the driver start-up."""
        from kafka_migration.airflow import settings
        from kafka_migration.airflow.hooks import KafkaClusterHook, SparkConnectionHook
        from kafka_migration.spark.driver_env import driver_env
        from kafka_migration.spark.executor_env import executor_env_conf
        from kafka_migration.spark.startup import (
            LOG_LEVEL_VARIABLE,
            default_archive_dir,
            driver_startup,
            pyspark_dir,
            spark_log_level,
            worker_daemon_conf,
        )

        connection = SparkConnectionHook(self.conn_id).get_spark_connection()
        if connection.deploy_mode == "cluster" and connection.master.startswith("spark://"):
            raise ConfigurationError(
                f"Airflow connection {self.conn_id!r}: a standalone master in cluster deploy mode cannot give the "
                "driver the Kafka settings (they travel in spark-submit's environment); use deploy-mode client."
            )
        source = KafkaClusterHook(self.source_conn_id, "source").get_cluster_config()
        target = KafkaClusterHook(self.target_conn_id, "target").get_cluster_config()
        migrate = self.step == "migrate"
        arguments = [
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
        # On YARN and Kubernetes the provider passes spark-submit's environment as --conf arguments; on YARN the
        # rule holds in client mode too, so that a change of deploy mode does not start exposing secrets.
        is_k8s = connection.is_kubernetes
        delivery = driver_env([source, target], env_becomes_conf=connection.is_yarn or is_k8s, kubernetes=is_k8s)
        log_level = spark_log_level(self.spark_log_level or settings.spark_log_level())
        env = {
            **delivery.env,
            "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable),
            "PYSPARK_DRIVER_PYTHON": os.environ.get("PYSPARK_DRIVER_PYTHON", sys.executable),
            LOG_LEVEL_VARIABLE: log_level,  # the driver keeps it after its context started (spark/driver.py)
        }
        if shutil.which("spark-submit") is None:
            # The pyspark package ships spark-submit; the provider only looks for it on PATH.
            env["PATH"] = os.pathsep.join([str(pyspark_dir() / "bin"), os.environ.get("PATH", "")])
        deploy_mode = connection.deploy_mode
        conf = {CONSOLE_PROGRESS: "false", **connection.conf, **self.conf, **delivery.conf}
        archive = settings.task_executor_env()
        if archive:  # the packed environment the executors run (spark/executor_env.py); not in local mode
            conf = executor_env_conf(archive, conf, deploy_mode, connection.master)
            if "spark.archives" in conf:
                self.log.info("Executors run the shipped environment %s", conf["spark.archives"])
        # Shorter driver start-up (spark/startup.py).
        startup = driver_startup(default_archive_dir(), deploy_mode, log_level)
        conf = startup.conf(worker_daemon_conf(conf, connection.master, env["PYSPARK_PYTHON"]))
        return Submission(connection, conf, env, arguments, startup)

    def submit_command(self, submission: Submission, keytab: str | None = None) -> list[str]:
        """The spark-submit command of a driver inside spark-submit, built as the CLI builds its own."""
        from kafka_migration.spark.submit import SparkSettings, submit_command

        connection = submission.connection
        options = {
            "spark.submit.deployMode": connection.deploy_mode,
            "spark.yarn.queue": connection.queue,
            "spark.kerberos.principal": connection.principal,
            "spark.kerberos.keytab": keytab,
        }
        conf = {**submission.conf, **{key: value for key, value in options.items() if value}}
        if conf.get(CONSOLE_PROGRESS) == "false":
            del conf[CONSOLE_PROGRESS]  # submit_command sets it
        # The driver's options are in conf already: no start-up, and no executor environment, given again.
        spark = SparkSettings(
            master=connection.master,
            conf=conf,
            parallel_topics=self.parallel_topics,
            archive_dir=None,
            executor_env=None,
        )
        migrate = self.step == "migrate"
        command = submit_command(
            self.step,
            Path(self.job["plan_path"]),
            Path(self.job["copy_results" if migrate else f"{self.step}_results"]),
            [str(self.job["job"])],
            spark,
            verify_results=Path(self.job["verify_results"]) if migrate else None,
        )
        if connection.spark_binary:
            found = shutil.which(connection.spark_binary, path=submission.env.get("PATH") or os.environ.get("PATH"))
            if found is None:
                raise ConfigurationError(
                    f"Airflow connection {self.conn_id!r} names spark-binary {connection.spark_binary!r}, which is "
                    "not on PATH; install it or remove the setting (the installed pyspark's spark-submit is used)."
                )
            command[0] = found
        return command

    def submit_until_results(self, submission: Submission) -> None:
        """Submit a driver that runs inside spark-submit and log its output; return as soon as the driver has
        logged that its results files are complete, as the CLI does (``SparkApplication.detach``): the
        SparkContext stop and JVM exit (~1.5-2 s) then overlap the next task instead of delaying it, while the
        rest of the output is drained and the process reaped in the background. Waited for to the end when it
        writes the driver's class archive (put in place only once the JVM has exited). Whether the step
        succeeded is read from the results files, as the driver's exit code would say it; SparkJobError when
        spark-submit ended without writing them."""
        with _keytab_file(submission.connection) as keytab:
            command = self.submit_command(submission, keytab)
            self.log.info("spark-submit: %s", " ".join(command))
            if self._killed.is_set():
                raise SparkJobError(f"The Spark {self.step} step was stopped before it was submitted.")
            self._process = process = subprocess.Popen(
                command,
                env={**os.environ, **submission.env},
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
            if self._killed.is_set():  # stopped while it started
                process.kill()
            assert process.stdout is not None
            lines = iter(process.stdout)
            tail: collections.deque[str] = collections.deque(maxlen=60)
            written = False
            for raw in lines:
                line = raw.rstrip("\n")
                tail.append(line)
                self.log.info("%s", line)
                if results_written(line):
                    written = True
                    if submission.startup.writing is None:
                        break
            if written and submission.startup.writing is None:
                drain = threading.Thread(target=_drain, args=(process, lines), name="spark-submit-drain", daemon=True)
                drain.start()
                self.log.info("The driver wrote its results; Spark stops by itself (not waited for).")
                return
            code = process.wait()
        if not written:
            stopped = " (stopped)" if self._killed.is_set() else ""
            raise SparkJobError(
                f"spark-submit of the Spark {self.step} step exited with code {code}{stopped} before its driver "
                "wrote its results. Last output:\n" + "\n".join(tail)
            )

    def _submit_with_provider(self, submission: Submission) -> None:
        """A driver on the cluster: the Spark provider's public hook submits it, follows it and kills it."""
        from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

        if self._killed.is_set():
            raise SparkJobError(f"The Spark {self.step} step was stopped before it was submitted.")
        self._provider_hook = hook = SparkSubmitHook(
            conf=submission.conf,
            conn_id=self.conn_id,
            name=f"kafka-migration-{self.step}",
            application_args=submission.arguments,
            env_vars=submission.env,
        )
        hook.submit(self.application)

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


@contextlib.contextmanager
def _keytab_file(connection: SparkConnection) -> Iterator[str | None]:
    """The connection's keytab (base64, as the provider's form takes it) as a file only this user reads, for
    the time of one submit (spark-submit reads it at start); None without one."""
    if not connection.keytab:
        yield None
        return
    try:
        content = base64.b64decode(connection.keytab, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigurationError(
            "The Spark connection's keytab is not base64; paste the output of `base64 YOUR.keytab` into it."
        ) from None
    with tempfile.TemporaryDirectory(prefix="kafka-migration-keytab-") as directory:  # mode 0700
        path = Path(directory) / "spark.keytab"
        path.touch(0o600)
        path.write_bytes(content)
        yield str(path)
