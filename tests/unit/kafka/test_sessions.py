"""kafka/sessions.py: how a broker's answer to a user's probe reads as an outcome, and a probe's producer closed
whatever the answer. The probes against real brokers are in tests/integration/test_access_probe.py."""

from __future__ import annotations

from typing import Any, ClassVar

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_migration.kafka.sessions import ALLOWED, UserSession, _outcome
from kafka_migration.model.access import Password, ScramMechanism
from kafka_migration.model.config import ClusterConfig
from kafka_migration.model.probes import ProbeKind


def test_a_brokers_answer_reads_as_an_outcome() -> None:
    assert _outcome(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)) == "denied (TOPIC_AUTHORIZATION_FAILED)"
    assert _outcome(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)) == "denied (GROUP_AUTHORIZATION_FAILED)"
    for allowed in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._PARTITION_EOF):
        assert _outcome(KafkaError(allowed)) == ALLOWED
    assert _outcome(KafkaError(KafkaError._TIMED_OUT)).startswith("inconclusive: _TIMED_OUT")


class _Producer:
    """confluent-kafka's Producer as a probe uses it, standing in for a broker that refuses the transactional id or
    answers the record with ``answer`` (a refusal's path on real brokers: tests/integration/test_access_probe.py;
    here, that the producer is closed on every path)."""

    made: ClassVar[list[_Producer]] = []

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings, self.closed = settings, False
        _Producer.made.append(self)

    def init_transactions(self, timeout: float) -> None:
        raise KafkaException(KafkaError(KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))

    def produce(self, topic: str, value: bytes, partition: int, on_delivery: Any) -> None:
        on_delivery(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE), None)

    def flush(self, timeout: float) -> int:
        return 0

    def close(self) -> bool:
        self.closed = True
        return True


def test_a_probes_producer_is_closed_whatever_the_broker_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confluent_kafka, "Producer", _Producer)
    _Producer.made.clear()
    config = ClusterConfig("target", {"bootstrap.servers": "tgt:9092", "security.protocol": "SASL_SSL"})
    session = UserSession(config, "alice", Password("alice", "s3cret"), ScramMechanism.SCRAM_SHA_512, 1.0)
    assert session.run(ProbeKind.TRANSACTION, "tx-km-probe", None, None) == (
        "denied (TRANSACTIONAL_ID_AUTHORIZATION_FAILED)"
    )
    assert session.run(ProbeKind.PRODUCE, "orders", None, 1024) == ALLOWED
    assert [p.closed for p in _Producer.made] == [True, True]
    assert _Producer.made[0].settings["sasl.mechanism"] == "SCRAM-SHA-512"
