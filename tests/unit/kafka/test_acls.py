"""kafka/acls.py: what an authorization refusal says, and Kafka's implied operations."""

from __future__ import annotations

from kafka_migration.exceptions import AuthorizationError
from kafka_migration.kafka.acls import Permission, allows, principal_of, refusal, unlisted_topics_hint
from kafka_migration.kafka.permissions import SOURCE_TOPICS, missing

SASL = {
    "bootstrap.servers": "kafka-1:9093",
    "security.protocol": "SASL_SSL",
    "sasl.mechanism": "SCRAM-SHA-512",
    "sasl.username": "migrator",
    "sasl.password": "secret-password",
}


def test_read_and_write_imply_describe_and_alter_configs_implies_describe_configs() -> None:
    assert allows({"Read"}, "Describe") and allows({"Write"}, "Describe") and allows({"All"}, "Write")
    assert allows({"AlterConfigs"}, "DescribeConfigs")
    assert not allows({"DescribeConfigs"}, "Describe") and not allows({"Create"}, "Describe")
    assert not allows({"Describe"}, "Read")


def test_missing_lists_each_operation_with_the_resources_lacking_it() -> None:
    found = missing({"a": frozenset({"Read", "Describe"}), "b": frozenset(), "c": None}, SOURCE_TOPICS, "topic")
    assert found == [
        Permission("Read", "topic", ("b",), "to copy and verify them"),
        Permission("DescribeConfigs", "topic", ("a", "b"), "to copy their configs"),
    ]  # c: the broker did not report operations, nothing to judge


def test_the_refusal_is_one_line_naming_cluster_principal_operations_and_the_command() -> None:
    error = refusal(
        "target",
        SASL,
        [
            Permission("Write", "topic", ("orders", "payments"), "to copy into them"),
            Permission("Read", "topic", ("orders", "payments"), "to verify"),
            Permission("Read", "group", ("billing",), "to write offsets"),
        ],
        cause="TOPIC_AUTHORIZATION_FAILED",
    )
    assert isinstance(error, AuthorizationError) and error.exit_code == 2
    text = str(error)
    assert "\n" not in text and "secret-password" not in text
    assert text.startswith(
        "The target cluster kafka-1:9093 does not allow User:migrator: Write on topics orders, payments (to copy into "
        "them); Read on topics orders, payments (to verify); Read on group billing (to write offsets) "
        "(TOPIC_AUTHORIZATION_FAILED). Add the ACLs: "
    )
    assert (
        "--add --allow-principal User:migrator --operation Write --operation Read --topic orders --topic payments; "
        in text
    )
    assert "--operation Read --group billing. Nothing was written." in text


def test_the_principal_as_far_as_the_settings_tell() -> None:
    assert principal_of(SASL) == "User:migrator"
    assert principal_of({"security.protocol": "SSL", "ssl.certificate.location": "c.pem"}).startswith(
        "the principal of the client certificate"
    )
    assert unlisted_topics_hint({"bootstrap.servers": "b:9092"}) == ""  # no principal of its own: no ACL advice
    assert "--operation Read --topic <topic>" in unlisted_topics_hint(SASL)
