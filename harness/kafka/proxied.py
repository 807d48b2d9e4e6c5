"""Apache Kafka clusters reachable only through a loopback proxy (harness/servers/proxy.py), for network-fault tests.

The broker's client listener advertises the proxy's port, so bootstrap and every partition
leader connection go through the proxy: cutting, blackholing or slowing it does that to the
whole cluster as its clients see it. The broker's own inter-broker traffic (transaction
markers to itself) uses a second listener, INTERNAL, that bypasses the proxy.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.kafka.node import KafkaCluster, start_cluster
from harness.servers.ports import free_port
from harness.servers.proxy import LoopbackProxy


@dataclass
class ProxiedCluster:
    """A broker and the proxy in front of it; ``bootstrap`` is the proxy's address."""

    cluster: KafkaCluster
    proxy: LoopbackProxy

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def bootstrap(self) -> str:
        return self.proxy.address

    def client_config(self) -> dict[str, Any]:
        return {"bootstrap.servers": self.bootstrap}


@contextlib.contextmanager
def proxied_cluster(name: str, directory: Path) -> Iterator[ProxiedCluster]:
    """Start a proxy, then a broker that advertises the proxy's port; stop both on exit."""
    broker_port = free_port()
    with LoopbackProxy("127.0.0.1", broker_port) as proxy:
        cluster = start_cluster(
            name,
            directory,
            port=broker_port,
            advertised_port=proxy.port,
            extra_listeners={"INTERNAL": 0},  # a free port
            properties={"inter.broker.listener.name": "INTERNAL"},
        )
        try:
            yield ProxiedCluster(cluster=cluster, proxy=proxy)
        finally:
            cluster.stop()


@contextlib.contextmanager
def proxied_clusters(*names: str, directory: Path) -> Iterator[list[ProxiedCluster]]:
    """One proxied cluster per name (e.g. a source and a target whose network a test can cut)."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(proxied_cluster(name, directory)) for name in names]
