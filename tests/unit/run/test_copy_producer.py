"""kafka_migration.run.copy and kafka.records: a worker's producer is replaced once it has written to PRODUCER_TOPICS
topics, and it is never built without the promises under "nothing doubled" (idempotence, acks=all, at most 5
requests in flight).

librdkafka looks a record's topic up by walking every topic its client knows (rd_kafka_topic_find), so a
producer that wrote to thousands of topics pays per record in proportion. No broker is needed: a producer
connects only when it sends.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pytest

from kafka_migration.exceptions import ConfigurationError
from kafka_migration.kafka import records
from kafka_migration.model.config import Endpoint
from kafka_migration.run import copy

SETTINGS = Endpoint("target", {"bootstrap.servers": "127.0.0.1:9"})  # nothing listens: nothing is sent


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copy, "_PRODUCERS", {})
    monkeypatch.setattr(copy, "_PRODUCER_TOPICS", {})
    monkeypatch.setattr(copy, "PRODUCER_TOPICS", 3)


def test_one_producer_until_it_would_write_to_more_topics_than_the_limit() -> None:
    first, _ = copy._producer(SETTINGS, 1000, ["a"])
    assert copy._producer(SETTINGS, 1000, ["b", "c"])[0] is first
    assert copy._producer(SETTINGS, 1000, ["a", "c"])[0] is first  # topics it knows cost nothing more
    second, _ = copy._producer(SETTINGS, 1000, ["d"])
    assert second is not first
    assert copy._PRODUCER_TOPICS and set().union(*copy._PRODUCER_TOPICS.values()) == {"d"}
    assert copy._producer(SETTINGS, 1000, ["e", "f"])[0] is second


def test_a_window_of_more_topics_than_the_limit_still_gets_one_producer() -> None:
    first, _ = copy._producer(SETTINGS, 1000, ["a", "b", "c", "d", "e"])
    assert copy._producer(SETTINGS, 1000)[0] is first  # the warm-up's call names no topic
    assert copy._producer(SETTINGS, 1000, ["f"])[0] is not first


class _Recorded:
    """Stands in for confluent_kafka.Producer where kafka.records builds it: keeps the settings it was built with."""

    built: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, settings: dict[str, Any]) -> None:
        self.built.append(settings)


def test_the_producer_is_built_idempotent_with_acks_all_and_few_requests_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_Recorded, "built", [])
    monkeypatch.setattr(records, "Producer", _Recorded)
    copy._producer(Endpoint("target", {"bootstrap.servers": "127.0.0.1:9", "max.in.flight": 3}), 1000, ["a"])
    (settings,) = _Recorded.built
    assert settings["enable.idempotence"] is True
    assert settings["acks"] == "all"
    assert settings["max.in.flight.requests.per.connection"] == 3


@pytest.mark.parametrize("planted", [{"enable.idempotence": False}, {"acks": 1}, {"max.in.flight": 50}])
def test_a_producer_that_would_break_a_promise_is_never_built(
    planted: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug that drops a promise after the user's settings were checked (here: producer_settings itself) is
    caught where the producer is built, before it writes anything."""
    monkeypatch.setattr(_Recorded, "built", [])
    monkeypatch.setattr(records, "Producer", _Recorded)
    real = records.producer_settings
    monkeypatch.setattr(records, "producer_settings", lambda *args: {**real(*args), **planted})
    with pytest.raises(ConfigurationError, match=re.escape(f"target cluster setting {next(iter(planted))}=")):
        copy._producer(SETTINGS, 1000, ["a"])
    assert _Recorded.built == []
    assert copy._PRODUCERS == {}


def test_a_user_setting_that_breaks_a_promise_fails_the_copy_task_by_name() -> None:
    """The Spark task's own check, for a run that reached it without the driver's (check_client_settings)."""
    with pytest.raises(ConfigurationError, match=re.escape("target cluster setting enable.idempotence='false'")):
        copy._producer(Endpoint("target", {"bootstrap.servers": "127.0.0.1:9", "enable.idempotence": "false"}), 1000)


class _Listing:
    """Stands in for a producer's list_topics(): the cluster's topics, or a failure; counts the listings."""

    def __init__(self, topics: set[str], fail: bool = False) -> None:
        self.topics, self.fail, self.listed = topics, fail, 0

    def list_topics(self, timeout: float) -> Any:
        self.listed += 1
        if self.fail:
            raise RuntimeError("no answer")
        return type("Metadata", (), {"topics": {name: object() for name in self.topics}})()


def test_a_window_of_many_new_topics_teaches_the_producer_them_in_one_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copy, "_KNOWN", {})
    topics = {f"t{i}" for i in range(30)}
    producer = _Listing(topics | {"other"})
    copy._learn_topics(producer, topics, 30.0)
    assert producer.listed == 1 and copy._KNOWN[id(producer)] == frozenset(topics | {"other"})
    copy._learn_topics(producer, topics, 30.0)  # known: nothing asked
    copy._learn_topics(producer, topics | {f"u{i}" for i in range(copy.LEARN_TOPICS - 1)}, 30.0)  # too few new
    assert producer.listed == 1
    copy._learn_topics(producer, topics | {f"u{i}" for i in range(copy.LEARN_TOPICS)}, 30.0)
    assert producer.listed == 2


def test_a_large_cluster_is_listed_only_for_a_window_that_brings_enough_of_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(copy, "_KNOWN", {})
    cluster = {f"c{i}" for i in range(10_000)}
    producer = _Listing(cluster)
    copy._KNOWN[id(producer)] = frozenset(cluster)
    few = {f"n{i}" for i in range(10_000 // copy.LEARN_RATIO - 1)}
    copy._learn_topics(producer, few, 30.0)
    assert producer.listed == 0  # a one-topic request each is cheaper than listing 10,000 topics
    copy._learn_topics(producer, few | {"one-more"}, 30.0)
    assert producer.listed == 1


def test_a_failed_listing_leaves_the_producer_asking_per_topic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copy, "_KNOWN", {})
    producer = _Listing(set(), fail=True)
    copy._learn_topics(producer, {f"t{i}" for i in range(50)}, 30.0)  # no exception: the writes still work
    assert producer.listed == 1 and id(producer) not in copy._KNOWN


def test_a_retired_producer_takes_what_it_knew_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copy, "_KNOWN", {})
    first, _ = copy._producer(SETTINGS, 1000, ["a"])
    copy._KNOWN[id(first)] = frozenset({"a"})
    second, _ = copy._producer(SETTINGS, 1000, ["b", "c", "d", "e"])
    assert second is not first and id(first) not in copy._KNOWN
