"""The compose stack's Kafka, run for real without Docker (harness/kafka/compose.py).

kafka-certs' make-certs.sh makes the CA, keystore and JAAS file; kafka-source-format's
format-source.sh formats the source's storage with both SCRAM users through kafka-storage.sh
(the jar set's StorageTool); kafka-source and kafka-target start from the server.properties the
apache/kafka image writes from their environment; then each service's health check command,
kafka-seed's command and the Airflow connections' client settings run against them. Only
Docker's part is replaced: host names by ``localhost`` (a name in the broker certificate),
container ports by free loopback ports, container folders by the test's.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from harness.kafka.compose import ComposeBroker, ComposeHost, compose_broker, kafka_home
from harness.kafka.node import stop_all
from tests.unit.compose_file import REPO, ComposeProject, load

pytestmark = pytest.mark.integration

SCRIPTS = REPO / "docker" / "kafka"


@dataclass
class Stack:
    project: ComposeProject
    host: ComposeHost
    home: Path
    source: ComposeBroker
    target: ComposeBroker

    def service_env(self, service: str) -> dict[str, str]:
        return self.host.environment(self.project.environment(service), service)

    def command(self, service: str, argv: list[str]) -> list[str]:
        """A service's command with the stack's names and folders as they are here (/opt/kafka: the jar set)."""
        return [self.host.localize(arg, service).replace("/opt/kafka/", f"{self.home}/") for arg in argv]


def _run(command: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _format_source(stack: Stack, **overrides: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        **stack.service_env("kafka-source-format"),
        "KAFKA_HOME": str(stack.home),
        **overrides,
    }
    return _run(["bash", str(SCRIPTS / "format-source.sh")], env)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, kafka_jars: Path) -> Iterator[Stack]:
    project = load()
    host = ComposeHost(tmp_path_factory.mktemp("compose"))
    host.secrets_dir.mkdir()
    host.ca_dir.mkdir()
    home = kafka_home(host.directory / "opt-kafka")
    owner = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip()
    certs_env = {
        "PATH": os.environ["PATH"],
        **project.environment("kafka-certs"),
        "SECRETS_DIR": str(host.secrets_dir),
        "CA_DIR": str(host.ca_dir),
        "SECRETS_OWNER": owner,
        "JAVA_TOOL_OPTIONS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",  # keytool starts a JVM seven times
    }
    made = _run(["bash", str(SCRIPTS / "make-certs.sh")], certs_env)
    assert made.returncode == 0, made.stderr
    source = compose_broker("kafka-source", host, project.environment("kafka-source"), 9094)
    target = compose_broker("kafka-target", host, project.environment("kafka-target"), 9092)
    stack = Stack(project, host, home, source, target)
    formatted = _format_source(stack)
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    source.write_properties()
    target.format()  # the image's launch script formats a storage nobody formatted
    try:
        source.start()
        target.start()
        yield stack
    finally:
        stop_all([source, target])


def test_the_source_storage_is_formatted_with_the_brokers_own_settings_and_left_alone_after(stack: Stack) -> None:
    meta = (stack.host.data_dir("kafka-source") / "meta.properties").read_text()
    assert f"cluster.id={stack.project.environment('kafka-source')['CLUSTER_ID']}" in meta
    again = _format_source(stack)  # a restart of the one-shot service
    assert again.returncode == 0, again.stderr
    assert "already formatted" in (again.stdout + again.stderr).lower()


def test_format_source_refuses_a_password_kafka_storage_would_cut(stack: Stack, tmp_path: Path) -> None:
    data = tmp_path / "data"
    run = _format_source(stack, SOURCE_SASL_PASSWORD="a,b", KAFKA_LOG_DIRS=str(data))
    assert run.returncode == 2
    assert run.stderr.strip().startswith("kafka-source-format: SCRAM user names and passwords")
    assert not data.exists()


def test_the_source_listens_only_on_sasl_ssl_with_the_stacks_certificate(stack: Stack) -> None:
    properties = stack.source.server_properties()
    assert properties["listener.security.protocol.map"] == "CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL"
    assert properties["ssl.keystore.location"] == str(stack.host.secrets_dir / "kafka-source.keystore.p12")
    assert properties["ssl.keystore.password"] == stack.project.env["SOURCE_SSL_PASSWORD"]
    assert stack.source.bootstrap.startswith("localhost:")  # the certificate names kafka-source and localhost


@pytest.mark.parametrize("service", ["kafka-source", "kafka-target"])
def test_each_brokers_health_check_command_passes(stack: Stack, service: str) -> None:
    argv = stack.project.services[service]["healthcheck"]["test"]
    assert argv[0] == "CMD"
    command = stack.command(service, argv[1:])
    done = _run(command, {"PATH": os.environ["PATH"]})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ApiVersion" in done.stdout or "Produce(0)" in done.stdout, done.stdout[:500]


def _settings_of_connection(stack: Stack, name: str) -> dict[str, object]:
    """An Airflow connection of the stack (JSON form) as librdkafka settings: extra + login/password."""
    env = stack.host.environment(stack.project.environment("airflow-scheduler"), "airflow-scheduler")
    connection = json.loads(env[f"AIRFLOW_CONN_{name}"])
    settings = dict(connection["extra"])
    if connection.get("login"):
        settings["sasl.username"] = connection["login"]
        settings["sasl.password"] = connection["password"]
    return settings


def test_the_airflow_connections_reach_both_brokers_and_a_wrong_password_is_refused(stack: Stack) -> None:
    for name in ("KAFKA_SOURCE", "KAFKA_TARGET"):
        settings = _settings_of_connection(stack, name)
        AdminClient(settings).list_topics(timeout=20)  # a SASL_SSL login against the CA of make-certs.sh
    errors: list[KafkaError] = []
    wrong = {**_settings_of_connection(stack, "KAFKA_SOURCE"), "sasl.password": "wrong", "error_cb": errors.append}
    admin = AdminClient(wrong)
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=5)
    admin.poll(1)
    assert any(error.code() == KafkaError._AUTHENTICATION for error in errors), errors


def test_the_seed_service_puts_the_sample_topics_on_the_source_once(stack: Stack) -> None:
    from harness.data.seed import sample_topics

    service = stack.project.services["kafka-seed"]
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(REPO),
        **stack.service_env("kafka-seed"),
    }
    argv = [sys.executable if part == "python" else part for part in service["command"]]
    first = _run(argv, env, timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    source = _settings_of_connection(stack, "KAFKA_SOURCE")
    topics = AdminClient(source).list_topics(timeout=20).topics
    assert {topic.name for topic in sample_topics()} <= set(topics)
    second = _run(argv, env, timeout=300)  # --if-empty: a restart of the one-shot service writes nothing
    assert second.returncode == 0, second.stdout + second.stderr
    assert "already" in (second.stdout + second.stderr).lower(), shlex.join(argv) + second.stdout + second.stderr
