"""Apache Kafka's own command-line tools from the jar set, for what a client library cannot ask.

confluent-kafka refuses a config resource with an empty name, which is how Kafka addresses the
cluster-wide broker default; ``kafka-configs.sh --entity-default`` sets it (kafka.admin.ConfigCommand,
the class the script runs).
"""

from __future__ import annotations

import subprocess

from harness.kafka import jars


def kafka_configs(bootstrap: str, *args: str) -> str:
    """Run ``kafka-configs.sh --bootstrap-server BOOTSTRAP ARGS``; its output, or an error with it."""
    command = [*jars.java_command("kafka.admin.ConfigCommand", heap_mb=256), "--bootstrap-server", bootstrap, *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"kafka-configs {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout
