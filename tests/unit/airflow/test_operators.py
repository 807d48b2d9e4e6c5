"""The DAG's Spark operator: the spark-submit command it runs, with no secret on it, on any master; the task
ending once the driver has written its results (not when Spark has stopped); on_kill stopping the submit;
the ``spark`` connection read as the provider documents it.

spark-submit is a small script here (``fake_submit``) that records what it was given and prints what a
driver would: no Spark, no cluster needed. A driver on a cluster (YARN cluster mode, Kubernetes) is
submitted through the Spark provider's public hook, which runs that script too. A real spark-submit runs
in tests/e2e; tests/unit/airflow/test_spark_provider_release.py runs this file against the provider's
newest release.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

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
    fake = {"spark-binary": "spark-submit"}  # the fake_submit script on PATH, not the installed pyspark's
    masters = {
        "SPARK_K8S": {"host": "k8s://https://k8s.example:6443", "extra": {"deploy-mode": "cluster"}},
        "SPARK_YARN": {"host": "yarn"},
        "SPARK_YARN_CLUSTER": {"host": "yarn", "extra": {"deploy-mode": "cluster", "queue": "etl"}},
        "SPARK_LOCAL": {"host": "local[2]", "extra": fake},
        "SPARK_CONF": {"host": "local[2]", "extra": {**fake, "conf": {"spark.cores.max": "3", "spark.a": "c"}}},
    }
    for name, fields in masters.items():
        monkeypatch.setenv(f"AIRFLOW_CONN_{name}", json.dumps({"conn_type": "spark", **fields}))
    # The Spark provider wants the cncf.kubernetes provider for k8s:// masters, which this project does not
    # install; building the command never calls it (only tracking a submitted driver pod would), so a
    # stand-in module object is enough here.
    import airflow.providers.apache.spark.hooks.spark_submit as spark_submit_hook

    monkeypatch.setattr(spark_submit_hook, "kube_client", object(), raising=False)
    return secrets_file


def _operator(conn_id: str, target_conn_id: str = "kafka_target", **kwargs: Any):  # type: ignore[no-untyped-def]
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
        task_id="copy_verify", step="migrate", job=job, conn_id=conn_id, target_conn_id=target_conn_id, **kwargs
    )


@pytest.fixture
def fake_submit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Put a ``spark-submit`` first on PATH whose body is given; it records its arguments and environment."""
    record = tmp_path / "submitted.json"
    monkeypatch.setenv("FAKE_SUBMIT_RECORD", str(record))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")

    def install(body: str = "") -> Path:
        script = bin_dir / "spark-submit"
        script.write_text(
            f"#!{sys.executable}\n"
            "import json, os, sys, time, pathlib\n"
            "pathlib.Path(os.environ['FAKE_SUBMIT_RECORD']).write_text(json.dumps("
            "{'argv': sys.argv[1:], 'env': dict(os.environ)}))\n" + body
        )
        script.chmod(0o755)
        return record

    return install


def _submitted(record: Path) -> tuple[list[str], dict[str, str]]:
    data = json.loads(record.read_text())
    return data["argv"], data["env"]


def _confs(argv: list[str]) -> dict[str, str]:
    return dict(argv[i + 1].split("=", 1) for i, arg in enumerate(argv) if arg == "--conf")


def test_kubernetes_submit_carries_references_not_secrets(connections: Path, fake_submit) -> None:  # type: ignore[no-untyped-def]
    """A driver on the cluster: the provider's public hook submits, and turns the environment into confs."""
    record = fake_submit("print('Exit code: 0')\n")
    op = _operator("spark_k8s")
    op._submit()
    argv, _ = _submitted(record)
    assert leaked(SECRET, " ".join(argv)) == []
    confs = _confs(argv)
    assert argv[argv.index("--master") + 1] == "k8s://https://k8s.example:6443"
    assert argv[argv.index("--deploy-mode") + 1] == "cluster"
    assert confs["spark.kubernetes.driver.secretKeyRef.KAFKA_MIGRATION_TARGET_SECRET_CONFIG"] == "kafka-dst:json"
    assert confs["spark.kubernetes.driverEnv.KAFKA_MIGRATION_SOURCE_CONFIG_FILE"] == str(connections)
    assert json.loads(confs["spark.kubernetes.driverEnv.KAFKA_MIGRATION_SOURCE_CONFIG"])["sasl.username"] == "migrator"
    args = argv[argv.index(op.application) + 1 :]
    assert args[args.index("--verify-results") + 1] == "/runs/v.json"


def test_yarn_cluster_mode_submits_through_the_provider_without_secrets(connections: Path, fake_submit) -> None:  # type: ignore[no-untyped-def]
    from airflow.exceptions import AirflowException

    record = fake_submit("print('Submitted application application_1_0001')\n")
    op = _operator("spark_yarn_cluster", target_conn_id="kafka_source")
    op._submit()
    argv, env = _submitted(record)
    assert leaked(SECRET, " ".join(argv)) == []
    assert argv[argv.index("--queue") + 1] == "etl" and argv[argv.index("--name") + 1] == "kafka-migration-migrate"
    assert _confs(argv)["spark.yarn.appMasterEnv.KAFKA_MIGRATION_SOURCE_CONFIG_FILE"] == str(connections)
    assert env["KAFKA_MIGRATION_TARGET_CONFIG_FILE"] == str(connections)

    fake_submit("sys.exit(3)\n")  # a failed submit fails the task
    with pytest.raises(AirflowException, match="Error code is: 3"):
        _operator("spark_yarn_cluster", target_conn_id="kafka_source")._submit()


def test_yarn_refuses_a_secret_with_no_reference(connections: Path) -> None:
    from kafka_migration.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"target connection's \['sasl\.password'\]") as info:
        _operator("spark_yarn", target_conn_id="kafka_plain").submitter().prepare()
    assert leaked(SECRET, str(info.value)) == []


def test_local_master_passes_settings_in_the_environment_only(connections: Path, fake_submit) -> None:  # type: ignore[no-untyped-def]
    fake_submit()
    op = _operator("spark_local")
    submission = op.submitter().prepare()
    command = op.submitter().submit_command(submission)
    assert command[0] == shutil.which("spark-submit")
    assert leaked(SECRET, " ".join(command)) == []
    # one application copies and verifies: both results files on its command line
    assert op.application.endswith("migrate_topics.py")
    args = command[command.index(op.application) + 1 :]
    assert args[args.index("--results") + 1] == "/runs/c.json"
    assert args[args.index("--verify-results") + 1] == "/runs/v.json"
    assert args[args.index("--job") + 1] == "0"
    assert command[command.index("--master") + 1] == "local[2]"
    assert json.loads(submission.env["KAFKA_MIGRATION_SOURCE_CONFIG"])["sasl.password"] == SECRET


def test_the_connections_conf_is_used_and_the_tasks_own_wins(connections: Path, fake_submit) -> None:  # type: ignore[no-untyped-def]
    fake_submit()
    op = _operator("spark_conf", conf={"spark.a": "task"})
    confs = _confs(op.submitter().submit_command(op.submitter().prepare()))
    assert confs["spark.cores.max"] == "3" and confs["spark.a"] == "task"
    assert confs["spark.ui.showConsoleProgress"] == "false"


def test_the_connections_kerberos_settings_reach_spark_submit(  # type: ignore[no-untyped-def]
    connections: Path, fake_submit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keytab (base64 in the connection, as the provider's form takes it) is a private file while it
    runs, named by path, never by content."""
    keytab = b"keytab bytes " + SECRET.encode()
    extra = {"spark-binary": "spark-submit", "deploy-mode": "client", "queue": "etl", "principal": "mig@EXAMPLE",
             "keytab": base64.b64encode(keytab).decode()}  # fmt: skip
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_KRB", json.dumps({"conn_type": "spark", "host": "yarn", "extra": extra}))
    record = fake_submit(
        "conf = dict(a.split('=', 1) for a in sys.argv[1:] if a.startswith('spark.'))\n"
        "path = pathlib.Path(conf['spark.kerberos.keytab'])\n"
        f"print('keytab', oct(path.stat().st_mode & 0o777), path.read_bytes() == {keytab!r}, flush=True)\n"
        f"print({_results_line()!r}, flush=True)\n"
    )
    op = _operator("spark_krb", target_conn_id="kafka_source")
    lines: list[str] = []
    monkeypatch.setattr(op.log, "info", lambda message, *args: lines.append(message % args))
    op.submitter().submit_until_results(op.submitter().prepare())
    argv, _ = _submitted(record)
    confs = _confs(argv)
    assert confs["spark.yarn.queue"] == "etl" and confs["spark.kerberos.principal"] == "mig@EXAMPLE"
    assert confs["spark.submit.deployMode"] == "client"
    assert "keytab 0o600 True" in lines
    assert not Path(confs["spark.kerberos.keytab"]).exists()  # removed once submitted
    assert leaked(SECRET, " ".join(argv)) == [] and leaked(SECRET, "\n".join(lines)) == []


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


@pytest.mark.parametrize(
    ("fields", "master"),
    [
        ({"host": "local[2]"}, "local[2]"),
        ({"host": "spark://127.0.0.1", "port": 7077}, "spark://127.0.0.1:7077"),
        ({"host": "master.example", "port": 7077}, "spark://master.example:7077"),  # the provider's form
        ({"host": "k8s://https://api.example", "port": 443}, "k8s://https://api.example:443"),
        ({"host": "yarn"}, "yarn"),
    ],
)
def test_the_spark_connection_is_read_as_the_provider_documents_it(
    monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any], master: str
) -> None:
    from kafka_migration.airflow.hooks import SparkConnectionHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_X", json.dumps({"conn_type": "spark", **fields}))
    assert SparkConnectionHook("spark_x").get_spark_connection().master == master


def test_a_spark_connection_made_from_a_uri_keeps_its_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_migration.airflow.hooks import SparkConnectionHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_URI", "spark://master.example:7077?deploy-mode=client")
    connection = SparkConnectionHook("spark_uri").get_spark_connection()
    assert (connection.master, connection.deploy_mode, connection.driver_in_submit) == (
        "spark://master.example:7077",
        "client",
        True,
    )


@pytest.mark.parametrize(
    ("conn", "message"),
    [
        (None, r"'spark_bad' for the Spark master does not exist"),
        ({"host": "yarn", "extra": {"deploy-mode": "remote"}}, "deploy-mode 'remote' must be client or cluster"),
        ({"host": "yarn", "extra": {"spark-binary": "/opt/x"}}, "spark-binary '/opt/x' must be one of"),
        ({"host": "yarn", "extra": {"conf": {"cores": "2"}}}, "must be an object of Spark settings"),
        ({"host": "spark://m", "port": 7077, "extra": {"deploy-mode": "cluster"}}, "use deploy-mode client"),
    ],
)
def test_a_bad_spark_connection_is_named(
    connections: Path, monkeypatch: pytest.MonkeyPatch, conn: dict[str, Any] | None, message: str
) -> None:
    from kafka_migration.exceptions import ConfigurationError

    if conn is not None:
        monkeypatch.setenv("AIRFLOW_CONN_SPARK_BAD", json.dumps({"conn_type": "spark", **conn}))
    with pytest.raises(ConfigurationError, match=message):
        _operator("spark_bad").submitter().prepare()


def _results_line() -> str:
    from kafka_migration.spark.driver import RESULTS_WRITTEN, log

    return f"2026-11-23 18:36:54,905 INFO {log.name}: {RESULTS_WRITTEN}"


def test_submit_returns_once_the_driver_wrote_its_results(connections: Path, fake_submit, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The task does not wait for Spark to stop (the SparkContext stop and JVM exit) after the results are
    complete, as the CLI does; spark-submit is still reaped."""
    done = tmp_path / "stopped"
    fake_submit(
        "print('INFO kafka_migration.spark: verify finished', flush=True)\n"
        f"print({_results_line()!r}, flush=True)\n"
        "time.sleep(3)\n"
        "print('Spark stopping', flush=True)\n"
        f"pathlib.Path({str(done)!r}).touch()\n"
    )
    op = _operator("spark_local")
    op.submitter().submit_until_results(op.submitter().prepare())
    process = op.submitter().process
    assert process is not None
    assert process.poll() is None and not done.exists()  # returned while "Spark" was still stopping
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process.returncode == 0 and done.exists()  # drained and reaped in the background


def test_submit_waits_for_a_driver_that_writes_its_class_archive(  # type: ignore[no-untyped-def]
    connections: Path, fake_submit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive is put in place only once the JVM has exited: that submit is waited for to its end."""
    monkeypatch.setenv("KAFKA_MIGRATION_CLASS_ARCHIVE_DIR", str(tmp_path / "jvm"))
    done = tmp_path / "stopped"
    fake_submit(f"print({_results_line()!r}, flush=True)\ntime.sleep(1)\npathlib.Path({str(done)!r}).touch()\n")
    op = _operator("spark_local")
    submission = op.submitter().prepare()
    assert submission.startup.writing is not None
    op.submitter().submit_until_results(submission)
    assert done.exists() and op.submitter().process is not None and op.submitter().process.returncode == 0


def test_submit_without_results_fails_on_the_exit_code(connections: Path, fake_submit) -> None:  # type: ignore[no-untyped-def]
    from kafka_migration.exceptions import SparkJobError

    fake_submit("print('Exception in thread main')\nsys.exit(7)\n")
    op = _operator("spark_local")
    with pytest.raises(SparkJobError, match=r"exited with code 7 before its driver wrote its results(.|\n)*in thread"):
        op.submitter().submit_until_results(op.submitter().prepare())


def test_on_kill_stops_the_submit(connections: Path, fake_submit) -> None:  # type: ignore[no-untyped-def]
    """What a lost lease does (the heartbeat calls on_kill) and what Airflow does to a task marked failed."""
    from kafka_migration.exceptions import SparkJobError

    fake_submit("print('started', flush=True)\ntime.sleep(120)\n")
    op = _operator("spark_local")
    submission = op.submitter().prepare()
    killer = threading.Timer(1.0, op.on_kill)
    killer.start()
    started = time.monotonic()
    with pytest.raises(SparkJobError, match=r"exited with code -9 \(stopped\)"):
        op.submitter().submit_until_results(submission)
    killer.join()
    process = op.submitter().process
    assert time.monotonic() - started < 60 and process is not None and process.returncode == -9
    with pytest.raises(SparkJobError, match="stopped before it was submitted"):
        op.submitter().submit_until_results(submission)  # a stopped task submits nothing more


def test_early_return_still_fails_a_step_with_a_topic_not_ok(connections: Path, tmp_path: Path) -> None:
    """What the driver's exit code 1 said (a topic not OK) is read from the results files instead."""
    from kafka_migration.exceptions import SparkJobError
    from kafka_migration.model.results import StepResults, TopicOutcome

    op = _operator("spark_local")
    for key, status in (("copy_results", "ok"), ("verify_results", "mismatch")):
        path = tmp_path / f"{key}.json"
        outcome = TopicOutcome(source_topic="t", target_topic="t", status=status, seconds=1.0)
        StepResults(key.split("_")[0], "r1", [0], {"t": outcome}, "2026-11-23T18:00:00Z", 1.0).write(path)
        op.job[key] = str(path)
    with pytest.raises(SparkJobError, match=r"1 topic is not OK: t"):
        op._check_results()


def test_no_private_member_of_another_object_is_used() -> None:
    """The operator and the hooks use the Spark provider's public API only: no ``x._name`` but on self."""
    import ast

    from kafka_migration.airflow import hooks, operators, spark_steps

    found = []
    for module in (operators, spark_steps, hooks):
        tree = ast.parse(Path(module.__file__).read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{module.__name__}:{node.lineno} .{node.attr}")
        imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names]
        found += [f"{module.__name__} imports {name}" for name in imported if name.startswith("_")]
    assert found == []


def test_the_plan_tasks_census_is_submitted_as_the_copy_is_and_leaves_no_file(  # type: ignore[no-untyped-def]
    connections: Path, fake_submit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``spark_steps.spark_census``: step census to the spark_default master, the plan's ranges asked in the request
    file, the settings in the environment only; the answer read back, or its error, or the submit's; the request and
    answer removed whatever happened."""
    from kafka_migration.airflow.spark_steps import spark_census
    from kafka_migration.exceptions import CopyError, SparkJobError
    from kafka_migration.model.census import Sighting
    from kafka_migration.model.schemas import RecordPart
    from tests.unit.factories import migration_plan, topic_plan

    spark = {"conn_type": "spark", "host": "local[2]", "extra": {"spark-binary": "spark-submit"}}
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(spark))
    answer = (
        "args = sys.argv[1:]\n"
        "plan = json.loads(pathlib.Path(args[args.index('--plan') + 1]).read_text())\n"
        "sighting = {'topic': plan['topics'][0]['source_topic'], 'partition': 0, 'part': 'value', 'schema_id': 9, "
        "'offset': 2, 'records': 1}\n"
        "pathlib.Path(args[args.index('--results') + 1]).write_text(json.dumps({ANSWER}))\n"
        f"print({_results_line()!r}, flush=True)\n"
    )
    census = "{'census': {'sightings': [sighting], 'records': 3, 'planned': 3}}"
    record = fake_submit(answer.replace("{ANSWER}", census))
    plan = migration_plan(topic_plan("orders", (3,)))
    directory = tmp_path / "run"
    found = spark_census(plan, directory, ("kafka_source", "kafka_target"))
    assert found.sightings == (Sighting("orders", 0, RecordPart.VALUE, 9, 2),) and found.records == 3
    argv, env = _submitted(record)
    assert argv[argv.index("--name") + 1] == "kafka-migration-census" and argv[argv.index("--job") + 1] == "all"
    assert argv[argv.index("--plan") + 1] == str(directory / "census-plan.json")
    assert leaked(SECRET, " ".join(argv)) == [] and json.loads(env["KAFKA_MIGRATION_TARGET_CONFIG"])["sasl.password"]
    assert list(directory.iterdir()) == []

    fake_submit(answer.replace("{ANSWER}", "{'error': 'source orders[0]: unreachable'}"))
    with pytest.raises(CopyError, match=r"census of the source records failed: source orders\[0\]: unreachable"):
        spark_census(plan, directory, ("kafka_source", "kafka_target"))
    fake_submit("sys.exit(7)\n")
    with pytest.raises(SparkJobError, match="Spark census step exited with code 7 before its driver wrote"):
        spark_census(plan, directory, ("kafka_source", "kafka_target"))
    assert list(directory.iterdir()) == []
