"""With -v a refusal shows the errors behind it: the Kafka error code of a request the cluster refused (issue 49: the
original Kafka error was gone from every traceback an operator sent)."""

from __future__ import annotations

import argparse
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from kafka_migration import cli
from kafka_migration.exceptions import ConfigurationError, MigrationError
from kafka_migration.kafka.acls import Permission
from kafka_migration.kafka.clients import KafkaCluster
from kafka_migration.model.config import ClusterConfig


def _refused(code: int) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_exception(KafkaException(KafkaError(code)))
    return future


def test_a_refused_request_keeps_the_kafka_error_as_its_cause() -> None:
    cluster = KafkaCluster(ClusterConfig("source", {"bootstrap.servers": "b:9092"}))
    needs = Permission("DescribeConfigs", "topic", ("orders",), "to read its configs")
    with pytest.raises(ConfigurationError) as refused:
        cluster._result(_refused(KafkaError.TOPIC_AUTHORIZATION_FAILED), "describe configs of topic 'orders'", needs)
    assert isinstance(refused.value.__cause__, KafkaException)
    assert refused.value.__cause__.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    with pytest.raises(MigrationError) as failed:
        cluster._result(_refused(KafkaError.UNKNOWN_TOPIC_OR_PART), "list offsets")
    assert isinstance(failed.value.__cause__, KafkaException)


def test_verbose_output_names_the_kafka_error_code_behind_a_refusal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = KafkaCluster(ClusterConfig("source", {"bootstrap.servers": "b:9092"}))

    def refused_history(_args: argparse.Namespace) -> int:
        cluster._result(
            _refused(KafkaError.TOPIC_AUTHORIZATION_FAILED),
            "list offsets",
            Permission("Describe", "topic", ("orders",), "to read its offsets"),
        )
        return 0

    monkeypatch.setitem(cli.COMMANDS, "history", refused_history)
    monkeypatch.setattr(argparse.Namespace, "verbose", True, raising=False)
    assert cli.main(["history"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: The source cluster b:9092 does not allow")
    assert err[1].startswith("  caused by KafkaException: KafkaError{code=TOPIC_AUTHORIZATION_FAILED")
    monkeypatch.setattr(argparse.Namespace, "verbose", False, raising=False)
    cli.main(["history"])
    assert "caused by" not in capsys.readouterr().err  # one line without -v
