"""Run a plan's Spark step with ``spark-submit``, outside Airflow (the CLI's path).

Cluster settings travel in the child's environment, never on its command line.

``SparkApplication`` can also start the application before the plan exists: the driver
starts Spark and its Python workers, then waits for its word on a FIFO that only this
process holds open ("go"; or "plan", then "ready N" as target topics come up; end of file
when this process aborts or dies: spark/gate.py), so Spark's start-up runs while the run
is planned, and its copy while the target topics are created. spark-submit does not pass
its stdin on to a Python driver, hence the FIFO.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_migration.exceptions import ConfigurationError, SparkJobError
from kafka_migration.model.census import Census
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.plan import MigrationPlan
from kafka_migration.model.results import StepResults
from kafka_migration.run.census import ANSWER, REQUEST, read_answer
from kafka_migration.run.progress import PROGRESS_SECONDS_ENV
from kafka_migration.spark.census_jobs import census_written
from kafka_migration.spark.driver import results_written, spark_up
from kafka_migration.spark.driver_env import driver_env
from kafka_migration.spark.executor_env import configured_executor_env, executor_env_conf
from kafka_migration.spark.gate import ABORT, CENSUS, GO, PLAN, ready_line
from kafka_migration.spark.processes import descendants, end_all
from kafka_migration.spark.startup import (
    DriverStartup,
    default_archive_dir,
    driver_startup,
    spark_home,
    spark_log_level,
    worker_daemon_conf,
)

log = logging.getLogger(__name__)

ENTRY_POINTS = {
    "copy": "copy_topics.py",
    "verify": "verify_topics.py",
    "migrate": "migrate_topics.py",
    "census": "census_topics.py",
}


def entry_point(step: str) -> Path:
    """The ``spark_jobs`` script for a step (the same files the DAG submits)."""
    import importlib.util

    spec = importlib.util.find_spec("spark_jobs")
    if spec is None or not spec.submodule_search_locations:
        raise SparkJobError("The spark_jobs package is not installed next to kafka_migration; reinstall the project.")
    return Path(next(iter(spec.submodule_search_locations))) / ENTRY_POINTS[step]


def spark_submit_binary() -> str:
    """spark-submit from SPARK_HOME, else the one shipped with the pyspark package."""
    bundled = spark_home() / "bin" / "spark-submit"
    if bundled.exists():
        return str(bundled)
    found = shutil.which("spark-submit")
    if not found:
        raise SparkJobError("spark-submit not found: install pyspark or set SPARK_HOME.")
    return found


# Task slots per core in local mode. A copy or verify task spends most of its time waiting
# on the brokers (fetch and produce round trips), so one slot per core leaves the CPU idle:
# on 2 cores, 2 slots per core copied ~1.4x faster than 1, and 4 per core no faster than 2.
LOCAL_SLOTS_PER_CORE = 2


def default_master() -> str:
    """``local[2 x cores]``, or $KAFKA_MIGRATION_SPARK_MASTER."""
    configured = os.environ.get("KAFKA_MIGRATION_SPARK_MASTER")
    if configured:
        return configured
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return f"local[{LOCAL_SLOTS_PER_CORE * cores}]"


# Master URLs spark-submit accepts (Spark 4): local threads, a standalone cluster, YARN, Kubernetes.
_MASTER = re.compile(
    r"local(\[(\*|[1-9][0-9]*)(,[1-9][0-9]*)?\])?"
    r"|local-cluster\[[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*\]"
    r"|spark://[^\s/,:]+(:[0-9]{1,5})?(,[^\s/,:]+(:[0-9]{1,5})?)*"
    r"|yarn|k8s://\S+"
)


@dataclass(frozen=True)
class SparkSettings:
    master: str = field(default_factory=default_master)
    conf: Mapping[str, str] = field(default_factory=dict)
    parallel_topics: int = 4
    # Where the driver's class-data archive lives (spark/startup.py); None: no archive.
    archive_dir: Path | None = field(default_factory=default_archive_dir)
    # The packed executor environment shipped with every submit (executor_env.py); None: executors use
    # the Python they have (local mode: this one).
    executor_env: str | None = field(default_factory=configured_executor_env)
    # How often the driver logs progress (run/progress.py); None: its default. The CLI asks for every second.
    progress_seconds: float | None = None

    def submit_conf(self) -> dict[str, str]:
        """The user's Spark settings, with those that ship the executor environment (theirs win). How a
        cluster's executors start is the driver's to add (spark/executors.py), under spark-defaults.conf too."""
        if not self.executor_env:
            return dict(self.conf)
        return executor_env_conf(self.executor_env, self.conf, master=self.master)

    def __post_init__(self) -> None:
        """A master or setting spark-submit would refuse is refused here, before topics are created."""
        if not _MASTER.fullmatch(self.master or ""):
            raise ConfigurationError(
                f"Spark master {self.master!r} (--master or $KAFKA_MIGRATION_SPARK_MASTER) is not one spark-submit "
                "accepts; use local[N], local[*], spark://HOST:7077, yarn or k8s://https://HOST:PORT."
            )
        for key in self.conf:
            if not key.startswith("spark."):
                raise ConfigurationError(
                    f"--spark-conf {key!r}: Spark only reads settings whose key starts with 'spark.', "
                    "e.g. --spark-conf spark.executor.memory=2g."
                )
        if self.conf.get("spark.speculation", "false").strip().lower() != "false":
            raise ConfigurationError(
                "--spark-conf spark.speculation: a speculative copy task would write the same records beside the "
                "one still running; drop the setting (a task lost with its executor is run again anyway)."
            )
        self.submit_conf()  # a missing or unusable archive fails here, before anything is planned or written
        spark_log_level()  # so does a Spark log level log4j does not know ($KAFKA_MIGRATION_SPARK_LOG_LEVEL)

    def driver_startup(self) -> DriverStartup:
        return driver_startup(self.archive_dir, self.conf.get("spark.submit.deployMode"))


def spark_env(source: ClusterConfig, target: ClusterConfig, base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    # spark-submit's environment is the driver's here (local or client mode): the settings travel whole.
    env.update(driver_env([source, target], env_becomes_conf=False, kubernetes=False).env)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return env


def submit_command(
    step: str,
    plan_path: Path,
    results_path: Path,
    jobs: Sequence[str],
    settings: SparkSettings,
    startup: DriverStartup | None = None,
    verify_results: Path | None = None,
    wait_for: Path | None = None,
) -> list[str]:
    command = [
        spark_submit_binary(),
        "--master",
        settings.master,
        "--name",
        f"kafka-migration-{step}",
        "--conf",
        "spark.ui.showConsoleProgress=false",
    ]
    conf = worker_daemon_conf(settings.submit_conf(), settings.master, os.environ.get("PYSPARK_PYTHON", sys.executable))
    conf = conf if startup is None else startup.conf(conf)
    for key, value in conf.items():
        command += ["--conf", f"{key}={value}"]
    command += [
        str(entry_point(step)),
        "--plan",
        str(plan_path),
        "--results",
        str(results_path),
        "--parallel-topics",
        str(settings.parallel_topics),
    ]
    if verify_results is not None:
        command += ["--verify-results", str(verify_results)]
    if wait_for is not None:
        command += ["--wait-for", str(wait_for)]
    for job in jobs:
        command += ["--job", str(job)]
    return command


def can_wait(settings: SparkSettings) -> bool:
    """Whether the driver runs on this machine (client deploy mode), so that it can wait on a local FIFO."""
    return settings.conf.get("spark.submit.deployMode", "client") != "cluster" and hasattr(os, "mkfifo")


def drain(lines: Iterable[str], keep: Callable[[str], None], on_line: Callable[[str], None] | None) -> None:
    """Read a child's output to its end, whatever ``on_line`` does: a child whose pipe fills up blocks.

    ``on_line`` that raises (the caller's own output is gone: a closed pipe or terminal) is not called
    again; the lines still reach ``keep``, which holds the tail that errors quote.
    """
    for line in lines:
        line = line.rstrip("\n")
        keep(line)
        if on_line is not None:
            try:
                on_line(line)
            except Exception as error:  # any failure of the caller's printing, reported once
                log.warning("No longer passing Spark's output on (%s); still reading it to its end.", error)
                on_line = None


class SparkApplication:
    """One spark-submit of a step; with ``wait=True`` started ahead of its plan and told ``go()`` or ``abort()``.

    ``results`` maps each result kind the step writes ("copy", "verify") to its file.
    ``on_start`` receives the spark-submit process, e.g. so that a run that lost its lease can stop it.
    """

    def __init__(
        self,
        step: str,
        plan_path: Path,
        results: Mapping[str, Path],
        source: ClusterConfig,
        target: ClusterConfig,
        settings: SparkSettings,
        jobs: Sequence[str] = ("all",),
        on_line: Callable[[str], None] | None = None,
        on_start: Callable[[subprocess.Popen[str]], None] | None = None,
        wait: bool = False,
    ) -> None:
        self.step = step
        self.plan_path = plan_path
        self.results_paths = dict(results)
        self.tail: collections.deque[str] = collections.deque(maxlen=60)
        self._on_line = on_line
        self._channel: int | None = None
        self._fifo_dir: str | None = None
        self._told = False
        self._written = threading.Event()
        self._census = threading.Event()
        self._up = threading.Event()
        self.code: int | None = None
        for path in self.results_paths.values():
            path.unlink(missing_ok=True)
        self.startup = settings.driver_startup()
        wait_for = None
        if wait:
            self._fifo_dir = tempfile.mkdtemp(prefix="kafka-migration-go-")
            wait_for = Path(self._fifo_dir) / "go"
            os.mkfifo(wait_for, 0o600)
            # Read-write, so opening does not block; the driver sees end of file once this process is gone.
            self._channel = os.open(wait_for, os.O_RDWR)
        paths = [self.results_paths[k] for k in ("copy", "verify", "census") if k in self.results_paths]
        command = submit_command(
            step,
            plan_path,
            paths[0],
            jobs,
            settings,
            self.startup,
            verify_results=paths[1] if len(paths) > 1 else None,
            wait_for=wait_for,
        )
        try:
            env = spark_env(source, target)
            if settings.progress_seconds is not None:  # a setting of the user's own wins
                env.setdefault(PROGRESS_SECONDS_ENV, f"{settings.progress_seconds:g}")
            self.process = subprocess.Popen(
                command,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
        except BaseException:
            self._close()
            raise
        # Drained from the start: the driver logs while the plan is still being made.
        self._reader = threading.Thread(target=self._read, name=f"spark-{step}-output", daemon=True)
        self._reader.start()
        if on_start is not None:
            on_start(self.process)

    def _read(self) -> None:
        assert self.process.stdout is not None
        drain(self.process.stdout, self._keep, self._on_line)

    def _keep(self, line: str) -> None:
        self.tail.append(line)
        if results_written(line):
            self._written.set()
        elif census_written(line):
            self._census.set()
        elif spark_up(line):
            self._up.set()

    def up(self) -> bool:
        """Whether the driver is up and waits for its plan: from then on its executors read faster than this process."""
        return self._up.is_set()

    def _tell(self, word: str, final: bool = True) -> None:
        """Write one line (spark/gate.py); the FIFO stays open (its buffer with it) until the application has ended.
        Nothing more after a ``final`` word (go or abort)."""
        if self._channel is None or self._told:
            return
        self._told = final
        with contextlib.suppress(OSError):  # the driver is gone: wait() reports what it left
            os.write(self._channel, f"{word}\n".encode())

    def _close(self) -> None:
        if self._channel is not None:
            os.close(self._channel)  # end of file for a driver still waiting
            self._channel = None
        if self._fifo_dir is not None:
            shutil.rmtree(self._fifo_dir, ignore_errors=True)
            self._fifo_dir = None

    def census(self, plan: MigrationPlan) -> Census:
        """Before anything is written: the census of ``plan``'s source ranges, taken by the driver waiting for its
        plan (spark/gate.py); its run files are removed once read."""
        if self._channel is None or self._told:
            raise SparkJobError(
                f"The Spark {self.step} application does not wait for its plan: it cannot take a census."
            )
        request, answer = self.plan_path.with_name(REQUEST), self.plan_path.with_name(ANSWER)
        answer.unlink(missing_ok=True)
        plan.write(request)
        self._census.clear()
        self._tell(CENSUS, final=False)
        try:
            self._until(self._census, "during the census of the source records")
            return read_answer(answer)
        finally:
            request.unlink(missing_ok=True)
            answer.unlink(missing_ok=True)

    def _until(self, said: threading.Event, when: str) -> None:
        """Wait for the driver to say it wrote something (``said``); SparkJobError when it ended first."""
        while not said.wait(0.1):
            if self.process.poll() is not None:
                self._reader.join(timeout=5)
                if said.is_set():
                    return
                raise SparkJobError(
                    f"The Spark {self.step} application exited with code {self.process.returncode} {when}; nothing "
                    "was written to the target. Last output:\n" + "\n".join(self.tail)
                )

    def go(self) -> None:
        """The plan file is written and the target topics exist: run (what is not released yet)."""
        self._tell(GO)

    def planned(self) -> None:
        """The plan file is written; the target topics are being created: read the plan, wait for ``release``."""
        self._tell(PLAN, final=False)

    def release(self, count: int) -> None:
        """The first ``count`` topics of the plan's run order exist and were checked: their jobs may start."""
        self._tell(ready_line(count), final=False)

    def abort(self, grace: float = 10.0) -> None:
        """Do not run: the driver stops without writing anything; killed if it does not stop within ``grace``."""
        self._tell(ABORT)
        self._close()
        children = descendants(self.process.pid)  # the Python driver spark-submit started, and its workers
        if self.process.poll() is None:
            self.process.terminate()  # do not wait for a driver that is still starting Spark
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        end_all(children, grace)
        self._reader.join(timeout=5)
        self.startup.finish(False)
        self.code = self.process.returncode

    def results(self) -> dict[str, StepResults]:
        """What the application wrote, as soon as its driver says the files are complete (Spark may still be
        stopping then: ``detach`` lets it end by itself); SparkJobError when it ended without writing them."""
        while not self._written.wait(0.1):
            if self.process.poll() is not None:
                return self.wait()
        return {kind: StepResults.read(path) for kind, path in self.results_paths.items()}

    def detach(self) -> None:
        """After ``results``: let Spark stop by itself (a second or two) instead of waiting for it, unless this
        submit writes the driver's class archive, which is put in place only once the JVM has exited."""
        self._close()
        if self.startup.writing is not None:
            self.wait()

    def end(self) -> None:
        """Wait for the application to end by itself."""
        try:
            self.code = self.process.wait()
            self._reader.join()
        finally:
            self._close()
            # A JVM that exited by itself has written its class archive; a killed one may not have.
            self.startup.finish(
                self.code is not None and self.code >= 0 and all(p.exists() for p in self.results_paths.values())
            )

    def wait(self) -> dict[str, StepResults]:
        """Wait for the application to end; what it wrote, or SparkJobError when it wrote nothing."""
        self.end()
        if all(path.exists() for path in self.results_paths.values()):
            return {kind: StepResults.read(path) for kind, path in self.results_paths.items()}
        raise SparkJobError(
            f"The Spark {self.step} application exited with code {self.code} before writing results. Last output:\n"
            + "\n".join(self.tail)
        )


def submit_step(
    step: str,
    plan_path: Path,
    results_path: Path,
    source: ClusterConfig,
    target: ClusterConfig,
    settings: SparkSettings,
    jobs: Sequence[str] = ("all",),
    on_line: Callable[[str], None] | None = None,
    on_start: Callable[[subprocess.Popen[str]], None] | None = None,
) -> StepResults:
    """Submit the copy or verify step as a Spark application of its own, wait for it, and return what it wrote;
    raise if it wrote nothing."""
    app = SparkApplication(
        step, plan_path, {step: results_path}, source, target, settings, jobs, on_line=on_line, on_start=on_start
    )
    return app.wait()[step]


def migrate_application(
    directory: Path,
    source: ClusterConfig,
    target: ClusterConfig,
    spark: SparkSettings,
    on_line: Callable[[str], None] | None = None,
    on_start: Callable[[subprocess.Popen[str]], None] | None = None,
    wait: bool = False,
) -> SparkApplication:
    """A run's one Spark application (step ``migrate``) for the run files in ``directory``: the copy, and
    the verification of each slice right after its copy. ``wait``: started ahead of the plan (see above)."""
    return SparkApplication(
        "migrate",
        directory / "plan.json",
        {"copy": directory / "copy.json", "verify": directory / "verify.json"},
        source,
        target,
        spark,
        on_line=on_line,
        on_start=on_start,
        wait=wait,
    )


@dataclass(frozen=True)
class SparkLauncher:
    """Starts a run's migrate application for run/pipeline.py (its ``Launcher``): ``settings`` for every
    run, ``on_line`` receiving Spark's output (progress)."""

    settings: SparkSettings = field(default_factory=SparkSettings)
    on_line: Callable[[str], None] | None = None

    def __call__(
        self,
        directory: Path,
        source: ClusterConfig,
        target: ClusterConfig,
        *,
        wait: bool,
        on_start: Callable[[subprocess.Popen[str]], None] | None = None,
    ) -> SparkApplication | None:
        if wait and not can_wait(self.settings):
            return None  # the driver runs elsewhere: launched once the plan is ready
        return migrate_application(directory, source, target, self.settings, self.on_line, on_start, wait=wait)

    def census(self, directory: Path, plan: MigrationPlan, source: ClusterConfig, target: ClusterConfig) -> Census:
        """The census of ``plan``'s source ranges by an application of its own (step ``census``), for a run whose
        migrate application cannot wait for its plan; its run files are removed once read."""
        request, answer = directory / REQUEST, directory / ANSWER
        plan.write(request)
        app = SparkApplication(
            "census", request, {"census": answer}, source, target, self.settings, on_line=self.on_line
        )
        try:
            app._until(app._written, "during the census of the source records")
            found = read_answer(answer)
            app.end()  # seconds: Spark stops, and any class archive is put in place
        except BaseException:
            app.abort()
            raise
        finally:
            request.unlink(missing_ok=True)
            answer.unlink(missing_ok=True)
        return found
