"""Run a plan's Spark step with ``spark-submit``, outside Airflow (the CLI's path).

Cluster settings travel in the child's environment, never on its command line.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_migration.config import ClusterConfig
from kafka_migration.exceptions import ConfigurationError, SparkJobError
from kafka_migration.executor_env import configured_executor_env, executor_env_conf
from kafka_migration.results import StepResults
from kafka_migration.spark.driver_env import driver_env
from kafka_migration.spark.startup import DriverStartup, default_archive_dir, driver_startup

ENTRY_POINTS = {"copy": "copy_topics.py", "verify": "verify_topics.py"}


def entry_point(step: str) -> Path:
    """The ``spark_jobs`` script for a step (the same files the DAG submits)."""
    import importlib.util

    spec = importlib.util.find_spec("spark_jobs")
    if spec is None or not spec.submodule_search_locations:
        raise SparkJobError("The spark_jobs package is not installed next to kafka_migration; reinstall the project.")
    return Path(next(iter(spec.submodule_search_locations))) / ENTRY_POINTS[step]


def spark_submit_binary() -> str:
    """spark-submit from SPARK_HOME, else the one shipped with the pyspark package."""
    if os.environ.get("SPARK_HOME"):
        candidate = Path(os.environ["SPARK_HOME"]) / "bin" / "spark-submit"
        if candidate.exists():
            return str(candidate)
    import pyspark

    bundled = Path(pyspark.__file__).parent / "bin" / "spark-submit"
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

    def submit_conf(self) -> dict[str, str]:
        """The user's Spark settings, with those that ship the executor environment (theirs win)."""
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
        self.submit_conf()  # a missing or unusable archive fails here, before anything is planned or written

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
    conf = settings.submit_conf()
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
    for job in jobs:
        command += ["--job", str(job)]
    return command


def run_step(
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
    """Run one step as a Spark application and return what it wrote; raise if it wrote nothing.

    ``on_start`` receives the spark-submit process, e.g. so that a run that lost its lease can stop it.
    """
    results_path.unlink(missing_ok=True)
    startup = settings.driver_startup()
    command = submit_command(step, plan_path, results_path, jobs, settings, startup)
    code = -1
    tail: collections.deque[str] = collections.deque(maxlen=60)
    try:
        with subprocess.Popen(
            command,
            env=spark_env(source, target),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        ) as process:
            if on_start is not None:
                on_start(process)
            assert process.stdout is not None
            for line in process.stdout:
                line = line.rstrip("\n")
                tail.append(line)
                if on_line is not None:
                    on_line(line)
            code = process.wait()
    finally:
        # A JVM that exited by itself has written its class archive; a killed one may not have.
        startup.finish(code >= 0 and results_path.exists())
    if results_path.exists():
        return StepResults.read(results_path)
    raise SparkJobError(
        f"The Spark {step} application exited with code {code} before writing results. Last output:\n" + "\n".join(tail)
    )
