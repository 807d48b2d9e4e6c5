"""kafka_migration.kafka.creation: the wait for new topics, on a simulated broker (how a real one brings 10,000
topics up is in the scale bench), and what counts as served (integration: test_planner.py)."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_migration.exceptions import MigrationError
from kafka_migration.kafka import creation
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.state import TopicDescription


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

    monkeypatch.setattr(creation.time, "sleep", sleep)
    monkeypatch.setattr(creation.time, "monotonic", lambda: broker.now)
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


def test_windows_found_whole_are_followed_at_once_and_a_wait_polls_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"t.{i:05d}" for i in range(1000)]
    broker = _Broker(rate=1e9)  # every topic up before the first poll
    broker.now = 1.0
    assert set(_wait(broker, names, monkeypatch)) == set(names)
    assert broker.now == 1.0  # no pause at all: each window was whole, the next asked at once
    assert broker.asked == [1, 50, 1, 100, 1, 200, 1, 400, 1, 250]  # the last of each window first, then it whole

    slow = _Broker(rate=500.0)  # a warm broker: 500 topics a second, the first window up after 0.1 s
    released: list[float] = []
    monkeypatch.setattr(creation.time, "sleep", lambda seconds: setattr(slow, "now", slow.now + seconds))
    monkeypatch.setattr(creation.time, "monotonic", lambda: slow.now)
    slow.order = names
    assert set(slow.wait_for_topics(names, on_ready=lambda ready: released.append(slow.now))) == set(names)
    # Released to the copy soon after the broker brings them up: polls are short while topics come up.
    assert released[0] <= 0.15 and slow.now < 2.3, (released, slow.now)


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


class _Future:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def result(self, timeout: float | None = None) -> Any:
        if isinstance(self.answer, KafkaError):
            raise KafkaException(self.answer)
        return self.answer


class _Admin:
    """list_offsets answers per topic: an offset, or a KafkaError; ``refuse``: the call itself fails."""

    def __init__(self, answers: dict[str, Any], refuse: bool = False) -> None:
        self.answers, self.refuse = answers, refuse
        self.asked: list[int] = []

    def list_offsets(self, specs: dict[Any, Any], **_: Any) -> dict[Any, _Future]:
        self.asked.append(len(specs))
        if self.refuse:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        return {tp: _Future(self.answers[tp.topic]) for tp in specs}


def _served(admin: _Admin, described: dict[str, TopicDescription]) -> dict[str, TopicDescription]:
    cluster = KafkaCluster(ClusterConfig("target", {"bootstrap.servers": "b:9092"}))
    cluster._admin = admin  # the cached admin client, replaced
    return cluster._served(described)


def test_a_topic_is_up_once_its_leaders_answer_for_every_partition() -> None:
    # Apache Kafka publishes a new topic's leader before it has created the partition's log: NOT_LEADER meanwhile.
    admin = _Admin(
        {
            "up": 0,
            "log-not-yet": KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION),
            "electing": KafkaError(KafkaError.LEADER_NOT_AVAILABLE),
            "unknown-yet": KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART),
            "refused": KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED),
        }
    )
    described = {name: TopicDescription(2, f"id-{name}", None) for name in admin.answers}
    served = _served(admin, described)
    # A refusal is not a wait: the checks after the wait name the permission (permissions.check_created_topics).
    assert sorted(served) == ["refused", "up"] and served["up"] == described["up"]
    assert admin.asked == [10]  # one request for every partition of the candidates


def test_no_answer_to_the_offsets_request_leaves_the_topics_waiting() -> None:
    admin = _Admin({}, refuse=True)
    assert _served(admin, {"t": TopicDescription(1, "id", None)}) == {}
    assert _served(admin, {}) == {} and admin.asked == [1]  # nothing described: nothing asked
