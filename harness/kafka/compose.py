"""The compose stack's Kafka settings, run for real from the jar set: docker-compose.yaml without Docker.

A container of ``apache/kafka`` turns its KAFKA_* environment into server.properties (the
image's ``configure`` script and its ``render-properties`` step: KAFKA_A_B -> a.b, ``__`` ->
``_``, ``___`` -> ``-``; the SSL file names and credential files become locations and
passwords under /etc/kafka/secrets), formats its storage unless formatted, and runs
``kafka-server-start.sh``. Here the same happens with the same environment, except what only
a Docker network gives: host names become ``localhost`` (a name in the stack's broker
certificate), each container port a free loopback port, and the container's folders
(/etc/kafka/secrets, /var/lib/kafka/data, /opt/kafka-migration/ca) folders of the test.
``kafka_home`` is an /opt/kafka whose bin/ scripts run the jar set's classes, so the compose
scripts (format-source.sh, the health checks) run as they are.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.kafka import jars
from harness.kafka.node import KafkaCluster, write_properties
from harness.kafka.security import PLAINTEXT
from harness.servers.ports import free_port

# The release's bin/ scripts this harness provides, and the class each one runs (Kafka 4.x).
BIN_SCRIPTS = {
    "kafka-storage.sh": "kafka.tools.StorageTool",
    "kafka-server-start.sh": "kafka.Kafka",
    "kafka-broker-api-versions.sh": "org.apache.kafka.tools.BrokerApiVersionsCommand",
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-consumer-groups.sh": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
}
# The image's kafka-propertiesSpec.json: KAFKA_* variables that are not broker properties.
IMAGE_EXCLUDES = frozenset(
    {
        "KAFKA_VERSION",
        "KAFKA_HEAP_OPT",
        "KAFKA_LOG4J_OPTS",
        "KAFKA_OPTS",
        "KAFKA_JMX_OPTS",
        "KAFKA_JVM_PERFORMANCE_OPTS",
        "KAFKA_GC_LOG_OPTS",
        "KAFKA_LOG4J_ROOT_LOGLEVEL",
        "KAFKA_LOG4J_LOGGERS",
        "KAFKA_TOOLS_LOG4J_LOGLEVEL",
    }
)
CONTAINER_SECRETS = "/etc/kafka/secrets"
CONTAINER_DATA = "/var/lib/kafka/data"
CONTAINER_CA = "/opt/kafka-migration/ca"
_SINGLE_UNDERSCORE = re.compile(r"[^_]_[^_]")


def kafka_home(directory: Path) -> Path:
    """An /opt/kafka for the compose scripts: bin/<script>.sh runs the jar set's class, with $KAFKA_OPTS."""
    bin_dir = directory / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for script, main_class in BIN_SCRIPTS.items():
        java, *options = jars.java_command(main_class, heap_mb=256)
        split = options.index("-cp")
        # kafka-run-class.sh passes $KAFKA_OPTS unquoted too (JVM options, split at spaces)
        command = [shlex.quote(java), *map(shlex.quote, options[:split]), "$KAFKA_OPTS"]
        command += [*map(shlex.quote, options[split:]), '"$@"']
        path = bin_dir / script
        path.write_text(f"#!/usr/bin/env bash\n# {main_class} from the harness jar set\nexec {' '.join(command)}\n")
        path.chmod(0o755)
    return directory


def convert_key(name: str) -> str:
    """The image's ConvertKey: ``_`` -> ``.``, ``___`` -> ``-``, ``__`` -> ``_``, lower case."""
    single = _SINGLE_UNDERSCORE.sub(lambda match: match.group(0).replace("_", "."), name)
    return single.replace("___", "-").replace("__", "_").lower()


def image_properties(environment: Mapping[str, str]) -> dict[str, str]:
    """server.properties as the apache/kafka image's configure script writes it from a container's environment.

    Paths in the environment are already this machine's (``ComposeHost.localize``).
    """
    env = dict(environment)
    roles = env.get("KAFKA_PROCESS_ROLES")
    advertised = env.get("KAFKA_ADVERTISED_LISTENERS", "")
    if not env.get("KAFKA_LISTENERS") and roles != "controller" and advertised:
        env["KAFKA_LISTENERS"] = re.sub(r"://[^:]*:", "://0.0.0.0:", advertised)
    if "SSL://" in advertised:
        secrets = Path(env["_SECRETS_DIR"])
        env["KAFKA_SSL_KEYSTORE_LOCATION"] = str(secrets / env["KAFKA_SSL_KEYSTORE_FILENAME"])
        env["KAFKA_SSL_KEY_PASSWORD"] = (secrets / env["KAFKA_SSL_KEY_CREDENTIALS"]).read_text()
        env["KAFKA_SSL_KEYSTORE_PASSWORD"] = (secrets / env["KAFKA_SSL_KEYSTORE_CREDENTIALS"]).read_text()
        if any(word in env.get("KAFKA_SSL_CLIENT_AUTH", "") for word in ("required", "requested")):
            env["KAFKA_SSL_TRUSTSTORE_LOCATION"] = str(secrets / env["KAFKA_SSL_TRUSTSTORE_FILENAME"])
            env["KAFKA_SSL_TRUSTSTORE_PASSWORD"] = (secrets / env["KAFKA_SSL_TRUSTSTORE_CREDENTIALS"]).read_text()
    return {
        convert_key(name[len("KAFKA_") :]): value
        for name, value in sorted(env.items())
        if name.startswith("KAFKA_") and name not in IMAGE_EXCLUDES
    }


@dataclass
class ComposeHost:
    """Where the stack's names and folders land here: one free loopback port per (host, container port)."""

    directory: Path
    hosts: tuple[str, ...] = ("kafka-source", "kafka-target")
    ports: dict[tuple[str, int], int] = field(default_factory=dict)

    @property
    def secrets_dir(self) -> Path:
        return self.directory / "secrets"

    @property
    def ca_dir(self) -> Path:
        return self.directory / "ca"

    def data_dir(self, service: str) -> Path:
        return self.directory / "data" / service

    def port(self, host: str, container_port: int) -> int:
        return self.ports.setdefault((host, container_port), free_port())

    def address(self, host: str, container_port: int) -> str:
        return f"localhost:{self.port(host, container_port)}"

    def localize(self, value: str, service: str) -> str:
        """A value of the stack as this machine needs it: host:port of a broker, container folders."""

        def host_port(match: re.Match[str]) -> str:
            return self.address(match.group(1), int(match.group(2)))

        value = re.sub(rf"\b({'|'.join(map(re.escape, self.hosts))}):(\d+)", host_port, value)
        # a listener on every interface of its container (":9093") listens on loopback here
        own = next((host for host in self.hosts if service.startswith(host)), None)
        if own is not None:
            value = re.sub(
                r"(\b[A-Z_]+://):(\d+)", lambda m: f"{m.group(1)}127.0.0.1:{self.port(own, int(m.group(2)))}", value
            )
            value = value.replace(CONTAINER_DATA, str(self.data_dir(own)))
        return value.replace(CONTAINER_SECRETS, str(self.secrets_dir)).replace(CONTAINER_CA, str(self.ca_dir))

    def environment(self, environment: Mapping[str, Any], service: str) -> dict[str, str]:
        localized = {name: self.localize(str(value), service) for name, value in environment.items()}
        localized["_SECRETS_DIR"] = str(self.secrets_dir)
        return localized


@dataclass
class ComposeBroker(KafkaCluster):
    """A broker started with the server.properties the apache/kafka image would write for a compose service.

    Formatting is the caller's (format-source.sh for the source); ``format`` here formats the
    way the image's launch script does when nothing did (CLUSTER_ID, --ignore-formatted).
    """

    environment: Mapping[str, str] = field(default_factory=dict)
    advertised_host: str = "localhost"

    @property
    def bootstrap(self) -> str:
        return f"{self.advertised_host}:{self.port}"

    def server_properties(self) -> dict[str, str]:
        return image_properties(self.environment)

    def jvm_options(self) -> list[str]:
        return shlex.split(self.environment.get("KAFKA_OPTS", ""))  # the image passes KAFKA_OPTS to the JVM

    def format(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_properties(self.properties_path, self.server_properties())
        command = [
            *jars.java_command("kafka.tools.StorageTool", heap_mb=256),
            "format",
            "--cluster-id",
            self.environment["CLUSTER_ID"],
            "--config",
            str(self.properties_path),
            "--ignore-formatted",
        ]
        subprocess.run(command, capture_output=True, text=True, check=True, timeout=120)

    def write_properties(self) -> None:
        """server.properties only: the storage was formatted by someone else (format-source.sh)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        write_properties(self.properties_path, self.server_properties())


def compose_broker(name: str, host: ComposeHost, environment: Mapping[str, Any], container_port: int) -> ComposeBroker:
    """A ComposeBroker for the service ``name`` whose clients use ``container_port`` (not started)."""
    env = host.environment(environment, name)
    return ComposeBroker(
        name=name,
        directory=host.directory / "brokers" / name,
        port=host.port(name, container_port),
        controller_port=0,
        cluster_id=str(env.get("CLUSTER_ID", "")),
        security=PLAINTEXT,
        environment=env,
    )
