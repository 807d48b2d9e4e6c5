"""Apicurio Registry instances on free loopback ports: in-memory storage, one folder and log file each.

A registry is ``java -jar quarkus-run.jar`` (harness.registry.dist) with its settings as system properties: the
HTTP API and the management interface (health, metrics) bound to 127.0.0.1 on ports of its own, storage in an
in-memory H2 database (Apicurio's default: nothing survives a stop), a connection pool of one to ten instead of
twenty, deletions allowed as in Confluent's registry, and its working folder (where Quarkus would read a ``.env``
or ``config/application.properties``) and scratch folders in its own directory. It is ready when its
Confluent-compatible API (``/apis/ccompat/v7``) lists subjects. Several start in parallel, all or none.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.registry import dist
from harness.servers.lifetime import terminate_with_parent
from harness.servers.ports import free_port

CCOMPAT_PATH = "/apis/ccompat/v7"
READY_PATH = f"{CCOMPAT_PATH}/subjects"
HOST = "127.0.0.1"
START_TIMEOUT = 120.0  # seconds; one instance answers in 2-5 s here, two side by side in 3-8 s

# Settings of every harness registry (Apicurio's own names; Quarkus's for the HTTP and management interfaces).
SETTINGS: Mapping[str, str] = {
    "apicurio.storage.kind": "sql",
    "apicurio.storage.sql.kind": "h2",  # in memory (jdbc:h2:mem:...): Apicurio's default, named here
    "apicurio.datasource.jdbc.initial-size": "1",
    "apicurio.datasource.jdbc.min-size": "1",
    "apicurio.datasource.jdbc.max-size": "10",
    # Confluent's registry deletes subjects and versions (soft, then ?permanent=true); Apicurio refuses by default.
    "apicurio.rest.deletion.group.enabled": "true",
    "apicurio.rest.deletion.artifact.enabled": "true",
    "apicurio.rest.deletion.artifact-version.enabled": "true",
}
# What the log says when a port chosen free was taken before the JVM bound it (another run on the machine).
PORT_TAKEN = ("Address already in use", "Port already bound")


class RegistryFailed(RuntimeError):
    """A registry did not start."""


@dataclass(frozen=True)
class RegistrySpec:
    """What to start: a name (its folder), a fixed HTTP port or a free one, its heap, extra settings."""

    name: str
    port: int | None = None
    heap_mb: int = dist.HEAP_MB
    settings: Mapping[str, str] | None = None
    record_cache: Path | None = None  # the AOT cache's training run (harness.registry.fetch)


@dataclass(frozen=True)
class Registry:
    """A running Apicurio Registry; ``client_config()`` is what confluent-kafka's SchemaRegistryClient takes."""

    name: str
    directory: Path
    port: int
    management_port: int
    process: subprocess.Popen[bytes] = field(repr=False, compare=False)

    @property
    def url(self) -> str:
        """The server's root: Apicurio's own API is under ``/apis/registry/v3``."""
        return f"http://{HOST}:{self.port}"

    @property
    def ccompat_url(self) -> str:
        """The Confluent-compatible API: what a Confluent client calls the registry's URL."""
        return f"{self.url}{CCOMPAT_PATH}"

    @property
    def log_path(self) -> Path:
        return self.directory / "registry.log"

    def client_config(self) -> dict[str, Any]:
        return {"url": self.ccompat_url}

    def running(self) -> bool:
        return self.process.poll() is None

    def answers(self) -> bool:
        """Its Confluent-compatible API lists subjects (HTTP 200)."""
        try:
            with _OPENER.open(f"{self.url}{READY_PATH}", timeout=2) as response:
                return int(response.status) == 200
        except (urllib.error.URLError, OSError):
            return False

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (Quarkus shuts down in well under a second); killed when it takes longer than ``timeout``."""
        self.terminate()
        self.wait_stopped(timeout)

    def terminate(self) -> None:
        if self.running():
            self.process.send_signal(signal.SIGTERM)

    def wait_stopped(self, timeout: float) -> None:
        """Wait for the process to end; kill it after ``timeout`` seconds."""
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        if self.running():
            self.process.kill()
            self.process.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


# Loopback only: no HTTP proxy of the environment in between.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def launch(spec: RegistrySpec, directory: Path) -> Registry:
    """Start the JVM without waiting. It gets SIGTERM when the launching thread's process dies
    (harness.servers.lifetime): launch from the thread that outlives the registry."""
    directory.mkdir(parents=True, exist_ok=True)
    scratch = directory / "tmp"
    scratch.mkdir(exist_ok=True)
    port = spec.port if spec.port is not None else free_port()
    management_port = free_port()
    properties = {
        "quarkus.http.host": HOST,
        "quarkus.http.port": str(port),
        "quarkus.management.host": HOST,
        "quarkus.management.port": str(management_port),
        "java.io.tmpdir": str(scratch),
        "apicurio.import.work-dir": str(scratch),
        "apicurio.storage.snapshot.location": str(scratch),
        **SETTINGS,
        **(spec.settings or {}),
    }
    command = dist.java_command(properties, heap_mb=spec.heap_mb, record_cache=spec.record_cache)
    with (directory / "registry.log").open("ab") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=directory,
            start_new_session=True,  # a Ctrl-C of the test run reaches the harness, which stops it
            preexec_fn=terminate_with_parent,  # noqa: PLW1509 - only a prctl call
        )
    return Registry(spec.name, directory, port, management_port, process)


def _wait_ready(registries: Sequence[Registry], deadline: float) -> dict[int, RegistryFailed]:
    """Poll every registry until it answers; what failed, by index (exited, or not ready by the deadline)."""
    pending = dict(enumerate(registries))
    failed: dict[int, RegistryFailed] = {}
    while pending:
        for index, registry in list(pending.items()):
            if not registry.running():
                code = registry.process.returncode
                failed[index] = RegistryFailed(f"registry {registry.name} exited with {code}:\n{registry.log_tail()}")
                del pending[index]
            elif registry.answers():
                del pending[index]
        if pending and time.monotonic() > deadline:
            for index, registry in pending.items():
                registry.stop()
                failed[index] = RegistryFailed(
                    f"registry {registry.name} did not answer {registry.url}{READY_PATH} within the timeout:\n"
                    f"{registry.log_tail()}"
                )
            break
        if pending:
            time.sleep(0.1)
    return failed


def start_registries(
    specs: Sequence[RegistrySpec | str], directory: Path, *, timeout: float = START_TIMEOUT
) -> list[Registry]:
    """Start registries side by side, each in ``directory/<name>``; all or none.

    A port chosen free but taken before the JVM bound it costs a retry with new ports, up to three times.
    """
    resolved = [RegistrySpec(spec) if isinstance(spec, str) else spec for spec in specs]
    pending = list(range(len(resolved)))
    started: dict[int, Registry] = {}
    try:
        for attempt in range(3):
            folders = {
                i: directory / (resolved[i].name if attempt == 0 else f"{resolved[i].name}-{attempt}") for i in pending
            }
            launched = {i: launch(resolved[i], folders[i]) for i in pending}
            failures = _wait_ready(list(launched.values()), time.monotonic() + timeout)
            indexes = list(launched)
            failed = {indexes[position]: error for position, error in failures.items()}
            started.update({i: registry for i, registry in launched.items() if i not in failed})
            if not failed:
                return [started[i] for i in range(len(resolved))]
            fatal = [
                error
                for i, error in failed.items()
                if resolved[i].port is not None or not any(text in str(error) for text in PORT_TAKEN)
            ]
            if fatal or attempt == 2:
                raise (fatal or list(failed.values()))[0]
            pending = list(failed)
    except BaseException:
        stop_all(list(started.values()))
        raise
    raise AssertionError("unreachable")


@contextlib.contextmanager
def registries(*specs: RegistrySpec | str, directory: Path) -> Iterator[list[Registry]]:
    """Start registries in parallel; stop them all on exit, also on errors and Ctrl-C."""
    started = start_registries(specs, directory)
    try:
        yield started
    finally:
        stop_all(started)


def stop_all(started: Sequence[Registry], timeout: float = 15.0) -> None:
    """SIGTERM to every registry at once, then wait for each."""
    for registry in started:
        registry.terminate()
    for registry in started:
        registry.wait_stopped(timeout)
