"""The compose file's Spark master and worker commands, run with the installed Spark.

The containers would run these exact arguments; here the addresses become loopback ones
(the master's --host, free ports, the worker's master URL and work dir), everything else
is kept. Each node must pass its own compose health check, and the worker must register
with the master with the cores and memory the compose file gives it.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.servers.airflow_server import VENV_BIN, log_tail, stop_process_tree
from harness.servers.ports import free_port
from tests.unit.compose_file import ComposeProject, load

pytestmark = pytest.mark.spark


def _replace_after(command: list[str], flag: str, value: str) -> list[str]:
    result = list(command)
    result[result.index(flag) + 1] = value
    return result


def _start(argv: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    with log_path.open("wb") as log:
        return subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )


def _wait_healthy(
    project: ComposeProject, service: str, port: int, process: subprocess.Popen[bytes], log: Path
) -> None:
    """Until the service's compose health check passes, pointed at ``port``."""
    test = project.services[service]["healthcheck"]["test"]
    assert test[0] == "CMD"
    argv = [re.sub(r"localhost:\d+", f"127.0.0.1:{port}", arg) for arg in test[1:]]
    argv[0] = str(VENV_BIN / argv[0])
    deadline = time.monotonic() + 180
    while True:
        assert process.poll() is None, f"{service} exited:\n{log_tail(log)}"
        if subprocess.run(argv, capture_output=True, timeout=60, check=False).returncode == 0:
            return
        assert time.monotonic() < deadline, f"{service} not healthy in time:\n{log_tail(log)}"
        time.sleep(2)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for process in started:
            stop_process_tree(process)


def test_master_and_worker_commands_start_a_cluster(tmp_path: Path, processes: list[subprocess.Popen[bytes]]) -> None:
    project = load()
    master_port, master_ui, worker_ui = free_port(), free_port(), free_port()

    master_cmd = project.services["spark-master"]["command"]
    master_cmd = _replace_after(master_cmd, "--host", "127.0.0.1")
    master_cmd = _replace_after(master_cmd, "--port", str(master_port))
    master_cmd = _replace_after(master_cmd, "--webui-port", str(master_ui))
    master_log = tmp_path / "master.log"
    processes.append(_start(master_cmd, master_log))
    _wait_healthy(project, "spark-master", master_ui, processes[0], master_log)

    worker_cmd = project.services["spark-worker-1"]["command"]
    assert worker_cmd[-1].startswith("spark://")
    worker_cmd = [*worker_cmd[:-1], f"spark://127.0.0.1:{master_port}"]
    worker_cmd = _replace_after(worker_cmd, "--webui-port", str(worker_ui))
    worker_cmd = _replace_after(worker_cmd, "--work-dir", str(tmp_path / "work"))
    worker_log = tmp_path / "worker.log"
    processes.append(_start(worker_cmd, worker_log))
    _wait_healthy(project, "spark-worker-1", worker_ui, processes[1], worker_log)

    original = project.services["spark-worker-1"]["command"]
    cores = int(original[original.index("--cores") + 1])
    memory_mb = int(original[original.index("--memory") + 1].rstrip("g")) * 1024
    deadline = time.monotonic() + 120
    while True:
        state = httpx.get(f"http://127.0.0.1:{master_ui}/json/", timeout=10).json()
        alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
        if alive:
            break
        assert time.monotonic() < deadline, f"worker not registered:\n{log_tail(worker_log)}"
        time.sleep(2)
    assert state["url"] == f"spark://127.0.0.1:{master_port}"
    assert [(w["cores"], w["memory"]) for w in alive] == [(cores, memory_mb)]
