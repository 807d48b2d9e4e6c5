"""The door to a schema registry (issue 48): the only code that imports ``confluent_kafka.schema_registry``."""

from kafka_migration.registry.client import Found, RegistryClient, read_catalog

__all__ = ["Found", "RegistryClient", "read_catalog"]
