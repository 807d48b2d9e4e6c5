"""kafka_migration.kafka.clients: the bounded waits that come from each cluster's librdkafka settings, and the
wait for new topics (on a simulated broker: how a real one brings 10,000 topics up is in the scale bench)."""

from __future__ import annotations

import pytest

from kafka_migration.exceptions import MigrationError
from kafka_migration.kafka import clients
from kafka_migration.kafka.clients import (
    DEFAULT_MESSAGE_TIMEOUT_MS,
    KafkaCluster,
    cluster_label,
    delivery_timeout,
    producer_settings,
    stall_timeout,
)
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.state import TopicDescription


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


class _Broker(KafkaCluster):
    """A broker that brings new topics up in creation order, ``rate`` per second of a fake clock, except those
    in ``late`` (up after ``late_after`` seconds); counts the topics each metadata request asks about."""

    def __init__(self, rate: float, late: frozenset[str] = frozenset(), late_after: float = 0.0) -> None:
        super().__init__(ClusterConfig("target", {"bootstrap.servers": "b:9092"}))
        self.now = 0.0
        self.rate, self.late, self.late_after = rate, late, late_after
        self.order: list[str] = []
        self.asked: list[int] = []

    def _have_leaders(self, names: set[str]) -> dict[str, TopicDescription]:
        self.asked.append(len(names))
        up = self.order[: int(self.now * self.rate)]
        return {
            n: TopicDescription(1, f"id-{n}", None)
            for n in names
            if n in up and (n not in self.late or self.now >= self.late_after)
        }


def _wait(broker: _Broker, names: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, TopicDescription]:
    def sleep(seconds: float) -> None:
        broker.now += seconds

    monkeypatch.setattr(clients.time, "sleep", sleep)
    monkeypatch.setattr(clients.time, "monotonic", lambda: broker.now)
    broker.order = names
    return broker.wait_for_topics(names)


def test_waiting_for_new_topics_asks_about_the_last_of_each_window_until_it_is_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = [f"t.{i:05d}" for i in range(5000)]
    broker = _Broker(rate=250.0)  # 5,000 topics up in 20 s
    found = _wait(broker, names, monkeypatch)
    assert set(found) == set(names) and found["t.00042"].topic_id == "id-t.00042"
    # Each window of 500 is asked about whole about once: the polls in between ask about one topic.
    assert sum(broker.asked) < 2 * len(names), broker.asked
    assert broker.asked.count(1) > len(broker.asked) // 2


def test_a_topic_that_comes_up_out_of_order_still_lets_the_others_through(monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"t.{i:05d}" for i in range(1200)]
    broker = _Broker(rate=1000.0, late=frozenset({"t.00499"}), late_after=20.0)  # the first window's last one
    found = _wait(broker, names, monkeypatch)
    assert set(found) == set(names)


def test_a_topic_that_never_comes_up_is_named_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"t.{i:05d}" for i in range(600)]
    broker = _Broker(rate=1000.0, late=frozenset({"t.00499"}), late_after=1e9)
    with pytest.raises(MigrationError, match=r"Topics t\.00499 were created on the target cluster but have no leader"):
        _wait(broker, names, monkeypatch)
