"""One canonical host:port per cluster, as OpenLineage's Kafka naming and Airflow's Kafka assets need it."""

from __future__ import annotations

import pytest

from kafka_migration.lineage.naming import asset_uri, canonical_server, job_name, namespace, run_uuid


@pytest.mark.parametrize(
    ("bootstrap", "server"),
    [
        ("Broker1.Example.COM:9093,broker2:9093", "broker1.example.com:9093"),  # the first, lower-cased
        (" broker2:9093 , broker1:9093", "broker2:9093"),  # as configured: not sorted
        ("SASL_SSL://kafka.internal:9094", "kafka.internal:9094"),  # no protocol prefix
        ("kafka", "kafka:9092"),  # the port always written
        ("[FE80::1]:19092,other:1", "[fe80::1]:19092"),
        ("[::1]", "[::1]:9092"),
        ("127.0.0.1:019092", "127.0.0.1:19092"),  # the port as a number
    ],
)
def test_canonical_server(bootstrap: str, server: str) -> None:
    assert canonical_server(bootstrap) == server


def test_namespace_asset_and_job_agree_with_the_kafka_provider() -> None:
    from airflow.providers.apache.kafka.assets.kafka import convert_asset_to_openlineage, create_asset

    assert namespace("B:1,c:2") == "kafka://b:1"
    uri = asset_uri("B:1,c:2", "orders.v1")
    assert uri == create_asset(server="b:1", topic="orders.v1").uri == "kafka://b:1/orders.v1"
    dataset = convert_asset_to_openlineage(create_asset(server="b:1", topic="orders.v1"), None)
    assert (dataset.namespace, dataset.name) == (namespace("B:1"), "orders.v1")
    assert job_name("run", "S:1", "t:2,u:3") == "kafka-migrate.run[s:1->t:2]"


def test_run_ids_are_stable_per_run_and_kind() -> None:
    assert run_uuid("run", "r1") == run_uuid("run", "r1")
    assert len({run_uuid("run", "r1"), run_uuid("run", "r2"), run_uuid("group_sync", "r1")}) == 3
