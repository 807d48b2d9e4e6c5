"""harness/kafka/authorizer: Apache Kafka's StandardAuthorizer in one JVM, answering cases of bindings and requests.

A few decisions whose answer Kafka's documentation states, so that the reference itself is known to be wired right
(principal, address, resource, operation and settings all reach it); the property test of the model against it is
tests/integration/access/test_rules_against_kafka.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.kafka.authorizer import AuthorizerError, Case, KafkaAuthorizer, Result, compiled
from kafka_migration.model.access import AclBinding, Action

pytestmark = pytest.mark.integration

A, D = Result.ALLOWED, Result.DENIED


def test_kafka_decides_by_principal_address_pattern_operation_and_settings(kafka_authorizer: KafkaAuthorizer) -> None:
    assert kafka_authorizer.kafka_version == "4.2.1"
    bindings = (
        AclBinding("TOPIC", "pay.", "PREFIXED", "User:app", "*", "READ", "ALLOW"),
        AclBinding("TOPIC", "pay.secret", "LITERAL", "User:app", "10.0.0.9", "READ", "DENY"),
        AclBinding("GROUP", "*", "LITERAL", "User:*", "10.0.0.1", "READ", "ALLOW"),
    )
    requests = (
        Action("User:app", "10.0.0.1", "TOPIC", "pay.", "READ"),  # a prefix matches the name equal to it
        Action("User:app", "10.0.0.1", "TOPIC", "pay.x", "DESCRIBE"),  # READ implies DESCRIBE
        Action("User:app", "10.0.0.1", "TOPIC", "pay", "READ"),  # shorter than the prefix
        Action("User:app", "10.0.0.9", "TOPIC", "pay.secret", "READ"),  # the DENY from its host wins
        Action("User:app", "10.0.0.1", "TOPIC", "pay.secret", "READ"),  # not from another host
        Action("User:bob", "10.0.0.1", "GROUP", "any", "READ"),  # User:* and the * name
        Action("User:bob", "10.0.0.2", "GROUP", "any", "READ"),  # but from its host only
        Action("User:root", "10.0.0.2", "GROUP", "any", "DELETE"),  # a super user
        Action("User:bob", "10.0.0.2", "CLUSTER", "kafka-cluster", "ALTER"),  # no binding: the default
    )
    assert kafka_authorizer.decide(Case(bindings, requests)) == (A, A, D, D, A, A, D, D, D)
    configured = Case(bindings, requests, super_users=("User:root",), allow_if_no_acl=True)
    assert kafka_authorizer.decide(configured) == (A, A, A, D, A, A, D, A, A)


def test_a_case_kafka_cannot_read_is_an_error_and_the_jvm_serves_the_next(kafka_authorizer: KafkaAuthorizer) -> None:
    bad = Case((), (Action("User:app", "10.0.0.1", "TOPIC", "t", "ANY"),))
    with pytest.raises(AuthorizerError, match="AclOperation ANY is a filter"):
        kafka_authorizer.decide(bad)
    assert kafka_authorizer.decide(Case((), (Action("User:app", "10.0.0.1", "TOPIC", "t", "READ"),))) == (D,)


def test_a_request_from_a_name_rather_than_an_address_is_refused_before_kafka_is_asked() -> None:
    with pytest.raises(ValueError, match="IP literal, not 'localhost'"):
        Case((), (Action("User:app", "localhost", "TOPIC", "t", "READ"),))


def test_the_program_is_compiled_once_per_version_of_its_sources(kafka_jars: Path, tmp_path: Path) -> None:
    first = compiled(tmp_path)
    started = time.monotonic()
    assert compiled(tmp_path) == first
    assert time.monotonic() - started < 1.0  # no javac the second time
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no staging folder left behind
