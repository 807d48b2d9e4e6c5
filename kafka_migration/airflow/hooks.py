"""Kafka connections as Airflow stores them.

Convention of apache-airflow-providers-apache-kafka: a connection of type ``kafka``
whose extra field is the librdkafka configuration as JSON, ``bootstrap.servers``
included. Host and port are used as the bootstrap address when the extra has none.
"""

from __future__ import annotations

import json
from typing import Any

from airflow.sdk import BaseHook
from airflow.sdk.log import mask_secret

from kafka_migration.config import ClusterConfig
from kafka_migration.exceptions import ConfigurationError


class KafkaClusterHook(BaseHook):
    conn_name_attr = "kafka_conn_id"
    default_conn_name = "kafka_default"
    conn_type = "kafka"
    hook_name = "Kafka cluster (kafka-migration)"

    def __init__(self, kafka_conn_id: str, role: str = "source") -> None:
        super().__init__()
        self.kafka_conn_id = kafka_conn_id
        self.role = role

    def get_cluster_config(self) -> ClusterConfig:
        try:
            conn = self.get_connection(self.kafka_conn_id)
        except Exception as exc:
            raise ConfigurationError(
                f"Airflow connection {self.kafka_conn_id!r} for the {self.role} cluster does not exist ({exc}). "
                "Create it with type 'kafka' and the librdkafka settings as JSON in the extra field, e.g. "
                '{"bootstrap.servers": "broker:9092"}.'
            ) from None
        where = f"Airflow connection {self.kafka_conn_id!r} (its extra field)"
        try:
            # Parsed here, not with extra_dejson, which logs a traceback and returns {} for invalid JSON.
            settings: Any = json.loads(conn.extra) if conn.extra else {}
        except ValueError as exc:
            raise ConfigurationError(
                f"The extra field of Airflow connection {self.kafka_conn_id!r} is not valid JSON ({exc}); it must "
                'be one JSON object of librdkafka settings, e.g. {"bootstrap.servers": "broker:9092"}.'
            ) from None
        if not isinstance(settings, dict):
            raise ConfigurationError(
                f"The extra field of Airflow connection {self.kafka_conn_id!r} holds a JSON "
                f"{type(settings).__name__}; it must be one JSON object of librdkafka settings, e.g. "
                '{"bootstrap.servers": "broker:9092"}.'
            )
        mask_secret(settings)  # as extra_dejson does: the values are masked in task logs
        if "bootstrap.servers" not in settings and conn.host:
            settings["bootstrap.servers"] = f"{conn.host}:{conn.port}" if conn.port else conn.host
        if conn.login and "sasl.username" not in settings:
            settings["sasl.username"] = conn.login
        if conn.password and "sasl.password" not in settings:
            settings["sasl.password"] = conn.password
        return ClusterConfig(role=self.role, settings=settings, origin=where)

    def test_connection(self) -> tuple[bool, str]:
        from kafka_migration.clients import KafkaCluster

        try:
            info = KafkaCluster(self.get_cluster_config()).describe()
        except Exception as exc:
            return False, str(exc)
        return True, f"Connected to cluster {info.cluster_id} ({info.broker_count} brokers)"
