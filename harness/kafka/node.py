"""One-node Apache Kafka clusters (KRaft, broker and controller in one JVM) on free loopback ports.

What the release's scripts do, without the scripts: write server.properties, format the
storage (``kafka.tools.StorageTool format --standalone``, with the kind's SCRAM users), then
start ``kafka.Kafka`` and wait for "Kafka Server started". Every cluster gets a fresh cluster
id (the ledger keys checkpoints by it) unless a test asks for one, a folder of its own for its
log and data, and the JVM flags of harness.kafka.jars (small heap, C1 only, class-data
sharing). Several clusters start in parallel: a pair takes about as long as one.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.kafka import jars
from harness.kafka.security import PLAINTEXT, SaslSsl, ScramUser, Security, write_private
from harness.servers.lifetime import terminate_with_parent
from harness.servers.ports import free_port

READY_LINE = "Kafka Server started"
LOG_LEVEL_VARIABLE = "KAFKA_MIGRATION_KAFKA_LOG_LEVEL"

# Static broker settings of every harness cluster: one node (replication factor 1 for the
# internal topics), small thread pools and cleaner buffer for a small heap on two cores, few
# partitions for the internal topics (created on first use, 50 each by default), and the
# background tasks a test waits for (retention, the log cleaner) looking every second or two
# instead of every 5 minutes / 15 s. Topics are never created by accident, as in
# docker-compose.yaml. Tests override any of these per cluster.
DEFAULT_PROPERTIES: Mapping[str, str] = {
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "5",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "share.coordinator.state.topic.num.partitions": "5",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "false",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "background.threads": "4",
    "num.recovery.threads.per.data.dir": "1",
    "log.cleaner.threads": "1",
    "log.cleaner.dedupe.buffer.size": str(16 * 1024 * 1024),
    "log.cleaner.backoff.ms": "1000",
    "log.retention.check.interval.ms": "2000",
    "log.initial.task.delay.ms": "500",
}


def new_cluster_id() -> str:
    """A KRaft cluster id: 16 random bytes, URL-safe base64 without padding (what ``random-uuid`` prints).

    Like Kafka's Uuid.randomUuid, never one starting with "-" (a command line would read it as an option).
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


class ClusterFailed(RuntimeError):
    """A cluster could not be formatted or did not start."""


@dataclass
class KafkaCluster:
    """A one-node Apache Kafka cluster started by the harness; ``bootstrap`` is what clients connect to."""

    name: str
    directory: Path
    port: int
    controller_port: int
    cluster_id: str
    security: Security = PLAINTEXT
    properties: Mapping[str, str] = field(default_factory=dict)
    heap_mb: int = 512
    fast_start: bool = True
    extra_listeners: Mapping[str, int] = field(default_factory=dict)
    # Where clients are sent instead of ``port`` (a proxy in front of the broker: harness.kafka.proxied).
    advertised_port: int | None = None
    # A JMX port on 127.0.0.1 (no authentication) for the broker's own metrics (harness.kafka.metrics); the bench's.
    jmx_port: int | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    started_seconds: float | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.advertised_port or self.port}"

    @property
    def log_path(self) -> Path:
        return self.directory / "server.log"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def properties_path(self) -> Path:
        return self.directory / "server.properties"

    def client_config(self, user: ScramUser | str | None = None) -> dict[str, Any]:
        """librdkafka settings for this cluster (as ``user`` on a SASL cluster; else its admin)."""
        if isinstance(user, str):
            if not isinstance(self.security, SaslSsl):
                raise ValueError(f"{self.name} has no SCRAM users")
            user = self.security.user(user)
        return self.security.client_settings(self.bootstrap, user)

    def server_properties(self) -> dict[str, str]:
        listener = self.security.protocol
        client = {listener: self.port, **self.extra_listeners}  # extra listeners speak the same protocol
        bound = ",".join(f"{name}://127.0.0.1:{port}" for name, port in client.items())
        advertised_ports = {**client, listener: self.advertised_port or self.port}
        advertised = ",".join(f"{name}://127.0.0.1:{port}" for name, port in advertised_ports.items())
        return {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listeners": f"{bound},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": advertised,
            "listener.security.protocol.map": ",".join(
                ["CONTROLLER:PLAINTEXT", *(f"{name}:{listener}" for name in client)]
            ),
            "inter.broker.listener.name": listener,
            "log.dirs": str(self.data_dir),
            **DEFAULT_PROPERTIES,
            **self.security.broker_properties(self.directory),
            **self.properties,
        }

    def jvm_options(self) -> list[str]:
        """JVM options beyond the harness's own (a JAAS file, say)."""
        return []

    def quorum_arguments(self) -> list[str]:
        """How ``format`` sets up the controller quorum: this node alone (a replicated cluster's nodes name their
        voters in server.properties instead: harness.kafka.replicated)."""
        return ["--standalone"]

    def format(self) -> None:
        """Write server.properties and format the storage (with the kind's SCRAM users)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        write_properties(self.properties_path, self.server_properties())
        *java, main_class = jars.java_command("kafka.tools.StorageTool", heap_mb=256, extra=_log_level())
        arguments = [main_class, "format", "--cluster-id", self.cluster_id, "--config", str(self.properties_path)]
        arguments += [*self.quorum_arguments(), *self.security.format_arguments()]
        # The SCRAM users' passwords are among the arguments: the JVM reads them from an argument file of the owner's
        # only (java @FILE), never from a command line that every process of the machine may read.
        argument_file = write_private(self.directory / "format.args", "".join(_java_argument(a) for a in arguments))
        try:
            done = subprocess.run(
                [*java, f"@{argument_file}"], capture_output=True, text=True, check=False, timeout=120
            )
        finally:
            argument_file.unlink(missing_ok=True)
        if done.returncode != 0:
            raise ClusterFailed(f"formatting {self.name} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")

    def start(self, *, timeout: float = 120.0, record_archive: Path | None = None) -> KafkaCluster:
        """Start the broker on its formatted storage and wait until it is ready (also after a stop)."""
        if self.process is not None and self.process.poll() is None:
            return self
        began = time.monotonic()
        offset = self.launch(record_archive=record_archive)
        self._wait_ready(began + timeout, offset)
        self.started_seconds = time.monotonic() - began
        return self

    def launch(self, *, record_archive: Path | None = None) -> int:
        """Start the broker process without waiting; returns where its log stood before.

        The broker gets SIGTERM when the process that launched it dies (a test run killed by a
        CI timeout leaves no broker behind). Linux ties that to the launching thread: launch from
        the thread that outlives the cluster (start_clusters launches from its caller's).
        """
        extra = [*_log_level(), *self.jvm_options(), *_jmx_options(self.jmx_port)]
        if record_archive is not None:
            extra.append(f"-XX:ArchiveClassesAtExit={record_archive}")
        command = jars.java_command("kafka.Kafka", heap_mb=self.heap_mb, fast_start=self.fast_start, extra=extra)
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [*command, str(self.properties_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.directory,
                start_new_session=True,  # a Ctrl-C of the test run reaches the harness, which stops it
                preexec_fn=terminate_with_parent,  # noqa: PLW1509 - only a prctl call
            )
        return offset

    def _wait_ready(self, deadline: float, offset: int) -> None:
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ClusterFailed(f"broker {self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(FileNotFoundError), self.log_path.open("rb") as log:
                # Only what this start wrote: a broker killed right after its previous start left that start's
                # ready line last in the log (nothing is logged on SIGKILL), and it must not count again.
                log.seek(offset)
                if READY_LINE.encode() in log.read():
                    return
            time.sleep(0.05)
        self.stop()
        raise ClusterFailed(f"broker {self.name} not ready within the timeout:\n{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> None:
        """A controlled shutdown (SIGTERM); killed when it takes longer than ``timeout``."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def kill(self) -> None:
        """Gone at once, as in a crash (no controlled shutdown)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"


def write_properties(path: Path, properties: Mapping[str, str]) -> Path:
    """A Java properties file (``key=value``; backslashes escaped as Properties.load expects)."""
    lines = [f"{key}={str(value).replace(chr(92), chr(92) * 2)}" for key, value in properties.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _java_argument(argument: str) -> str:
    """One argument of a java @-file, on a line of its own: quoted, a backslash and a quote escaped."""
    escaped = argument.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"\n'


def _log_level() -> list[str]:
    level = os.environ.get(LOG_LEVEL_VARIABLE)
    return [f"-Dkafka.harness.level={level}"] if level else []


def _jmx_options(port: int | None) -> list[str]:
    """Remote JMX on loopback only, without authentication: for reading the broker's metrics in the bench."""
    if port is None:
        return []
    return [
        f"-Dcom.sun.management.jmxremote.port={port}",
        f"-Dcom.sun.management.jmxremote.rmi.port={port}",
        "-Dcom.sun.management.jmxremote.host=127.0.0.1",
        "-Djava.rmi.server.hostname=127.0.0.1",
        "-Dcom.sun.management.jmxremote.authenticate=false",
        "-Dcom.sun.management.jmxremote.ssl=false",
    ]


@dataclass(frozen=True)
class ClusterSpec:
    """What to start: a name, the kind of cluster and its options (see KafkaCluster)."""

    name: str
    security: Security = PLAINTEXT
    properties: Mapping[str, str] | None = None
    cluster_id: str | None = None
    heap_mb: int = 512
    fast_start: bool = True
    extra_listeners: Mapping[str, int] | None = None
    port: int | None = None  # fixed (a proxy points at it); else a free port
    advertised_port: int | None = None
    record_archive: Path | None = None
    jmx: bool = False  # expose the broker's metrics on a free JMX port (harness.kafka.metrics)

    def cluster(self, directory: Path, attempt: int) -> KafkaCluster:
        return KafkaCluster(
            name=self.name,
            directory=directory / (self.name if attempt == 0 else f"{self.name}-{attempt}"),
            port=self.port if self.port is not None else free_port(),
            controller_port=free_port(),
            cluster_id=self.cluster_id or new_cluster_id(),
            security=self.security,
            properties=dict(self.properties or {}),
            heap_mb=self.heap_mb,
            fast_start=self.fast_start,
            extra_listeners={
                name: free_port() if port == 0 else port for name, port in (self.extra_listeners or {}).items()
            },
            advertised_port=self.advertised_port,
            jmx_port=free_port() if self.jmx else None,
        )


def _port_taken(error: BaseException) -> bool:
    return "Address already in use" in str(error) or "BindException" in str(error)


def start_clusters(
    specs: Sequence[ClusterSpec | str], directory: Path, *, timeout: float = 120.0
) -> list[KafkaCluster]:
    """Start clusters side by side; all or none.

    Formatting (one short JVM each) and waiting run in threads, the brokers are launched from
    the caller's thread (see KafkaCluster.launch). A port taken between choosing and binding it
    (another test run on the machine) costs a retry with new ports, up to three times.
    """
    resolved = [ClusterSpec(spec) if isinstance(spec, str) else spec for spec in specs]
    pending = list(enumerate(resolved))
    started: dict[int, KafkaCluster] = {}
    try:
        for attempt in range(3):
            clusters = {i: spec.cluster(directory, attempt) for i, spec in pending}
            began = time.monotonic()
            with ThreadPoolExecutor(max_workers=max(1, len(clusters))) as pool:
                list(pool.map(KafkaCluster.format, clusters.values()))
                offsets = {i: c.launch(record_archive=resolved[i].record_archive) for i, c in clusters.items()}
                waits = {i: pool.submit(c._wait_ready, began + timeout, offsets[i]) for i, c in clusters.items()}
            failed: list[tuple[int, BaseException]] = []
            for i, future in waits.items():
                error = future.exception()
                if error is None:
                    clusters[i].started_seconds = time.monotonic() - began
                    started[i] = clusters[i]
                else:
                    clusters[i].stop()
                    failed.append((i, error))
            if not failed:
                return [started[i] for i in range(len(resolved))]
            fatal = [error for i, error in failed if not _port_taken(error) or resolved[i].port is not None]
            if fatal or attempt == 2:
                raise (fatal or [error for _, error in failed])[0]
            pending = [(i, resolved[i]) for i, _ in failed]
    except BaseException:
        stop_all(list(started.values()))
        raise
    raise AssertionError("unreachable")


def start_cluster(name: str, directory: Path, *, timeout: float = 120.0, **options: Any) -> KafkaCluster:
    """Format and start one cluster in ``directory/name`` (options: the fields of ClusterSpec)."""
    return start_clusters([ClusterSpec(name, **options)], directory, timeout=timeout)[0]


@contextlib.contextmanager
def kafka_clusters(*specs: ClusterSpec | str, directory: Path) -> Iterator[list[KafkaCluster]]:
    """Start clusters in parallel; stop them all on exit, also on errors and Ctrl-C."""
    clusters = start_clusters(specs, directory)
    try:
        yield clusters
    finally:
        stop_all(clusters)


def stop_all(clusters: Sequence[KafkaCluster]) -> None:
    """Stop clusters side by side (each shutdown waits on its own broker)."""
    with ThreadPoolExecutor(max_workers=max(1, len(clusters))) as pool:
        list(pool.map(lambda cluster: cluster.stop(), clusters))
