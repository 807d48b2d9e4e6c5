"""How cluster settings reach the Spark driver: whole in its environment, or secrets by reference
on YARN and Kubernetes, where the environment becomes --conf arguments (spark/driver_env.py)."""

from __future__ import annotations

import json

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.model.config import ClusterConfig, SecretSource
from kafka_migration.spark.driver_env import driver_env
from tests.leaks import leaked

SECRET = "pw-7f3a9c"


def _cluster(role: str, secrets: SecretSource | None = None, **extra: str) -> ClusterConfig:
    settings = {
        "bootstrap.servers": f"{role}:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "migrator",
        "sasl.password": SECRET,
        "ssl.ca.location": "/etc/kafka/ca.pem",
        **extra,
    }
    return ClusterConfig(role, settings, secrets=secrets or SecretSource())


def test_local_mode_gives_the_driver_the_whole_settings_in_its_environment() -> None:
    result = driver_env([_cluster("source"), _cluster("target")], env_becomes_conf=False, kubernetes=False)
    assert json.loads(result.env["KAFKA_MIGRATION_SOURCE_CONFIG"])["sasl.password"] == SECRET
    assert set(result.env) == {"KAFKA_MIGRATION_SOURCE_CONFIG", "KAFKA_MIGRATION_TARGET_CONFIG"}
    assert result.conf == {}


@pytest.mark.parametrize("kubernetes", [False, True])
def test_yarn_and_kubernetes_refuse_secrets_without_a_reference(kubernetes: bool) -> None:
    with pytest.raises(ConfigurationError) as info:
        driver_env([_cluster("source")], env_becomes_conf=True, kubernetes=kubernetes)
    message = str(info.value)
    assert "source connection's ['sasl.password']" in message
    assert "kafka_migration.settings_file" in message and "kafka_migration.kubernetes_secret" in message
    assert leaked(SECRET, message) == []


def test_settings_file_sends_only_public_settings_and_the_path() -> None:
    secrets = SecretSource(settings_file="/mnt/kafka/source.json", file_keys=frozenset({"sasl.password"}))
    result = driver_env([_cluster("source", secrets)], env_becomes_conf=True, kubernetes=False)
    assert leaked(SECRET, json.dumps(result.env)) == []
    public = json.loads(result.env["KAFKA_MIGRATION_SOURCE_CONFIG"])
    assert public["sasl.username"] == "migrator" and "sasl.password" not in public
    assert public["ssl.ca.location"] == "/etc/kafka/ca.pem"  # a path, not a secret
    assert result.env["KAFKA_MIGRATION_SOURCE_CONFIG_FILE"] == "/mnt/kafka/source.json"
    assert result.conf == {}


def test_settings_file_must_hold_every_secret_setting() -> None:
    secrets = SecretSource(settings_file="/mnt/kafka/source.json", file_keys=frozenset({"sasl.password"}))
    with pytest.raises(ConfigurationError, match=r"\['ssl\.key\.password'\]"):
        driver_env(
            [_cluster("source", secrets, **{"ssl.key.password": "k-secret"})], env_becomes_conf=True, kubernetes=False
        )


def test_kubernetes_secret_becomes_a_secret_key_ref_conf() -> None:
    source = _cluster("source", SecretSource(kubernetes_secret="kafka-source:settings.json"))
    target = _cluster("target", SecretSource(kubernetes_secret="kafka-target:settings.json"))
    result = driver_env([source, target], env_becomes_conf=True, kubernetes=True)
    assert result.conf == {
        "spark.kubernetes.driver.secretKeyRef.KAFKA_MIGRATION_SOURCE_SECRET_CONFIG": "kafka-source:settings.json",
        "spark.kubernetes.driver.secretKeyRef.KAFKA_MIGRATION_TARGET_SECRET_CONFIG": "kafka-target:settings.json",
    }
    assert leaked(SECRET, json.dumps(result.env)) == []


def test_kubernetes_secret_on_yarn_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="not k8s://"):
        driver_env([_cluster("source", SecretSource(kubernetes_secret="s:k"))], env_becomes_conf=True, kubernetes=False)


def test_driver_merges_environment_file_and_secret_json_in_that_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "source.json"
    path.write_text(json.dumps({"sasl.password": "from-file", "ssl.key.password": "from-file"}))
    environ = {
        "KAFKA_MIGRATION_SOURCE_CONFIG": json.dumps({"bootstrap.servers": "b:9093", "sasl.username": "u"}),
        "KAFKA_MIGRATION_SOURCE_CONFIG_FILE": str(path),
        "KAFKA_MIGRATION_SOURCE_SECRET_CONFIG": json.dumps({"ssl.key.password": "from-secret"}),
    }
    settings = ClusterConfig.from_environment("source", environ).settings
    assert settings == {
        "bootstrap.servers": "b:9093",
        "sasl.username": "u",
        "sasl.password": "from-file",
        "ssl.key.password": "from-secret",
    }


def test_driver_reports_bad_secret_json_without_quoting_it() -> None:
    environ = {
        "KAFKA_MIGRATION_SOURCE_CONFIG": json.dumps({"bootstrap.servers": "b:9093"}),
        "KAFKA_MIGRATION_SOURCE_SECRET_CONFIG": '{"sasl.password": "oops-secret"',
    }
    with pytest.raises(ConfigurationError) as info:
        ClusterConfig.from_environment("source", environ)
    assert "KAFKA_MIGRATION_SOURCE_SECRET_CONFIG of the source cluster is not valid JSON" in str(info.value)
    assert leaked("oops-secret", str(info.value)) == []


def test_driver_without_any_settings_names_the_three_variables() -> None:
    with pytest.raises(ConfigurationError, match="KAFKA_MIGRATION_TARGET_CONFIG_FILE"):
        ClusterConfig.from_environment("target", {})
