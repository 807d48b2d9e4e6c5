"""harness/kafka: the clusters every broker test runs on are real Apache Kafka, of the stack's version.

The jar set is the one docker-compose.yaml's apache/kafka image carries; each kind of cluster
demands what it says (a SCRAM login, a client certificate, an ACL) and refuses the rest.
"""

from __future__ import annotations

import re

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from harness.kafka import KafkaCluster, jars
from harness.kafka.security import ScramUser
from tests.conftest import Clusters
from tests.unit.compose_file import load

pytestmark = pytest.mark.integration


def test_the_jar_set_is_the_kafka_of_the_compose_stack(kafka_jars) -> None:  # type: ignore[no-untyped-def]
    image = load().services["kafka-source"]["image"]
    assert image == f"apache/kafka:{jars.kafka_version()}"
    names = {jar.name for jar in kafka_jars.glob("*.jar")}
    version = jars.kafka_version()
    for artifact in ("kafka_2.13", "kafka-server", "kafka-clients", "connect-mirror", "kafka-tools"):
        assert f"{artifact}-{version}.jar" in names, artifact
    assert any(re.fullmatch(r"log4j-slf4j-impl-.*\.jar", name) for name in names)  # a logging backend


def test_the_session_pair_is_two_apache_kafka_clusters(clusters: Clusters) -> None:
    if clusters.source_cluster is None:
        pytest.skip("KAFKA_MIGRATION_TEST_SOURCE/_TARGET name clusters the harness did not start")  # noqa: TID251 (not a missing tool)
    ids = set()
    for bootstrap in (clusters.source, clusters.target):
        admin = AdminClient({"bootstrap.servers": bootstrap})
        ids.add(admin.describe_cluster().result(timeout=15).cluster_id)
    assert ids == {clusters.source_cluster.cluster_id, clusters.target_cluster.cluster_id}  # type: ignore[union-attr]
    assert "Kafka Server started" in clusters.source_cluster.log_path.read_text()


def _topics(settings: dict[str, object]) -> set[str]:
    return set(AdminClient({**settings, "socket.timeout.ms": 5000}).list_topics(timeout=10).topics)


def test_sasl_clusters_take_their_scram_users_and_refuse_a_wrong_password(
    sasl_clusters: list[KafkaCluster], unique: str
) -> None:
    source, _ = sasl_clusters
    admin = AdminClient(source.client_config("migrator"))
    topic = f"sasl{unique}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=20)
    assert topic in _topics(source.client_config())  # the admin user sees it
    errors: list[KafkaError] = []
    wrong = {**source.client_config(ScramUser("migrator", "not-the-password")), "error_cb": errors.append}
    refused = AdminClient(wrong)
    with pytest.raises(KafkaException):
        refused.list_topics(timeout=5)
    refused.poll(1)  # serves the error callback
    assert any(error.code() == KafkaError._AUTHENTICATION for error in errors), errors


def test_the_acl_cluster_refuses_what_no_acl_grants(acl_cluster: KafkaCluster, unique: str) -> None:
    topic = f"acl{unique}"
    admin = AdminClient(acl_cluster.client_config())  # the super user
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=20)
    migrator = AdminClient(acl_cluster.client_config("migrator"))
    assert topic not in migrator.list_topics(timeout=10).topics  # no Describe: not even listed

    other = f"acl{unique}.new"
    with pytest.raises(KafkaException, match=r"TOPIC_AUTHORIZATION_FAILED|CLUSTER_AUTHORIZATION_FAILED"):
        migrator.create_topics([NewTopic(other, 1, 1)])[other].result(timeout=20)

    grant = AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        "User:migrator",
        "*",
        AclOperation.DESCRIBE,
        AclPermissionType.ALLOW,
    )
    admin.create_acls([grant])[grant].result(timeout=20)
    assert topic in migrator.list_topics(timeout=10).topics
