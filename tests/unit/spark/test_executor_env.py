"""The settings that ship the executor environment, and how bad archives are refused up front."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_migration import cli
from kafka_migration.exceptions import ConfigurationError
from kafka_migration.spark.executor_env import build_executor_env, configured_executor_env, executor_env_conf
from kafka_migration.spark.executor_tasks import _task_rows
from kafka_migration.spark.submit import SparkSettings, submit_command
from tests.conftest import require_module
from tests.unit.factories import CLUSTERS, topic_plan


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    path = tmp_path / "env.tar.gz"
    path.write_bytes(b"not really gzip: only the name and existence are checked here")
    return path


class TestExecutorEnvConf:
    def test_ships_the_archive_and_keeps_the_drivers_python(self, archive: Path) -> None:
        assert executor_env_conf(str(archive)) == {
            "spark.archives": f"{archive}#env",
            "spark.pyspark.python": "./env/bin/python",
            "spark.pyspark.driver.python": sys.executable,
            "spark.python.daemon.module": "kafka_migration.spark.daemon",  # the environment holds this package
        }

    def test_cluster_deploy_mode_lets_the_driver_use_the_shipped_python_too(self, archive: Path) -> None:
        conf = executor_env_conf(str(archive), deploy_mode="cluster")
        assert "spark.pyspark.driver.python" not in conf
        assert conf["spark.pyspark.python"] == "./env/bin/python"
        assert "spark.pyspark.driver.python" not in executor_env_conf(
            str(archive), {"spark.submit.deployMode": "cluster"}
        )

    def test_user_settings_win_and_their_archives_are_kept(self, archive: Path) -> None:
        conf = executor_env_conf(
            f"{archive}#pyenv",
            {"spark.archives": "hdfs:///libs/extra.zip#extra", "spark.pyspark.python": "/opt/py/bin/python"},
        )
        assert conf["spark.archives"] == f"hdfs:///libs/extra.zip#extra,{archive}#pyenv"
        assert conf["spark.pyspark.python"] == "/opt/py/bin/python"
        assert "spark.python.daemon.module" not in conf  # their Python may not hold this package
        theirs = {"spark.python.daemon.module": "pyspark.daemon"}
        assert executor_env_conf(str(archive), theirs)["spark.python.daemon.module"] == "pyspark.daemon"

    def test_nothing_is_shipped_to_a_local_master_but_the_archive_is_checked(self, archive: Path) -> None:
        assert executor_env_conf(str(archive), {"spark.ui.enabled": "false"}, master="local[4]") == {
            "spark.ui.enabled": "false"
        }
        with pytest.raises(ConfigurationError, match="does not exist"):
            executor_env_conf("/nowhere/env.tar.gz", master="local[4]")

    def test_remote_uris_are_passed_through_unchecked(self) -> None:
        conf = executor_env_conf("hdfs:///apps/kafka-migration/env.tar.gz")
        assert conf["spark.archives"] == "hdfs:///apps/kafka-migration/env.tar.gz#env"

    def test_relative_paths_become_absolute(self, archive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.chdir(archive.parent)
        assert executor_env_conf("env.tar.gz")["spark.archives"] == f"{archive}#env"

    @pytest.mark.parametrize(
        ("value", "message"),
        [
            ("/nowhere/env.tar.gz", "/nowhere/env.tar.gz does not exist; build it with `kafka-migrate package-env"),
            ("file:///nowhere/env.tar.gz", "/nowhere/env.tar.gz does not exist"),
            ("/tmp/env.whl", "not an archive Spark can unpack"),
            ("#env", "is empty"),
        ],
    )
    def test_unusable_archives_are_refused(self, value: str, message: str) -> None:
        with pytest.raises(ConfigurationError, match=message.replace("(", r"\(")):
            executor_env_conf(value)

    def test_configured_from_the_environment(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("KAFKA_MIGRATION_EXECUTOR_ENV", " /srv/env.tar.gz ")
        assert configured_executor_env() == "/srv/env.tar.gz"
        assert configured_executor_env("") is None  # an explicit empty value ships nothing
        monkeypatch.setenv("KAFKA_MIGRATION_EXECUTOR_ENV", "")
        assert configured_executor_env() is None


class TestSubmission:
    def test_submit_command_carries_the_shipping_settings(self, archive: Path, tmp_path: Path) -> None:
        settings = SparkSettings(
            master="spark://127.0.0.1:7077", conf={"spark.executor.cores": "2"}, executor_env=str(archive)
        )
        command = submit_command("copy", tmp_path / "plan.json", tmp_path / "copy.json", ["all"], settings)
        confs = [command[i + 1] for i, arg in enumerate(command) if arg == "--conf"]
        assert f"spark.archives={archive}#env" in confs
        assert "spark.pyspark.python=./env/bin/python" in confs
        assert f"spark.pyspark.driver.python={sys.executable}" in confs
        assert "spark.python.daemon.module=kafka_migration.spark.daemon" in confs
        assert "spark.executor.cores=2" in confs

    def test_local_mode_ships_nothing(self, archive: Path, tmp_path: Path) -> None:
        settings = SparkSettings(master="local[2]", executor_env=str(archive))
        command = submit_command("copy", tmp_path / "p.json", tmp_path / "c.json", ["all"], settings)
        assert not any(arg.startswith(("spark.archives", "spark.pyspark.python")) for arg in command)

    def test_without_an_archive_nothing_is_shipped(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("KAFKA_MIGRATION_EXECUTOR_ENV", raising=False)
        command = submit_command("copy", tmp_path / "p.json", tmp_path / "c.json", ["all"], SparkSettings())
        assert not any(arg.startswith(("spark.archives", "spark.pyspark.python")) for arg in command)

    def test_settings_refuse_a_missing_archive(self) -> None:
        with pytest.raises(ConfigurationError, match="does not exist"):
            SparkSettings(executor_env="/nowhere/env.tar.gz")


def test_cli_refuses_a_missing_archive_before_writing_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "env.tar.gz"
    state = tmp_path / "state"
    args = ["--source", "127.0.0.1:1", "--target", "127.0.0.1:1", "--executor-env", str(missing)]
    code = cli.main(["run", *args, "--state-dir", str(state)])
    assert code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and str(missing) in lines[0] and "kafka-migrate package-env" in lines[0]
    assert not state.exists()


def test_package_env_refuses_bad_output_and_interpreter(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"must end with \.tar\.gz"):
        build_executor_env(tmp_path / "env.whl")
    with pytest.raises(ConfigurationError, match="no such interpreter"):
        build_executor_env(tmp_path / "env.tar.gz", python="/nowhere/python3.11")
    with pytest.raises(ConfigurationError, match="neither a wheel nor a source tree"):
        build_executor_env(tmp_path / "env.tar.gz", project=tmp_path)


def test_package_env_ships_the_running_source_tree_even_beside_a_stale_egg_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editable install leaves kafka_migration.egg-info in the tree, listing the files of that moment.
    # Run from the tree, its metadata shadows the install's: the archive must still hold today's modules.
    import kafka_migration
    from kafka_migration.spark.executor_env import _project_source

    stale = tmp_path / "tree"
    (stale / "kafka_migration.egg-info").mkdir(parents=True)
    (stale / "kafka_migration.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: kafka-migration\n")
    (stale / "kafka_migration.egg-info" / "SOURCES.txt").write_text("kafka_migration/__init__.py\n")
    monkeypatch.syspath_prepend(str(stale))
    (tmp_path / "work").mkdir()
    source = _project_source(None, tmp_path / "work")
    assert source is not None  # the tree itself is copied, not the stale list of installed files
    shipped = {p.name for p in (source / "kafka_migration").iterdir()}
    here = {p.name for p in Path(kafka_migration.__file__).parent.iterdir() if p.suffix == ".py"}
    assert here <= shipped and (source / "kafka_migration" / "run" / "windows.py").is_file()


@dataclass(frozen=True)
class Row:
    partition: int
    records: int


def test_every_task_row_names_the_python_that_ran_it() -> None:
    slices = topic_plan("a", (3, 4)).slices(include_empty=False)
    rows = _task_rows(lambda task, *args: [Row(piece.partition, 7) for piece in task], slices, CLUSTERS, None)
    assert [(r["partition"], r["records"]) for r in rows] == [(0, 7), (1, 7)]
    assert all(r["executor"]["python"] == sys.executable and r["executor"]["prefix"] == sys.prefix for r in rows)
    assert all(r["executor"]["workdir"] == os.getcwd() for r in rows)  # tells executors apart


def test_airflow_settings_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """[kafka_migration] executor_env in airflow.cfg (here through its AIRFLOW__ variable) before
    $KAFKA_MIGRATION_EXECUTOR_ENV; the Airflow Variable, read by the tasks, comes first (tests/e2e)."""
    require_module("airflow")
    from kafka_migration.airflow import settings

    monkeypatch.delenv("AIRFLOW__KAFKA_MIGRATION__EXECUTOR_ENV", raising=False)
    monkeypatch.setenv("KAFKA_MIGRATION_EXECUTOR_ENV", "/srv/from-env.tar.gz")
    assert settings.executor_env() == "/srv/from-env.tar.gz"
    monkeypatch.setenv("AIRFLOW__KAFKA_MIGRATION__EXECUTOR_ENV", "/srv/from-airflow-cfg.tar.gz")
    assert settings.executor_env() == "/srv/from-airflow-cfg.tar.gz"
