"""The spark-submit command the DAG's Spark operator builds: no secret on it, on any master; and the
operator's task ending once the driver has written its results (not when Spark has stopped).

Builds the command with the Spark provider's own hook (no Spark, no cluster needed). YARN and
Kubernetes cannot run on this machine, so these tests stop at the command they would run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.leaks import leaked

SECRET = "pw-unit-5d1e"


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("KAFKA_MIGRATION_CLASS_ARCHIVE_DIR", "off")
    secrets_file = tmp_path / "source-secrets.json"
    secrets_file.write_text(json.dumps({"sasl.password": SECRET}))
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_SOURCE",
        json.dumps(
            {
                "conn_type": "kafka",
                "extra": {
                    "bootstrap.servers": "src:9093",
                    "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.username": "migrator",
                    "kafka_migration.settings_file": str(secrets_file),
                },
            }
        ),
    )
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_TARGET",
        json.dumps(
            {
                "conn_type": "kafka",
                "password": SECRET,
                "extra": {"bootstrap.servers": "dst:9093", "kafka_migration.kubernetes_secret": "kafka-dst:json"},
            }
        ),
    )
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_PLAIN",
        json.dumps({"conn_type": "kafka", "password": SECRET, "extra": {"bootstrap.servers": "dst:9093"}}),
    )
    masters = {"SPARK_K8S": "k8s://https://k8s.example:6443", "SPARK_YARN": "yarn", "SPARK_LOCAL": "local[2]"}
    for name, master in masters.items():
        monkeypatch.setenv(f"AIRFLOW_CONN_{name}", json.dumps({"conn_type": "spark", "host": master}))
    # The Spark provider wants the cncf.kubernetes provider for k8s:// masters, which this project does not
    # install; building the command never calls it (only tracking a submitted driver pod would), so a
    # stand-in module object is enough here.
    import airflow.providers.apache.spark.hooks.spark_submit as spark_submit_hook

    monkeypatch.setattr(spark_submit_hook, "kube_client", object(), raising=False)
    return secrets_file


def _operator(conn_id: str, target_conn_id: str = "kafka_target"):  # type: ignore[no-untyped-def]
    from kafka_migration.airflow.operators import MigrationSparkOperator

    job = {
        "run_id": "r1",
        "job": 0,
        "topics": ["t"],
        "plan_path": "/runs/r1/plan.json",
        "copy_results": "/runs/c.json",
        "verify_results": "/runs/v.json",
    }
    return MigrationSparkOperator(
        task_id="copy_verify", step="migrate", job=job, conn_id=conn_id, target_conn_id=target_conn_id
    )


def test_kubernetes_command_carries_references_not_secrets(connections: Path) -> None:
    op = _operator("spark_k8s")
    op.prepare()
    command = op._hook._build_spark_submit_command(op.application)
    assert leaked(SECRET, " ".join(command)) == []
    assert "spark.kubernetes.driver.secretKeyRef.KAFKA_MIGRATION_TARGET_SECRET_CONFIG=kafka-dst:json" in command
    assert f"spark.kubernetes.driverEnv.KAFKA_MIGRATION_SOURCE_CONFIG_FILE={connections}" in command
    source = next(c for c in command if c.startswith("spark.kubernetes.driverEnv.KAFKA_MIGRATION_SOURCE_CONFIG="))
    assert json.loads(source.split("=", 1)[1])["sasl.username"] == "migrator"


def test_yarn_refuses_a_secret_with_no_reference(connections: Path) -> None:
    from kafka_migration.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"target connection's \['sasl\.password'\]") as info:
        _operator("spark_yarn", target_conn_id="kafka_plain").prepare()
    assert leaked(SECRET, str(info.value)) == []


def test_local_master_passes_settings_in_the_environment_only(connections: Path) -> None:
    op = _operator("spark_local")
    op.prepare()
    command = op._hook._build_spark_submit_command(op.application)
    assert leaked(SECRET, " ".join(command)) == []
    # one application copies and verifies: both results files on its command line
    assert op.application.endswith("migrate_topics.py")
    args = command[command.index(op.application) + 1 :]
    assert args[args.index("--results") + 1] == "/runs/c.json"
    assert args[args.index("--verify-results") + 1] == "/runs/v.json"
    assert json.loads(op.env_vars["KAFKA_MIGRATION_SOURCE_CONFIG"])["sasl.password"] == SECRET


def test_unknown_kafka_migration_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_migration.airflow.hooks import KafkaClusterHook
    from kafka_migration.exceptions import ConfigurationError

    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_TYPO",
        json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": "b:1", "kafka_migration.setings_file": "x"}}),
    )
    with pytest.raises(ConfigurationError, match=r"unknown extra keys \['kafka_migration\.setings_file'\]"):
        KafkaClusterHook("kafka_typo").get_cluster_config()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"kafka_migration.kubernetes_secret": "no-key"}, "must look like SECRET_NAME:KEY"),
        ({"kafka_migration.settings_file": "/nonexistent/source.json"}, "/nonexistent/source.json does not exist"),
    ],
)
def test_bad_secret_references_are_named(monkeypatch: pytest.MonkeyPatch, extra: dict[str, str], message: str) -> None:
    from kafka_migration.airflow.hooks import KafkaClusterHook
    from kafka_migration.exceptions import ConfigurationError

    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_REF", json.dumps({"conn_type": "kafka", "extra": {"bootstrap.servers": "b:1", **extra}})
    )
    with pytest.raises(ConfigurationError, match=message) as info:
        KafkaClusterHook("kafka_ref").get_cluster_config()
    assert "'kafka_ref'" in str(info.value)


def test_settings_file_is_merged_over_the_extra(connections: Path) -> None:
    from kafka_migration.airflow.hooks import KafkaClusterHook

    config = KafkaClusterHook("kafka_source").get_cluster_config()
    assert config.settings["sasl.password"] == SECRET and "kafka_migration.settings_file" not in config.settings
    assert config.secrets.settings_file == str(connections) and config.secrets.file_keys == {"sasl.password"}


def _fake_spark_submit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, body: str):  # type: ignore[no-untyped-def]
    """A real SparkSubmitHook whose command is a small Python script standing in for spark-submit's output."""
    import sys

    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_LOCAL", json.dumps({"conn_type": "spark", "host": "local[2]"}))
    script = tmp_path / "fake_submit.py"
    script.write_text(body)
    hook = SparkSubmitHook(conn_id="spark_local")
    monkeypatch.setattr(hook, "_build_spark_submit_command", lambda application: [sys.executable, str(script)])
    return hook


def test_submit_returns_once_the_driver_wrote_its_results(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The task does not wait for Spark to stop (the SparkContext stop and JVM exit) after the results are
    complete, as the CLI does; spark-submit is still reaped."""
    import time

    from kafka_migration.airflow.operators import submit_until_results

    done = tmp_path / "stopped"
    hook = _fake_spark_submit(
        monkeypatch,
        tmp_path,
        "import time, pathlib\n"
        "print('INFO kafka_migration.spark: verify finished', flush=True)\n"
        "print('2026-11-23 18:36:54,905 INFO kafka_migration.spark: results written', flush=True)\n"
        "time.sleep(3)\n"
        "print('Spark stopping', flush=True)\n"
        f"pathlib.Path({str(done)!r}).touch()\n",
    )
    assert submit_until_results(hook, "app.py") is True
    process = hook._submit_sp
    assert process.poll() is None and not done.exists()  # returned while "Spark" was still stopping
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.returncode == 0 and done.exists()  # drained and reaped in the background


def test_submit_without_results_fails_on_the_exit_code(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from airflow.exceptions import AirflowException

    from kafka_migration.airflow.operators import submit_until_results

    hook = _fake_spark_submit(monkeypatch, tmp_path, "import sys\nprint('Exception in thread main')\nsys.exit(7)\n")
    with pytest.raises(AirflowException, match="Error code is: 7"):
        submit_until_results(hook, "app.py")


def test_early_return_still_fails_a_step_with_a_topic_not_ok(connections: Path, tmp_path: Path) -> None:
    """What the driver's exit code 1 said (a topic not OK) is read from the results files instead."""
    from airflow.exceptions import AirflowException

    from kafka_migration.model.results import StepResults, TopicOutcome

    op = _operator("spark_local")
    for key, status in (("copy_results", "ok"), ("verify_results", "mismatch")):
        path = tmp_path / f"{key}.json"
        outcome = TopicOutcome(source_topic="t", target_topic="t", status=status, seconds=1.0)
        StepResults(key.split("_")[0], "r1", [0], {"t": outcome}, "2026-11-23T18:00:00Z", 1.0).write(path)
        op.job[key] = str(path)
    with pytest.raises(AirflowException, match=r"1 topic is not OK: t"):
        op._check_results()
