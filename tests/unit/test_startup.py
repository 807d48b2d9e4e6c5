"""kafka_migration.spark.startup and the submit command: driver JVM options and the class archive's life cycle.

The archive itself is written and read by a real JVM in tests/spark (every
spark-submit there goes through these options); here the file handling.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafka_migration.spark import startup
from kafka_migration.spark.startup import C1_ONLY, JAVA_OPTIONS, default_archive_dir, driver_startup
from kafka_migration.spark.submit import SparkSettings, default_master, submit_command


@pytest.fixture(autouse=True)
def _java(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A stand-in JDK layout: only paths and an mtime are read, the binary is never run."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "lib").mkdir()
    (home / "bin" / "java").write_text("")
    (home / "lib" / "modules").write_text("v1")
    monkeypatch.setenv("JAVA_HOME", str(home))
    return home


def test_without_a_directory_only_the_compiler_option() -> None:
    result = driver_startup(None)
    assert result.java_options == C1_ONLY
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
    assert driver_startup(tmp_path).java_options == C1_ONLY


def test_an_unwritable_directory_means_no_archive(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert driver_startup(blocked / "jvm").java_options == C1_ONLY


def test_paths_with_spaces_are_quoted_for_spark(tmp_path: Path) -> None:
    options = driver_startup(tmp_path / "with space").java_options
    assert '"-XX:ArchiveClassesAtExit=' in options


def test_the_users_java_options_come_last_so_they_win(tmp_path: Path) -> None:
    conf = driver_startup(None).conf({JAVA_OPTIONS: "-Xshare:off -Dx=1", "spark.other": "1"})
    assert conf == {JAVA_OPTIONS: f"{C1_ONLY} -Xshare:off -Dx=1", "spark.other": "1"}


def test_cluster_deploy_mode_gets_no_archive(tmp_path: Path) -> None:
    here = SparkSettings(master="local[2]", archive_dir=tmp_path).driver_startup()
    assert here.archive is not None
    remote = SparkSettings(
        master="spark://h:7077", conf={"spark.submit.deployMode": "cluster"}, archive_dir=tmp_path
    ).driver_startup()
    assert remote.archive is None and remote.java_options == C1_ONLY


def test_submit_command_carries_the_options(tmp_path: Path) -> None:
    settings = SparkSettings(master="local[3]", conf={"spark.x": "1"}, archive_dir=tmp_path)
    plan, results = tmp_path / "plan.json", tmp_path / "r.json"
    command = submit_command("copy", plan, results, ["all"], settings, driver_startup(None))
    assert command[command.index("--master") + 1] == "local[3]"
    assert f"{JAVA_OPTIONS}={C1_ONLY}" in command and "spark.x=1" in command


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
