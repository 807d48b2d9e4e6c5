"""The fault tier: replicated Apache Kafka clusters (harness/kafka/replicated.py) started once for the session.

A source and a target of three nodes each, replication factor 3 and ``min.insync.replicas=2``, every node
reachable by clients only through a loopback proxy of its own, so a test can slow a whole cluster as its clients
see it. Six broker JVMs of 384 MB heap (about 3 GB in all) beside Spark on two cores: the tier is started once,
shared, and every test leaves both clusters with every node up and every partition in sync.

A case that needs no replicas takes tests/conftest.py's ``proxied`` (one-node brokers behind proxies) instead:
test_lost_acks.py, the target's acknowledgements lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.kafka.replicated import ReplicatedCluster, ReplicatedOptions, replicated_clusters

ReplicatedPair = tuple[ReplicatedCluster, ReplicatedCluster]


@pytest.fixture(scope="session")
def replicated_pair(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path) -> Iterator[ReplicatedPair]:
    directory = tmp_path_factory.mktemp("kafka-replicated")
    options = ReplicatedOptions(proxied=True)
    with replicated_clusters("repl-source", "repl-target", directory=directory, options=options) as (source, target):
        yield source, target


@pytest.fixture
def replicated(replicated_pair: ReplicatedPair) -> Iterator[ReplicatedPair]:
    """The session's replicated pair for one test: every node running and no latency, before and after."""
    for cluster in replicated_pair:
        cluster.set_latency(0)
        cluster.start_all()
    yield replicated_pair
    for cluster in replicated_pair:
        cluster.set_latency(0)
        cluster.start_all()
