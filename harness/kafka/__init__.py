"""Real Apache Kafka for the tests, the demo and the benchmark: KRaft clusters and MirrorMaker 2 from Maven jars.

- jars        where the pinned jar set (pom.xml) lives and the JVM command that runs it
- fetch       ``make kafka-jars``: resolve the jar set with Maven once, record its class-data archive
- security    the kinds of cluster: PLAINTEXT, mutual TLS, SASL_SSL/SCRAM, ACL-enforcing
- certs       the private CA and certificates of the TLS listeners, made at test time
- node        format, start and stop one-node clusters on free loopback ports (several in parallel)
- tls         TLS clusters: native SSL listeners, one of them presenting an expired certificate
- acls        grant and revoke ACLs on the ACL-enforcing clusters, as the super user
- authorizer  Kafka's StandardAuthorizer in one JVM, without a broker: the reference for the ACL decision model
- proxied     clusters reachable only through a loopback proxy (network faults)
- replicated  three-node clusters (replication factor 3) whose nodes a test stops, kills and restarts
- compose     a broker started with the properties docker-compose.yaml gives its containers
- metrics     a broker's own request counts, over JMX
- tools       Kafka's command-line tools from the jar set
- mirrormaker            MirrorMaker 2 in dedicated mode: a migration's mm2.properties, start and stop
- mirrormaker_defaults   MirrorMaker 2's defaults as its connect-mirror jar holds them
- background  ``make clusters`` / ``make clusters-stop``: a practice source and target in the background
- single      ``WHICH=NAME``: one cluster of that pair stopped cleanly or started again, the other running on
- supervisor  the process that keeps the pair: names a broker that ends, stops or starts one on request
- control     the request and state files through which ``single`` asks the supervisor
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
