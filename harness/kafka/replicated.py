"""Replicated Apache Kafka clusters: three KRaft nodes (broker and controller in one JVM each), replication
factor 3 and ``min.insync.replicas=2``, as production clusters run, for the fault tier and the bench.

Every node is a process of its own, so a test can stop one cleanly (SIGTERM: a controlled shutdown that
moves its leaders away first), kill it (SIGKILL: a crash) and start it again on its data. The quorum is
static: the same ``controller.quorum.voters`` on every node, each formatted with the cluster's id without
``--standalone``. With ``proxied``, clients reach each node only through a loopback proxy of its own (the
node advertises the proxy's port, as harness/kafka/proxied.py does for one node), so a test can slow the
whole cluster as its clients see it; replication between the nodes uses a listener of its own that no
proxy is in front of.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.kafka.node import ClusterFailed, KafkaCluster, new_cluster_id
from harness.servers.ports import free_port
from harness.servers.proxy import LoopbackProxy

# What a production cluster of three brokers sets: every topic, internal ones included, on three replicas, and a
# write acknowledged by all (acks=all) only when two of them have it.
REPLICATED_PROPERTIES: Mapping[str, str] = {
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
    "inter.broker.listener.name": "INTERNAL",
    # a restarted node takes its leaders back soon (Kafka's default checks every 300 s)
    "leader.imbalance.check.interval.seconds": "5",
}
PROXY_LIFETIME = 24 * 3600.0  # seconds: a session's cluster lives as long as the session


@dataclass
class ReplicatedNode(KafkaCluster):
    """One node of a replicated cluster: its own id, the cluster's voters."""

    node_id: int = 1
    voters: str = ""

    def server_properties(self) -> dict[str, str]:
        props = super().server_properties()
        del props["controller.quorum.bootstrap.servers"]
        return {**props, "node.id": str(self.node_id), "controller.quorum.voters": self.voters}

    def quorum_arguments(self) -> list[str]:
        return []  # the voters are in server.properties: a static quorum


@dataclass
class ReplicatedCluster:
    """Three (or more) nodes that form one cluster; ``bootstrap`` names them all.

    Every node process is started from one thread the cluster owns (``launch``): a broker gets SIGTERM when the
    thread that started it ends (KafkaCluster.launch), and a test restarts nodes from threads of its own.
    """

    name: str
    nodes: list[ReplicatedNode]
    proxies: list[LoopbackProxy] = field(default_factory=list)
    _launcher: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafka-launcher"), repr=False
    )

    def launch(self, nodes: Sequence[ReplicatedNode], timeout: float = 180.0) -> None:
        """Start the processes of ``nodes`` from the cluster's launcher thread; wait until each serves."""
        began = time.monotonic()
        offsets = self._launcher.submit(lambda: {n.node_id: n.launch() for n in nodes}).result()
        with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
            for future in [pool.submit(n._wait_ready, began + timeout, offsets[n.node_id]) for n in nodes]:
                future.result()

    @property
    def bootstrap(self) -> str:
        return ",".join(node.bootstrap for node in self.nodes)

    @property
    def cluster_id(self) -> str:
        return self.nodes[0].cluster_id

    def client_config(self) -> dict[str, Any]:
        return {"bootstrap.servers": self.bootstrap}

    def node(self, node_id: int) -> ReplicatedNode:
        return next(n for n in self.nodes if n.node_id == node_id)

    def running(self) -> list[ReplicatedNode]:
        return [n for n in self.nodes if n.process is not None and n.process.poll() is None]

    def set_latency(self, seconds_each_way: float) -> None:
        for proxy in self.proxies:
            proxy.set_latency(seconds_each_way)

    def restart(self, node_id: int, *, crash: bool = False, timeout: float = 120.0) -> float:
        """Stop one node (a controlled shutdown, or a crash) and start it again on its data; returns the seconds
        it was down. Waits until it is serving again, not until its replicas have caught up (``wait_in_sync``)."""
        node = self.node(node_id)
        began = time.monotonic()
        if crash:
            node.kill()
        else:
            node.stop(timeout=60)
        self.launch([node], timeout)
        return time.monotonic() - began

    def start_all(self, timeout: float = 120.0) -> None:
        """Start every node that is not running (after a test stopped some)."""
        running = self.running()
        stopped = [n for n in self.nodes if n not in running]
        if stopped:
            self.launch(stopped, timeout)

    def stop(self) -> None:
        with ThreadPoolExecutor(max_workers=len(self.nodes)) as pool:
            list(pool.map(lambda n: n.stop(timeout=30), self.nodes))
        self._launcher.shutdown(wait=False)

    # -- what the clients see ---------------------------------------------------------------------------

    def admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        from kafka_migration.kafka.settings import client_settings

        return AdminClient(client_settings({"bootstrap.servers": ",".join(n.bootstrap for n in self.running())}))

    def partitions(self, topic: str) -> dict[int, tuple[int, list[int], list[int]]]:
        """partition -> (leader, replicas, in-sync replicas) as the cluster's metadata says now."""
        metadata = self.admin().list_topics(topic, timeout=15)
        found = metadata.topics[topic]
        if found.error is not None:
            raise RuntimeError(f"{self.name}: topic {topic}: {found.error}")
        return {p: (m.leader, list(m.replicas), list(m.isrs)) for p, m in found.partitions.items()}

    def leader_of(self, topic: str, partition: int) -> int:
        return self.partitions(topic)[partition][0]

    def elect_preferred(self, topics: Sequence[str]) -> int:
        """A preferred-leader election of every partition of ``topics`` (kafka-leader-election.sh --election-type
        preferred); returns how many partitions changed leader (the others had theirs already)."""
        from confluent_kafka import ElectionType, TopicPartition

        admin = self.admin()
        wanted = [TopicPartition(t, p) for t in topics for p in self.partitions(t)]
        answers = admin.elect_leaders(ElectionType.PREFERRED, wanted).result(60)
        return sum(1 for error in answers.values() if error is None)

    def wait_in_sync(self, topics: Sequence[str], timeout: float = 120.0) -> None:
        """Until every partition of ``topics`` has a leader and every replica in sync (a restarted node caught up)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                lagging = {
                    (t, p): (leader, isr)
                    for t in topics
                    for p, (leader, replicas, isr) in self.partitions(t).items()
                    if leader < 0 or sorted(isr) != sorted(replicas)
                }
            except Exception as exc:  # a metadata request to a node that is starting
                lagging = {("?", -1): (-1, [str(exc)])}  # type: ignore[dict-item]
            if not lagging:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: partitions not in sync after {timeout:g} s: {lagging}")
            time.sleep(0.5)


def _node(
    name: str,
    directory: Path,
    node_id: int,
    cluster_id: str,
    properties: Mapping[str, str],
    heap_mb: int,
    fast_start: bool = True,
) -> ReplicatedNode:
    return ReplicatedNode(
        name=f"{name}-{node_id}",
        directory=directory / name / f"node{node_id}",
        port=free_port(),
        controller_port=free_port(),
        cluster_id=cluster_id,
        properties=dict(properties),
        heap_mb=heap_mb,
        fast_start=fast_start,
        extra_listeners={"INTERNAL": free_port()},  # replication between the nodes: never behind a proxy
        node_id=node_id,
    )


@dataclass(frozen=True)
class ReplicatedOptions:
    """How a replicated cluster starts: ``brokers`` nodes, broker properties over REPLICATED_PROPERTIES, each
    node's heap, each behind a loopback proxy (``proxied``: the fault tests cut connections there), the tests'
    fast-start JVM flags (harness.kafka.jars.java_command; the bench turns them off, to run the nodes as
    production does), and how long to wait for all of them."""

    brokers: int = 3
    properties: Mapping[str, str] | None = None
    heap_mb: int = 384
    proxied: bool = False
    fast_start: bool = True
    timeout: float = 180.0


def start_replicated(name: str, directory: Path, options: ReplicatedOptions | None = None) -> ReplicatedCluster:
    """Format and start a cluster of ``options.brokers`` nodes side by side; all or none."""
    options = options or ReplicatedOptions()
    brokers, properties, heap_mb = options.brokers, options.properties, options.heap_mb
    proxied, fast_start, timeout = options.proxied, options.fast_start, options.timeout
    cluster_id = new_cluster_id()
    merged = {**REPLICATED_PROPERTIES, **(properties or {})}
    nodes = [_node(name, directory, i, cluster_id, merged, heap_mb, fast_start) for i in range(1, brokers + 1)]
    voters = ",".join(f"{n.node_id}@127.0.0.1:{n.controller_port}" for n in nodes)
    proxies: list[LoopbackProxy] = []
    for node in nodes:
        node.voters = voters
        if proxied:
            proxy = LoopbackProxy("127.0.0.1", node.port, lifetime=PROXY_LIFETIME).start()
            proxies.append(proxy)
            node.advertised_port = proxy.port
    cluster = ReplicatedCluster(name, nodes, proxies)
    try:
        with ThreadPoolExecutor(max_workers=brokers) as pool:
            list(pool.map(ReplicatedNode.format, nodes))
        cluster.launch(nodes, timeout)
    except BaseException as exc:
        stop_replicated([cluster])
        if isinstance(exc, ClusterFailed):
            raise ClusterFailed(f"replicated cluster {name} did not start: {exc}") from None
        raise
    return cluster


def stop_replicated(clusters: Sequence[ReplicatedCluster]) -> None:
    for cluster in clusters:
        cluster.stop()
        for proxy in cluster.proxies:
            proxy.close()


@contextlib.contextmanager
def replicated_clusters(
    *names: str, directory: Path, options: ReplicatedOptions | None = None
) -> Iterator[list[ReplicatedCluster]]:
    """Replicated clusters side by side (e.g. a source and a target); stopped on exit, also on errors."""
    started: list[ReplicatedCluster] = []
    try:
        with ThreadPoolExecutor(max_workers=len(names)) as pool:
            futures = [pool.submit(start_replicated, name, directory, options) for name in names]
            errors = []
            for future in futures:
                try:
                    started.append(future.result())
                except BaseException as exc:
                    errors.append(exc)
            if errors:
                raise errors[0]
        yield started
    finally:
        stop_replicated(started)
