"""kafka_migration.spark.startup and the submit command: driver JVM options and the class archive's life cycle.

The archive itself is written and read by a real JVM in tests/spark (every
spark-submit there goes through these options); here the file handling.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.spark import startup
from kafka_migration.spark.startup import (
    C1_ONLY,
    JAVA_OPTIONS,
    LOG_CONFIG,
    LOG_LEVEL_VARIABLE,
    default_archive_dir,
    driver_startup,
    spark_log_level,
)
from kafka_migration.spark.submit import SparkSettings, default_master, submit_command

QUIET = f"{C1_ONLY} -Dlog4j2.configurationFile={LOG_CONFIG} -Dkafka_migration.spark.log.level=WARN"


@pytest.fixture(autouse=True)
def _java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A stand-in JDK layout: only paths and an mtime are read, the binary is never run."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "bin" / "java").write_text("")
    (home / "lib" / "modules").write_text("v1")
    monkeypatch.setenv("JAVA_HOME", str(home))
    monkeypatch.delenv(LOG_LEVEL_VARIABLE, raising=False)
    return home


def test_without_a_directory_only_the_compiler_and_log_options() -> None:
    result = driver_startup(None)
    assert result.java_options == QUIET
    assert result.archive is None and result.writing is None


def test_first_submit_writes_the_archive_and_it_is_kept_only_after_success(tmp_path: Path) -> None:
    first = driver_startup(tmp_path / "jvm")
    assert first.writing is not None and first.archive is not None
    assert f"-XX:ArchiveClassesAtExit={first.writing}" in first.java_options
    assert first.writing.parent == first.archive.parent == tmp_path / "jvm"

    first.writing.write_bytes(b"archive")  # what the JVM does at exit
    first.finish(succeeded=True)
    assert first.archive.read_bytes() == b"archive"
    assert not first.writing.exists()

    second = driver_startup(tmp_path / "jvm")
    assert second.writing is None
    assert f"-XX:SharedArchiveFile={first.archive}" in second.java_options
    assert second.java_options.startswith(C1_ONLY)


def test_a_failed_or_killed_submit_leaves_no_archive(tmp_path: Path) -> None:
    attempt = driver_startup(tmp_path)
    assert attempt.writing is not None and attempt.archive is not None
    attempt.writing.write_bytes(b"maybe half")
    attempt.finish(succeeded=False)
    assert not attempt.writing.exists() and not attempt.archive.exists()

    empty = driver_startup(tmp_path)
    assert empty.writing is not None
    empty.writing.write_bytes(b"")
    empty.finish(succeeded=True)
    assert not empty.archive.exists()  # type: ignore[union-attr]


def test_concurrent_submits_write_to_different_files(tmp_path: Path) -> None:
    a, b = driver_startup(tmp_path), driver_startup(tmp_path)
    assert a.writing != b.writing and a.archive == b.archive


def test_the_archive_is_named_after_the_jdk_build(tmp_path: Path, _java: Path) -> None:
    before = driver_startup(tmp_path).archive
    (_java / "lib" / "modules").write_text("v2, a newer build")
    stat = (_java / "lib" / "modules").stat()
    os.utime(_java / "lib" / "modules", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert driver_startup(tmp_path).archive != before


def test_no_jdk_means_no_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setattr(startup.shutil, "which", lambda name: None)
    assert driver_startup(tmp_path).java_options == QUIET


def test_an_unwritable_directory_means_no_archive(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert driver_startup(blocked / "jvm").java_options == QUIET


def test_paths_with_spaces_are_quoted_for_spark(tmp_path: Path) -> None:
    options = driver_startup(tmp_path / "with space").java_options
    assert '"-XX:ArchiveClassesAtExit=' in options


def test_the_users_java_options_come_last_so_they_win(tmp_path: Path) -> None:
    conf = driver_startup(None).conf({JAVA_OPTIONS: "-Xshare:off -Dx=1", "spark.other": "1"})
    assert conf == {JAVA_OPTIONS: f"{QUIET} -Xshare:off -Dx=1", "spark.other": "1"}


def test_cluster_deploy_mode_gets_no_archive(tmp_path: Path) -> None:
    here = SparkSettings(master="local[2]", archive_dir=tmp_path).driver_startup()
    assert here.archive is not None
    remote = SparkSettings(
        master="spark://h:7077", conf={"spark.submit.deployMode": "cluster"}, archive_dir=tmp_path
    ).driver_startup()
    assert remote.archive is None and remote.java_options == C1_ONLY  # the driver runs elsewhere: no local files


def test_submit_command_carries_the_options(tmp_path: Path) -> None:
    settings = SparkSettings(master="local[3]", conf={"spark.x": "1"}, archive_dir=tmp_path)
    plan, results = tmp_path / "plan.json", tmp_path / "r.json"
    command = submit_command("copy", plan, results, ["all"], settings, driver_startup(None))
    assert command[command.index("--master") + 1] == "local[3]"
    assert f"{JAVA_OPTIONS}={QUIET}" in command and "spark.x=1" in command


def test_archive_directory_defaults_and_switch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KAFKA_MIGRATION_CLASS_ARCHIVE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_archive_dir() == tmp_path / "kafka-migration" / "jvm"
    monkeypatch.setenv("KAFKA_MIGRATION_CLASS_ARCHIVE_DIR", str(tmp_path / "elsewhere"))
    assert default_archive_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv("KAFKA_MIGRATION_CLASS_ARCHIVE_DIR", "off")
    assert default_archive_dir() is None
    assert SparkSettings().archive_dir is None


def test_default_master_oversubscribes_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_MIGRATION_SPARK_MASTER", raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2})
    assert default_master() == "local[6]"
    monkeypatch.setenv("KAFKA_MIGRATION_SPARK_MASTER", "spark://h:7077")
    assert default_master() == "spark://h:7077"


# --- PySpark's compiled modules instead of Spark's source zip (spark/pythonpath.py, spark/daemon.py) ---


def _spark_home(tmp_path: Path, zipped: str, installed: str | None) -> tuple[str, str]:
    """A SPARK_HOME-style pyspark.zip holding ``pyspark/version.py`` and, optionally, an installed package."""
    import zipfile

    archive = tmp_path / "spark" / "python" / "lib" / "pyspark.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("pyspark/__init__.py", "")
        out.writestr("pyspark/version.py", f'__version__: str = "{zipped}"\n')
    site = tmp_path / "site-packages"
    if installed is not None:
        (site / "pyspark").mkdir(parents=True)
        (site / "pyspark" / "__init__.py").write_text("")
        (site / "pyspark" / "version.py").write_text(f"__version__: str = '{installed}'\n")
    return str(archive), str(site)


def test_the_zip_goes_behind_the_same_installed_version(tmp_path: Path) -> None:
    from kafka_migration.spark.pythonpath import prefer_installed_pyspark

    archive, site = _spark_home(tmp_path, "4.3.0", "4.3.0")
    path = ["/app", archive, "/usr/lib/python3.11", site]
    assert prefer_installed_pyspark(path) == [archive]
    assert path == ["/app", "/usr/lib/python3.11", site, archive]


@pytest.mark.parametrize("installed", ["4.2.1", None])
def test_the_zip_stays_first_without_the_same_installed_version(tmp_path: Path, installed: str | None) -> None:
    from kafka_migration.spark.pythonpath import prefer_installed_pyspark

    archive, site = _spark_home(tmp_path, "4.3.0", installed)
    path = [archive, site]
    assert prefer_installed_pyspark(path) == []
    assert path == [archive, site]


def test_an_unreadable_zip_changes_nothing(tmp_path: Path) -> None:
    from kafka_migration.spark.pythonpath import prefer_installed_pyspark

    _archive, site = _spark_home(tmp_path, "4.3.0", "4.3.0")
    broken = tmp_path / "other" / "pyspark.zip"
    broken.parent.mkdir()
    broken.write_text("not a zip")
    path = [str(broken), site]
    assert prefer_installed_pyspark(path) == []
    assert path == [str(broken), site]


def test_this_installation_has_the_same_pyspark_in_both_places() -> None:
    """The product's own environment: the installed package and spark-submit's zip agree, so the zip moves."""
    import pyspark

    from kafka_migration.spark.pythonpath import prefer_installed_pyspark

    archive = Path(pyspark.__file__).parent / "python" / "lib" / "pyspark.zip"
    site = str(Path(pyspark.__file__).parent.parent)
    path = [str(archive), site]
    assert prefer_installed_pyspark(path) == [str(archive)]


def _zip(path: Path, files: dict[str, str]) -> str:
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as out:
        for name, text in files.items():
            out.writestr(name, text)
    return str(path)


SPARK_ZIP = {"pyspark/__init__.py": "X = 1\n", "pyspark/version.py": '__version__ = "4.3.0"\n'}


PY4J_ZIP = {"py4j/__init__.py": "", "py4j/version.py": '__version__ = "0.10.9.9"\n'}


def test_without_installed_packages_the_zips_are_unpacked_once_per_machine(tmp_path: Path) -> None:
    from kafka_migration.spark.pythonpath import unzipped_spark_zips

    files = {**SPARK_ZIP, "pyspark/sql/tests/test_x.py": "", "pyspark/errors/error-conditions.json": "{}"}
    archive = _zip(tmp_path / "spark" / "pyspark.zip", files)
    py4j = _zip(tmp_path / "spark" / "py4j-0.10.9.9-src.zip", PY4J_ZIP)
    path = ["/app", archive, py4j, str(tmp_path / "env-site-packages")]
    directory, py4j_directory = unzipped_spark_zips(path, tmp_path / "cache")
    assert path == ["/app", directory, py4j_directory, str(tmp_path / "env-site-packages")]
    unpacked = Path(directory)
    assert (unpacked / "pyspark" / "__init__.py").read_text() == "X = 1\n"
    assert (unpacked / "pyspark" / "errors" / "error-conditions.json").is_file()  # data files too
    assert not (unpacked / "pyspark" / "sql" / "tests").exists()  # not the tests
    assert (Path(py4j_directory) / "py4j" / "version.py").is_file()
    # Another container's copy of the same zip (YARN localizes one per container) finds the same directory.
    copy = _zip(tmp_path / "container-2" / "pyspark.zip", files)
    assert unzipped_spark_zips([copy], tmp_path / "cache") == [directory]
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == sorted(  # nothing half-done left
        [unpacked.name, Path(py4j_directory).name]
    )
    # Another Spark build is another directory.
    other = _zip(tmp_path / "spark-4.3.1" / "pyspark.zip", {**SPARK_ZIP, "pyspark/version.py": '"4.3.1"'})
    assert unzipped_spark_zips([other], tmp_path / "cache") not in ([], [directory])


def test_a_directory_left_half_unpacked_is_not_used(tmp_path: Path) -> None:
    from kafka_migration.spark.pythonpath import unzipped_spark_zips

    archive = _zip(tmp_path / "pyspark.zip", SPARK_ZIP)
    (directory,) = map(Path, unzipped_spark_zips([archive], tmp_path / "cache"))
    (directory / ".complete").unlink()  # as if a daemon died before finishing
    (directory / "pyspark" / "__init__.py").unlink()
    path = [archive]
    assert unzipped_spark_zips(path, tmp_path / "cache") == []  # the rename loses to the old directory: zip kept
    assert path == [archive]


def test_the_zip_stays_when_pyspark_is_installed_first_or_nothing_can_be_written(tmp_path: Path) -> None:
    from kafka_migration.spark.pythonpath import unzipped_spark_zips

    archive, site = _spark_home(tmp_path, "4.3.0", "4.2.0")
    path = [site, archive]
    assert unzipped_spark_zips(path, tmp_path / "cache") == [] and path == [site, archive]
    read_only = tmp_path / "read-only"
    read_only.mkdir(mode=0o500)
    path = [archive]
    if os.geteuid() != 0:  # root writes anywhere
        assert unzipped_spark_zips(path, read_only / "cache") == [] and path == [archive]
    assert unzipped_spark_zips([str(tmp_path / "broken" / "pyspark.zip")], tmp_path / "cache") == []


def test_a_cache_directory_others_can_write_to_or_a_link_is_not_used(tmp_path: Path) -> None:
    from kafka_migration.spark.pythonpath import unzipped_spark_zips

    archive = _zip(tmp_path / "pyspark.zip", SPARK_ZIP)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # as a directory someone else made in /tmp could be
    path = [archive]
    assert unzipped_spark_zips(path, shared) == [] and path == [archive]
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    assert unzipped_spark_zips(path, tmp_path / "link") == [] and path == [archive]


def test_the_cache_directory_is_configurable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from kafka_migration.spark.pythonpath import CACHE_VARIABLE, cache_root

    monkeypatch.setenv(CACHE_VARIABLE, "off")
    assert cache_root() is None
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path))
    assert cache_root() == tmp_path
    monkeypatch.delenv(CACHE_VARIABLE)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert cache_root() == tmp_path / "tmp" / f"kafka-migration-pyspark-{os.getuid()}"


def test_the_daemon_preloads_what_tasks_import_and_refuses_modules_that_start_threads(tmp_path: Path) -> None:
    import subprocess
    import sys

    thread = "import threading, time\nthreading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
    (tmp_path / "starts_a_thread.py").write_text(thread)
    tasks_import = ["pyspark.worker", "confluent_kafka", "kafka_migration.run.copy", "kafka_migration.run.verify"]
    tasks_import += [
        "kafka_migration.kafka.ranges",
        "kafka_migration.run.progress",
    ]  # imported inside the task functions
    code = (
        "import sys\n"
        "from kafka_migration.spark.daemon import preload\n"
        f"print(preload(), all(m in sys.modules for m in {tasks_import!r}))\n"
        "print(preload(('no_such_module',)), preload(('starts_a_thread',)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.split() == ["True", "True", "True", "False"]
    assert "not preloaded no_such_module" in done.stderr


def test_the_compiled_daemon_only_for_local_executors_running_this_python() -> None:
    import sys

    from kafka_migration.spark.startup import COMPILED_DAEMON, DAEMON_MODULE, worker_daemon_conf

    assert worker_daemon_conf({}, "local[4]", sys.executable) == {DAEMON_MODULE: COMPILED_DAEMON}
    assert worker_daemon_conf({}, "local-cluster[2,1,1024]", sys.executable)[DAEMON_MODULE] == COMPILED_DAEMON
    assert worker_daemon_conf({}, "spark://master:7077", sys.executable) == {}
    assert worker_daemon_conf({}, "yarn", sys.executable) == {}
    assert worker_daemon_conf({}, "local[4]", "/opt/other/bin/python3") == {}
    assert worker_daemon_conf({"spark.pyspark.python": "/x/python"}, "local[2]", sys.executable) == {
        "spark.pyspark.python": "/x/python"
    }
    theirs = {DAEMON_MODULE: "my.daemon"}
    assert worker_daemon_conf(theirs, "local[2]", sys.executable) == theirs


def test_submit_command_names_the_compiled_daemon_in_local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_migration.spark.startup import COMPILED_DAEMON, DAEMON_MODULE

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    command = submit_command("migrate", Path("p.json"), Path("r.json"), [], SparkSettings(master="local[2]"))
    assert f"{DAEMON_MODULE}={COMPILED_DAEMON}" in command
    command = submit_command("migrate", Path("p.json"), Path("r.json"), [], SparkSettings(master="spark://h:7077"))
    assert not any(arg.startswith(DAEMON_MODULE) for arg in command)


def test_the_driver_drops_the_numpy_converters_that_import_pandas() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from kafka_migration.spark.driver import _skip_numpy_conversion\n"
        "import pyspark\n"
        "from py4j import protocol\n"
        "_skip_numpy_conversion()\n"
        "for converter in protocol.INPUT_CONVERTER:\n"
        "    converter.can_convert('a string argument')\n"
        "print('pyspark.testing' in sys.modules, len(protocol.INPUT_CONVERTER))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert found[0] == "False" and int(found[1]) > 0


def test_sparks_own_log_level_is_warn_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    assert spark_log_level() == "WARN" and spark_log_level("") == "WARN"
    assert spark_log_level("info") == "INFO" and spark_log_level(" warning ") == "WARN"
    monkeypatch.setenv(LOG_LEVEL_VARIABLE, "debug")
    assert spark_log_level() == "DEBUG" and spark_log_level("ERROR") == "ERROR"  # the operator's own setting wins
    assert driver_startup(None).java_options.endswith("-Dkafka_migration.spark.log.level=DEBUG")
    assert driver_startup(None, log_level="INFO").java_options.endswith("-Dkafka_migration.spark.log.level=INFO")
    monkeypatch.setenv(LOG_LEVEL_VARIABLE, "loud")
    with pytest.raises(ConfigurationError, match=r"Spark log level 'loud' .*KAFKA_MIGRATION_SPARK_LOG_LEVEL"):
        SparkSettings(master="local[2]", archive_dir=None)  # refused before anything is planned


def test_the_log_configuration_reads_its_level_from_the_java_options() -> None:
    text = LOG_CONFIG.read_text()
    assert "rootLogger.level = ${sys:kafka_migration.spark.log.level:-WARN}" in text
    assert "appender.console.target = SYSTEM_ERR" in text  # where Spark's own configuration writes


def test_each_spark_installation_gets_its_own_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A JVM maps an archive only with the class path it was written with: two virtualenvs (two sets of
    Spark jars) on one machine sharing one archive name would leave all but the first without one."""
    archives = []
    for name in ("airflow-venv", "cli-venv"):
        home = tmp_path / name / "pyspark"
        (home / "bin").mkdir(parents=True)
        (home / "bin" / "spark-submit").write_text("")
        monkeypatch.setenv("SPARK_HOME", str(home))
        archives.append(driver_startup(tmp_path / "jvm").archive)
    assert archives[0] is not None and archives[1] is not None
    assert archives[0] != archives[1] and archives[0].parent == archives[1].parent
    assert driver_startup(tmp_path / "jvm").archive == archives[1]  # and the same installation keeps its own
    jars = tmp_path / "cli-venv" / "pyspark" / "jars"
    jars.mkdir()  # reinstalled in place: other jar files, a class path the old archive does not match
    assert driver_startup(tmp_path / "jvm").archive != archives[1]
