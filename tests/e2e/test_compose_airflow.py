"""The compose file's Airflow settings, run with this machine's Airflow and PostgreSQL.

No Docker engine here, so the containers cannot start; but their commands and environment
can. airflow-init's own script (migrate the metadata DB, write the login) runs with
airflow-init's environment, and the API server then starts with airflow-apiserver's: its
health check answers, the login from .env works, and the Kafka migrations page reads the
ledger through the URL the compose file gives it. Only what points at other containers is
redirected: database host and name (a fresh local database), and the paths of volumes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.engine import make_url

from harness.embedded import free_port
from tests.e2e.ui_harness import VENV_BIN, AirflowClient, log_tail, stop_process_tree
from tests.unit.compose_file import REPO, ComposeProject, load

pytestmark = pytest.mark.e2e

ADMIN_URL = os.environ.get("KAFKA_MIGRATION_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres")


def _admin_connect(database: str | None = None):  # type: ignore[no-untyped-def]
    import psycopg

    admin = make_url(ADMIN_URL)
    return psycopg.connect(
        host=admin.host,
        port=admin.port or 5432,
        user=admin.username,
        dbname=database or admin.database,
        autocommit=True,
        connect_timeout=5,
    )


@pytest.fixture(scope="module")
def databases() -> Iterator[dict[str, str]]:
    """Fresh local databases standing in for the compose file's "airflow" and ledger databases."""
    import psycopg

    names = {"airflow": f"km_compose_af_{uuid.uuid4().hex[:8]}", "ledger": f"km_compose_ledger_{uuid.uuid4().hex[:8]}"}
    try:
        conn = _admin_connect()
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    with conn:
        for name in names.values():
            conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield names
    finally:
        with _admin_connect() as conn:
            for name in names.values():
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _local(url: str, database: str) -> str:
    """The compose URL (driver, options) pointed at the local server and a fresh database."""
    admin = make_url(ADMIN_URL)
    return (
        make_url(url)
        .set(host=admin.host, port=admin.port or 5432, username=admin.username, password=None, database=database)
        .render_as_string(hide_password=False)
    )


def _environment(project: ComposeProject, service: str, home: Path, databases: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "KAFKA_MIGRATION_"))}
    env.update(project.environment(service))
    for key in ("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"):
        env[key] = _local(env[key], databases["airflow"])
    env["KAFKA_MIGRATION_LEDGER_URL"] = _local(env["KAFKA_MIGRATION_LEDGER_URL"], databases["ledger"])
    passwords = Path(env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"])
    (home / "auth").mkdir(parents=True, exist_ok=True)
    env["AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE"] = str(home / "auth" / passwords.name)
    env["KAFKA_MIGRATION_STATE_DIR"] = str(home / "kafka-migration")
    env.update(
        {
            "AIRFLOW_HOME": str(home),  # the image's /opt/airflow, with dags/ and plugins/ in it
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONUNBUFFERED": "1",
            "NO_COLOR": "1",
        }
    )
    return env


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory, databases: dict[str, str]) -> tuple[Path, dict[str, str]]:
    project = load()
    home = tmp_path_factory.mktemp("compose-airflow")
    init = project.services["airflow-init"]
    assert init["entrypoint"] == "/bin/bash" and init["command"][0] == "-c"
    env = _environment(project, "airflow-init", home, databases)
    result = subprocess.run(
        ["bash", "-c", init["command"][1]],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"airflow-init failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert f"Login ready for user {project.env['AIRFLOW_ADMIN_USERNAME']}" in result.stdout
    return home, databases


def test_airflow_init_migrates_the_metadata_db_and_writes_the_login(initialised: tuple[Path, dict[str, str]]) -> None:
    home, databases = initialised
    project = load()
    passwords = home / "auth" / "passwords.json"
    assert json.loads(passwords.read_text()) == {
        project.env["AIRFLOW_ADMIN_USERNAME"]: project.env["AIRFLOW_ADMIN_PASSWORD"]
    }
    assert oct(passwords.stat().st_mode & 0o777) == "0o600"
    with _admin_connect(databases["airflow"]) as conn:
        assert conn.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)


def test_api_server_starts_with_the_compose_settings(initialised: tuple[Path, dict[str, str]]) -> None:
    home, databases = initialised
    project = load()
    env = _environment(project, "airflow-apiserver", home, databases)
    port = free_port()
    env.update({"AIRFLOW__API__HOST": "127.0.0.1", "AIRFLOW__API__PORT": str(port), "AIRFLOW__API__WORKERS": "1"})
    base_url = f"http://127.0.0.1:{port}"
    # The container's health check, pointed at this port.
    check = " ".join(project.services["airflow-apiserver"]["healthcheck"]["test"])
    health_path = re.search(r"http://localhost:8080(/[^']*)", check).group(1)  # type: ignore[union-attr]
    log_path = home / "api-server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(VENV_BIN / "airflow"), *project.services["airflow-apiserver"]["command"].split()],
            env=env,
            cwd=home,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 240
            while True:
                assert process.poll() is None, f"api-server exited:\n{log_tail(log_path)}"
                try:
                    if httpx.get(base_url + health_path, timeout=5).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, f"api-server not healthy in time:\n{log_tail(log_path)}"
                time.sleep(2)

            client = AirflowClient.login(
                base_url, project.env["AIRFLOW_ADMIN_USERNAME"], project.env["AIRFLOW_ADMIN_PASSWORD"]
            )
            try:
                wrong = httpx.post(
                    f"{base_url}/auth/token",
                    json={"username": project.env["AIRFLOW_ADMIN_USERNAME"], "password": "not-the-password"},
                    timeout=30,
                )
                assert wrong.status_code in (401, 403)
                # The Kafka migrations page reads the ledger through KAFKA_MIGRATION_LEDGER_URL.
                page = client.request("GET", "/kafka-migrations/")
                assert "Kafka migrations" in page.text
                with _admin_connect(databases["ledger"]) as conn:
                    tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables")}
                assert {"km_runs", "km_checkpoints"} <= tables, tables
            finally:
                client.close()
        finally:
            stop_process_tree(process)
