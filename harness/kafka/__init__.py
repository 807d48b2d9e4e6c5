"""Real Apache Kafka for the tests, the demo and the benchmark: one-node KRaft clusters from Maven jars.

- jars      where the pinned jar set (pom.xml) lives and the JVM command that runs it
- fetch     ``make kafka-jars``: resolve the jar set with Maven once, record its class-data archive
- security  the kinds of cluster: PLAINTEXT, mutual TLS, SASL_SSL/SCRAM, ACL-enforcing
- node      format, start and stop one-node clusters on free loopback ports (several in parallel)
- compose   a broker started with the properties docker-compose.yaml gives its containers
- ``python -m harness.kafka``  fetch the jars, or start a pair of clusters by hand
"""

from harness.kafka.node import ClusterSpec, KafkaCluster, kafka_clusters, start_cluster, start_clusters, stop_all
from harness.kafka.security import PLAINTEXT, Plaintext, SaslSsl, ScramUser, Tls

__all__ = [
    "PLAINTEXT",
    "ClusterSpec",
    "KafkaCluster",
    "Plaintext",
    "SaslSsl",
    "ScramUser",
    "Tls",
    "kafka_clusters",
    "start_cluster",
    "start_clusters",
    "stop_all",
]
