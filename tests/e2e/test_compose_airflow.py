"""The compose file's Airflow settings, run with this machine's Airflow and PostgreSQL.

No Docker engine here, so the containers cannot start; but their commands and environment
can. airflow-init's own script (migrate the metadata DB, write the login) runs with
airflow-init's environment; then the API server, scheduler, DAG processor and triggerer run
with theirs: each passes its compose health check, the login from .env works, the DAGs
parse, and the Kafka migrations page reads the ledger through the URL the compose file
gives it. Only what points at other containers is redirected: database host and name
(fresh local databases), the API server's address, ports, and the paths of volumes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from harness.servers.airflow_server import VENV_BIN, AirflowClient, log_tail, stop_process_tree
from harness.servers.ports import free_port
from harness.servers.postgres import admin_connect, database_url
from tests.conftest import postgres_databases
from tests.unit.compose_file import REPO, ComposeProject, load

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def databases() -> Iterator[dict[str, str]]:
    """Fresh local databases standing in for the compose file's "airflow" and ledger databases."""
    with postgres_databases("km_compose_af", "km_compose_ledger") as (airflow, ledger):
        yield {"airflow": airflow, "ledger": ledger}


def _environment(project: ComposeProject, service: str, home: Path, databases: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "KAFKA_MIGRATION_"))}
    env.update(project.environment(service))
    for key in ("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC"):
        env[key] = database_url(databases["airflow"], like=env[key])
    env["KAFKA_MIGRATION_LEDGER_URL"] = database_url(databases["ledger"], like=env["KAFKA_MIGRATION_LEDGER_URL"])
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
    with admin_connect(databases["airflow"]) as conn:
        assert conn.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)


COMPONENTS = ("airflow-apiserver", "airflow-scheduler", "airflow-dag-processor", "airflow-triggerer")


@dataclass
class Stack:
    base_url: str
    ports: dict[str, int]
    env: dict[str, dict[str, str]]
    logs: dict[str, Path]
    processes: dict[str, subprocess.Popen[bytes]]

    def tails(self) -> str:
        return "\n".join(f"--- {name}:\n{log_tail(path, 30)}" for name, path in self.logs.items())


@pytest.fixture(scope="module")
def stack(initialised: tuple[Path, dict[str, str]]) -> Iterator[Stack]:
    """The four Airflow services, each with its compose command and environment; only ports
    (free ones instead of the containers' own) and the API server's address are changed."""
    home, databases = initialised
    project = load()
    ports = {
        "api": free_port(),
        "scheduler-health": free_port(),
        "worker-logs": free_port(),
        "trigger-logs": free_port(),
    }
    base_url = f"http://127.0.0.1:{ports['api']}"
    from airflow.utils.net import get_hostname

    envs, logs, processes = {}, {}, {}
    for service in COMPONENTS:
        env = _environment(project, service, home, databases)
        env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"] = env["AIRFLOW__CORE__EXECUTION_API_SERVER_URL"].replace(
            "http://airflow-apiserver:8080", base_url
        )
        env.update(
            {
                "AIRFLOW__API__HOST": "127.0.0.1",
                "AIRFLOW__API__PORT": str(ports["api"]),
                "AIRFLOW__API__WORKERS": "1",
                "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_SERVER_HOST": "127.0.0.1",
                "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_SERVER_PORT": str(ports["scheduler-health"]),
                "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(ports["worker-logs"]),
                "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(ports["trigger-logs"]),
                # In a container, $HOSTNAME is the `hostname:` that Airflow records for its jobs.
                "HOSTNAME": get_hostname(),
            }
        )
        envs[service] = env
    try:
        for service in COMPONENTS:
            logs[service] = home / f"{service}.log"
            with logs[service].open("wb") as log:
                processes[service] = subprocess.Popen(
                    [str(VENV_BIN / "airflow"), *project.services[service]["command"].split()],
                    env=envs[service],
                    cwd=home,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
        yield Stack(base_url, ports, envs, logs, processes)
    finally:
        with ThreadPoolExecutor(max_workers=len(COMPONENTS)) as pool:  # each may take its grace period
            list(pool.map(stop_process_tree, processes.values()))


def _health_check(project: ComposeProject, service: str, stack: Stack) -> subprocess.CompletedProcess[str]:
    """The service's compose health check, pointed at this test's ports."""
    test = project.services[service]["healthcheck"]["test"]
    ports = {"8080": stack.ports["api"], "8974": stack.ports["scheduler-health"]}

    def local(text: str) -> str:
        return re.sub(r"localhost:(\d+)", lambda m: f"127.0.0.1:{ports[m.group(1)]}", text)

    argv = [local(a) for a in test[1:]] if test[0] == "CMD" else ["bash", "-c", local(test[1])]
    return subprocess.run(argv, env=stack.env[service], capture_output=True, text=True, timeout=120, check=False)


def test_every_airflow_component_passes_its_compose_health_check(stack: Stack) -> None:
    project = load()
    waiting = set(COMPONENTS)
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    deadline = time.monotonic() + 300
    while waiting:
        for service in sorted(waiting):
            process = stack.processes[service]
            assert process.poll() is None, f"{service} exited:\n{stack.tails()}"
            results[service] = _health_check(project, service, stack)
            if results[service].returncode == 0:
                waiting.discard(service)
        if not waiting:
            break
        assert time.monotonic() < deadline, (
            f"not healthy in time: {sorted(waiting)}: "
            f"{[(s, results[s].stdout[-300:], results[s].stderr[-300:]) for s in waiting]}\n{stack.tails()}"
        )
        time.sleep(3)


def test_login_from_env_dags_and_the_migrations_page(stack: Stack, initialised: tuple[Path, dict[str, str]]) -> None:
    _, databases = initialised
    project = load()
    deadline = time.monotonic() + 240
    while True:
        try:
            if httpx.get(f"{stack.base_url}/api/v2/version", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"api-server not up:\n{stack.tails()}"
        time.sleep(2)
    user, password = project.env["AIRFLOW_ADMIN_USERNAME"], project.env["AIRFLOW_ADMIN_PASSWORD"]
    wrong = httpx.post(f"{stack.base_url}/auth/token", json={"username": user, "password": "not-it"}, timeout=30)
    assert wrong.status_code in (401, 403)
    client = AirflowClient.login(stack.base_url, user, password)
    try:
        # The dag-processor parses the repository's DAGs with the compose settings.
        for dag_id in ("kafka_migration", "kafka_nightly_sync"):
            dag = client.wait_for_dag(dag_id, timeout=240)
            assert dag["is_paused"] is True  # DAGS_ARE_PAUSED_AT_CREATION: the nightly sync waits for the user
        assert client.get_json("/api/v2/importErrors")["total_entries"] == 0
        # The console's API reads the ledger through KAFKA_MIGRATION_LEDGER_URL.
        runs = client.get_json("/kafka-migrations/api/runs")
        assert runs["total"] == 0 and runs["runs"] == []
        with admin_connect(databases["ledger"]) as conn:
            tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables")}
        assert {"km_runs", "km_checkpoints"} <= tables, tables
    finally:
        client.close()
