"""Apache Kafka's own command-line tools from the jar set, for what a client library cannot ask.

confluent-kafka refuses a config resource with an empty name, which is how Kafka addresses the
cluster-wide broker default; ``kafka-configs.sh --entity-default`` sets it (kafka.admin.ConfigCommand,
the class the script runs). Tests also read and set client quotas with it, to check the product's own quota
messages against Kafka's tool.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.kafka import jars
from harness.kafka.security import write_private


def kafka_configs(bootstrap: str, *args: str) -> str:
    """Run ``kafka-configs.sh --bootstrap-server BOOTSTRAP ARGS``; its output, or an error with it."""
    command = [*jars.java_command("kafka.admin.ConfigCommand", heap_mb=256), "--bootstrap-server", bootstrap, *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"kafka-configs {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def kafka_configs_sasl(settings: Mapping[str, Any], folder: Path, *args: str) -> str:
    """``kafka-configs.sh`` against a SASL_SSL/SCRAM cluster of the harness, logged in with ``settings`` (librdkafka
    names, as ``client_config()`` gives them): the login goes in a ``--command-config`` file in ``folder``,
    readable by its owner only, never on the command line."""
    properties = write_private(
        folder / "kafka-configs-login.properties",
        "\n".join(
            [
                "security.protocol=SASL_SSL",
                f"sasl.mechanism={settings['sasl.mechanism']}",
                "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'username="{settings["sasl.username"]}" password="{settings["sasl.password"]}";',
                "ssl.truststore.type=PEM",
                f"ssl.truststore.location={settings['ssl.ca.location']}",
            ]
        ),
    )
    return kafka_configs(str(settings["bootstrap.servers"]), "--command-config", str(properties), *args)
