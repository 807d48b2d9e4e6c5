"""TLS clusters for tests: embedded brokers behind TLS-terminating proxies, with a PKI made at test time.

The embedded broker has no TLS listener (its --cert/--key flags leave it plaintext), so each
cluster is a broker that advertises the port of a TLS-terminating loopback proxy
(harness.embedded.proxied_cluster with ``server_ssl``): every client connection, bootstrap and
partition leader alike, speaks TLS to the proxy. A proxy that requires a client certificate
signed by the test CA stands for a broker with ``ssl.client.auth=required``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from harness.certs import Pki, make_pki
from harness.embedded import ProxiedCluster, proxied_cluster
from harness.proxy import LoopbackProxy
from harness.seed import producer, send
from kafka_migration.kafka.clients import client_settings


def tls_settings(bootstrap: str, pki: Pki, *, client_cert: bool, inline: bool) -> dict[str, Any]:
    """librdkafka settings for a TLS cluster: the CA (and the client identity) inline as PEM or by path."""
    settings: dict[str, Any] = {"bootstrap.servers": bootstrap, "security.protocol": "SSL"}
    if inline:
        settings["ssl.ca.pem"] = pki.ca_pem
    else:
        settings["ssl.ca.location"] = str(pki.ca)
    if client_cert:
        if inline:
            settings["ssl.certificate.pem"] = pki.client.cert_pem
            settings["ssl.key.pem"] = pki.client.key_pem
        else:
            settings["ssl.certificate.location"] = str(pki.client.cert)
            settings["ssl.key.location"] = str(pki.client.key)
        settings["ssl.key.password"] = pki.client_key_password
    return settings


@dataclass
class TlsClusters:
    """A source and a target cluster behind TLS proxies; ``*_mutual``: the proxy requires a client certificate."""

    pki: Pki
    source: ProxiedCluster
    target: ProxiedCluster
    source_mutual: bool
    target_mutual: bool

    def source_settings(self, *, inline: bool = False) -> dict[str, Any]:
        return tls_settings(self.source.bootstrap, self.pki, client_cert=self.source_mutual, inline=inline)

    def target_settings(self, *, inline: bool = True) -> dict[str, Any]:
        return tls_settings(self.target.bootstrap, self.pki, client_cert=self.target_mutual, inline=inline)

    @contextlib.contextmanager
    def expired_source(self) -> Iterator[LoopbackProxy]:
        """A second TLS proxy in front of the source broker that presents an expired certificate."""
        context = self.pki.server_context(require_client_cert=self.source_mutual, expired=True)
        with LoopbackProxy("127.0.0.1", self.source.cluster.port, server_ssl=context) as proxy:
            yield proxy


@contextlib.contextmanager
def tls_clusters(
    directory: Path,
    *,
    source_mutual: bool = False,
    target_mutual: bool = True,
    key_password: str = "client-key-pass",
) -> Iterator[TlsClusters]:
    """Make a PKI in ``directory`` and start a TLS source and target; stop both on exit."""
    pki = make_pki(directory / "pki", client_key_password=key_password)
    with (
        proxied_cluster(
            "tls-source", directory / "brokers", server_ssl=pki.server_context(require_client_cert=source_mutual)
        ) as source,
        proxied_cluster(
            "tls-target", directory / "brokers", server_ssl=pki.server_context(require_client_cert=target_mutual)
        ) as target,
    ):
        yield TlsClusters(pki, source, target, source_mutual, target_mutual)


def topic_names(settings: dict[str, Any]) -> set[str]:
    return set(AdminClient(client_settings(settings)).list_topics(timeout=15).topics)


def seed_topic(settings: dict[str, Any], topic: str, partitions: int, records: int) -> None:
    """Create ``topic`` and write ``records`` small records with keys and headers over TLS.

    Every partition ends with a record sent alone (embedded-broker rule, see harness/seed.py).
    """
    admin = AdminClient(client_settings(settings))
    admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=10)[topic].result(timeout=20)
    tls = {k: v for k, v in settings.items() if k != "bootstrap.servers"}
    p = producer(settings["bootstrap.servers"], **tls)
    for i in range(records):
        headers = [("n", str(i).encode())] if i % 5 == 0 else None
        send(p, topic, i % partitions, f"k{i}".encode(), b"v" * (i % 40), headers=headers)
    p.flush(30)
    _seal(settings, topic, range(partitions))


def _seal(settings: dict[str, Any], topic: str, partitions: Iterable[int]) -> None:
    tls = {k: v for k, v in settings.items() if k != "bootstrap.servers"}
    p = producer(settings["bootstrap.servers"], **{**tls, "linger.ms": 0, "batch.num.messages": 1})
    for partition in partitions:
        p.produce(topic, partition=partition, key=b"seal", value=f"seal-{partition}".encode())
        p.flush(15)
