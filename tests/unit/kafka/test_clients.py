"""kafka_migration.kafka.clients: the bounded waits that come from each cluster's librdkafka settings (the wait
for new topics: test_creation.py)."""

from __future__ import annotations

from kafka_migration.kafka.clients import (
    DEFAULT_MESSAGE_TIMEOUT_MS,
    cluster_label,
    delivery_timeout,
    producer_settings,
    stall_timeout,
)


def test_reader_stall_timeout_is_socket_timeout_ms() -> None:
    assert stall_timeout({}) == 60.0  # librdkafka's default socket.timeout.ms
    assert stall_timeout({"socket.timeout.ms": "5000"}) == 5.0


def test_producer_gets_a_bounded_message_timeout_unless_the_user_set_one() -> None:
    assert producer_settings({}, 1000)["message.timeout.ms"] == DEFAULT_MESSAGE_TIMEOUT_MS
    assert producer_settings({"message.timeout.ms": 9000}, 1000)["message.timeout.ms"] == 9000
    assert "message.timeout.ms" not in producer_settings({"delivery.timeout.ms": 9000}, 1000)  # librdkafka alias


def test_delivery_timeout_follows_the_producer_setting_or_its_alias() -> None:
    assert delivery_timeout({}) == DEFAULT_MESSAGE_TIMEOUT_MS / 1000
    assert delivery_timeout({"message.timeout.ms": 8000}) == 8.0
    assert delivery_timeout({"delivery.timeout.ms": "7000"}) == 7.0


def test_cluster_label_names_role_and_address_only() -> None:
    settings = {"bootstrap.servers": "b1:9093", "sasl.password": "hunter2"}
    assert cluster_label("target", settings) == "target cluster b1:9093"
    assert cluster_label("source", {}) == "source cluster"
