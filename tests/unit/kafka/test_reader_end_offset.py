"""reader.end_offset: a partition whose leader is being elected is asked again, other errors are named at once.

Apache Kafka answers NOT_LEADER_FOR_PARTITION for a moment after a topic is created (the copy
reads the end of a target topic the plan created a second before). The consumer is a stand-in
here: the answers are the ones Apache Kafka 4.2 gave in tests/integration/test_windows.py.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_migration.exceptions import CopyError
from kafka_migration.kafka import reader
from kafka_migration.model.config import Endpoint

TARGET = Endpoint("target", {"bootstrap.servers": "127.0.0.1:9092"})


class _Consumer:
    answers: ClassVar[list[Any]] = []
    made = 0

    def __init__(self, settings: Any) -> None:
        type(self).made += 1

    def get_watermark_offsets(self, partition: Any, timeout: float, cached: bool) -> tuple[int, int]:
        answer = type(self).answers.pop(0)
        if isinstance(answer, KafkaError):
            raise KafkaException(answer)
        return 0, answer

    def close(self) -> None:
        pass


@pytest.fixture
def consumer(monkeypatch: pytest.MonkeyPatch) -> type[_Consumer]:
    monkeypatch.setattr("confluent_kafka.Consumer", _Consumer)
    monkeypatch.setattr(reader, "_WATERMARK_CONSUMERS", {})
    _Consumer.made = 0
    return _Consumer


def test_a_partition_electing_its_leader_is_asked_again_afresh(consumer: type[_Consumer]) -> None:
    consumer.answers = [
        KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION),
        KafkaError(KafkaError.LEADER_NOT_AVAILABLE),
        42,
    ]
    assert reader.end_offset(TARGET, "t", 0, timeout=5) == 42
    assert consumer.made == 3  # a new consumer each time: the old one's metadata named no leader


def test_other_errors_are_named_at_once(consumer: type[_Consumer]) -> None:
    consumer.answers = [KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)]
    with pytest.raises(CopyError, match=r"Could not read the end offset of target t\[0\]"):
        reader.end_offset(TARGET, "t", 0, timeout=5)
    assert consumer.made == 1


class _Answer:
    def __init__(self, offset: int) -> None:
        self.offset = offset


class _Future:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def result(self, timeout: float) -> Any:
        if isinstance(self.answer, KafkaError):
            raise KafkaException(self.answer)
        return _Answer(self.answer)


class _Admin:
    """Answers ListOffsets for many partitions at once, some with an error; counts its requests."""

    answers: ClassVar[dict[tuple[str, int], Any]] = {}
    requests = 0

    def __init__(self, settings: Any) -> None:
        pass

    def list_offsets(self, specs: Any, isolation_level: Any, request_timeout: float) -> dict[Any, _Future]:
        type(self).requests += 1
        return {tp: _Future(type(self).answers[(tp.topic, tp.partition)]) for tp in specs}


def test_end_offsets_asks_a_window_at_once_and_asks_the_unanswered_alone(
    consumer: type[_Consumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("confluent_kafka.admin.AdminClient", _Admin)
    monkeypatch.setattr(reader, "_WATERMARK_ADMINS", {})
    _Admin.requests = 0
    _Admin.answers = {("a", 0): 10, ("b", 0): KafkaError(KafkaError.NOT_LEADER_FOR_PARTITION), ("c", 1): 0}
    consumer.answers = [7]  # b[0], asked alone once its leader is elected
    assert reader.end_offsets(TARGET, [("a", 0), ("b", 0), ("c", 1)]) == [10, 7, 0]
    assert _Admin.requests == 1
    assert consumer.made == 1  # only b[0] went the single-partition way
