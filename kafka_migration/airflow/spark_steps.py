"""One spark-submit of a ``spark_jobs`` step from an Airflow task: the ``spark`` connection read, the Kafka
connections' settings put in spark-submit's environment (or, for a driver on the cluster, passed by reference),
the driver started, followed until it has written its results, and stopped on request.

The copy-and-verify task (``operators.MigrationSparkOperator``) submits its job of the plan with it, and the plan
task its census of the source records (``spark_census``), so that both are submitted alike: one master, one way
for the secrets, one start-up.

Where the driver runs inside spark-submit (client deploy mode, not Kubernetes), the product submits itself,
with the command the CLI builds (``spark/submit.submit_command``): the task goes on once the driver has written
its results, not when Spark has stopped. Elsewhere the driver runs on the cluster and the Spark provider's
public ``SparkSubmitHook`` submits, follows and kills it; it turns the environment into ``--conf`` arguments,
so secrets go by reference (kafka_migration/spark/driver_env.py). No private member of the provider is used.
"""

from __future__ import annotations

import base64
import binascii
import collections
import contextlib
import logging
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

from kafka_migration.exceptions import ConfigurationError, SparkJobError
from kafka_migration.spark.driver import results_written
from kafka_migration.spark.submit import entry_point

if TYPE_CHECKING:
    from kafka_migration.airflow.hooks import SparkConnection
    from kafka_migration.ledger import Ledger
    from kafka_migration.model.census import Census
    from kafka_migration.model.plan import MigrationPlan
    from kafka_migration.spark.startup import DriverStartup

CONSOLE_PROGRESS = "spark.ui.showConsoleProgress"


@dataclass(frozen=True)
class StepFiles:
    """What one submit reads and writes: the plan, the results file (the copy's, for ``migrate``), the verification's
    (``migrate`` only) and the jobs of the plan it runs."""

    plan: str
    results: str
    verify_results: str | None = None
    jobs: tuple[str, ...] = ("all",)


@dataclass(frozen=True)
class Submission:
    """One submit of a step, as ``SparkStep.prepare`` resolves it (no secret in ``conf``)."""

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


class SparkStep:
    """A step (``migrate``, ``copy``, ``verify``, ``census``) submitted to the master of a ``spark`` connection.

    ``conf``: Spark settings of this submit (over the connection's extra ``conf``). ``spark_log_level``: Spark's
    own loggers in the task log (default WARN, or the ``[kafka_migration] spark_log_level`` option, or
    $KAFKA_MIGRATION_SPARK_LOG_LEVEL). ``log``: where the driver's output goes (the task's log)."""

    def __init__(  # noqa: PLR0913 (the operator's own keyword arguments, passed on)
        self,
        step: str,
        files: StepFiles,
        *,
        conn_id: str,
        source_conn_id: str,
        target_conn_id: str,
        conf: dict[str, str] | None = None,
        parallel_topics: int = 4,
        spark_log_level: str | None = None,
        log: Any = None,
    ) -> None:
        self.step = step
        self.files = files
        self.conn_id = conn_id
        self.source_conn_id = source_conn_id
        self.target_conn_id = target_conn_id
        self.conf = dict(conf or {})
        self.parallel_topics = parallel_topics
        self.spark_log_level = spark_log_level
        self.log = log if log is not None else logging.getLogger(__name__)
        self.application = str(entry_point(step))
        self.process: subprocess.Popen[str] | None = None
        self._provider_hook: Any = None  # the provider's SparkSubmitHook while it submits
        self._killed = threading.Event()

    def run(self) -> bool:
        """Submit and follow until the driver has written its results (ours) or the application has ended (the
        provider's); True when the driver ran inside spark-submit (the results files then say how it went)."""
        submission = self.prepare()
        ours = submission.connection.driver_in_submit
        succeeded = False
        try:
            if ours:
                self.submit_until_results(submission)
            else:
                self.submit_with_provider(submission)
            succeeded = True
        finally:
            submission.startup.finish(succeeded)
        return ours

    def kill(self) -> None:
        """Stop spark-submit (and, through the provider, a driver running on the cluster); nothing more submits."""
        self._killed.set()
        process, hook = self.process, self._provider_hook
        if process is not None and process.poll() is None:
            self.log.info("Stopping spark-submit (pid %s)", process.pid)
            process.kill()
        if hook is not None:
            hook.on_kill()

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
        files = self.files
        arguments = [
            "--plan",
            files.plan,
            *[a for job in files.jobs for a in ("--job", job)],
            "--results",
            files.results,
            *(["--verify-results", files.verify_results] if files.verify_results is not None else []),
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
        files = self.files
        command = submit_command(
            self.step,
            Path(files.plan),
            Path(files.results),
            list(files.jobs),
            spark,
            verify_results=Path(files.verify_results) if files.verify_results is not None else None,
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
        SparkContext stop and JVM exit (~1.5-2 s) then overlap what comes next instead of delaying it, while the
        rest of the output is drained and the process reaped in the background. Waited for to the end when it
        writes the driver's class archive (put in place only once the JVM has exited). Whether the step
        succeeded is read from the results files, as the driver's exit code would say it; SparkJobError when
        spark-submit ended without writing them."""
        with _keytab_file(submission.connection) as keytab:
            command = self.submit_command(submission, keytab)
            self.log.info("spark-submit: %s", " ".join(command))
            if self._killed.is_set():
                raise SparkJobError(f"The Spark {self.step} step was stopped before it was submitted.")
            self.process = process = subprocess.Popen(
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

    def submit_with_provider(self, submission: Submission) -> None:
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


def spark_census(
    plan: MigrationPlan,
    directory: Path,
    conn_ids: tuple[str, str],
    leases: tuple[Ledger, float] | None = None,
    log: Any = None,
) -> Census:
    """The census of ``plan``'s source ranges (run/census.py) by a Spark application of its own (step ``census``,
    ``spark_jobs/census_topics.py``), submitted to the ``spark_default`` connection's master as the copy is;
    ``conn_ids``: the run's source and target Kafka connections. Its request and answer files in ``directory`` are
    removed once read. ``leases``: the ledger and time to live of the run's leases, renewed while it reads (a
    lease lost stops it)."""
    from kafka_migration.airflow.hooks import SPARK_CONNECTION
    from kafka_migration.ledger.leases import LeaseHeartbeat
    from kafka_migration.run.census import ANSWER, REQUEST, read_answer
    from kafka_migration.run.claims import lease_keys

    request, answer = directory / REQUEST, directory / ANSWER
    answer.unlink(missing_ok=True)
    plan.write(request)
    step = SparkStep(
        "census",
        StepFiles(str(request), str(answer)),
        conn_id=SPARK_CONNECTION,
        source_conn_id=conn_ids[0],
        target_conn_id=conn_ids[1],
        log=log,
    )
    beat = None
    if leases is not None:
        ledger, ttl = leases
        beat = LeaseHeartbeat(ledger.leases, plan.run_id, lease_keys(plan), ttl, on_lost=lambda _: step.kill())
    try:
        with beat if beat is not None else contextlib.nullcontext():
            step.run()
            found = read_answer(answer)
    except BaseException:
        step.kill()  # the task stopped (or failed) while Spark read: no driver outlives it
        if beat is not None:
            beat.check()  # a census stopped for a lost lease fails as such
        raise
    finally:
        request.unlink(missing_ok=True)
        answer.unlink(missing_ok=True)
    if beat is not None:
        beat.check()
    return found


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
