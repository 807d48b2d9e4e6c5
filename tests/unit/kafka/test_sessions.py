"""kafka/sessions.py: how a broker's answer to a user's probe reads as an outcome. The probes against real brokers
are in tests/integration/test_access_probe.py."""

from __future__ import annotations

from confluent_kafka import KafkaError

from kafka_migration.kafka.sessions import ALLOWED, _outcome


def test_a_brokers_answer_reads_as_an_outcome() -> None:
    assert _outcome(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)) == "denied (TOPIC_AUTHORIZATION_FAILED)"
    assert _outcome(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)) == "denied (GROUP_AUTHORIZATION_FAILED)"
    for allowed in (KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._PARTITION_EOF):
        assert _outcome(KafkaError(allowed)) == ALLOWED
    assert _outcome(KafkaError(KafkaError._TIMED_OUT)).startswith("inconclusive: _TIMED_OUT")
