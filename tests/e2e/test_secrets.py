"""Secrets never leak: a whole migration through the CLI and through Airflow, then a search everywhere.

Both clusters require mutual TLS on their own SSL listeners (harness/kafka/tls.py); the CLI run is also the full
migration over mutual TLS (certificates by path for the source, inline for the target, the
copy read back independently). A unique password is planted as
``ssl.key.password`` (the client key is really encrypted with it, so the run cannot succeed
without it) and as ``sasl.password`` (unused with security.protocol=SSL, so only its
handling is tested), and the encrypted key travels inline (``ssl.key.pem``). After each run
the password and a piece of the key must be absent from: the CLI output and Airflow task
logs (Spark driver and executor output included: local mode prints both), the Spark event
log, the process arguments sampled with ``ps`` while the run goes, the run directory (plan,
results, reports in json/html/md, the SQLite ledger file), every table of the ledger, every
table of the Airflow metadata DB (XCom, rendered templates...), and the Kafka migrations page
and its API; as typed, base64-encoded (at any alignment) or URL-encoded (tests/leaks.py), the
key also as its bytes. Each check first proves it looked at something real.

A second CLI migration runs over SASL_SSL with SCRAM-SHA-512 on the brokers' own listeners, its user's
password (the one the brokers check) planted and searched for in the same places.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.data.read import read_partition, without_offsets
from harness.data.seed import create_topic, producer, send
from harness.kafka import ClusterSpec, KafkaCluster, SaslSsl, ScramUser, kafka_clusters
from harness.kafka.tls import TlsClusters, seed_topic, tls_clusters, topic_names
from tests.leaks import leaks

pytestmark = [pytest.mark.e2e, pytest.mark.integration, pytest.mark.spark]

SECRET = f"Planted {uuid.uuid4().hex}/+&=%"  # characters that URL-encoding changes
KAFKA_MIGRATE = str(Path(sys.executable).parent / "kafka-migrate")


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsClusters]:
    with tls_clusters(
        tmp_path_factory.mktemp("secrets"), source_mutual=True, target_mutual=True, key_password=SECRET
    ) as clusters:
        yield clusters


def _key_mark(tls: TlsClusters) -> str:
    """A line from the middle of the encrypted client key: the key itself must not leak either."""
    lines = tls.pki.client.key_pem.splitlines()
    return lines[len(lines) // 2]


def _settings(tls: TlsClusters, role: str, *, inline: bool = True) -> dict[str, object]:
    settings = tls.source_settings(inline=inline) if role == "source" else tls.target_settings(inline=inline)
    assert settings["ssl.key.password"] == SECRET
    return {**settings, "sasl.username": "migrator", "sasl.password": SECRET, "sasl.mechanism": "SCRAM-SHA-512"}


class ArgsSampler:
    """Every distinct command line ``ps`` shows while the run goes (sampled twice a second in a thread;
    each spark-submit lives for seconds)."""

    def __init__(self) -> None:
        self.lines: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.lines.update(self._sample())
            self._stop.wait(0.5)

    @staticmethod
    def _sample() -> list[str]:
        if shutil.which("ps"):
            return subprocess.run(
                ["ps", "-eww", "-o", "args="], capture_output=True, text=True, check=False
            ).stdout.splitlines()
        lines = []  # no procps (slim images): read what ps would show
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            with contextlib.suppress(OSError):
                lines.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace").strip())
        return lines

    def __enter__(self) -> ArgsSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def text(self) -> str:
        assert any("org.apache.spark.deploy.SparkSubmit" in line for line in self.lines), "ps never saw Spark"
        return "\n".join(sorted(self.lines))


def _files(directory: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _event_logs(directory: Path) -> dict[str, bytes]:
    """The Spark event logs: one per application (a run's one migrate application: copy and verification)."""
    assert len([p for p in directory.iterdir() if p.name.startswith("eventlog")]) == 1, list(directory.iterdir())
    return _files(directory)


def dag_run_places(output: pytest.CaptureResult[str], logs: str, ps: str, unique: str) -> dict[str, str | bytes]:
    """Where a DAG run's secrets could land, besides its run files: the tasks' output and logs, the process
    arguments sampled, Airflow's task log files and every table of its metadata database (which must hold the
    run: ``unique`` in its XCom and rendered fields)."""
    home = Path(os.environ["AIRFLOW_HOME"])
    metadata = _tables(f"sqlite:///{home / 'airflow.db'}")
    assert unique in metadata["xcom"] and unique in metadata["rendered_task_instance_fields"]
    places: dict[str, str | bytes] = {
        "task output (stdout)": output.out,
        "task output (stderr)": output.err,
        "task logs (logging)": logs,
        "ps": ps,
        **{f"Airflow metadata table {t}": rows for t, rows in metadata.items()},
    }
    if (home / "logs").exists():
        places.update(_files(home / "logs"))
    return places


def _tables(url: str) -> dict[str, str]:
    """Every row of every table of a database, as text."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        metadata = sa.MetaData()
        metadata.reflect(engine)
        with engine.connect() as conn:
            return {
                name: "\n".join(repr(tuple(row)) for row in conn.execute(table.select()))
                for name, table in metadata.tables.items()
            }
    finally:
        engine.dispose()


def _web(ledger_url: str, reports: Path, run_id: str) -> dict[str, str]:
    """The console's API and the served reports (the plugin's FastAPI app)."""
    from fastapi.testclient import TestClient

    from kafka_migration.airflow.webapp import create_app

    client = TestClient(create_app(lambda: ledger_url, lambda: reports, state_dir=lambda: reports.parent))
    pages = {
        path: client.get(path)
        for path in (
            "/api/runs",
            f"/api/runs/{run_id}",
            "/api/overview",
            *(f"/runs/{run_id}/report.{f}" for f in ("html", "json", "md")),
        )
    }
    for path, response in pages.items():
        assert response.status_code == 200, path
    assert run_id in pages["/api/runs"].text and run_id in pages[f"/api/runs/{run_id}"].text
    return {f"web {path}": response.text for path, response in pages.items()}


def _leaks(tls: TlsClusters, places: dict[str, str | bytes]) -> list[str]:
    """Each planted secret found in a place, in any form (tests/leaks.py: literal, base64, URL-encoded)."""
    mark = _key_mark(tls)
    secrets = {"password": SECRET, "client key": mark, "client key (its bytes)": base64.b64decode(mark)}
    return leaks(secrets, places)


@pytest.fixture
def spark_conf_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Spark event logs on, for the search (spark-defaults.conf is read by every spark-submit)."""
    events = tmp_path / "spark-events"
    events.mkdir()
    conf_dir = tmp_path / "spark-conf"
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(f"spark.eventLog.enabled true\nspark.eventLog.dir file://{events}\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    return events


def _cli_migration(
    tmp_path: Path, source: dict[str, object], target: dict[str, object], include: str
) -> tuple[subprocess.CompletedProcess[str], ArgsSampler]:
    """``kafka-migrate run -v`` with the settings in files (state in tmp_path/state), Spark's INFO output on,
    the process arguments sampled while it runs."""
    (tmp_path / "source.json").write_text(json.dumps(source))
    (tmp_path / "target.json").write_text(json.dumps(target))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAFKA_MIGRATION_")}
    env["KAFKA_MIGRATION_SPARK_LOG_LEVEL"] = "INFO"  # all of Spark's output, for the leak check to read
    command = [
        KAFKA_MIGRATE, "run", "-v", "--source-config", str(tmp_path / "source.json"),
        "--target-config", str(tmp_path / "target.json"), "--include", include,
        "--state-dir", str(tmp_path / "state"), "--master", "local[2]",
    ]  # fmt: skip
    with ArgsSampler() as ps:
        result = subprocess.run(command, capture_output=True, text=True, timeout=400, check=False, env=env)
    return result, ps


def test_cli_migration_leaks_no_secret(tls: TlsClusters, tmp_path: Path, spark_conf_dir: Path, unique: str) -> None:
    """The one full CLI migration over mutual TLS: source certificates by path, target inline."""
    topic = f"leak{unique}.t"
    source, target = _settings(tls, "source", inline=False), _settings(tls, "target", inline=True)
    assert "ssl.key.location" in source and "ENCRYPTED PRIVATE KEY" in str(target["ssl.key.pem"])
    seed_topic(tls.source_settings(), topic, partitions=2, records=200)
    result, ps = _cli_migration(tmp_path, source, target, f"leak{unique}\\..*")
    state = tmp_path / "state"
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verified" in result.stdout and "SparkContext" in result.stderr  # Spark's own output was captured
    for partition in range(2):  # the copy, read back independently over mutual TLS
        copied = read_partition(tls.target.bootstrap, topic, partition, settings=tls.target_settings())
        original = read_partition(tls.source.bootstrap, topic, partition, settings=tls.source_settings())
        assert without_offsets(copied) == without_offsets(original) and len(original) > 90
    (run_id,) = [p.name for p in (state / "runs").iterdir()]
    ledger_url = f"sqlite:///{state / 'ledger.db'}"

    places: dict[str, str | bytes] = {"CLI stdout": result.stdout, "CLI stderr": result.stderr, "ps": ps.text()}
    places.update(_files(state))  # plan, results, reports (json, html, md), the ledger file
    assert any(name.endswith("report.md") for name in places) and any(name.endswith("plan.json") for name in places)
    places.update(_event_logs(spark_conf_dir))
    places.update({f"ledger table {t}": rows for t, rows in _tables(ledger_url).items()})
    places.update(_web(ledger_url, state / "reports", run_id))
    found = _leaks(tls, places)
    assert found == [], "leaked:\n" + "\n".join(found)


@pytest.fixture
def airflow_state(tls: TlsClusters, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The DAG's state directory (its ledger and reports in it), Spark's output at INFO, and both Kafka connections
    as Airflow reads them, the source's SASL password in the connection's password field."""
    state = tmp_path / "state"
    monkeypatch.setenv("KAFKA_MIGRATION_STATE_DIR", str(state))
    monkeypatch.delenv("KAFKA_MIGRATION_LEDGER_URL", raising=False)
    monkeypatch.delenv("KAFKA_MIGRATION_REPORTS_DIR", raising=False)
    monkeypatch.setenv("KAFKA_MIGRATION_SPARK_LOG_LEVEL", "INFO")  # all of Spark's output, for the leak check
    source = _settings(tls, "source")
    password = source.pop("sasl.password")  # the source's SASL password as the connection's password field
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_SOURCE", json.dumps({"conn_type": "kafka", "password": password, "extra": source})
    )
    monkeypatch.setenv(
        "AIRFLOW_CONN_KAFKA_TARGET", json.dumps({"conn_type": "kafka", "extra": _settings(tls, "target")})
    )
    return state


def test_airflow_migration_leaks_no_secret(  # type: ignore[no-untyped-def]
    tls: TlsClusters,
    spark_conf_dir: Path,
    migration_dag,
    airflow_state: Path,  # after the DAG, as the environment was set in the test before
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    unique: str,
) -> None:
    topic = f"leakaf{unique}.t"
    seed_topic(tls.source_settings(inline=True), topic, partitions=2, records=200)
    state = airflow_state

    with ArgsSampler() as ps:
        run = migration_dag.test(run_conf={"include": f"leakaf{unique}\\..*"})
    assert str(run.state) == "success"
    assert topic in topic_names(tls.target_settings())
    output = capfd.readouterr()
    assert "SparkContext" in output.out + output.err + caplog.text  # the Spark output is in the task logs

    (run_id,) = [p.name for p in (state / "runs").iterdir()]
    ledger_url = f"sqlite:///{state / 'ledger.db'}"
    places = dag_run_places(output, caplog.text, ps.text(), unique)
    places.update(_files(state))
    assert any(name.endswith("report.json") for name in places)
    places.update(_event_logs(spark_conf_dir))
    places.update({f"ledger table {t}": rows for t, rows in _tables(ledger_url).items()})
    places.update(_web(ledger_url, state / "reports", run_id))
    found = _leaks(tls, places)
    assert found == [], "leaked:\n" + "\n".join(found)


SCRAM_SECRET = f"Planted-{uuid.uuid4().hex}/+&%"  # a SCRAM password: no ',', '=', brackets or quotes


@pytest.fixture(scope="module")
def sasl_pair(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path, test_pki) -> Iterator[list[KafkaCluster]]:  # type: ignore[no-untyped-def]
    """A source and a target whose only listener is SASL_SSL, user ``migrator`` with the planted password."""
    security = SaslSsl(test_pki, users=(ScramUser("migrator", SCRAM_SECRET),))
    specs = (ClusterSpec("secret-source", security), ClusterSpec("secret-target", security))
    with kafka_clusters(*specs, directory=tmp_path_factory.mktemp("kafka-secret")) as started:
        yield started


def test_cli_migration_over_sasl_ssl_leaks_no_password(  # type: ignore[no-untyped-def]
    sasl_pair, tmp_path: Path, spark_conf_dir: Path, unique: str
) -> None:
    """A whole CLI migration over SASL_SSL with SCRAM-SHA-512, natively (no proxy): the password the brokers
    really check is searched for everywhere the TLS run's secrets are."""
    source_cluster, target_cluster = sasl_pair
    source, target = source_cluster.client_config("migrator"), target_cluster.client_config("migrator")
    assert source["sasl.password"] == target["sasl.password"] == SCRAM_SECRET
    topic = f"leaksasl{unique}.t"
    create_topic(source_cluster.bootstrap, topic, 2, settings=source_cluster.client_config())
    p = producer(source_cluster.bootstrap, source_cluster.client_config())
    for i in range(100):
        send(p, topic, i % 2, f"k{i}".encode(), f"v{i}".encode())
    p.flush(30)
    result, ps = _cli_migration(tmp_path, source, target, f"leaksasl{unique}\\..*")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verified" in result.stdout and "SparkContext" in result.stderr
    for partition in range(2):
        copied = read_partition(target_cluster.bootstrap, topic, partition, settings=target)
        original = read_partition(source_cluster.bootstrap, topic, partition, settings=source)
        assert without_offsets(copied) == without_offsets(original) and len(original) == 50
    state = tmp_path / "state"
    (run_id,) = [p.name for p in (state / "runs").iterdir()]
    ledger_url = f"sqlite:///{state / 'ledger.db'}"
    places: dict[str, str | bytes] = {"CLI stdout": result.stdout, "CLI stderr": result.stderr, "ps": ps.text()}
    places.update(_files(state))
    places.update(_event_logs(spark_conf_dir))
    places.update({f"ledger table {t}": rows for t, rows in _tables(ledger_url).items()})
    places.update(_web(ledger_url, state / "reports", run_id))
    found = leaks({"SCRAM password": SCRAM_SECRET}, places)
    assert found == [], "leaked:\n" + "\n".join(found)
