"""A real Airflow 3 in a private home: start and stop ``airflow standalone``, talk to its REST API.

``airflow_standalone`` starts ``airflow standalone`` (scheduler, dag-processor, triggerer and
api-server; LocalExecutor; SQLite metadata DB) in a private AIRFLOW_HOME on a free loopback
port, waits until every component reports healthy, and always tears the whole process tree
down again. Authentication is Airflow's default SimpleAuthManager with a real user: standalone
generates the ``admin`` password into ``simple_auth_manager_passwords.json.generated`` (as it
would for a person trying Airflow), and ``AirflowClient`` exchanges it for a JWT at
``POST /auth/token``, then sends ``Authorization: Bearer``. Used by the end-to-end tests and by
the bench (a DAG run triggered over REST, as a user of a deployed Airflow triggers it).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import psutil

from harness.servers.ports import free_port

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"
HEALTH_COMPONENTS = ("metadatabase", "scheduler", "triggerer", "dag_processor")
TERMINAL_RUN_STATES = {"success", "failed"}
# As docker-compose.yaml sets it (tests/unit/test_compose.py checks): the deployment the project ships.
SCHEDULER_IDLE_SLEEP_TIME = "0.25"


class AirflowStartupError(RuntimeError):
    """Airflow did not come up; the message carries the end of its output."""


def log_tail(path: Path, lines: int = 60) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(no log at {path}: {exc})"
    return "\n".join(text.splitlines()[-lines:])


# --------------------------------------------------------------------------- processes


def stop_process_tree(process: subprocess.Popen[bytes], grace: float = 20.0) -> None:
    """SIGTERM the process group *and* every descendant, then SIGKILL what is left.

    Airflow's task supervisor puts each task in a process group of its own (and
    spark-submit starts a JVM below that), so killing the standalone group alone
    could leave task processes behind; descendants are collected before anything dies.
    """
    try:
        root = psutil.Process(process.pid)
        family = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    groups = {process.pid}
    for proc in family:
        with contextlib.suppress(psutil.Error, OSError):
            groups.add(os.getpgid(proc.pid))
    groups.discard(os.getpgrp())  # never signal the test runner's own group
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
        for proc in family:
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)
        _, alive = psutil.wait_procs(family, timeout=grace if sig == signal.SIGTERM else 10)
        family = alive
        if not family:
            break
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


# --------------------------------------------------------------------------- REST client


class AirflowApiError(AssertionError):
    pass


class AirflowClient:
    """The public REST API (``/api/v2``) and the plugin pages, as an authenticated user."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    @classmethod
    def login(cls, base_url: str, username: str, password: str) -> AirflowClient:
        response = httpx.post(
            f"{base_url.rstrip('/')}/auth/token", json={"username": username, "password": password}, timeout=30
        )
        if response.status_code not in (200, 201):
            raise AirflowApiError(f"login as {username!r} failed: HTTP {response.status_code} {response.text[:500]}")
        return cls(base_url, response.json()["access_token"])

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, *, expect: tuple[int, ...] = (200,), **kw: Any) -> httpx.Response:
        response = self.http.request(method, path, **kw)
        if response.status_code not in expect:
            raise AirflowApiError(
                f"{method} {path}: HTTP {response.status_code} (expected {expect}): {response.text[:1000]}"
            )
        return response

    def get_json(self, path: str, **kw: Any) -> Any:
        return self.request("GET", path, **kw).json()

    # -- DAGs and runs

    def wait_for_dag(self, dag_id: str, timeout: float = 120.0) -> dict[str, Any]:
        """Until the dag-processor has serialized the DAG (and no import error names its file)."""
        deadline = time.monotonic() + timeout
        while True:
            response = self.http.get(f"/api/v2/dags/{dag_id}")
            if response.status_code == 200:
                return dict(response.json())
            errors = self.get_json("/api/v2/importErrors").get("import_errors", [])
            if errors:
                raise AirflowApiError(f"DAG import errors: {json.dumps(errors, indent=1)[:3000]}")
            if time.monotonic() > deadline:
                raise AirflowApiError(
                    f"DAG {dag_id} not parsed within {timeout:.0f}s (last HTTP {response.status_code})"
                )
            time.sleep(1)

    def unpause(self, dag_id: str) -> None:
        dag = self.request("PATCH", f"/api/v2/dags/{dag_id}", json={"is_paused": False}).json()
        assert dag["is_paused"] is False, dag

    def trigger(self, dag_id: str, conf: Mapping[str, Any]) -> dict[str, Any]:
        return dict(
            self.request(
                "POST", f"/api/v2/dags/{dag_id}/dagRuns", json={"logical_date": None, "conf": dict(conf)}
            ).json()
        )

    def dag_run(self, dag_id: str, dag_run_id: str) -> dict[str, Any]:
        return dict(self.get_json(f"/api/v2/dags/{dag_id}/dagRuns/{quote(dag_run_id, safe='')}"))

    def wait_for_run(self, dag_id: str, dag_run_id: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            run = self.dag_run(dag_id, dag_run_id)
            if run["state"] in TERMINAL_RUN_STATES:
                return run
            if time.monotonic() > deadline:
                raise AirflowApiError(
                    f"DAG run {dag_run_id} still {run['state']} after {timeout:.0f}s\n"
                    + self.describe_run(dag_id, dag_run_id)
                )
            time.sleep(2)

    def task_instances(self, dag_id: str, dag_run_id: str) -> list[dict[str, Any]]:
        data = self.get_json(
            f"/api/v2/dags/{dag_id}/dagRuns/{quote(dag_run_id, safe='')}/taskInstances", params={"limit": 1000}
        )
        return list(data["task_instances"])

    def task_log(self, dag_id: str, dag_run_id: str, ti: Mapping[str, Any], lines: int = 40) -> str:
        try_number = max(int(ti.get("try_number") or 1), 1)
        response = self.http.get(
            f"/api/v2/dags/{dag_id}/dagRuns/{quote(dag_run_id, safe='')}/taskInstances/{ti['task_id']}"
            f"/logs/{try_number}",
            params={"map_index": ti.get("map_index", -1), "full_content": True},
            headers={"Accept": "application/json"},
        )
        if response.status_code != 200:
            return f"(log not available: HTTP {response.status_code} {response.text[:300]})"
        text: list[str] = []
        for entry in response.json().get("content") or []:
            if isinstance(entry, str):
                text.append(entry)
                continue
            text.append(f"{entry.get('level', '')} {entry.get('event', '')}".strip())
            for error in entry.get("error_detail") or []:  # the exception a task failed with
                frames = error.get("frames") or [{}]
                where = f"{frames[-1].get('filename')}:{frames[-1].get('lineno')}"
                text.append(f"    {error.get('exc_type')}: {error.get('exc_value')} (at {where})")
        return "\n".join(text[-lines:])

    def describe_run(self, dag_id: str, dag_run_id: str) -> str:
        """Task states, and the log tail of every task that did not succeed: for failure messages."""
        out = []
        try:
            tis = self.task_instances(dag_id, dag_run_id)
        except Exception as exc:  # a failure message must not hide the original failure
            return f"(task instances unavailable: {exc})"
        for ti in sorted(tis, key=lambda t: (t["task_id"], t.get("map_index", -1))):
            label = ti["task_id"] + (f"[{ti['map_index']}]" if ti.get("map_index", -1) >= 0 else "")
            out.append(f"  {label}: {ti['state']}")
        for ti in tis:
            if ti["state"] not in ("success", "skipped") and ti.get("try_number"):  # 0: never ran (upstream_failed)
                label = ti["task_id"] + (f"[{ti['map_index']}]" if ti.get("map_index", -1) >= 0 else "")
                out.append(f"--- log tail of {label} ({ti['state']}) ---\n{self.task_log(dag_id, dag_run_id, ti)}")
        return "task instances:\n" + "\n".join(out)

    def extra_links(self, dag_id: str, dag_run_id: str, task_id: str, map_index: int = -1) -> dict[str, str | None]:
        data = self.get_json(
            f"/api/v2/dags/{dag_id}/dagRuns/{quote(dag_run_id, safe='')}/taskInstances/{task_id}/links",
            params={"map_index": map_index},
        )
        return dict(data["extra_links"])


# --------------------------------------------------------------------------- Airflow itself


@dataclass
class AirflowServer:
    home: Path
    base_url: str
    log_path: Path
    process: subprocess.Popen[bytes]
    username: str
    password: str

    def client(self) -> AirflowClient:
        return AirflowClient.login(self.base_url, self.username, self.password)

    def log_tail(self, lines: int = 80) -> str:
        return log_tail(self.log_path, lines)


def airflow_environment(home: Path, port: int, extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of every Airflow process: nothing inherited from an Airflow the caller may run."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AIRFLOW", "KAFKA_MIGRATION_")) and k not in ("PYTHONPATH", "SPARK_HOME")
    }
    base_url = f"http://127.0.0.1:{port}"
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
            "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",  # kafka_nightly_sync must not run here
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "4",  # a 2-core machine
            "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": SCHEDULER_IDLE_SLEEP_TIME,
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__BASE_URL": base_url,
            "AIRFLOW__API__WORKERS": "1",
            # The scheduler's and triggerer's log servers on free ports too: with their fixed defaults (8793,
            # 8794) a second Airflow on the machine (another test run, the bench) cannot start its own.
            "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{base_url}/execution/",
            # one secret for every process: the scheduler signs task tokens that the api-server checks
            "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(32),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "admin:admin",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
            "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",  # airflow, spark-submit (pyspark)
            # This checkout's code, whichever checkout the virtualenv's editable install points at (git worktrees
            # may share one virtualenv): the plugin, the DAGs' tasks and their Spark jobs run what is tested.
            "PYTHONPATH": str(REPO),
            "PYTHONUNBUFFERED": "1",
            "NO_COLOR": "1",
        }
    )
    env.update(extra)
    if "PYTHONPATH" in extra:  # a test's own modules (a lineage plugin), and this checkout after them
        env["PYTHONPATH"] = os.pathsep.join([extra["PYTHONPATH"], str(REPO)])
    return env


def _health(base_url: str) -> dict[str, Any] | None:
    try:
        response = httpx.get(f"{base_url}/api/v2/monitor/health", timeout=5)
    except httpx.HTTPError:
        return None
    return response.json() if response.status_code == 200 else None


@contextlib.contextmanager
def airflow_standalone(home: Path, extra_env: Mapping[str, str], timeout: float = 180.0) -> Iterator[AirflowServer]:
    """Run ``airflow standalone`` until the block ends; the process tree is stopped even on errors."""
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = airflow_environment(home, port, extra_env)
    log_path = home / "standalone.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            [str(VENV_BIN / "airflow"), "standalone"],
            cwd=home,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, signalled as a whole at the end
        )
        try:
            server = _wait_until_ready(process, home, env["AIRFLOW__API__BASE_URL"], log_path, timeout)
            yield server
        finally:
            stop_process_tree(process)


def _wait_until_ready(
    process: subprocess.Popen[bytes], home: Path, base_url: str, log_path: Path, timeout: float
) -> AirflowServer:
    deadline = time.monotonic() + timeout
    passwords = home / PASSWORDS_FILE
    health: dict[str, Any] | None = None
    while True:
        if process.poll() is not None:
            raise AirflowStartupError(
                f"airflow standalone exited with {process.returncode}; end of {log_path}:\n{log_tail(log_path)}"
            )
        health = _health(base_url)
        healthy = health is not None and all(
            (health.get(c) or {}).get("status") == "healthy" for c in HEALTH_COMPONENTS
        )
        if healthy and passwords.exists():
            users = json.loads(passwords.read_text())
            return AirflowServer(home, base_url, log_path, process, "admin", users["admin"])
        if time.monotonic() > deadline:
            raise AirflowStartupError(
                f"Airflow not healthy within {timeout:.0f}s (health: {health}); end of {log_path}:\n"
                f"{log_tail(log_path)}"
            )
        time.sleep(1)
