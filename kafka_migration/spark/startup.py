"""Driver JVM options: a shorter start-up every spark-submit pays, and Spark's own logging kept quiet.

Each copy and verify is a fresh Spark application, and in local mode the driver
JVM's start-up (class loading, JIT) costs more than copying a small topic. Two
standard HotSpot features cut it by about 3.5 s of the ~9 s a submit takes on a
2-core machine (see docs/benchmarks.md):

* ``-XX:TieredStopAtLevel=1``: compile with C1 only. The driver moves per-partition
  summaries, not records, so C2's optimised code buys nothing while its compiler
  threads compete with the tasks for the CPU.
* Application class-data sharing: the ~10,000 classes Spark loads are archived once
  per machine and mapped at every later start. The first submit without an archive
  writes one at exit (``-XX:ArchiveClassesAtExit``) under a temporary name, renamed
  into place only after the application ended well; later submits map it
  (``-XX:SharedArchiveFile``). The archive is named after the Spark installation (its
  version, and its jars: the driver's class path, where they are and when they last
  changed) and the JDK: the JVM maps an archive only with the build and class path it
  was written with, and ignores it otherwise, so two virtualenvs on one machine
  (Airflow's and the CLI's) each need their own. The worst case is the ordinary start-up.

The same options carry the driver's log4j2 configuration (``log4j2-driver.properties``): Spark's
loggers at WARN by default, so that a task log or ``kafka-migrate -v`` starts with the pipeline's
own lines instead of ~50 lines of Spark's start-up at INFO. ``spark_log_level`` (the variable
$KAFKA_MIGRATION_SPARK_LOG_LEVEL, or in Airflow the ``[kafka_migration] spark_log_level`` option
and the operator's ``spark_log_level``) brings them back with ``INFO``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kafka_migration.exceptions import ConfigurationError

C1_ONLY = "-XX:TieredStopAtLevel=1"
# The JVM warns about every class it cannot archive (Ivy, Ant, ...): noise in the task logs.
QUIET_ARCHIVE = "-Xlog:cds=off -Xlog:cds+dynamic=off"
JAVA_OPTIONS = "spark.driver.extraJavaOptions"


ARCHIVE_DIR_VARIABLE = "KAFKA_MIGRATION_CLASS_ARCHIVE_DIR"

LOG_LEVEL_VARIABLE = "KAFKA_MIGRATION_SPARK_LOG_LEVEL"
DEFAULT_LOG_LEVEL = "WARN"
LOG_LEVELS = ("ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF")  # SparkContext.setLogLevel's
LOG_CONFIG = Path(__file__).with_name("log4j2-driver.properties")
LOG_LEVEL_PROPERTY = "kafka_migration.spark.log.level"  # read by LOG_CONFIG


def spark_log_level(value: str | None = None) -> str:
    """The level of Spark's own loggers in the driver: ``value``, else $KAFKA_MIGRATION_SPARK_LOG_LEVEL, else
    WARN. A level log4j does not know is refused here, naming the setting, before anything is submitted."""
    given = value if value not in (None, "") else os.environ.get(LOG_LEVEL_VARIABLE)
    if given is None or not given.strip():
        return DEFAULT_LOG_LEVEL
    level = given.strip().upper()
    if level == "WARNING":
        level = "WARN"
    if level not in LOG_LEVELS:
        raise ConfigurationError(
            f"Spark log level {given!r} ({LOG_LEVEL_VARIABLE} or spark_log_level) is not one of "
            f"{', '.join(LOG_LEVELS)}; INFO shows Spark's own lines, the default WARN keeps them out."
        )
    return level


def log_options(level: str) -> str:
    """Java options that give the driver ``log4j2-driver.properties`` at ``level``."""
    return f"{_path_option_d('log4j2.configurationFile', LOG_CONFIG)} -D{LOG_LEVEL_PROPERTY}={level}"


def default_archive_dir() -> Path | None:
    """A per-user cache (the archive is a cache, not run state): $KAFKA_MIGRATION_CLASS_ARCHIVE_DIR
    (``off`` disables it), else $XDG_CACHE_HOME/kafka-migration/jvm, else ~/.cache/kafka-migration/jvm."""
    configured = os.environ.get(ARCHIVE_DIR_VARIABLE)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "none", "false", "0") else Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "kafka-migration" / "jvm"


@dataclass(frozen=True)
class DriverStartup:
    """The driver's Java options for one submit, and the archive it writes, if any."""

    java_options: str
    archive: Path | None = None
    writing: Path | None = None  # temporary archive written when this submit's JVM exits

    def conf(self, conf: dict[str, str]) -> dict[str, str]:
        """``conf`` with these options first in ``spark.driver.extraJavaOptions`` (the user's own win)."""
        theirs = conf.get(JAVA_OPTIONS, "").strip()
        return {**conf, JAVA_OPTIONS: f"{self.java_options} {theirs}".strip()}

    def finish(self, succeeded: bool) -> None:
        """Put the archive written by this submit in place, or drop it when the application failed."""
        if self.writing is None or self.archive is None:
            return
        try:
            if succeeded and self.writing.is_file() and self.writing.stat().st_size > 0:
                os.replace(self.writing, self.archive)  # atomic: concurrent submits never see half an archive
        finally:
            self.writing.unlink(missing_ok=True)


def java_binary() -> Path | None:
    """The ``java`` spark-submit starts: $JAVA_HOME/bin/java, else the one on PATH."""
    if os.environ.get("JAVA_HOME"):
        candidate = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
        if candidate.exists():
            return candidate.resolve()
    found = shutil.which("java")
    return Path(found).resolve() if found else None


def pyspark_dir() -> Path:
    """The installed pyspark package's directory (its bin/ and jars/), found without importing it: ``import
    pyspark`` costs ~0.1 s, paid by every Airflow task that submits a Spark step."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError("pyspark is not installed: install the project's requirements.")
    return Path(next(iter(spec.submodule_search_locations)))


def spark_home() -> Path:
    """The Spark installation spark-submit runs from: $SPARK_HOME when it has ``bin/spark-submit``, else the
    installed pyspark package (its ``bin/`` and ``jars/``)."""
    configured = os.environ.get("SPARK_HOME")
    if configured and (Path(configured) / "bin" / "spark-submit").exists():
        return Path(configured)
    return pyspark_dir()


def pyspark_version() -> str:
    """The installed pyspark's version, read from its metadata (no import, as ``pyspark_dir``)."""
    from importlib.metadata import version

    return version("pyspark")


def archive_path(directory: Path) -> Path | None:
    """Where this machine's archive for this Spark installation and JDK lives; None without a JDK."""
    java = java_binary()
    if java is None:
        return None
    spark = pyspark_version()
    modules = java.parent.parent / "lib" / "modules"  # changes with every JDK build
    jars = spark_home().resolve() / "jars"  # the class path; a reinstall in place rewrites the directory
    stamp = f"{spark}|{jars}|{_mtime(jars)}|{java}|{_mtime(modules)}"
    digest = hashlib.sha256(stamp.encode()).hexdigest()[:12]
    return directory / f"spark-{spark}-{digest}.jsa"


def _mtime(path: Path) -> int | str:
    return path.stat().st_mtime_ns if path.exists() else ""


def _path_option(name: str, path: Path) -> str:
    option = f"-XX:{name}={path}"
    return f'"{option}"' if any(c.isspace() for c in option) else option  # Spark splits the options on spaces


def _path_option_d(name: str, path: Path) -> str:
    option = f"-D{name}={path}"
    return f'"{option}"' if any(c.isspace() for c in option) else option


def driver_startup(
    archive_dir: Path | None, deploy_mode: str | None = "client", log_level: str | None = None
) -> DriverStartup:
    """Options for the next submit. The archive and the log configuration only when the driver runs on this
    machine (client deploy mode, spark-submit's default; a cluster's driver has neither file); the archive
    only when ``archive_dir`` is set. ``log_level``: Spark's, as ``spark_log_level`` decides it."""
    if deploy_mode == "cluster":
        return DriverStartup(C1_ONLY)
    base = f"{C1_ONLY} {log_options(spark_log_level(log_level))}"
    archive = archive_path(archive_dir) if archive_dir is not None else None
    if archive_dir is None or archive is None:
        return DriverStartup(base)
    if archive.is_file():
        return DriverStartup(f"{base} {_path_option('SharedArchiveFile', archive)} {QUIET_ARCHIVE}", archive)
    try:
        archive_dir.mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: start without the archive
        return DriverStartup(base)
    writing = archive.with_name(f"{archive.stem}.{uuid.uuid4().hex[:8]}.writing")
    options = f"{base} {_path_option('ArchiveClassesAtExit', writing)} {QUIET_ARCHIVE}"
    return DriverStartup(options, archive, writing)


DAEMON_MODULE = "spark.python.daemon.module"
COMPILED_DAEMON = "kafka_migration.spark.daemon"


def worker_daemon_conf(conf: Mapping[str, str], master: str | None, worker_python: str) -> dict[str, str]:
    """``conf`` with the daemon that imports compiled PySpark (spark/daemon.py), where it is safe.

    Only in local mode and when the workers run this very Python (``PYSPARK_PYTHON``), which has
    kafka_migration installed: a daemon module the executors lack would fail every task obscurely.
    A daemon the user set, or a Python of their own, wins.
    """
    if not (master or "").startswith("local") or DAEMON_MODULE in conf or "spark.pyspark.python" in conf:
        return dict(conf)
    if os.path.abspath(worker_python) != os.path.abspath(sys.executable):
        return dict(conf)
    return {**conf, DAEMON_MODULE: COMPILED_DAEMON}
