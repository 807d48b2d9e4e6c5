"""Thin wrappers over confluent-kafka: clients and admin calls, TLS checks, bounded range readers."""
