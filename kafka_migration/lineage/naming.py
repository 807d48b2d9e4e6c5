"""How lineage names a cluster, a topic, a job and a run, so that events from other emitters join ours.

OpenLineage names a Kafka topic ``namespace = kafka://{host}:{port}``, ``name = {topic}``; Airflow's Kafka provider
names its asset ``kafka://{host}:{port}/{topic}`` and translates it to that same dataset. Both need one
``host:port`` per cluster although a cluster has several bootstrap addresses. The rule here, documented in
docs/lineage.md: the **first** address of ``bootstrap.servers`` as configured, without a ``PROTOCOL://`` prefix,
its host lower-cased, its port always written (9092 when the address has none). Configure the first address the
same way in every tool that emits lineage for the cluster.
"""

from __future__ import annotations

import uuid

from kafka_migration.model.bootstrap import BrokerAddress, first_broker

# Jobs of the CLI's runs, syncs and cutovers (OPENLINEAGE_NAMESPACE overrides it, as for openlineage-python).
JOB_NAMESPACE = "kafka-migration"
# The namespace of the run ids derived from a migration's own run id (uuid5): the same run, the same id.
_RUN_IDS = uuid.UUID("8f3c1e52-6a0b-5d4e-9c71-2b7f0a4d9e10")


def canonical_server(bootstrap: str) -> str:
    """``host:port`` of a cluster: its first bootstrap address, host lower-cased, port explicit."""
    first = first_broker(bootstrap)
    return str(BrokerAddress(first.host.lower(), first.port))


def namespace(bootstrap: str) -> str:
    """The OpenLineage dataset namespace of a cluster: ``kafka://host:port``."""
    return f"kafka://{canonical_server(bootstrap)}"


def asset_uri(bootstrap: str, topic: str) -> str:
    """Airflow's Kafka asset of a topic, as the Kafka provider's ``create_asset`` names it."""
    return f"kafka://{canonical_server(bootstrap)}/{topic}"


def run_uuid(kind: str, run_id: str) -> str:
    """The OpenLineage run id of a migration run, sync, cutover or failback: derived from its own id, so that
    its START and its COMPLETE or FAIL, sent by different functions, share it."""
    return str(uuid.uuid5(_RUN_IDS, f"{kind}:{run_id}"))


def job_name(kind: str, source_bootstrap: str, target_bootstrap: str) -> str:
    """A job per kind of work and pair of clusters: ``kafka-migrate.run[src:9092->dst:9092]``."""
    return f"kafka-migrate.{kind}[{canonical_server(source_bootstrap)}->{canonical_server(target_bootstrap)}]"
