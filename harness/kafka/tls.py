"""TLS clusters for tests: Apache Kafka brokers with native SSL listeners and a PKI made at test time.

Each cluster is a one-node broker (harness.kafka) whose client listener is SSL, with
``ssl.client.auth=required`` when it is mutual (a client certificate signed by the test CA).
The source broker has a second SSL listener, EXPIRED, that presents a certificate which has
already expired (per-listener ``listener.name.expired.ssl.*`` settings): the address a test
gives a client to see that failure, on the same broker.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from harness.data.seed import producer, send
from harness.kafka import ClusterSpec, KafkaCluster, Tls, kafka_clusters
from harness.kafka.certs import Pki, make_pki
from harness.servers.ports import free_port
from kafka_migration.kafka.settings import client_settings


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


def expired_listener(pki: Pki, directory: Path, security: Tls) -> dict[str, str]:
    """The settings of an extra SSL listener EXPIRED that presents the expired certificate."""
    return {
        "listener.name.expired.ssl.keystore.type": "PEM",
        "listener.name.expired.ssl.keystore.location": str(
            pki.expired_server.keystore_pem(directory / "expired-keystore.pem")
        ),
        "listener.name.expired.ssl.truststore.type": "PEM",
        "listener.name.expired.ssl.truststore.location": str(pki.ca),
        "listener.name.expired.ssl.client.auth": "required" if security.client_auth else "none",
    }


@dataclass
class TlsClusters:
    """A source and a target cluster with SSL listeners; ``*_mutual``: the listener requires a client certificate."""

    pki: Pki
    source: KafkaCluster
    target: KafkaCluster
    source_mutual: bool
    target_mutual: bool
    expired_port: int

    def source_settings(self, *, inline: bool = False) -> dict[str, Any]:
        return tls_settings(self.source.bootstrap, self.pki, client_cert=self.source_mutual, inline=inline)

    def target_settings(self, *, inline: bool = True) -> dict[str, Any]:
        return tls_settings(self.target.bootstrap, self.pki, client_cert=self.target_mutual, inline=inline)

    @property
    def expired_source_address(self) -> str:
        """The source broker's listener that presents an expired certificate."""
        return f"127.0.0.1:{self.expired_port}"


@contextlib.contextmanager
def tls_clusters(
    directory: Path,
    *,
    source_mutual: bool = False,
    target_mutual: bool = True,
    key_password: str = "client-key-pass",
) -> Iterator[TlsClusters]:
    """Make a PKI in ``directory`` and start a TLS source and target (in parallel); stop both on exit."""
    pki = make_pki(directory / "pki", client_key_password=key_password)
    source_security, target_security = Tls(pki, client_auth=source_mutual), Tls(pki, client_auth=target_mutual)
    expired_port = free_port()
    specs = (
        ClusterSpec(
            "tls-source",
            source_security,
            properties=expired_listener(pki, directory / "pki", source_security),
            extra_listeners={"EXPIRED": expired_port},
        ),
        ClusterSpec("tls-target", target_security),
    )
    with kafka_clusters(*specs, directory=directory / "brokers") as (source, target):
        yield TlsClusters(pki, source, target, source_mutual, target_mutual, expired_port)


def topic_names(settings: dict[str, Any]) -> set[str]:
    return set(AdminClient(client_settings(settings)).list_topics(timeout=15).topics)


def seed_topic(settings: dict[str, Any], topic: str, partitions: int, records: int) -> None:
    """Create ``topic`` and write ``records`` small records with keys and headers over TLS."""
    admin = AdminClient(client_settings(settings))
    admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=10)[topic].result(timeout=20)
    tls = {k: v for k, v in settings.items() if k != "bootstrap.servers"}
    p = producer(settings["bootstrap.servers"], **tls)
    for i in range(records):
        headers = [("n", str(i).encode())] if i % 5 == 0 else None
        send(p, topic, i % partitions, f"k{i}".encode(), b"v" * (i % 40), headers=headers)
    p.flush(30)
