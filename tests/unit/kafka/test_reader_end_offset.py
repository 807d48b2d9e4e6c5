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
    settings = {"bootstrap.servers": "127.0.0.1:9092"}
    assert reader.end_offset(settings, "t", 0, what="target", timeout=5) == 42
    assert consumer.made == 3  # a new consumer each time: the old one's metadata named no leader


def test_other_errors_are_named_at_once(consumer: type[_Consumer]) -> None:
    consumer.answers = [KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)]
    with pytest.raises(CopyError, match=r"Could not read the end offset of target t\[0\]"):
        reader.end_offset({"bootstrap.servers": "127.0.0.1:9092"}, "t", 0, what="target", timeout=5)
    assert consumer.made == 1
