"""A simulated broker's ListOffsets answers (tests of kafka/offsets.py and of the planner's checks that use it):
it answers a request in time only up to some size, as a loaded broker does (5,000 partitions by time got the
invalid offset -1001 for every one, and no error), elects leaders, or never answers; a fake clock that requests
and sleeps advance, in whole microseconds (so that a test can land on a limit exactly). It keeps every request
as it got it (the partitions and what was asked of each, the isolation level, the timeout) and answers metadata
requests from ``topics``."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import IsolationLevel, KafkaError, KafkaException
from confluent_kafka.admin import OffsetSpec

from kafka_migration.kafka import offsets
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.config import ClusterConfig

REQUEST_SECONDS = 0.5  # what one request costs on the simulated clock
RECORDS = 500  # the simulated default: a partition's high watermark is this past its log start

Key = tuple[str, int]


@dataclass
class Answer:
    offset: int
    timestamp: int = -1


@dataclass(frozen=True)
class Request:
    """One ListOffsets request as the broker got it: per partition what was asked ("earliest", "latest", or the
    timestamp of a lookup by time), the isolation level and the request timeout."""

    asked: dict[Key, int | str | None]
    isolation: Any
    timeout: float | None


def offset_of(key: Key) -> int:
    """The offset the broker answers for (topic, partition): distinct for every partition."""
    return 1000 * int(key[0].rsplit(".", 1)[1]) + key[1]


def simulated(monkeypatch: pytest.MonkeyPatch) -> SimulatedBroker:
    """A broker whose clock replaces kafka/offsets.py's."""
    fake = SimulatedBroker()
    monkeypatch.setattr(offsets.time, "monotonic", lambda: fake.now)

    def sleep(seconds: float) -> None:
        fake.advance(seconds)

    monkeypatch.setattr(offsets.time, "sleep", sleep)
    return fake


def cluster_on(broker: SimulatedBroker, timeout: float = 15.0) -> KafkaCluster:
    cluster = KafkaCluster(ClusterConfig("source", {"bootstrap.servers": "b:9092"}), timeout=timeout)
    cluster._admin = broker  # the cached admin client, replaced
    return cluster


EARLIEST, LATEST = type(OffsetSpec.earliest()), type(OffsetSpec.latest())


def _asked(spec: Any) -> int | str | None:
    if isinstance(spec, EARLIEST):
        return "earliest"
    return "latest" if isinstance(spec, LATEST) else spec.timestamp


@dataclass
class SimulatedBroker:
    """ListOffsets as a broker answers it. ``answers_up_to``: a request of more partitions times out whole (-1001
    for each, or ``overload_error`` for each when set); ``electing``: answers NOT_LEADER (``electing_error``) that
    many times per partition first; ``never``: partitions that get -1001 every time; ``refused``: topics whose
    ListOffsets the ACLs refuse; ``failing``: partitions whose answer is that exception, every time.

    A lookup by time answers ``answer``; earliest ``log_start``; latest the high watermark (``RECORDS`` past the
    log start) read_uncommitted, and read_committed the last stable offset, ``open_transactions`` records lower.
    ``topics``: name -> partition count, what a metadata request lists; ``metadata_fails``: it raises instead."""

    answers_up_to: int = 1_000_000
    overload_error: int | None = None
    electing: dict[Key, int] = field(default_factory=dict)
    electing_error: int = KafkaError.NOT_LEADER_FOR_PARTITION
    never: frozenset[Key] = frozenset()
    refused: frozenset[str] = frozenset()
    failing: dict[Key, BaseException] = field(default_factory=dict)
    now: float = 0.0
    request_seconds: float = REQUEST_SECONDS
    answer: Callable[[Key], int] = field(default=offset_of)
    log_start: Callable[[Key], int] = field(default=offset_of)
    open_transactions: dict[Key, int] = field(default_factory=dict)
    topics: dict[str, int] = field(default_factory=dict)
    metadata_fails: bool = False
    requests: list[int] = field(default_factory=list)  # each request's partition count
    asked: list[Request] = field(default_factory=list)
    metadata_asked: list[str | None] = field(default_factory=list)
    metadata_timeouts: list[float | None] = field(default_factory=list)

    def advance(self, seconds: float) -> None:
        self.now = round(self.now + seconds, 6)

    def times_asked(self) -> dict[Key, int | str | None]:
        """What each partition was last asked (its timestamp, for a lookup by time)."""
        return {key: asked for request in self.asked for key, asked in request.asked.items()}

    def list_offsets(
        self, specs: dict[Any, Any], isolation_level: Any = None, request_timeout: float | None = None, **_: Any
    ) -> dict[Any, Future[Any]]:
        self.requests.append(len(specs))
        self.asked.append(
            Request({(tp.topic, tp.partition): _asked(s) for tp, s in specs.items()}, isolation_level, request_timeout)
        )
        self.advance(self.request_seconds)
        out: dict[Any, Future[Any]] = {}
        for tp, spec in specs.items():
            future: Future[Any] = Future()
            key = (tp.topic, tp.partition)
            if tp.topic in self.refused:
                future.set_exception(KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)))
            elif key in self.failing:
                future.set_exception(self.failing[key])
            elif self.electing.get(key, 0) > 0:
                self.electing[key] -= 1
                future.set_exception(KafkaException(KafkaError(self.electing_error)))
            elif len(specs) > self.answers_up_to and self.overload_error is not None:
                future.set_exception(KafkaException(KafkaError(self.overload_error)))
            elif len(specs) > self.answers_up_to or key in self.never:
                future.set_result(Answer(offsets.OFFSET_INVALID))
            else:
                future.set_result(Answer(self._offset(key, _asked(spec), isolation_level)))
            out[tp] = future
        return out

    def _offset(self, key: Key, asked: int | str | None, isolation: Any) -> int:
        if asked == "earliest":
            return self.log_start(key)
        if asked == "latest":
            high_watermark = self.log_start(key) + RECORDS
            if isolation == IsolationLevel.READ_COMMITTED:
                return high_watermark - self.open_transactions.get(key, 0)
            return high_watermark
        return self.answer(key)

    def list_topics(self, topic: str | None = None, timeout: float | None = None, **_: Any) -> Any:
        self.metadata_asked.append(topic)
        self.metadata_timeouts.append(timeout)
        if self.metadata_fails:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        listed = {n: c for n, c in self.topics.items() if topic is None or n == topic}
        return SimpleNamespace(
            topics={n: SimpleNamespace(partitions=dict.fromkeys(range(c))) for n, c in listed.items()}
        )
