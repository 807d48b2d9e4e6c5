"""kafka_migration.run.copy: a worker's producer is replaced once it has written to PRODUCER_TOPICS topics.

librdkafka looks a record's topic up by walking every topic its client knows (rd_kafka_topic_find), so a
producer that wrote to thousands of topics pays per record in proportion. No broker is needed: a producer
connects only when it sends.
"""

from __future__ import annotations

import pytest

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
