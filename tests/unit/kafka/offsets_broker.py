"""A simulated broker's ListOffsets answers (tests of kafka/offsets.py and of the planner's checks that use it):
it answers a request in time only up to some size, as a loaded broker does (5,000 partitions by time got the
invalid offset -1001 for every one, and no error), elects leaders, or never answers; a fake clock that requests
and sleeps advance."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_migration.kafka import offsets
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.config import ClusterConfig

REQUEST_SECONDS = 0.5  # what one request costs on the simulated clock


@dataclass
class Answer:
    offset: int
    timestamp: int = -1


def offset_of(key: tuple[str, int]) -> int:
    """The offset the broker answers for (topic, partition): distinct for every partition."""
    return 1000 * int(key[0].rsplit(".", 1)[1]) + key[1]


def simulated(monkeypatch: pytest.MonkeyPatch) -> SimulatedBroker:
    """A broker whose clock replaces kafka/offsets.py's."""
    fake = SimulatedBroker()
    monkeypatch.setattr(offsets.time, "monotonic", lambda: fake.now)

    def sleep(seconds: float) -> None:
        fake.now += seconds

    monkeypatch.setattr(offsets.time, "sleep", sleep)
    return fake


def cluster_on(broker: SimulatedBroker) -> KafkaCluster:
    cluster = KafkaCluster(ClusterConfig("source", {"bootstrap.servers": "b:9092"}))
    cluster._admin = broker  # the cached admin client, replaced
    return cluster


@dataclass
class SimulatedBroker:
    """ListOffsets as a broker answers it. ``answers_up_to``: a request of more partitions times out whole (-1001
    for each); ``electing``: answers NOT_LEADER that many times per partition first; ``never``: partitions that
    get -1001 every time; ``refused``: topics whose ListOffsets the ACLs refuse."""

    answers_up_to: int = 1_000_000
    electing: dict[tuple[str, int], int] = field(default_factory=dict)
    electing_error: int = KafkaError.NOT_LEADER_FOR_PARTITION
    never: frozenset[tuple[str, int]] = frozenset()
    refused: frozenset[str] = frozenset()
    now: float = 0.0
    request_seconds: float = REQUEST_SECONDS
    answer: Callable[[tuple[str, int]], int] = field(default=offset_of)
    requests: list[int] = field(default_factory=list)
    metadata_asked: list[str | None] = field(default_factory=list)

    def list_offsets(self, specs: dict[Any, Any], **_: Any) -> dict[Any, Future[Any]]:
        self.requests.append(len(specs))
        self.now += self.request_seconds
        out: dict[Any, Future[Any]] = {}
        for tp in specs:
            future: Future[Any] = Future()
            key = (tp.topic, tp.partition)
            if tp.topic in self.refused:
                future.set_exception(KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)))
            elif self.electing.get(key, 0) > 0:
                self.electing[key] -= 1
                future.set_exception(KafkaException(KafkaError(self.electing_error)))
            elif len(specs) > self.answers_up_to or key in self.never:
                future.set_result(Answer(offsets.OFFSET_INVALID))
            else:
                future.set_result(Answer(self.answer(key)))
            out[tp] = future
        return out

    def list_topics(self, topic: str | None = None, **_: Any) -> None:
        self.metadata_asked.append(topic)
