"""Start and stop a Spark standalone cluster on this machine: one master, N workers.

The daemons come from the installed pyspark distribution (``bin/spark-class``), bound
to 127.0.0.1 on free ports, each worker with its own work directory (where executors
run and where ``spark.archives`` are unpacked) and its own cores. Workers start with
an environment stripped of the driver's virtualenv (no VIRTUAL_ENV, PYTHONPATH or
PYSPARK_PYTHON, and PATH without its bin directory), as a node of a real cluster
would: whatever Python the executors run must come with the application.

    with standalone_cluster(work_dir, workers=2, cores=1) as cluster:
        cluster.master_url   # spark://127.0.0.1:PORT
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.servers.ports import free_port
from kafka_migration.spark.startup import pyspark_dir

# Variables that would let an executor find the driver's Python or packages.
_DRIVER_ONLY = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_CONF_DIR")


def spark_home() -> Path:
    """The installed pyspark package, the Spark distribution the harness's master and workers run."""
    return pyspark_dir()


def node_environment(log_dir: Path) -> dict[str, str]:
    """The environment of a cluster node: Java, SPARK_HOME, loopback only, and nothing of the driver's venv."""
    env = {k: v for k, v in os.environ.items() if k not in _DRIVER_ONLY and not k.startswith("KAFKA_MIGRATION_")}
    venv_bin = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    env["SPARK_HOME"] = str(spark_home())
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["SPARK_LOG_DIR"] = str(log_dir)
    env["SPARK_NO_DAEMONIZE"] = "1"
    return env


@dataclass
class Daemon:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path
    _log: object = field(repr=False, default=None)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()  # type: ignore[attr-defined]
            self._log = None


@dataclass(frozen=True)
class Executor:
    """An executor JVM: its process id and working directory (<worker work dir>/<app id>/<executor id>)."""

    pid: int
    workdir: Path

    def kill(self) -> None:
        """SIGKILL, as when its machine or container is lost: no shutdown hook runs. Its Python daemon sees
        its standard input close and takes its workers down with it (PySpark's daemon)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


@dataclass
class StandaloneCluster:
    """A running master and its workers; ``master_url`` is what spark-submit's --master takes."""

    host: str
    port: int
    webui_port: int
    master: Daemon
    workers: list[Daemon]
    work_dirs: list[Path]

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    def status(self) -> dict:  # type: ignore[type-arg]
        """The master's JSON status (workers, applications), as its web UI serves it."""
        import json

        with urllib.request.urlopen(f"http://{self.host}:{self.webui_port}/json/", timeout=5) as response:
            return json.loads(response.read())  # type: ignore[no-any-return]

    def alive_workers(self) -> int:
        try:
            return sum(1 for w in self.status().get("workers", []) if w.get("state") == "ALIVE")
        except OSError:
            return 0

    def executor_dirs(self) -> list[Path]:
        """Every executor's working directory: <worker work dir>/<app id>/<executor id>."""
        return sorted(p for d in self.work_dirs for app in d.glob("app-*") for p in app.iterdir() if p.is_dir())

    def executors(self, worker: int) -> list[Executor]:
        """The executor JVMs running now under worker ``worker`` (0-based), of any application."""
        import psutil

        found = []
        with contextlib.suppress(psutil.NoSuchProcess):
            for child in psutil.Process(self.workers[worker].process.pid).children():
                with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                    if "org.apache.spark.executor.CoarseGrainedExecutorBackend" in child.cmdline():
                        found.append(Executor(child.pid, Path(child.cwd())))
        return found

    def executors_exited(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s until no worker runs an executor JVM (they exit after their application,
        doing what the JVM does at exit, such as writing a class-data archive); False if some still run."""
        deadline = time.monotonic() + timeout
        while any(self.executors(i) for i in range(len(self.workers))):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True

    def stop(self) -> None:
        for daemon in [*self.workers, self.master]:
            daemon.stop()


def _start(name: str, args: list[str], env: dict[str, str], log_dir: Path) -> Daemon:
    log_path = log_dir / f"{name}.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [str(spark_home() / "bin" / "spark-class"), *args],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    return Daemon(name, process, log_path, log)


def _wait(what: str, ready, daemons: list[Daemon], timeout: float) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for daemon in daemons:
            if daemon.process.poll() is not None:
                raise RuntimeError(f"{daemon.name} exited with {daemon.process.returncode}:\n{daemon.log_tail()}")
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeError(f"{what} not ready after {timeout:.0f} s:\n" + "\n".join(d.log_tail() for d in daemons))


@contextlib.contextmanager
def standalone_cluster(
    directory: Path, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 120.0
) -> Iterator[StandaloneCluster]:
    """A master and ``workers`` workers with ``cores`` cores each; stopped (by process id) on exit."""
    directory.mkdir(parents=True, exist_ok=True)
    logs = directory / "logs"
    logs.mkdir(exist_ok=True)
    env = node_environment(logs)
    host, port, webui = "127.0.0.1", free_port(), free_port()
    master = _start(
        "master",
        ["org.apache.spark.deploy.master.Master", "--host", host, "--port", str(port), "--webui-port", str(webui)],
        env,
        logs,
    )
    cluster = StandaloneCluster(host, port, webui, master, [], [])
    try:
        _wait("Spark master", lambda: _answers(host, webui), [master], timeout)
        for i in range(workers):
            work = directory / f"worker-{i + 1}"
            work.mkdir(exist_ok=True)
            cluster.work_dirs.append(work)
            cluster.workers.append(
                _start(
                    f"worker-{i + 1}",
                    [
                        "org.apache.spark.deploy.worker.Worker",
                        "--host",
                        host,
                        "--port",
                        str(free_port()),
                        "--webui-port",
                        str(free_port()),
                        "--cores",
                        str(cores),
                        "--memory",
                        memory,
                        "--work-dir",
                        str(work),
                        cluster.master_url,
                    ],
                    env,
                    logs,
                )
            )
        _wait(
            f"{workers} Spark workers", lambda: cluster.alive_workers() == workers, [master, *cluster.workers], timeout
        )
        yield cluster
    finally:
        cluster.stop()


def _answers(host: str, port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/json/", timeout=2):
            return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.servers.spark_cluster``: a standalone cluster for the docs' commands; Ctrl-C stops it."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="A Spark standalone master and workers on 127.0.0.1.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1, help="cores per worker")
    parser.add_argument("--memory", default="1g", help="memory per worker")
    parser.add_argument("--dir", type=Path, help="work and log directories (default: a new temporary directory)")
    args = parser.parse_args(argv)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="spark-standalone-"))
    with standalone_cluster(directory, args.workers, args.cores, args.memory) as cluster:
        print(
            f"master {cluster.master_url} (web UI http://{cluster.host}:{cluster.webui_port}), workers in {directory}"
        )
        print("Ctrl-C (or SIGTERM) stops the cluster.", flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the daemons on SIGTERM too
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
